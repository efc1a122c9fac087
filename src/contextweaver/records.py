"""The records that flow through ContextWeaver: steps in, nodes in the graph, woven contexts out."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import Any, Literal

Message = dict[str, Any]
"""One OpenAI-style chat message: role, content, optional tool_calls / tool_call_id."""

PLACEHOLDER = "Old environment output: ({lines} lines omitted)"
"""SWE-agent's placeholder."""
HANDLE = ", #{step}"
"""What a placeholder, a trim or an excerpt marker adds with recall on: the step to read again in full."""
IMAGES_SUFFIX = " ({images} images omitted)"


class ValidationStatus(StrEnum):
    """Label of a node from the validation layer (SPEC section 5)."""

    PASSED = "passed"
    FAILED = "failed"
    UNKNOWN = "unknown"
    SUPERSEDED = "superseded"


class TestStatus(StrEnum):
    """Outcome of one test as a runner reported it."""

    __test__ = False  # not a pytest test class

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    XFAIL = "xfail"
    XPASS = "xpass"

    @property
    def is_failure(self) -> bool:
        return self in (TestStatus.FAILED, TestStatus.ERROR)


@dataclass(frozen=True)
class Step:
    """One agent step H_k = (thought, action, observation), plus the chat messages it came from.

    `messages` holds the source messages verbatim (the assistant message, then one message per
    observation: role "tool" with its tool_call_id, or role "user" for text protocols such as
    mini-swe-agent's). When empty, weaving synthesizes an assistant + user pair from the text.
    A step of kind "user" is a message a person wrote mid-run: always kept verbatim.
    """

    thought: str = ""
    action: str = ""
    observation: str = ""
    messages: tuple[Message, ...] = ()
    images: int = 0
    kind: Literal["agent", "user"] = "agent"
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    def chat_messages(self) -> tuple[Message, ...]:
        """The messages this step contributes to a conversation (shared: copy before changing one)."""
        return self.messages or self._synthesized

    @cached_property
    def _synthesized(self) -> tuple[Message, ...]:
        """Without source messages: the assistant + user pair from the text, built once."""
        if self.kind == "user":
            return ({"role": "user", "content": self.observation},)
        assistant = "\n\n".join(part for part in (self.thought, self.action) if part)
        return ({"role": "assistant", "content": assistant}, {"role": "user", "content": self.observation})


@dataclass(frozen=True)
class Parent:
    """A parent edge N_i -> N_k with the analyzer's confidence and reason."""

    index: int
    confidence: float
    reason: str


@dataclass(frozen=True)
class Annotation:
    """What the memory work made of a new step: its summary, its parents, its dependency summary."""

    summary: str
    parents: list[Parent]
    dependency_summary: str


@dataclass(frozen=True)
class Facts:
    """Cheap structured facts extracted from a step, for the heuristic analyzer and explanations."""

    files: frozenset[str] = frozenset()
    symbols: frozenset[str] = frozenset()
    """Code-like items the step's thought and action mention."""
    observed: frozenset[str] = frozenset()
    """Code-like items in the step's observation."""
    commands: tuple[str, ...] = ()
    errors: frozenset[str] = frozenset()
    tests: frozenset[str] = frozenset()
    edited_files: frozenset[str] = frozenset()
    viewed_files: frozenset[str] = frozenset()
    deleted_files: frozenset[str] = frozenset()
    """Paths the step's `rm` / `git rm` / `mv` removed: a change the working-state note keeps."""
    reverted_files: frozenset[str] = frozenset()
    """Paths `git checkout` / `git restore` put back: the agent's changes to them undone."""


@dataclass
class Node:
    """The graph's record of a step (SPEC section 3). Raw text is never edited after creation."""

    index: int
    step: Step
    summary: str = ""
    dependency_summary: str = ""
    parents: tuple[Parent, ...] = ()
    facts: Facts = field(default_factory=Facts)
    test_results: dict[str, TestStatus] = field(default_factory=dict)
    inferred_passes: tuple[str, ...] = ()
    """Earlier failures this step's run showed passing without naming them (its runner passed their scope)."""
    runner: str = ""
    """The runner(s) whose output gave `test_results` (e.g. "pytest"), "" when no test output."""
    validation_status: ValidationStatus = ValidationStatus.UNKNOWN
    superseded_by: int | None = None
    full_tokens: int = 0
    """Tokens of this step's messages kept in full (counted once, when the node is added)."""
    compressed_tokens: int = 0
    """Tokens of this step's messages with observations replaced by the placeholder."""
    compressed: tuple[Message, ...] | None = field(default=None, repr=False, compare=False)
    """The step's messages with observations replaced by the placeholder (built once, then reused)."""
    call_form: tuple[tuple[Message, ...], int] | None = field(default=None, repr=False, compare=False)
    """The call without its reasoning and its tokens, built at the first lazy cut that needs it."""
    recall: bool = field(default=False, repr=False, compare=False)
    """Its compressed forms name its step (`HANDLE`), so the agent can read it again (`nodes/recall.py`)."""

    @property
    def handle(self) -> str:
        """What its markers add: the step number with recall on, else nothing."""
        return HANDLE.format(step=self.index) if self.recall else ""

    @property
    def id(self) -> str:
        return f"N{self.index}"

    @property
    def parent_ids(self) -> tuple[int, ...]:
        return tuple(p.index for p in self.parents)

    @cached_property
    def output_lines(self) -> frozenset[int]:
        """Hashes of the observation's non-blank lines (in-process only), to spot repeated outputs.

        Computed on first use: only the few steps a context plans in full are ever compared."""
        if self.step.kind != "agent":
            return frozenset()
        return frozenset(hash(line) for line in self.step.observation.splitlines() if line.strip())


Mode = Literal["full", "compressed", "trimmed", "dropped"]


@dataclass(frozen=True)
class Decision:
    """How one step appears in a woven context, and why (explanations are data)."""

    index: int
    mode: Mode
    reason: str
    tokens: int


class Decisions(Sequence[Decision]):
    """Every step's decision in order, made on first read: a long run's context drops most of its steps, and
    listing them all at every step made a replay quadratic in the run; readers of what a context holds read
    `WovenContext.shown`. Compares equal to a list of the same decisions; copied or pickled as a list."""

    def __init__(self, count: int, make: Callable[[], list[Decision]]) -> None:
        self._count = count
        self._make: Callable[[], list[Decision]] | None = make
        self._made: list[Decision] = []

    @property
    def listed(self) -> list[Decision]:
        if self._make is not None:
            self._made, self._make = self._make(), None
        return self._made

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, item: Any) -> Any:
        return self.listed[item]

    def __iter__(self) -> Iterator[Decision]:
        return iter(self.listed)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and self.listed == list(other)

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (self.listed,))

    def __repr__(self) -> str:
        return repr(self.listed)

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True)
class Layout:
    """Where a woven context's steps lie in its messages: the first message of each step it holds, and the
    end of its steps (the working-state note follows them). A lazy cut reads the last cut's
    (`weaving/kept_prefix.py`)."""

    starts: dict[int, int]
    end: int

    def state(self) -> dict[str, Any]:
        """As plain data (JSON has no integer keys), for `Layout.restored`."""
        return {"starts": [[index, start] for index, start in self.starts.items()], "end": self.end}

    @classmethod
    def restored(cls, state: dict[str, Any]) -> Layout:
        return cls({int(index): int(start) for index, start in state["starts"]}, int(state["end"]))


@dataclass
class WovenContext:
    """What a strategy returns before an LLM call: messages plus the explanation of each choice."""

    messages: list[Message]
    decisions: Sequence[Decision]
    tokens: int
    full_history_tokens: int
    strategy: str
    budget: int | None = None
    test_status: str | None = None
    notes: list[str] = field(default_factory=list)
    compacted: bool = False
    """True when this context was woven anew in lazy mode (a cut): its prefix differs from the last one."""
    taken: list[Decision] | None = field(default=None, repr=False, compare=False)
    """The decisions of the steps it holds in some form (not dropped), in order, when the weave knows them
    without reading every step's (a budgeted weave): a long run's context drops most of it."""
    layout: Layout | None = field(default=None, repr=False, compare=False)
    """Where its steps lie in `messages`, when a budgeted weave made it."""

    @property
    def shown(self) -> list[Decision]:
        """The decisions of the steps it holds in some form, in order."""
        return self.taken if self.taken is not None else [d for d in self.decisions if d.mode != "dropped"]

    @property
    def kept(self) -> list[int]:
        return [d.index for d in self.decisions if d.mode in ("full", "trimmed")]

    @property
    def compressed(self) -> list[int]:
        return [d.index for d in self.decisions if d.mode == "compressed"]

    @property
    def dropped(self) -> list[int]:
        return [d.index for d in self.decisions if d.mode == "dropped"]

    def text(self) -> str:
        """Plain-text rendering: each message's content in order (what evidence recall reads)."""
        return messages_to_text(self.messages)


def content_text(content: Any) -> str:
    """The text of a message content: a string, or the text parts of a multimodal list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                parts.append(str(part.get("text", "")))
            elif isinstance(part, str):
                parts.append(part)
        return "\n".join(parts)
    return str(content)


def messages_to_text(messages: Sequence[Message]) -> str:
    """Plain text of a conversation: each message's content and tool-call arguments, in order."""
    return "\n\n".join(message_text(m) for m in messages)


def message_text(message: Message) -> str:
    """One message's part of `messages_to_text`: its content, then each tool call's arguments."""
    text = content_text(message.get("content"))
    calls = [str(c.get("function", {}).get("arguments", "")) for c in message.get("tool_calls") or ()]
    return "\n".join(p for p in [text, *calls] if p)
