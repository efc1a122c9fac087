"""What the per-step selection reads of each step, indexed once per node as the history grows.

Per step: the words its thought and action say and the files it names (the modules its import lines
name count: `nodes/modules.py`); per agent output: its lines (words, tokens), its rows of passing tests,
the lines a context already holds elsewhere (`RepeatIndex`), and, for a view of a file, the file and the
view's outline. Words post to the outputs that hold them
(`postings`), so a query reads the newest outputs of a word, never the whole history.
"""

from __future__ import annotations

from collections.abc import Iterator

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
from contextweaver.selectors.passing_rows import passing_rows
from contextweaver.selectors.repeat_cut import TASK, RepeatIndex
from contextweaver.tokens import content_text
from contextweaver.weaving.excerpts import WORD, OutputLines


class OutputIndex:
    """Append-only: `update(graph)` indexes the nodes added since the last call, each once."""

    def __init__(self) -> None:
        self.repeats = RepeatIndex()
        self._indexed = 0
        self._step_tokens = 0
        """The indexed steps' tokens in full (a running total: the mean step in O(1))."""
        self._said: dict[int, frozenset[str]] = {}
        self._files: dict[int, frozenset[str]] = {}
        self._lines: dict[int, OutputLines] = {}
        self._passing: dict[int, frozenset[int]] = {}
        self._postings: dict[str, Posting] = {}
        self._viewed: dict[int, str] = {}
        self._views: dict[str, list[int]] = {}
        self._folders: dict[str, list[int]] = {}
        """Views by the name of the folder of the file they show."""
        self._view_folder: dict[int, str] = {}
        self._outline: dict[int, tuple[int, ...]] = {}
        self._numbers: dict[int, dict[int, int]] = {}
        self._span: dict[int, tuple[int, int]] = {}

    def update(self, graph: DependencyGraph) -> None:
        """Index nodes added since the last call: once per node."""
        if self._indexed == 0 and len(graph):  # the root (system prompt, task) is in every context
            root = "\n".join(content_text(m.get("content")) for m in graph.node(0).step.chat_messages())
            self.repeats.add_said(TASK, root)
        for index in range(self._indexed + 1, len(graph)):
            node = graph.node(index)
            self._step_tokens += node.full_tokens
            said = f"{node.step.thought}\n{node.step.action}"
            self._said[index] = frozenset(WORD.findall(said))
            self.repeats.add_said(index, said)
            facts = node.facts
            self._files[index] = facts.files | facts.edited_files | facts.viewed_files | module_files(said)
            if node.step.kind != "agent":
                continue
            lines = OutputLines.of(node)
            path = viewed_file(facts.viewed_files, facts.edited_files)
            if path is not None:
                self._viewed[index] = path
                self._views.setdefault(file_key(path), []).append(index)
                folder = folder_of(path)
                if folder is not None:
                    self._view_folder[index] = folder
                    self._folders.setdefault(file_key(folder), []).append(index)
                self._outline[index] = outline(lines.lines)
                numbers = self._numbers[index] = line_numbers(lines.lines)
                if numbers:
                    self._span[index] = (min(numbers), max(numbers))
            self._lines[index] = lines
            self.repeats.add_output(index, lines)
            self._passing[index] = passing_rows(lines.lines)
            post(self._postings, lines.words, index)
        self._indexed = len(graph) - 1

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
        return self._lines.get(index)

    @property
    def outputs(self) -> dict[int, OutputLines]:
        """Every indexed output by step (read only)."""
        return self._lines

    def passing(self, index: int) -> frozenset[int]:
        """The output's rows that only report a passing test (`passing_rows`)."""
        return self._passing[index]

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
        return self._outline.get(index, ())

    def numbers(self, index: int) -> dict[int, int]:
        """A file view's line numbers: file line number -> the output's line that shows it."""
        return self._numbers.get(index, {})

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
