"""Lossless saving: a planned step whose every output line also appears in a later kept output adds
nothing the context does not already hold (a re-run with the same result, `sed -n` of a range the
agent later printed whole), so it is compressed and its slot's tokens are saved."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from contextweaver.records import Node
from contextweaver.weaving.plan import Plan


def drop_repeated_outputs(plan: Plan, nodes: Sequence[Node]) -> Plan:
    """The plan without steps whose output lines all recur in a later planned step's output.

    `nodes` is indexed by step index (the graph's node list)."""
    planned = [index for index, _ in plan.full if index not in plan.excerpts]  # only whole outputs cover
    full, repeated = [], dict(plan.compressed_reasons)
    for index, reason in plan.full:
        lines = nodes[index].output_lines
        later = next(
            (j for j in planned if j > index and lines and lines <= nodes[j].output_lines),
            None,
        )
        if later is None or index == len(nodes) - 1:  # the current (newest) step stays whole
            full.append((index, reason))
        else:
            repeated[index] = f"{reason}; compressed: every line of its output recurs in step {later}'s"
    return replace(plan, full=full, compressed_reasons=repeated)
