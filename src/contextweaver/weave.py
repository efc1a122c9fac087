"""Weaving: turn a plan (which steps to keep in full, by priority) into messages under a token budget."""

from __future__ import annotations

from collections.abc import Sequence

from contextweaver.errors import ContextWeaverError
from contextweaver.render import compressed_messages, full_messages, trimmed_messages
from contextweaver.selectors.plan import Plan
from contextweaver.tokens import count_message
from contextweaver.types import Decision, Message, Node, WovenContext


class BudgetError(ContextWeaverError, ValueError):
    """The budget cannot hold even the system prompt and the task, which are always kept verbatim."""


def weave(
    root: Node,
    steps: Sequence[Node],
    plan: Plan,
    *,
    strategy: str,
    budget: int | None = None,
    status_line: str | None = None,
    min_trim_tokens: int = 128,
    safety_factor: float = 1.0,
) -> WovenContext:
    """Messages in chronological order: root, TEST STATUS, then each step full or compressed.

    Without a budget every planned step is full. With one, the total never exceeds it: root first,
    then steps a person wrote, the current step, planned steps by priority (head/tail-trimmed when
    they do not fit whole), then placeholders newest first; whatever is left is dropped and said so.
    """
    status = [{"role": "user", "content": status_line}] if status_line else []
    wanted = dict(plan.full)
    if budget is None:
        return _unbounded(root, steps, plan, wanted, strategy, status)
    return _budgeted(root, steps, plan, wanted, strategy, status, budget / safety_factor, min_trim_tokens)


def _unbounded(
    root: Node,
    steps: Sequence[Node],
    plan: Plan,
    wanted: dict[int, str],
    strategy: str,
    status: list[Message],
) -> WovenContext:
    messages = [*full_messages(root), *status]
    decisions = []
    tokens = root.full_tokens + sum(count_message(m) for m in status)
    for node in steps:
        excerpt = plan.excerpts.get(node.index)
        if excerpt is not None and node.index in wanted:
            messages += excerpt.messages
            decisions.append(Decision(node.index, "trimmed", wanted[node.index], excerpt.tokens))
            tokens += excerpt.tokens
        elif node.step.kind == "user" or node.index in wanted:
            reason = wanted.get(node.index, "written by a person: always kept")
            messages += full_messages(node)
            decisions.append(Decision(node.index, "full", reason, node.full_tokens))
            tokens += node.full_tokens
        else:
            messages += compressed_messages(node)
            decisions.append(
                Decision(node.index, "compressed", plan.why_compressed(node.index), node.compressed_tokens)
            )
            tokens += node.compressed_tokens
    return WovenContext(
        messages=messages,
        decisions=decisions,
        tokens=tokens,
        full_history_tokens=root.full_tokens + sum(n.full_tokens for n in steps),
        strategy=strategy,
        test_status=status[0]["content"] if status else None,
        notes=list(plan.notes),
    )


def _budgeted(
    root: Node,
    steps: Sequence[Node],
    plan: Plan,
    wanted: dict[int, str],
    strategy: str,
    status: list[Message],
    budget: float,
    min_trim: int,
) -> WovenContext:
    left = budget - root.full_tokens
    if left < 0:
        raise BudgetError(
            f"budget of {int(budget)} tokens is below the {root.full_tokens} tokens of the system prompt "
            "and task, which are always kept verbatim: raise the budget"
        )
    by_index = {n.index: n for n in steps}
    chosen: dict[int, tuple[list[Message], Decision]] = {}
    notes = list(plan.notes)

    def take(node: Node, messages: list[Message], decision: Decision) -> None:
        nonlocal left
        chosen[node.index] = (messages, decision)
        left -= decision.tokens

    for node in steps:  # steps a person wrote come right after the root
        if node.step.kind == "user" and node.full_tokens <= left:
            take(
                node,
                full_messages(node),
                Decision(node.index, "full", "written by a person: always kept", node.full_tokens),
            )
    status_tokens = sum(count_message(m) for m in status)
    if status and status_tokens <= left:
        left -= status_tokens
    else:
        status = []
    for index, reason in plan.full:  # planned steps by priority: full, else trimmed, else placeholder
        if index not in by_index or index in chosen:
            continue
        node = by_index[index]
        excerpt = plan.excerpts.get(index)
        if excerpt is not None and excerpt.tokens <= left:
            take(node, excerpt.messages, Decision(index, "trimmed", reason, excerpt.tokens))
            continue
        current = index == steps[-1].index  # the newest step is the one the agent acts on next
        trimmed = None
        if node.full_tokens > left and (
            left >= node.compressed_tokens + min_trim or (current and left >= min_trim)
        ):
            trimmed = _trim_to_fit(node, int(left))
        if node.full_tokens <= left:
            take(node, full_messages(node), Decision(index, "full", reason, node.full_tokens))
        elif trimmed is not None:
            why = f"{reason}; output head/tail-trimmed to fit the budget of {int(budget)} tokens"
            take(node, trimmed[0], Decision(index, "trimmed", why, trimmed[1]))
        elif node.compressed_tokens <= left:
            why = f"{reason}; compressed: the full output ({node.full_tokens} tokens) does not fit the budget"
            take(node, compressed_messages(node), Decision(index, "compressed", why, node.compressed_tokens))
    for node in reversed(steps):  # the rest as placeholders, newest first, while they fit
        if node.index not in chosen and node.compressed_tokens <= left:
            take(
                node,
                compressed_messages(node),
                Decision(node.index, "compressed", plan.why_compressed(node.index), node.compressed_tokens),
            )
    messages = [*full_messages(root), *status]
    decisions = []
    dropped = []
    for node in steps:
        if node.index in chosen:
            step_messages, decision = chosen[node.index]
            messages += step_messages
        else:
            decision = Decision(
                node.index, "dropped", f"dropped to fit the budget of {int(budget)} tokens", 0
            )
            dropped.append(node.index)
        decisions.append(decision)
    if dropped:
        notes.append(f"{len(dropped)} step(s) dropped whole (call and output together) to fit the budget")
    return WovenContext(
        messages=messages,
        decisions=decisions,
        tokens=int(budget - left),
        full_history_tokens=root.full_tokens + sum(n.full_tokens for n in steps),
        strategy=strategy,
        budget=int(budget),
        test_status=status[0]["content"] if status else None,
        notes=notes,
    )


def _trim_to_fit(node: Node, room: int) -> tuple[list[Message], int] | None:
    """Trimming works on token estimates per message; shrink the target until the result fits."""
    target = room
    for _ in range(4):
        messages, tokens = trimmed_messages(node, target)
        if tokens <= room:
            return messages, tokens
        target -= tokens - room + 8
    return None
