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

from collections.abc import Collection
from dataclasses import dataclass, field

from contextweaver.nodes.views import file_key, same_file
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
    """Each path's parts as its writes left them, the most recently written path last."""

    files: dict[str, list[Part]] = field(default_factory=dict)
    changed_since: dict[str, int] = field(default_factory=dict)
    """A file changed since in a way no action shows (`sed -i`, a script): the step of that change."""

    def record(self, node: Node) -> None:
        """Replay one step's writes; note the changes its action does not show, forget deleted files."""
        facts = node.facts
        writes = find_writes(node.step.action) if facts.edited_files or "<<" in node.step.action else []
        for write in writes:
            self._apply(node.index, write)
        written = {w.path for w in writes}
        gone = (facts.deleted_files | facts.reverted_files) - written  # a revert: the repository's text again
        changed = facts.edited_files - written
        if not gone and not changed:  # the usual step: no pass over every file written so far
            return
        for path in list(self.files):
            if any(same_file(path, g) for g in gone):
                del self.files[path]
            elif any(same_file(path, c) for c in changed):
                self.changed_since[path] = node.index

    def _apply(self, index: int, write: Write) -> None:
        # one file under two spellings (`r.py`, `/testbed/r.py`) is one entry
        known = next((p for p in self.files if same_file(p, write.path)), write.path)
        parts = self.files.pop(known, [])
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
            self.files[write.path] = parts

    def edited_in_place(self) -> set[str]:
        """The file names of the files never written whole: the files the agent changed in place."""
        return {file_key(path) for path, parts in self.files.items() if not parts[0].whole}

    def blocks(self, named: Collection[str], shown: Collection[int], tokens: float) -> tuple[list[str], int]:
        """Texts of the files `named` (by file name), the most recently written first, each whole or
        left out, within `tokens`, and the tokens they take; a file whose every writing step is `shown`
        is not repeated."""
        out: list[str] = []
        taken = 0
        kept = set(shown)
        for path, parts in reversed(self.files.items()):
            steps = sorted({s for p in parts for s in p.steps})
            if file_key(path) not in named or kept.issuperset(steps):
                continue
            block = _block(path, parts, steps, self.changed_since.get(path))
            cost = count_text(block) + 1
            if taken + cost <= tokens:
                out.append(block)
                taken += cost
        return out, taken


def _block(path: str, parts: list[Part], steps: list[int], changed: int | None) -> str:
    by = f"step{'s' if len(steps) > 1 else ''} {', '.join(map(str, steps))}"
    if changed is not None:  # a later write leaves that change's text as unknown as before
        by += f" (step {changed} changed it {'since' if changed > steps[-1] else 'too'}, not shown here)"
    if len(parts) == 1 and parts[0].whole:
        return f"- {path} as written by {by}:\n```\n{parts[0].text.rstrip()}\n```"
    texts = "\n```\n...\n```\n".join(p.text.rstrip() for p in parts)
    return f"- parts of {path} as written by {by}:\n```\n{texts}\n```"
