"""What the agent wrote, as it now stands: each file's text replayed from the writes of its steps.

The text a later edit replaces is most often one the agent wrote itself: a script it created and has
edited since, a function it rewrote. A cut that drops the create and keeps a later `str_replace` call
loses the rest of the file, and the calls of every change take more tokens than the text they leave.
So the session replays each step's writes (`nodes/writes.py`) once, as the step is added: a whole
file's text with its replacements applied, or, for a file never written whole, the parts it wrote. A
change no action shows (`sed -i`, a script) is said with the text, never hidden; `rm` or a revert
(`git checkout f`) forgets the file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field

from contextweaver.nodes.views import SpellingIndex, file_key
from contextweaver.nodes.writes import Write, find_writes
from contextweaver.records import Node
from contextweaver.tokens import count_text

PARTS = 4
"""Most parts kept of a file never written whole (the newest)."""


@dataclass
class Part:
    text: str
    steps: list[int]
    whole: bool


@dataclass
class WrittenFiles:
    """Each path's parts as its writes left them, the most recently written path last. Indexed by file
    name, so a step's writes and a weave's texts cost what they touch, not a pass over every file."""

    files: dict[str, list[Part]] = field(default_factory=dict)
    changed_since: dict[str, int] = field(default_factory=dict)
    """A file changed since in a way no action shows (`sed -i`, a script): the step of that change."""
    _paths: SpellingIndex = field(default_factory=SpellingIndex)
    """The paths of `files`, in its order."""
    _in_place: Counter[str] = field(default_factory=Counter)
    """The file names of the files never written whole, with how many paths have each."""
    _blocks: dict[str, tuple[int | None, list[int], str, int]] = field(default_factory=dict)
    """path -> (its `changed_since`, its steps, its block, the block's tokens), while its parts stand."""

    def record(self, node: Node) -> None:
        """Replay one step's writes; note the changes its action does not show, forget deleted files."""
        facts = node.facts
        writes = find_writes(node.step.action) if facts.edited_files or "<<" in node.step.action else []
        for write in writes:
            self._apply(node.index, write)
        written = {w.path for w in writes}
        gone = (facts.deleted_files | facts.reverted_files) - written  # a revert: the repository's text again
        changed = facts.edited_files - written
        if not gone and not changed:  # the usual step
            return
        deleted = {p for g in gone for p in self._paths.spellings(g)}
        for path in deleted:
            self._pop(path)
        for path in {p for c in changed for p in self._paths.spellings(c)} - deleted:
            self.changed_since[path] = node.index

    def _apply(self, index: int, write: Write) -> None:
        # one file under two spellings (`r.py`, `/testbed/r.py`) is one entry
        known = next(iter(self._paths.spellings(write.path)), write.path)
        parts = self._pop(known)
        if known in self.changed_since:  # kept under the spelling the agent uses now
            self.changed_since[write.path] = self.changed_since.pop(known)
        if write.old is None and not write.append:
            parts = [Part(write.new, [index], True)]
            self.changed_since.pop(write.path, None)
        elif write.append and parts and parts[-1].whole:
            parts[-1] = Part(parts[-1].text + write.new, [*parts[-1].steps, index], True)
        else:
            target = next((p for p in reversed(parts) if write.old and write.old in p.text), None)
            if target is not None and write.old is not None:
                target.text = target.text.replace(write.old, write.new, 1)
                target.steps.append(index)
            elif write.new.strip():
                parts = [p for p in parts if not p.whole][-(PARTS - 1) :] + [Part(write.new, [index], False)]
        if parts:
            self._put(write.path, parts)

    def _pop(self, path: str) -> list[Part]:
        parts = self.files.pop(path, [])
        if parts:
            self._paths.discard(path)
            self._forget(path, parts)
        return parts

    def _put(self, path: str, parts: list[Part]) -> None:
        """Set `path`'s parts: a new path goes last, a known one keeps its place (as in a dict)."""
        if path in self.files:
            self._forget(path, self.files[path])
        self._paths.add(path)
        self.files[path] = parts
        if not parts[0].whole:
            self._in_place[file_key(path)] += 1

    def _forget(self, path: str, parts: list[Part]) -> None:
        """Drop what was derived from `path`'s parts."""
        self._blocks.pop(path, None)
        if not parts[0].whole:
            self._in_place[file_key(path)] -= 1
            if not self._in_place[file_key(path)]:
                del self._in_place[file_key(path)]

    def edited_in_place(self) -> set[str]:
        """The file names of the files never written whole: the files the agent changed in place."""
        return set(self._in_place)

    def blocks(self, named: Collection[str], shown: Collection[int], tokens: float) -> tuple[list[str], int]:
        """Texts of the files `named` (by file name), the most recently written first, each whole or
        left out, within `tokens`, and the tokens they take; a file whose every writing step is `shown`
        is not repeated."""
        out: list[str] = []
        taken = 0
        kept = shown if isinstance(shown, set | frozenset) else set(shown)
        paths = {p for key in set(named) for p in self._paths.by_key.get(key, ())}
        for path in sorted(paths, key=self._paths.order, reverse=True):
            steps, block, cost = self._block(path)
            if kept.issuperset(steps):
                continue
            if taken + cost <= tokens:
                out.append(block)
                taken += cost
        return out, taken

    def _block(self, path: str) -> tuple[list[int], str, int]:
        """The path's steps, its block and the block's tokens, made once while its text stands."""
        changed = self.changed_since.get(path)
        cached = self._blocks.get(path)
        if cached is None or cached[0] != changed:
            parts = self.files[path]
            steps = sorted({s for p in parts for s in p.steps})
            block = _block(path, parts, steps, changed)
            cached = self._blocks[path] = (changed, steps, block, count_text(block) + 1)
        return cached[1:]


def _block(path: str, parts: list[Part], steps: list[int], changed: int | None) -> str:
    by = f"step{'s' if len(steps) > 1 else ''} {', '.join(map(str, steps))}"
    if changed is not None:  # a later write leaves that change's text as unknown as before
        by += f" (step {changed} changed it {'since' if changed > steps[-1] else 'too'}, not shown here)"
    if len(parts) == 1 and parts[0].whole:
        return f"- {path} as written by {by}:\n```\n{parts[0].text.rstrip()}\n```"
    texts = "\n```\n...\n```\n".join(p.text.rstrip() for p in parts)
    return f"- parts of {path} as written by {by}:\n```\n{texts}\n```"
