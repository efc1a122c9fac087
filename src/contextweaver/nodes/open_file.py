"""The file SWE-agent 0.x has open: its `edit` names no file, so an edit whose output does not name it
either (an empty output) changed the file last opened or created.

An `edit` that says `File updated.` shows its file's absolute path in a `[File: ...]` header
(`facts.open_file_edit`); this follows `open` and `create` across steps, so the note names the file as the
agent wrote it, and counts an edit whose output is empty.
"""

from __future__ import annotations

import re
from dataclasses import replace

from contextweaver.nodes.facts import SWE_EDIT, shown_file
from contextweaver.records import Node

_OPENS = re.compile(r"\s*(?:open|create)\s+(\"[^\"\n]+\"|'[^'\n]+'|[^\s\"']+)")
_REFUSED = ("Your proposed edit has introduced new syntax error", "Usage: edit", "No file open")
"""What SWE-agent 0.x's `edit` prints when it changed nothing."""


class OpenFile:
    """One agent's open file, followed step by step (a weaver's, restored with its nodes)."""

    def __init__(self) -> None:
        self.path: str | None = None

    def follow(self, node: Node) -> None:
        """Note the file `open`/`create` makes the open one (as the agent wrote it); name it as the file an
        `edit` changed, in place of the absolute path its output shows (or of none, when it shows nothing)."""
        first = node.step.action.lstrip().split("\n", 1)[0]
        opens = _OPENS.match(first)
        if opens:
            self.path = opens.group(1).strip("'\"")
            return
        if (
            self.path is None
            or not SWE_EDIT.match(first)
            or any(text in node.step.observation[:2000] for text in _REFUSED)
        ):
            return
        shown = {shown_file(node.step.observation)}
        node.facts = replace(node.facts, edited_files=node.facts.edited_files - shown | {self.path})
