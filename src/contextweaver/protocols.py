"""The seams between components. Each strategy behind a seam lives in its own file and is registered by name.

The seams of the outer rooms live beside their implementations: `Reader` in `formats/base.py`, `Store` in
`store/base.py`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from contextweaver.records import Annotation, Message, Node, Parent, Step, WovenContext

if TYPE_CHECKING:
    from contextweaver.config import WeaverConfig
    from contextweaver.nodes.graph import DependencyGraph
    from contextweaver.weaving.plan import Plan


class Analyzer(Protocol):
    """Logical Dependency Analyzer: which earlier nodes does the new node rely on (top m)."""

    name: str

    def select_parents(
        self, node: Node, candidates: Sequence[Node], graph: DependencyGraph, task: str, m: int
    ) -> list[Parent]: ...


class Annotator(Protocol):
    """Parents and summaries of a new node: three calls (analyzer + summarizer) or one fused call."""

    def annotate(
        self, node: Node, candidates: Sequence[Node], graph: DependencyGraph, task: str, m: int
    ) -> Annotation: ...


class Selector(Protocol):
    """Which steps the next context keeps in full, by priority (a Plan for weaving)."""

    name: str

    def plan(self, graph: DependencyGraph, config: WeaverConfig) -> Plan: ...


class Summarizer(Protocol):
    """Node summaries and incremental dependency summaries (never put into the agent's context)."""

    name: str

    def summarize(self, node: Node, task: str) -> str: ...

    def dependency_summary(self, node: Node, parents: Sequence[Node]) -> str: ...


@dataclass(frozen=True)
class Completion:
    """One model reply with the usage the provider reported (or the fake counted)."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str = ""


class Model(Protocol):
    """A chat model: the only component that talks to the network."""

    name: str

    def complete(
        self,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        json_schema: dict[str, Any] | None = None,
    ) -> Completion: ...


@runtime_checkable
class Strategy(Protocol):
    """A context manager: fed the root messages and each step, returns the context for the next call."""

    name: str

    def begin(self, messages: Sequence[Message]) -> None: ...

    def add_step(self, step: Step) -> Node: ...

    def context(self, max_tokens: int | None = None) -> WovenContext: ...

    @property
    def nodes(self) -> Sequence[Node]:
        """Every node so far, indexed by step (0 is the root)."""
        ...

    def stats(self) -> dict[str, Any]:
        """Counters of the strategy's own work (steps, memory calls, fallbacks)."""
        ...
