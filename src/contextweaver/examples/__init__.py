"""Example trajectories shipped with the package, so the CLI and docs work without any data.

`bugfix.jsonl` (ContextWeaver JSON Lines): a coding agent fixes a half-cent rounding bug in a small
invoicing library written for this example. Every command was run for real against that library,
so listings, tracebacks and pytest summaries are genuine output: it explores, takes a dead end
through formatting and tax code, reproduces the bug, adds a failing test, trips over sed quoting
and a missing import, fixes two source/test files and the changelog, and ends with 25 passing
tests. One mid-run message from the user is a step of kind "user".
"""

from __future__ import annotations

import importlib.resources
import shutil
import tempfile
from pathlib import Path

__all__ = ["example_names", "example_path"]


def example_names() -> list[str]:
    files = importlib.resources.files(__name__).iterdir()
    return sorted(f.name.removesuffix(".jsonl") for f in files if f.name.endswith(".jsonl"))


def example_path(name: str = "bugfix") -> Path:
    """Path of a shipped example trajectory (copied out once when the package is zipped)."""
    resource = importlib.resources.files(__name__).joinpath(f"{name}.jsonl")
    if not resource.is_file():
        raise ValueError(f"unknown example {name!r}; available: {', '.join(example_names())}")
    if isinstance(resource, Path):
        return resource
    target = Path(tempfile.gettempdir()) / "contextweaver-examples" / f"{name}.jsonl"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        with importlib.resources.as_file(resource) as extracted:
            shutil.copyfile(extracted, target)
    return target
