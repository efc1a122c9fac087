"""What a budgeted weave looks up in the run, kept as the run grows: a weave reads what its context holds,
not every step of the run.

A weave under a budget chooses a context of a few dozen steps, but it used to read every step several
times to choose them (the person's steps, placeholders newest first while they fit, older edits' calls,
each file's latest change, the tokens the placeholders would take, the decisions of the dropped steps):
a replay, which weaves at every cut or step, was quadratic in the run. Each of those reads is an index
here, extended by the steps appended since the last weave and shared by every weave of the run.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from contextweaver.nodes.render import call_messages
from contextweaver.records import Decision, Decisions, Node

NONE = 1 << 62
"""The value of a position that holds nothing to find."""
DROPPED = "dropped to fit the budget"
"""Why a step is not in the context at all (the context's `budget` says which)."""
Grow = Callable[["MinTree", Node], None]
"""How a tree takes the next step of the run."""


class MinTree:
    """Values by position (appended or set), and the last position before a given one whose value is at
    most a bound, in O(log n): "the newest step not yet read whose form fits the room left"."""

    def __init__(self) -> None:
        self.size = 0
        self.capacity = 1
        self.tree = [NONE, NONE]

    def append(self, value: int) -> None:
        if self.size == self.capacity:
            leaves = self.tree[self.capacity :] + [NONE] * self.capacity
            self.capacity *= 2
            self.tree = [NONE] * self.capacity + leaves
            for node in range(self.capacity - 1, 0, -1):
                self.tree[node] = min(self.tree[2 * node], self.tree[2 * node + 1])
        self.size += 1
        self.set(self.size - 1, value)

    def set(self, position: int, value: int) -> None:
        tree = self.tree
        node = position + self.capacity
        tree[node] = value
        node //= 2
        while node:
            tree[node] = min(tree[2 * node], tree[2 * node + 1])
            node //= 2

    def last_at_most(self, bound: float, before: int) -> int:
        """The last position before `before` whose value is at most `bound`, or -1."""
        tree, capacity = self.tree, self.capacity
        left, right = capacity, min(before, self.size) + capacity
        while left < right:  # the right-hand nodes of the range come newest first as the walk climbs
            if right & 1:
                right -= 1
                if tree[right] <= bound:
                    return self._descend(right, bound)
            if left & 1:  # only the root, when the range is the whole tree
                if tree[left] <= bound:
                    return self._descend(left, bound)
                left += 1
            left //= 2
            right //= 2
        return -1

    def _descend(self, node: int, bound: float) -> int:
        tree, capacity = self.tree, self.capacity
        while node < capacity:
            node = 2 * node + 1 if tree[2 * node + 1] <= bound else 2 * node
        return node - capacity


class AfterRoot(Sequence[Node]):
    """The steps of a run after its root, read in place: `nodes[1:]` copied the whole run at every weave."""

    def __init__(self, nodes: Sequence[Node]) -> None:
        self.nodes = nodes

    def __len__(self) -> int:
        return len(self.nodes) - 1

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, slice):
            return [self.nodes[i + 1] for i in range(*item.indices(len(self)))]
        if item < 0:
            item += len(self)
        if not 0 <= item < len(self):
            raise IndexError(item)
        return self.nodes[item + 1]


def call_tokens(node: Node) -> int:
    """The tokens of the step's call form (built once per node and cached on it)."""
    if node.call_form is None:
        call_messages(node)
    assert node.call_form is not None
    return node.call_form[1]


def shows_change(node: Node) -> bool:
    """Whether the step's call names a file it changed: an editor's `edit N:M` on the open file names none,
    and a later edit of that file takes its line numbers from the output, not from this call."""
    edited = node.facts.edited_files
    return bool(edited) and any(path in node.step.action for path in edited)


def changes(node: Node) -> bool:
    """Whether the step changed, deleted or put back a file (the note's trace gives these first)."""
    facts = node.facts
    return bool(facts.edited_files or facts.deleted_files or facts.reverted_files)


class RunIndex:
    """The steps of one run by position, and what weaves look up in them. Runs only grow: steps appended
    since the last weave are read once; a run that changed otherwise is read again from the start."""

    def __init__(self) -> None:
        self.steps: list[Node] = []
        self.position: dict[int, int] = {}
        self.persons: list[int] = []
        self.full_sums = [0]
        self.compressed_sums = [0]
        self.smallest = NONE
        """The fewest tokens any step's whole or placeholder form takes."""
        self.changed: list[int] = []
        """Positions of the steps that changed a file (`changes`)."""
        self._trees: dict[str, tuple[MinTree, Grow]] = {}
        self._latest: dict[str, int] = {}
        self._latest_of: dict[int, int] = {}
        """Per position: how many files it is the latest change of."""
        self._dropped: list[Decision] = []

    def sync(self, steps: Sequence[Node]) -> RunIndex:
        seen = len(self.steps)
        if seen and (
            len(steps) < seen or steps[0] is not self.steps[0] or steps[seen - 1] is not self.steps[-1]
        ):
            self.__init__()  # type: ignore[misc]
            seen = 0
        for node in steps[seen:]:
            self._append(node)
        return self

    def _append(self, node: Node) -> None:
        position = len(self.steps)
        self.steps.append(node)
        self.position[node.index] = position
        if node.step.kind == "user":
            self.persons.append(position)
        if changes(node):
            self.changed.append(position)
        self.smallest = min(self.smallest, node.full_tokens, node.compressed_tokens)
        self.full_sums.append(self.full_sums[-1] + node.full_tokens)
        self.compressed_sums.append(self.compressed_sums[-1] + node.compressed_tokens)
        for tree, grow in self._trees.values():
            grow(tree, node)

    def get(self, index: int) -> Node | None:
        position = self.position.get(index)
        return None if position is None else self.steps[position]

    def _tree(self, name: str, grow: Grow) -> MinTree:
        """A tree made on first use (a run may never need some) and grown with the run from then on."""
        if name not in self._trees:
            tree = MinTree()
            self._trees[name] = (tree, grow)
            for node in self.steps:
                grow(tree, node)
        return self._trees[name][0]

    def placeholders(self) -> MinTree:
        """Each step's placeholder form's tokens."""
        return self._tree("placeholders", lambda tree, node: tree.append(node.compressed_tokens))

    def calls(self) -> MinTree:
        """Each step's call form's tokens."""
        return self._tree("calls", lambda tree, node: tree.append(call_tokens(node)))

    def edit_calls(self) -> MinTree:
        """The call form's tokens of each step whose call names a file it changed (`shows_change`)."""
        return self._tree(
            "edits", lambda tree, node: tree.append(call_tokens(node) if shows_change(node) else NONE)
        )

    def latest_edit_calls(self) -> MinTree:
        """As `edit_calls`, but only the steps that are some file's latest change (edited, not deleted)."""
        return self._tree("latest", self._grow_latest)

    def _grow_latest(self, tree: MinTree, node: Node) -> None:
        position = tree.size
        tree.append(NONE)
        for path in node.facts.edited_files:
            earlier = self._latest.get(path)
            if earlier is not None:
                self._latest_of[earlier] -= 1
                if not self._latest_of[earlier]:
                    del self._latest_of[earlier]
                    tree.set(earlier, NONE)
            self._latest[path] = position
            self._latest_of[position] = self._latest_of.get(position, 0) + 1
        if position in self._latest_of and shows_change(node):
            tree.set(position, call_tokens(node))

    def decisions(self, positions: Sequence[int], taken: Sequence[Decision]) -> Decisions:
        """Every step's decision: `taken` (those of the steps at `positions`, in order) and the others as
        dropped, listed only when read (`Decisions`). A dropped step's decision is made once and shared by
        every weave (decisions are frozen); the row is extended now, so a later weave's growing it, or a
        run read again from the start, leaves what this one lists as it was."""
        row, count = self._dropped, len(self.steps)
        row += [Decision(n.index, "dropped", DROPPED, 0) for n in self.steps[len(row) :]]

        def make() -> list[Decision]:
            made: list[Decision] = []
            start = 0
            for position, decision in zip(positions, taken, strict=True):
                made += row[start:position]
                made.append(decision)
                start = position + 1
            return made + row[start:count]

        return Decisions(count, make)


_INDEXES: dict[int, RunIndex] = {}


def run_index(root: Node, steps: Sequence[Node]) -> RunIndex:
    """The index of the run under `root`, brought up to `steps` (kept while the root lives)."""
    index = _INDEXES.get(id(root))
    if index is None:
        index = _INDEXES[id(root)] = RunIndex()
        weakref.finalize(root, _INDEXES.pop, id(root), None)
    return index.sync(steps)
