"""LLM summary baseline: the last n steps verbatim plus one running summary of everything older.

This is the condenser OpenHands and SWE-agent forks ship. It is incremental: when steps leave the
window the model rewrites the cached summary from the previous summary plus only the leaving steps,
so a step costs at most one call and the prompt never grows with the history. A failed call keeps
the previous summary and leaves the unsummarized steps in the context as placeholders (nothing is
lost); the next step retries. The summary message is marked as written by the memory model.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from contextweaver.baselines.base import HistoryStrategy
from contextweaver.models import ModelError, at_step, require_model
from contextweaver.nodes.extract import root_node
from contextweaver.nodes.render import trim_text
from contextweaver.prompts.render import clip
from contextweaver.protocols import Model
from contextweaver.records import Decision, Message, Node, Step, WovenContext
from contextweaver.weaving.modes import Weaving
from contextweaver.weaving.plan import Plan
from contextweaver.weaving.weave import weave

log = logging.getLogger("contextweaver.baselines")

SUMMARY_MARK = "[CONTEXT SUMMARY written by the memory model {model}: it replaces agent steps {first}-{last}]"
SUMMARY_RULES = """\
You maintain the running memory of a software agent whose oldest steps are leaving its context.
Rewrite the summary so it covers the previous summary and the leaving steps. Keep file paths,
function and class names, error messages, test names and line numbers verbatim. Say what was found,
what was changed, and what is still open. Reply with the summary text only."""
STEP_TOKENS = {"thought": 200, "action": 300, "observation": 600}
TASK_TOKENS = 300


class LLMSummary(HistoryStrategy):
    """Keeps the last `keep_last` steps in full and one model-written summary of the older ones."""

    name = "llm_summary"
    uses_model = True

    def __init__(
        self,
        keep_last: int = 5,
        model: Model | None = None,
        summary_tokens: int = 400,
    ) -> None:
        super().__init__()
        self.keep_last = keep_last
        self.summary_tokens = summary_tokens
        self.model = require_model(model, type(self).__name__)
        self.summary = ""
        self.summarized = 0
        """Steps 1..summarized are folded into `summary`."""
        self.counts: dict[str, int] = {"calls": 0, "fallbacks": 0}
        self._root: Node | None = None  # root + summary message, rebuilt only when the summary changes

    def stats(self) -> dict[str, Any]:
        return {**super().stats(), **self.counts}

    def add_step(self, step: Step) -> Node:
        node = super().add_step(step)
        self.fold_leaving()
        return node

    def fold_leaving(self) -> None:
        """Fold the steps older than the last `keep_last` that are not in the summary yet."""
        leaving = len(self.nodes) - 1 - self.keep_last
        if leaving > self.summarized:
            self._fold(self.nodes[self.summarized + 1 : leaving + 1])

    def _fold(self, leaving: Sequence[Node]) -> None:
        """One call: previous summary + leaving steps -> new summary. On failure keep the old one."""
        at_step(self.model, leaving[-1].index + self.keep_last)
        self.counts["calls"] += 1
        try:
            reply = self.model.complete(self._prompt(leaving), max_tokens=self.summary_tokens)
        except ModelError as exc:
            self.counts["fallbacks"] += 1
            log.warning(
                "llm summary: steps %d-%d stay as placeholders (%s)", leaving[0].index, leaving[-1].index, exc
            )
            return
        text = clip(reply.text.strip(), self.summary_tokens)
        if not text:
            self.counts["fallbacks"] += 1
            return
        self.summary = text
        self.summarized = leaving[-1].index
        self._root = None

    def _prompt(self, leaving: Sequence[Node]) -> list[Message]:
        task = clip(self.nodes[0].step.observation, TASK_TOKENS)
        parts = [f"TASK: {task}", f"PREVIOUS SUMMARY: {self.summary or '(none yet)'}", "LEAVING STEPS:"]
        for node in leaving:
            step = node.step
            parts.append(f"[step {node.index}]")
            for label in ("thought", "action", "observation"):
                text = getattr(step, label)
                if text:
                    parts.append(f"{label}: {trim_text(text, STEP_TOKENS[label])}")
        return [{"role": "system", "content": SUMMARY_RULES}, {"role": "user", "content": "\n".join(parts)}]

    def summary_message(self) -> Message | None:
        if not self.summary:
            return None
        mark = SUMMARY_MARK.format(model=getattr(self.model, "name", "?"), first=1, last=self.summarized)
        return {"role": "user", "content": f"{mark}\n{self.summary}"}

    def _summary_root(self) -> Node:
        if self._root is None:
            message = self.summary_message()
            root_messages = list(self.nodes[0].step.chat_messages())
            self._root = root_node(root_messages + [message] if message else root_messages)
        return self._root

    def plan(self) -> Plan:
        last = len(self.nodes) - 1
        recent = range(last, max(0, last - self.keep_last), -1)
        return Plan(
            full=[(i, f"one of the last {self.keep_last} steps") for i in recent],
            compressed_reason="left the window; the summary call for it failed, so it stays as a placeholder",
        )

    def _weaving(self) -> Weaving:
        return Weaving(
            self.name, self.weave_settings, self.planned, lambda: self.nodes, woven=self.summarized_context
        )

    def summarized_context(self, max_tokens: int | None) -> WovenContext:
        """The summary after the root, then the steps it does not cover, woven under `max_tokens`."""
        folded = self.nodes[1 : self.summarized + 1]
        shown = [n for n in folded if n.step.kind == "user"] + self.nodes[self.summarized + 1 :]
        woven = weave(self._summary_root(), shown, self.plan(), strategy=self.name, budget=max_tokens)
        gone = [
            Decision(n.index, "compressed", "folded into the context summary", 0)
            for n in folded
            if n.step.kind != "user"
        ]
        woven.decisions = sorted([*gone, *woven.decisions], key=lambda d: d.index)
        woven.full_history_tokens = sum(n.full_tokens for n in self.nodes)
        return woven
