"""What every baseline shares: the root, the nodes with their cached token counts, and weaving."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contextweaver.errors import CallOrder
from contextweaver.nodes.extract import make_node, root_node
from contextweaver.records import Message, Node, Step, WovenContext
from contextweaver.weaving.modes import WeaveSettings, Weaving
from contextweaver.weaving.plan import Plan
from contextweaver.weaving.reweave import detached


class HistoryStrategy:
    """Keeps nodes (counted once) and weaves whatever `plan()` asks for; subclasses choose."""

    name = "history"
    uses_model = False
    weave_settings = WeaveSettings()
    """How `plan()` is woven (`weaving/modes.py`); a class attribute, so what a baseline cuts is known
    before one is built (`integrations.settings.cuts_nothing`)."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.weaving = self._weaving()

    def _weaving(self) -> Weaving:
        """Per-step weaving of `plan()` (a subclass that weaves its own contexts or cuts lazily says so)."""
        return Weaving(self.name, self.weave_settings, self.planned, lambda: self.nodes)

    def begin(self, messages: Sequence[Message]) -> None:
        if self.nodes:
            raise CallOrder("begin() was already called: use a new strategy object per conversation")
        self.nodes.append(root_node(messages))

    def add_step(self, step: Step) -> Node:
        if not self.nodes:
            raise CallOrder("call begin(messages) with the system prompt and task before add_step()")
        node = make_node(len(self.nodes), step)
        self.nodes.append(node)
        return node

    def stats(self) -> dict[str, Any]:
        return {"steps": max(0, len(self.nodes) - 1)}

    def plan(self) -> Plan:
        raise NotImplementedError

    def planned(self, budget: float | None, cut: bool) -> Plan:
        """`plan()` for `Weaving`: a baseline plans the same whatever the budget and at a cut."""
        return self.plan()

    def context(self, max_tokens: int | None = None) -> WovenContext:
        return detached(self.shared_context(max_tokens))

    def shared_context(self, max_tokens: int | None = None) -> WovenContext:
        """The context, its messages shared with the later contexts (`reweave`): for readers only."""
        if not self.nodes:
            raise CallOrder("call begin(messages) before context()")
        return self.weaving.context(max_tokens)
