"""What a step keeps when the memory's work on it raises: it is stored and woven all the same.

One odd tool output must never switch memory off: a step that is not stored breaks every later step
of the session. Validation then says "unknown" and the annotation has no parents; each failure is
logged (the first of each kind with its traceback).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from contextweaver.records import Annotation, Node, ValidationStatus
from contextweaver.validation.tracker import TestTracker, Verdict

if TYPE_CHECKING:
    from contextweaver.nodes.graph import DependencyGraph
    from contextweaver.protocols import Annotator

_log = logging.getLogger(__name__)
_LOGGED: set[str] = set()


def _failed(stage: str, index: int) -> None:
    first = stage not in _LOGGED
    _LOGGED.add(stage)
    _log.warning("%s failed on step %d: kept with a plain placeholder", stage, index, exc_info=first)


def verdict(tracker: TestTracker, index: int, command: str, observation: str) -> Verdict:
    """The tracker's verdict, or "unknown" with no results when validation raises."""
    try:
        return tracker.observe(index, command, observation)
    except Exception:
        _failed("validation", index)
        return Verdict(ValidationStatus.UNKNOWN, {}, (), None, "validation failed on this output")


def annotation(
    annotator: Annotator, node: Node, candidates: Sequence[Node], graph: DependencyGraph, task: str, m: int
) -> Annotation:
    """The annotator's work, or no parents and no summaries when it raises."""
    try:
        return annotator.annotate(node, candidates, graph, task, m)
    except Exception:
        _failed("annotation", node.index)
        return Annotation(summary="", parents=[], dependency_summary="")
