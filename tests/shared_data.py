"""Where the third-party data lives (../shared/data beside the clone, read in place) and the skip reason
for a test that needs it: what is missing and the command that fetches it."""

from __future__ import annotations

from pathlib import Path

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def absent(path: Path | str = SHARED_DATA) -> str:
    """`<path> is absent: fetch it with python scripts/fetch_data.py --only <its prefix>`."""
    full = (Path(path) if Path(path).is_absolute() else SHARED_DATA / path).resolve()
    try:
        prefix = full.relative_to(SHARED_DATA.resolve()).as_posix()
    except ValueError:
        prefix = ""
    only = f" --only {prefix}" if prefix not in ("", ".") else ""
    return (
        f"{full} is absent: fetch the public data it holds with `python scripts/fetch_data.py{only}` "
        "(by commit, as data/manifest.jsonl lists it; --dry-run says how big)"
    )
