"""What a benchmark says when the public data it reads is not beside the clone: the path, and the command that
fetches it from its source repositories (data/manifest.jsonl lists every file). Such a benchmark exits with
status 2 (ABSENT), never 0, so a run without data cannot pass for a measurement."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
ABSENT = 2


def hint(path: Path | str) -> str:
    """`<path> is absent: fetch it with python scripts/fetch_data.py --only <its prefix>`."""
    full = Path(path).resolve()
    try:
        prefix = full.relative_to(DATA.resolve()).as_posix()
    except ValueError:
        prefix = ""
    only = f" --only {prefix}" if prefix not in ("", ".") else ""
    return (
        f"{full} is absent: fetch it with `python scripts/fetch_data.py{only}` "
        "(from the public repositories data/manifest.jsonl lists; --dry-run says how big)"
    )


def report(paths: Iterable[Path | str]) -> int:
    """Say what is absent and how to fetch it (stderr); the exit status: ABSENT if anything is, else 0."""
    absent = list(paths)
    for path in absent:
        print(hint(path), file=sys.stderr)
    return ABSENT if absent else 0
