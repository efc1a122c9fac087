"""Example trajectories shipped with the package, so the CLI and docs work without any data.

`bugfix.jsonl` (ContextWeaver JSON Lines): a coding agent fixes a half-cent rounding bug in a small
invoicing library written for this example. Every command was run for real against that library,
so listings, tracebacks and pytest summaries are genuine output: it explores, takes a dead end
through formatting and tax code, reproduces the bug, adds a failing test, trips over sed quoting
and a missing import, fixes two source/test files and the changelog, and ends with 25 passing
tests. One mid-run message from the user is a step of kind "user".

The example scripts ship beside it and run from the installed package, offline and with no key:
`python -m contextweaver.examples.NAME`; `contextweaver examples list` names them and what each needs,
`contextweaver examples copy DIR` writes them out to read and change. A script whose extra is missing
says so in one line and exits 2 (`require`).
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from contextweaver.extras import missing, needs_message

__all__ = ["SCRIPTS", "example_names", "example_path", "require"]


@dataclass(frozen=True)
class Script:
    shows: str
    extra: str | None = None
    """The optional extra it needs."""
    modules: tuple[str, ...] = ()
    """Other modules it needs: pytest, which its scripted agent runs on the toy repository's tests."""
    python: tuple[int, int] = (3, 11)


SCRIPTS = {
    "library": Script("ContextWeaver in your own agent loop"),
    "cut_picture": Script("one cut, step by step (the picture on the home page)"),
    "minisweagent_agent": Script("mini-swe-agent's agent fixing a repository", "minisweagent", ("pytest",)),
    "sweagent_processor": Script("SWE-agent's history processor"),
    "openhands_condenser": Script("the OpenHands SDK's condenser", "openhands", ("pytest",), (3, 12)),
    "langchain_agent": Script("LangChain's create_agent with the middleware", "langgraph", ("pytest",)),
    "proxy_openai": Script("the proxy, OpenAI chat", "serve"),
    "proxy_claude_code": Script("the proxy, Claude Code's wire (Anthropic Messages)", "serve"),
    "proxy_codex": Script("the proxy, Codex CLI's wire (OpenAI Responses)", "serve"),
}
"""The runnable examples, in the order the docs list them."""
HELPERS = {
    "toy_repo": Script("the agent examples' small git repository, whose `add` subtracts"),
    "proxy_upstream": Script("the fake upstream with the proxy in front of it", "serve"),
}
"""What the examples share (the proxy helper runs alone too: it starts both and stops)."""


def needs(name: str) -> str | None:
    """What the example `name` lacks to run here, as one line with the command that installs it; None when
    it can run."""
    script = SCRIPTS.get(name) or HELPERS[name]
    what = f"python -m contextweaver.examples.{name}"
    if sys.version_info < script.python:
        wanted = ".".join(map(str, script.python))
        return f"{what} needs Python {wanted}+ ({script.shows} needs it); this is {sys.version.split()[0]}"
    if script.extra is not None and missing(script.extra):
        return needs_message(what, script.extra)
    absent = [m for m in script.modules if importlib.util.find_spec(m) is None]
    if absent:
        return (
            f"{what} needs {', '.join(absent)} (its scripted agent runs the toy repository's tests with it): "
            f"pip install {' '.join(absent)}"
        )
    return None


def require(name: str) -> None:
    """Exit 2 with one line naming what to install when the example `name` cannot run here: called
    before the script imports its framework, so a missing one is not a bare ModuleNotFoundError."""
    problem = needs(name)
    if problem is not None:
        print(problem, file=sys.stderr)
        raise SystemExit(2)


def example_names() -> list[str]:
    """The shipped example trajectories (`bugfix`)."""
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
