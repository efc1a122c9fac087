"""Postings: an item -> the nodes that hold it, in order, each node added once.

Most items (a name in one output) occur once. They are kept as a one-element tuple, which the garbage
collector stops tracking, and become a list at their second occurrence: a long run then adds a few
tracked objects per step rather than one per new item, so the collector's full passes stay rare and short.
"""

from __future__ import annotations

from collections.abc import Iterable

Posting = tuple[int, ...] | list[int]


def post(postings: dict[str, Posting], keys: Iterable[str], index: int) -> None:
    """Append `index` to each key's posting (one call per node: this runs for every item of every step)."""
    get = postings.get
    for key in keys:
        hits = get(key)
        if hits is None:
            postings[key] = (index,)
        elif isinstance(hits, list):
            hits.append(index)
        else:
            postings[key] = [*hits, index]
