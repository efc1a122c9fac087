"""What the per-step selection reads of each step, indexed as the history grows.

Per step, kept for the whole run: the words its thought and action say and the files it names (the
modules its import lines name count: `nodes/modules.py`), the lines they say (`RepeatIndex`), and, for a
view of a file, the file and the range of line numbers it shows. Words post to the outputs that hold
them (`postings`), so a query reads the newest outputs of a word, never the whole history.
Per agent output, built from its node alone (`OutputDetail`): its lines (words, tokens), its rows of
passing tests, its repeat keys, and, for a view, its outline and line numbers. Those cost about five
times the output's text, so only the outputs recent plans read are held (`DETAIL_LINES`); another is
built again from its node when a plan reads it (issue 44: a run of 1 GB of output).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass

from contextweaver.nodes.graph import DependencyGraph
from contextweaver.nodes.modules import module_files
from contextweaver.nodes.postings import Posting, post
from contextweaver.nodes.views import (
    file_key,
    folder_of,
    line_numbers,
    outline,
    same_file,
    viewed_file,
)
from contextweaver.records import Node
from contextweaver.selectors.passing_rows import passing_rows
from contextweaver.selectors.repeat_cut import TASK, OutputKeys, RepeatIndex
from contextweaver.tokens import content_text
from contextweaver.weaving.excerpts import WORD, OutputLines

DETAIL_LINES = 400_000
"""Output lines whose details are held, least recently read dropped first (never one read for the
current step's plan). A plan reads the last `window` outputs and a few dozen candidates: 110k lines a step
in a run of 5,000-line outputs, where this bound builds 1.6 details per output (1 when all are held; 2.9
at 200k lines) and holds about 100 MB (a detail costs about 260 bytes a line)."""


@dataclass(frozen=True)
class OutputDetail:
    """What a plan reads of one agent output, built from its node alone."""

    lines: OutputLines
    keys: OutputKeys
    passing: frozenset[int]
    """The rows that only report a passing test (`passing_rows`)."""
    outline: tuple[int, ...]
    """A file view's definition lines (empty for another output)."""
    numbers: dict[int, int]
    """A file view's line numbers: file line number -> the output's line that shows it."""

    @classmethod
    def of(cls, node: Node, view: bool) -> OutputDetail:
        lines = OutputLines.of(node)
        keys = OutputKeys.of(lines, said_text(node))
        passing = passing_rows(lines.lines)
        if not view:
            return cls(lines, keys, passing, (), {})
        return cls(lines, keys, passing, outline(lines.lines), line_numbers(lines.lines))


def said_text(node: Node) -> str:
    """A step's thought and action, as the index reads them."""
    return f"{node.step.thought}\n{node.step.action}"


class OutputIndex:
    """Append-only: `update(graph)` indexes the nodes added since the last call, each once."""

    def __init__(self) -> None:
        self.repeats = RepeatIndex()
        self._graph: DependencyGraph | None = None
        self._indexed = 0
        self._step_tokens = 0
        """The indexed steps' tokens in full (a running total: the mean step in O(1))."""
        self._said: dict[int, frozenset[str]] = {}
        self._files: dict[int, frozenset[str]] = {}
        self._outputs: set[int] = set()
        """The agent steps (those with an output)."""
        self._details: OrderedDict[int, tuple[OutputDetail, int]] = OrderedDict()
        """Output -> its detail and the last step a plan read it at, least recently read first."""
        self._held = 0
        """Lines of the held details."""
        self.built = 0
        """Details built, those built again included (a held one is read for free)."""
        self._postings: dict[str, Posting] = {}
        self._viewed: dict[int, str] = {}
        self._views: dict[str, list[int]] = {}
        self._folders: dict[str, list[int]] = {}
        """Views by the name of the folder of the file they show."""
        self._view_folder: dict[int, str] = {}
        self._span: dict[int, tuple[int, int]] = {}

    def update(self, graph: DependencyGraph) -> None:
        """Index nodes added since the last call: once per node."""
        self._graph = graph
        if self._indexed == 0 and len(graph):  # the root (system prompt, task) is in every context
            root = "\n".join(content_text(m.get("content")) for m in graph.node(0).step.chat_messages())
            self.repeats.add_said(TASK, root)
        for index in range(self._indexed + 1, len(graph)):
            node = graph.node(index)
            self._step_tokens += node.full_tokens
            said = said_text(node)
            self._said[index] = frozenset(WORD.findall(said))
            self.repeats.add_said(index, said)
            facts = node.facts
            self._files[index] = facts.files | facts.edited_files | facts.viewed_files | module_files(said)
            if node.step.kind != "agent":
                continue
            self._outputs.add(index)
            path = viewed_file(facts.viewed_files, facts.edited_files)
            if path is not None:
                self._viewed[index] = path
                self._views.setdefault(file_key(path), []).append(index)
                folder = folder_of(path)
                if folder is not None:
                    self._view_folder[index] = folder
                    self._folders.setdefault(file_key(folder), []).append(index)
            detail = self._detail(index, reading=False)
            if detail.numbers:
                self._span[index] = (min(detail.numbers), max(detail.numbers))
            post(self._postings, detail.lines.words, index)
        self._indexed = len(graph) - 1

    def _detail(self, index: int, reading: bool = True) -> OutputDetail:
        """An agent output's detail: the held one, else built from its node and held, the least recently
        read dropped beyond DETAIL_LINES (not those read for this step's plan, which reads them again).
        `reading`: a plan reads it (else `update` adds it)."""
        step = self._indexed if reading else -1
        details = self._details
        found = details.get(index)
        if found is not None:
            details.move_to_end(index)
            if found[1] != step and reading:
                details[index] = (found[0], step)
            return found[0]
        assert self._graph is not None  # an output is indexed (so the graph is known) before it is read
        detail = OutputDetail.of(self._graph.node(index), index in self._viewed)
        self.built += 1
        details[index] = (detail, step)
        self._held += len(detail.lines.lines)
        while self._held > DETAIL_LINES and len(details) > 1:
            oldest, (dropped, read_at) = next(iter(details.items()))
            if read_at == self._indexed:
                break
            del details[oldest]
            self._held -= len(dropped.lines.lines)
        return detail

    @property
    def indexed(self) -> int:
        """The last step indexed (every step up to it is)."""
        return self._indexed

    def mean_step(self, k: int) -> float:
        """The mean tokens of steps 1..k in full."""
        return self._step_tokens / max(1, k)

    def said(self, index: int) -> frozenset[str]:
        """The words of a step's thought and action."""
        return self._said.get(index, frozenset())

    def files(self, index: int) -> frozenset[str]:
        """The files a step names, edits, views or imports as a module."""
        return self._files.get(index, frozenset())

    def lines(self, index: int) -> OutputLines | None:
        """An agent step's output as lines (None for a user step)."""
        return self._detail(index).lines if index in self._outputs else None

    def keyed(self, index: int) -> tuple[OutputLines, OutputKeys] | None:
        """An agent step's output lines and repeat keys (None for a user step)."""
        if index not in self._outputs:
            return None
        detail = self._detail(index)
        return detail.lines, detail.keys

    def own(self, index: int) -> frozenset[int]:
        """The output's lines its own step's thought or action holds: the context holds them with that step
        (an edit's output echoing the new text, a script's output echoing the command)."""
        return self._detail(index).keys.own

    def passing(self, index: int) -> frozenset[int]:
        """The output's rows that only report a passing test (`passing_rows`)."""
        return self._detail(index).passing

    def holding(self, word: str, newest: int) -> Posting:
        """The outputs that hold `word`, the newest `newest` of them, oldest first."""
        return self._postings.get(word, ())[-newest:]

    def spread(self, word: str) -> int:
        """How many outputs hold `word` (a word most outputs hold says little)."""
        return len(self._postings.get(word, ()))

    def viewed(self, index: int) -> str | None:
        """The file an output is a view of, if it is one."""
        return self._viewed.get(index)

    def outline(self, index: int) -> tuple[int, ...]:
        """A file view's definition lines."""
        return self._detail(index).outline if index in self._viewed else ()

    def numbers(self, index: int) -> dict[int, int]:
        """A file view's line numbers: file line number -> the output's line that shows it."""
        return self._detail(index).numbers if index in self._viewed else {}

    def span(self, index: int) -> tuple[int, int] | None:
        """The first and last file line numbers a view shows (None: it shows none)."""
        return self._span.get(index)

    def views_of(self, path: str, before: int, newest: int) -> Iterator[int]:
        """Views of `path` older than step `before`, among the newest `newest` views of its file name."""
        for index in self._views.get(file_key(path), ())[-newest:]:
            if index < before and same_file(self._viewed[index], path):
                yield index

    def views_in(self, folder: str, before: int, newest: int) -> Iterator[int]:
        """Views older than step `before` of the files in `folder` (`shop` is `/testbed/src/shop`, as
        `same_file` has it), among the newest `newest` views in folders of its name."""
        for index in self._folders.get(file_key(folder), ())[-newest:]:
            if index < before and same_file(self._view_folder[index], folder):
                yield index
