"""Unbounded weaving kept between calls: a step is rendered again only when its rendering may change.

`weave(budget=None)` renders every step of the history at every call, so a run of N steps costs
O(N^2). Without a budget each step's rendering depends only on the plan's entries for it (its reason,
its excerpt, its own compressed reason) and on `plan.compressed_reason`. So `Reweave` keeps each step's
messages and decision from the last call and renders again only the new steps and those the last or
the current plan names, which a selector keeps few; the result equals `weave(budget=None)`'s.

The contexts it returns share their message dicts with each other (a step rendered once is the same
objects in every later context). A strategy's `shared_context` returns such a context, for readers that
never change one (the replay); its `context` returns `detached(...)` of it, which callers may change.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate, chain

from contextweaver.nodes.render import full_messages
from contextweaver.records import Decision, Message, Node, WovenContext
from contextweaver.tokens import count_message
from contextweaver.weaving.plan import Plan
from contextweaver.weaving.weave import unbounded_step


def detached(context: WovenContext) -> WovenContext:
    """`context` with its own copy of each message: a caller may change them without touching the
    strategy's later contexts (a copy per message: O(context), done in C)."""
    context.messages = list(map(dict, context.messages))
    return context


def _named(plan: Plan) -> dict[int, tuple[str | None, object, str | None]]:
    """Per step the plan names: what its rendering depends on beyond the default compressed reason."""
    wanted = dict(plan.full)
    named = wanted.keys() | plan.excerpts.keys() | plan.compressed_reasons.keys()
    return {
        i: (wanted.get(i), plan.excerpts.get(i) if i in wanted else None, plan.compressed_reasons.get(i))
        for i in named
    }


class Reweave:
    """One strategy's unbounded context, updated from the last call's (see the module docstring).

    The steps given are the strategy's whole history, numbered 1..N in order."""

    def __init__(self) -> None:
        self._reset(None)

    def _reset(self, root: Node | None) -> None:
        self._root = root
        self._steps: list[Node] = []
        self._segments: list[list[Message]] = []
        self._flat: list[Message] = []
        self._offsets: list[int] = [0]
        self._decisions: list[Decision] = []
        self._tokens = 0
        self._full_tokens = 0
        self._named: dict[int, tuple[str | None, object, str | None]] = {}
        self._default: str | None = None

    def weave(
        self, root: Node, steps: Sequence[Node], plan: Plan, strategy: str, status_line: str | None = None
    ) -> WovenContext:
        """The same context as `weave(root, steps, plan, strategy=..., status_line=...)`."""
        named = _named(plan)
        if not self._continues(root, steps) or plan.compressed_reason != self._default:
            self._reset(root)
        changed = {i for i in named.keys() | self._named.keys() if named.get(i) != self._named.get(i)}
        self._named, self._default = named, plan.compressed_reason
        return self._update(root, steps, plan, changed, strategy, status_line)

    def append(self, root: Node, steps: Sequence[Node], reason: str, strategy: str) -> WovenContext:
        """Every step in full for `reason` (the full history): only the new steps are rendered."""
        if not self._continues(root, steps):
            self._reset(root)
        plan = Plan(full=[(n.index, reason) for n in steps[len(self._steps) :]], compressed_reason="")
        return self._update(root, steps, plan, set(), strategy, None)

    def _update(
        self,
        root: Node,
        steps: Sequence[Node],
        plan: Plan,
        changed: set[int],
        strategy: str,
        status_line: str | None,
    ) -> WovenContext:
        wanted = dict(plan.full)
        resized = False
        for index in sorted(i for i in changed if i <= len(self._steps)):
            resized |= self._set(index - 1, *unbounded_step(self._steps[index - 1], wanted, plan))
        for node in steps[len(self._steps) :]:
            messages, decision = unbounded_step(node, wanted, plan)
            self._steps.append(node)
            self._segments.append(messages)
            self._decisions.append(decision)
            self._flat += messages
            self._offsets.append(len(self._flat))
            self._tokens += decision.tokens
            self._full_tokens += node.full_tokens
        if resized:
            self._flat = list(chain.from_iterable(self._segments))
            self._offsets = [0, *accumulate(map(len, self._segments))]
        status = [{"role": "user", "content": status_line}] if status_line else []
        return WovenContext(
            messages=[*full_messages(root), *status, *self._flat],
            decisions=list(self._decisions),
            tokens=root.full_tokens + sum(count_message(m) for m in status) + self._tokens,
            full_history_tokens=root.full_tokens + self._full_tokens,
            strategy=strategy,
            test_status=status_line if status else None,
            notes=list(plan.notes),
        )

    def _continues(self, root: Node, steps: Sequence[Node]) -> bool:
        """Whether `steps` extends the steps of the last call (the same nodes, in the same places)."""
        known = len(self._steps)
        if root is not self._root or len(steps) < known or (steps and steps[-1].index != len(steps)):
            return False
        return not known or steps[known - 1] is self._steps[-1]

    def _set(self, position: int, messages: list[Message], decision: Decision) -> bool:
        """Replace one step's rendering; True when its length changed (the flat list is rebuilt then)."""
        old = self._segments[position]
        self._segments[position] = messages
        self._tokens += decision.tokens - self._decisions[position].tokens
        self._decisions[position] = decision
        if len(old) != len(messages):
            return True
        start = self._offsets[position]
        self._flat[start : start + len(messages)] = messages
        return False
