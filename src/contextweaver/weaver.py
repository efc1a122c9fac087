"""ContextWeaver: the one orchestrator (the paper's Algorithm 1), read top to bottom.

weaver = ContextWeaver()                  # heuristic analyzer, W=5, m=3: no LLM calls
weaver.begin([system_message, task_message])
weaver.add_step(Step(thought=..., action=..., observation=...))
context = weaver.context(max_tokens=8000)  # messages for the next LLM call, with reasons
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contextweaver import boundary
from contextweaver.annotate import build_annotator, needs_model
from contextweaver.config import WeaverConfig
from contextweaver.errors import CallOrder
from contextweaver.nodes.extract import make_node, root_node
from contextweaver.nodes.graph import DependencyGraph, LabelRecord
from contextweaver.nodes.open_file import OpenFile
from contextweaver.nodes.recall import BadHandle, Recalled, is_answer, page_tokens, recall_steps, step_text
from contextweaver.nodes.recall_query import QUERY_BUDGET, QueryIndex, node_records, recall_query
from contextweaver.protocols import Model
from contextweaver.records import Message, Node, Step, ValidationStatus, WovenContext
from contextweaver.selectors import build_selector
from contextweaver.selectors.repeats import drop_repeated_outputs
from contextweaver.validation import TestTracker
from contextweaver.weaving.budget import Budget
from contextweaver.weaving.changed import ChangedFiles
from contextweaver.weaving.lazy import LazyContext
from contextweaver.weaving.modes import WeaveSettings, Weaving, cut_selector
from contextweaver.weaving.plan import Plan, warmup_plan
from contextweaver.weaving.reweave import detached
from contextweaver.weaving.working_state import WorkingState
from contextweaver.weaving.written import WrittenFiles


class ContextWeaver:
    """Builds the dependency graph step by step and weaves the context before each LLM call."""

    name = "contextweaver"

    def __init__(self, config: WeaverConfig | None = None, *, model: Model | None = None) -> None:
        """`model` is the memory model; None builds it from `config.memory_model` when one is needed."""
        self.config = config or WeaverConfig()
        self.graph = DependencyGraph(self.config.max_parents)
        self.tracker = TestTracker()
        self.written = WrittenFiles()
        self.changed = ChangedFiles()
        self.open_file = OpenFile()
        self.selector = build_selector(self.config)
        cut = cut_selector(self.config)
        self.cut_selector = (
            build_selector(self.config.model_copy(update={"selector": cut}))
            if cut is not None
            else self.selector
        )
        """What a lazy cut plans with (`lazy.selector`)."""
        self._budget_config: WeaverConfig | None = None
        self.model = model if model is not None or not needs_model(self.config) else self._memory_model()
        self.annotator = build_annotator(self.config, self.model)
        self.task = ""
        self.weaving = Weaving(
            self.name, WeaveSettings.of(self.config), self._plan, lambda: self.graph.nodes, state=self._state
        )

    def _memory_model(self) -> Model:
        """One client for all memory work, so retries, the circuit breaker and usage are shared."""
        from contextweaver.models import memory_model

        return memory_model(self.config.memory_model)

    def begin(self, messages: Sequence[Message]) -> None:
        """Set the root N_0: the system prompt and the task, kept verbatim in every context."""
        if len(self.graph):
            raise CallOrder("begin() was already called: use a new ContextWeaver per conversation")
        root = root_node(messages)
        self.task = root.step.observation
        self.graph.add(root)

    def add_step(self, step: Step) -> Node:
        """Algorithm 1 for a new step k: extract, validate, select parents, summarize. A stage that raises
        leaves the step stored with a plain placeholder (`boundary`), never lost."""
        if not len(self.graph):
            raise CallOrder("call begin(messages) with the system prompt and task before add_step()")
        k = len(self.graph)
        node = make_node(k, step, recall=self.config.recall)  # 1. node extraction: facts and tokens, once
        self.open_file.follow(node)  # an editor's edit of the open file names it

        observed = "" if is_answer(step.observation) else step.observation  # a recall repeats old runs
        verdict = boundary.verdict(self.tracker, k, step.action, observed)  # 2. validation
        node.test_results = dict(verdict.results)
        node.inferred_passes = verdict.inferred
        node.runner = verdict.report.runner if verdict.report is not None else ""
        node.validation_status = verdict.status
        candidates = self.graph.candidates(k)  # 3. parents among earlier passed/unknown nodes
        self.graph.add(node)
        self.written.record(node)
        self.changed.record(node)
        for earlier in verdict.supersedes:
            self.graph.label(earlier, ValidationStatus.SUPERSEDED, k, verdict.reason)

        annotation = boundary.annotation(
            self.annotator, node, candidates, self.graph, self.task, self.config.max_parents
        )
        self.graph.set_parents(k, annotation.parents)
        node.summary = annotation.summary  # 4. summaries feed the analyzer, never the context
        node.dependency_summary = annotation.dependency_summary
        return node

    def restore(self, node: Node, labels: Sequence[LabelRecord]) -> None:
        """Add a node annotated earlier (read from a store) as add_step left it, with nothing recomputed:
        its parents, summaries and status as given, the labels its step gave, its tests re-recorded."""
        if node.index != len(self.graph) or not len(self.graph):
            raise CallOrder(f"cannot restore node {node.index}: the graph holds {len(self.graph)} nodes")
        self.tracker.record(node.index, node.test_results, node.inferred_passes, node.runner)
        parents, node.parents = node.parents, ()
        self.open_file.follow(node)
        node.recall = self.config.recall
        self.graph.add(node)
        self.written.record(node)
        self.changed.record(node)
        self.graph.set_parents(node.index, list(parents))
        for label in labels:
            self.graph.label(label.index, label.status, label.by, label.reason)

    def context(self, max_tokens: int | None = None) -> WovenContext:
        """Steps 5-7: warmup or the selector's plan, then weaving (placeholders, TEST STATUS, budget).

        In lazy mode (the default) the history passes through unchanged until it would exceed the
        budget's high-water mark; then it is woven once, down to the low-water mark, and frozen
        (`weaving/modes.py` decides).
        """
        return detached(self.shared_context(max_tokens))

    def shared_context(self, max_tokens: int | None = None) -> WovenContext:
        """`context`, its messages shared with the later contexts (`reweave`): for readers only."""
        if not len(self.graph):
            raise CallOrder("call begin(messages) before context()")
        status_line = self.tracker.status_line(self.config.status_line_chars)
        return self.weaving.context(self._budget(max_tokens), status_line)

    def lazy(self, max_tokens: int | None = None) -> LazyContext:
        """Lazy mode's growing context for a budget (`max_tokens`, else the configured one)."""
        return self.weaving.lazy(self._budget(max_tokens))

    def _budget(self, max_tokens: int | None) -> int | None:
        return max_tokens if max_tokens is not None else self.config.budget

    def _plan(self, budget: float | None, cut: bool) -> Plan:
        """Warmup (at most W steps: all of them, no selector asked), else the selector's plan (a lazy
        cut's: `cut_selector`) for the budget in force (a selector may size what it keeps by its room),
        with the outputs a later kept one repeats compressed."""
        warmup = warmup_plan(self.graph, self.config.window)
        if warmup is not None:
            return warmup
        plan = (self.cut_selector if cut else self.selector).plan(self.graph, self._config_at(budget))
        if self.config.drop_repeated_outputs:
            plan = drop_repeated_outputs(plan, self.graph.nodes)
        return plan

    def _config_at(self, budget: float | None) -> WeaverConfig:
        """The config with the budget in force; the last one is kept, as per-step weaving asks for the
        same budget every step (a cut's target changes from cut to cut, and cuts are rare)."""
        key = None if budget is None else int(budget)
        if key == self.config.budget:
            return self.config
        if self._budget_config is None or self._budget_config.budget != key:
            self._budget_config = self.config.model_copy(update={"budget": key})
        return self._budget_config

    def _state(self) -> WorkingState | None:
        return (
            WorkingState(self.graph.nodes, self.tracker, self.written, self._recall_hint, self.changed)
            if self.config.working_state
            else None
        )

    @property
    def _recall_hint(self) -> str:
        return self.config.recall_hint if self.config.recall else ""

    def recall(
        self,
        handle: str | int | Sequence[int] | None = None,
        page: int = 1,
        more: str = "",
        *,
        query: str | None = None,
        budget: int = QUERY_BUDGET,
    ) -> Recalled:
        """The steps `handle` names ("12", "3-5,9", or numbers) as the agent saw them, byte for byte, each
        under a line saying what it was; paged (`page`, from 1) to a quarter of the room the budget leaves
        above the root (`page_tokens`). `more` is how the agent asks for the next page ("{handle}" and
        "{page}" filled in). With `query` instead: the steps the context does not hold whole that best
        answer it, within `budget` o200k tokens (`nodes/recall_query.py`), in the order they happened."""
        if query is not None:
            index = self.__dict__.setdefault("_queries", QueryIndex())  # built on the first query, then kept
            for node in self.graph.nodes[len(index) + 1 :]:
                index.add(node.index, step_text(node))
            candidates, record = node_records(self.graph.nodes, self._held_whole())
            parents = self.graph.nodes
            return recall_query(
                index, query, budget, candidates, record, parents=lambda s: parents[s].parent_ids
            )
        if handle is None:
            raise BadHandle("recall takes step numbers (12, 3-5) or a query of words to search by")
        limit = self.config.budget
        messages = None if limit is None else Budget(limit, self.config.token_safety_factor).messages
        tokens = page_tokens(messages, self.graph.node(0).full_tokens)
        return recall_steps(self.graph.nodes, handle, page, tokens, more)

    def _held_whole(self) -> set[int]:
        """The steps the last context holds whole (a query searches the rest): in lazy mode those its last
        cut kept in full and every step appended since (read, never woven: asking cuts nothing), in
        per-step mode those of the context woven now. None asked for yet: none (every step is searched)."""
        if self.config.mode != "lazy":
            return {d.index for d in self.shared_context().shown if d.mode == "full"}
        lazies = self.weaving._lazy  # the growing contexts by budget: the configured one, else the newest
        lazy = lazies.get(self.config.budget) or max(lazies.values(), key=lambda c: c.upto, default=None)
        if lazy is None or not lazy.upto:
            return set()
        return {d.index for d in lazy.taken if d.mode == "full"} | set(range(lazy.upto + 1, len(self.graph)))

    @property
    def nodes(self) -> list[Node]:
        return self.graph.nodes

    def stats(self) -> dict[str, Any]:
        """Counters of the memory's own work (analyzer calls, fallbacks, LLM usage)."""
        out: dict[str, Any] = {"steps": len(self.graph) - 1 if len(self.graph) else 0}
        for part in (
            self.annotator,
            getattr(self.annotator, "analyzer", None),
            getattr(self.annotator, "summarizer", None),
        ):
            for key, value in (getattr(part, "stats", None) or {}).items():
                out[f"{getattr(part, 'name', 'annotator')}.{key}"] = value
        if self.model is not None:
            from contextweaver.models import usage_of

            usage = usage_of(self.model)
            if usage is not None:
                out.update({f"memory.{k}": v for k, v in usage.total.as_dict().items()})
        return out
