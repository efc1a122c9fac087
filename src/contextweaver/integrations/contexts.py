"""The woven contexts of a run, saved as references to the trajectory's messages plus what was cut.

A context is mostly the trajectory's own messages: storing each one in full made the sidecar 17-20x
the trajectory. Each line of `<name>.contexts.jsonl` is one model query whose `messages` list holds,
per message sent, the trajectory position of a message sent verbatim (an int), a cut ("c<id>": the
message at `ref` with its content's middle replaced by `insert`, keeping `head` and `tail` characters)
or a message of the weaver's own (`{"message": ...}`, e.g. the TEST STATUS line). Cuts and reasons
are defined once, on their own lines, before their first use. `read_contexts` (and the
`contextweaver contexts` command) rebuild every context exactly from this file and the trajectory.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from contextweaver.records import Message, WovenContext

FORMAT = "contextweaver-contexts-2"
MODES = {"full": "F", "compressed": "C", "trimmed": "T", "dropped": "D"}
MODE_NAMES = {char: mode for mode, char in MODES.items()}
Source = tuple[int | None, Message]
"""A message the strategy holds and the position of the trajectory message it came from."""


def _shape(message: Message) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k != "content"}


def align(messages: Sequence[Message], sources: Sequence[Message]) -> list[int | None]:
    """For each woven message, the index of the source message it shows (in full or cut), or None
    for a message of the weaver's own. Both lists are in chronological order, so one pass suffices:
    a message matches the next source when all but their content agree."""
    out: list[int | None] = []
    pointer = 0
    for message in messages:
        if pointer < len(sources) and _shape(message) == _shape(sources[pointer]):
            out.append(pointer)
            pointer += 1
        else:
            out.append(None)
    return out


def _common(a: str, b: str) -> tuple[int, int]:
    """Lengths of the common prefix and suffix of two strings (not overlapping in the shorter)."""
    limit = min(len(a), len(b))
    low, high = 0, limit
    while low < high:  # binary search on slice equality: C-speed compares, log n of them
        middle = (low + high + 1) // 2
        low, high = (middle, high) if a[:middle] == b[:middle] else (low, middle - 1)
    head, low, high = low, 0, limit - low
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if a[len(a) - middle :] == b[len(b) - middle :] else (low, middle - 1)
    return head, low


class ContextEncoder:
    """Encodes one run's contexts; remembers the cuts and reasons already written."""

    def __init__(self) -> None:
        self._cuts: dict[tuple[int, str], int] = {}
        self._reasons: dict[str, int] = {}

    def reset(self) -> None:
        self._cuts.clear()
        self._reasons.clear()

    def encode(
        self, context: WovenContext, sources: Sequence[Source], record: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """Lines to append: new cut and reason definitions, then `record` with decisions and messages."""
        lines: list[dict[str, Any]] = []
        decisions = []
        for d in context.decisions:
            if d.reason not in self._reasons:
                self._reasons[d.reason] = len(self._reasons)
                lines.append({"reason": self._reasons[d.reason], "text": d.reason})
            decisions.append([d.index, MODES[d.mode], d.tokens, self._reasons[d.reason]])
        entries: list[Any] = []
        pointer = 0
        for message in context.messages:
            if pointer < len(sources) and _shape(message) == _shape(sources[pointer][1]):
                position, original = sources[pointer]
                pointer += 1
                if position is None:  # a step built from text, with no message of the list behind it
                    entries.append({"message": message})
                else:
                    entries.append(
                        position if message == original else self._cut(position, original, message, lines)
                    )
            else:  # the weaver's own message (TEST STATUS), not from the trajectory
                entries.append({"message": message})
        lines.append({**record, "decisions": decisions, "messages": entries})
        return lines

    def _cut(self, position: int, original: Message, message: Message, lines: list[dict[str, Any]]) -> Any:
        before, after = original.get("content"), message.get("content")
        if not isinstance(before, str) or not isinstance(after, str):
            return {"message": message}
        key = (position, after)
        if key not in self._cuts:
            head, tail = _common(before, after)
            self._cuts[key] = len(self._cuts)
            insert = after[head : len(after) - tail]
            lines.append(
                {"cut": self._cuts[key], "ref": position, "head": head, "tail": tail, "insert": insert}
            )
        return f"c{self._cuts[key]}"


def clean(message: Message) -> Message:
    return {k: v for k, v in message.items() if k != "extra"}


def read_contexts(contexts: str | Path, trajectory: Sequence[Message]) -> Iterator[dict[str, Any]]:
    """Each saved context with its messages rebuilt exactly, and its decisions as objects.

    `trajectory` is the run's message list (the trajectory file's `messages`).
    """
    cuts: dict[int, dict[str, Any]] = {}
    reasons: dict[int, str] = {}
    path = Path(contexts)
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            item = json.loads(line)
            if "cut" in item:
                cuts[item["cut"]] = item
            elif "reason" in item:
                reasons[item["reason"]] = item["text"]
            elif "query" in item:
                yield _rebuild(item, cuts, reasons, trajectory, f"{path}:{number}")


def _rebuild(
    record: dict[str, Any],
    cuts: dict[int, dict[str, Any]],
    reasons: dict[int, str],
    trajectory: Sequence[Message],
    where: str,
) -> dict[str, Any]:
    messages: list[Message] = []
    for entry in record.get("messages", []):
        if isinstance(entry, int):
            messages.append(clean(trajectory[entry]))
        elif isinstance(entry, str) and entry.startswith("c") and int(entry[1:]) in cuts:
            cut = cuts[int(entry[1:])]
            original = clean(trajectory[cut["ref"]])
            text = str(original.get("content"))
            content = text[: cut["head"]] + cut["insert"] + text[len(text) - cut["tail"] :]
            messages.append({**original, "content": content})
        elif isinstance(entry, dict):
            messages.append(entry.get("message", entry))  # older files stored every message whole
        else:
            raise ValueError(f"{where}: unknown message reference {entry!r}; is this the run's trajectory?")
    decisions = [
        d
        if isinstance(d, dict)
        else {"index": d[0], "mode": MODE_NAMES[d[1]], "tokens": d[2], "reason": reasons.get(d[3], "")}
        for d in record.get("decisions", [])
    ]
    return {**record, "decisions": decisions, "messages": messages}
