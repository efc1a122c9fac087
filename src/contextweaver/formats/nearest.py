"""Which format a file that no reader read (or that read as nothing) was probably meant to be.

A file's keys (the first records', or the document's and its items') are matched to each reader's
`keys`, a mistyped key counting when difflib finds the key it was meant to be; after a reader read
the file as no step, another that reads it into steps ranks first. The answer names the format and
the mistyped keys, so the user sees what to change.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import Any

from contextweaver.formats.base import Reader
from contextweaver.formats.source import Source

SAMPLE = 20
"""Records whose keys are looked at: enough for every kind of line a run starts with."""
CUTOFF = 0.6
"""difflib's ratio for a mistyped key: 'observ' for 'observation' (0.71) passes, 'task' for 'type' (0.25) does not."""
FUZZY = 30
"""Unknown keys a mistyping is looked for in, per reader: a file keyed by ids (a report) has thousands."""
MIN_SHARE = 0.5
"""A format named by its keys alone knows at least this share of the file's keys."""


def meant(key: str, known: Iterable[str]) -> str | None:
    """The known key `key` is a misspelling of, or None."""
    found = difflib.get_close_matches(key, list(known), n=1, cutoff=CUTOFF)
    return found[0] if found else None


def file_keys(source: Source) -> set[str]:
    """The keys of the file's first records (a JSON object, its items, or JSON Lines)."""
    document = source.document if not source.looks_like_jsonl else None
    if isinstance(document, dict):
        values: list[Any] = [document, *(v for v in document.values() if isinstance(v, dict))]
    elif isinstance(document, list):
        values = document[:SAMPLE]
    else:
        values = [r.value for r in (source.records or [])[:SAMPLE]]
    return {str(k) for v in values if isinstance(v, dict) for k in v}


def _score(keys: set[str], reader: Reader) -> tuple[float, list[tuple[str, str]]]:
    """The share of the file's keys the reader knows, and the (given, meant) pairs among them."""
    typos = [(k, m) for k in sorted(keys - reader.keys)[:FUZZY] if (m := meant(k, reader.keys))]
    known = len(keys & reader.keys) + len(typos)
    return (known / len(keys) if keys else 0.0), typos


def _steps(reader: Reader, source: Source) -> int:
    try:
        read_all = getattr(reader, "read_all", None)
        runs = read_all(source) if read_all is not None else [reader.read(source)]
    except Exception:  # a reader probed on a file it did not claim may fail any way: it does not read it
        return 0
    return sum(len(run.steps) for run in runs)


def nearest(source: Source, readers: Sequence[Reader], tried: str | None = None) -> str:
    """'nearest format: <name> (...)' for the error message, or '' when nothing comes close.

    After `tried` read the file as nothing, only a reader that reads it into steps is named; when no
    reader took the file, the one that knows most of its keys is (at least half of them).
    """
    keys = file_keys(source)
    ranked = []
    for reader in readers:
        if reader.name == tried:
            continue
        score, typos = _score(keys, reader)
        reads = tried is not None and _steps(reader, source) > 0  # no reader took the file: keys alone
        if reads or (tried is None and score >= MIN_SHARE):
            ranked.append((reads, score, reader.name, typos))
    if not ranked:
        return ""
    reads, _, name, typos = max(ranked, key=lambda r: (r[0], r[1]))
    how = "it reads the file into steps" if reads else "by its keys"
    said = ", ".join(f"{given!r} for {right!r}" for given, right in typos)
    return f"nearest format: {name} ({how}{'; mistyped: ' + said if said else ''})"
