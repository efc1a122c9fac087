"""Claude Code transcripts: `~/.claude/projects/<project>/<session>.jsonl`.

Each line is an entry: `user` and `assistant` entries carry an Anthropic `message` (content blocks:
text, thinking, tool_use, tool_result, image), linked by `uuid` -> `parentUuid`. Other entries
(`summary`, `system`, `file-history-snapshot`, `progress`, ...) are bookkeeping; those with a
`uuid` still link the chain. What is read:

- The active branch: from the last message back along `parentUuid` (a rewind leaves the abandoned
  branch in the file; it is skipped and counted in meta["off_branch_entries"]). A compaction
  starts a new root (`system` entry, subtype `compact_boundary`) whose `logicalParentUuid` links
  back, so the run before and after it is read as one; the summary the model saw next
  (`isCompactSummary`) is a user step, and meta["compactions"] counts the boundaries.
- Sub-agent entries (`isSidechain`) are left out: the sub-agent's answer reaches the main run as
  its tool result; meta["sidechain_entries"] counts them. A file holding only sidechain entries
  (a sub-agent's own transcript) is read as that agent's run.
- One model response is written as several entries (one block each) sharing `message.id`; they
  are joined back into one assistant message, so parallel calls and their results stay one Step.

A user's own transcript is read as it is found: a line that does not parse (an edit split it in two)
is left out and named in a warning; a parent link to an entry the file does not hold (that line, or
a session resumed from another file) is bridged to the entry before it in file order, also said in a
warning; a branch that opens with no prompt of the user's (its line damaged) takes the session's
`summary` line, else a note saying the prompt is missing, as its task.

The blocks become chat messages with tool calls through formats/anthropic.py, then Steps as for
any chat (formats/openai.py). The system prompt is not recorded, so the root is the first prompt.
"""

from __future__ import annotations

from typing import Any

from contextweaver.formats import anthropic
from contextweaver.formats.base import Trajectory
from contextweaver.formats.openai import chat_trajectory
from contextweaver.formats.source import Record, Source, record_values
from contextweaver.formats.toolcalls import obj

MESSAGE_ENTRIES = ("user", "assistant")


def _is_message_entry(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("type") in MESSAGE_ENTRIES
        and isinstance(value.get("message"), dict)
        and ("parentUuid" in value or "sessionId" in value)
    )


class ClaudeCodeReader:
    name = "claude-code"
    expected = "a Claude Code transcript (JSON Lines of 'user'/'assistant' entries with 'message', 'uuid' and 'parentUuid')"
    keys = frozenset({"type", "message", "uuid", "parentUuid", "sessionId", "isSidechain",
                      "cwd", "version", "timestamp", "summary", "leafUuid"})  # fmt: skip

    reads_damaged_lines = True

    def detect(self, source: Source) -> bool:
        records, damaged = _records(source)
        if not records or len(damaged) >= len(records):
            return False
        values = [r.value for r in records[:50]]
        typed = all(isinstance(v, dict) and isinstance(v.get("type"), str) for v in values)
        return typed and any(_is_message_entry(v) for v in values)

    def read(self, source: Source) -> Trajectory:
        records, damaged = _records(source)
        if records is None:
            raise source.error(f"not JSON Lines; expected {self.expected}")
        lines = {id(r.value): r.line for r in records}
        entries = [r.value for r in records if isinstance(r.value, dict)]
        for record in records:
            value = record.value
            if (
                isinstance(value, dict)
                and value.get("type") in MESSAGE_ENTRIES
                and not _is_message_entry(value)
            ):
                raise source.error(
                    f"line {record.line}: a '{value['type']}' entry without a 'message' object"
                )
        linked = [e for e in entries if e.get("type") in MESSAGE_ENTRIES or isinstance(e.get("uuid"), str)]
        main = [e for e in linked if not e.get("isSidechain")]
        if not any(e.get("type") in MESSAGE_ENTRIES for e in main):
            main = linked  # a sub-agent's own transcript
        branch, bridged = active_branch(main)
        messages = join_responses([e for e in branch if e.get("type") in MESSAGE_ENTRIES])
        warnings = [_damage_warning(damaged)] if damaged else []
        if bridged:
            at = ", ".join(str(lines[id(e)]) for e in bridged[:10]) + (", ..." if len(bridged) > 10 else "")
            warnings.append(
                f"the parentUuid chain breaks {len(bridged)} time(s) (the parent of line(s) {at} is not in "
                "the file): bridged to the entry before in file order"
            )
        if not any(m["role"] == "user" for m in messages[: _first_assistant(messages)]):
            opening, said = _opening(entries, damaged)
            messages.insert(0, {"role": "user", "content": opening})
            warnings.append(said)
        root, steps = chat_trajectory(anthropic.to_chat(messages))
        meta = _meta(entries, branch)
        meta["sidechain_entries"] = len(linked) - len(main) if main is not linked else 0
        meta["off_branch_entries"] = len(main) - len(branch)
        if damaged:
            meta["damaged_lines"] = sorted(damaged)
        if bridged:
            meta["bridged_gaps"] = len(bridged)
        return Trajectory(root=root, steps=steps, source=str(source.path), format=self.name, meta=meta,
                          warnings=warnings)  # fmt: skip


def _records(source: Source) -> tuple[list[Record] | None, dict[int, str]]:
    """The file's records around its damaged lines (line -> problem); a single JSON object is one record."""
    if source.looks_like_jsonl:
        return source.sound_records
    return record_values(source), {}


def _damage_warning(damaged: dict[int, str]) -> str:
    numbers = sorted(damaged)
    shown = ", ".join(map(str, numbers[:10])) + (", ..." if len(numbers) > 10 else "")
    return (
        f"{len(numbers)} damaged line(s) left out ({shown}; line {numbers[0]}: {damaged[numbers[0]]}): "
        "an edit of the file may have split a line in two"
    )


def _first_assistant(messages: list[dict[str, Any]]) -> int:
    return next((i for i, m in enumerate(messages) if m["role"] == "assistant"), len(messages))


def _opening(entries: list[dict[str, Any]], damaged: dict[int, str]) -> tuple[str, str]:
    """The task of a branch that opens with no prompt of the user's, and the warning that says so: the
    session's `summary` line, else a note naming the missing prompt."""
    summary = next(
        (str(e["summary"]) for e in entries if e.get("type") == "summary" and e.get("summary")), None
    )
    if summary is not None:
        return summary, "the run opens with no prompt of the user's: its task is the session's summary line"
    where = f" (on a damaged line, first {min(damaged)})" if damaged else ""
    note = f"(the prompt that opened this session is not in the transcript{where})"
    return note, f"the run opens with no prompt of the user's{where}: its task is a note saying so"


def _parent(entry: dict[str, Any]) -> Any:
    return entry.get("parentUuid") or entry.get("logicalParentUuid")


def active_branch(entries: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The entries from the first to the last message along parent links (file order when unlinked),
    and the entries whose parent the file does not hold, each bridged to the entry before it in file
    order (its parent's line was damaged, or the session resumed another file's)."""
    by_uuid = {e["uuid"]: e for e in entries if isinstance(e.get("uuid"), str)}
    leaf = next((e for e in reversed(entries) if e.get("type") in MESSAGE_ENTRIES), None)
    if not by_uuid or leaf is None:
        return entries, []
    position = {id(e): i for i, e in enumerate(entries)}
    path, seen, bridged = [], set(), []
    current: dict[str, Any] | None = leaf
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        path.append(current)
        parent = _parent(current)
        at = position[id(current)]
        if isinstance(parent, str) and parent not in by_uuid and at > 0:
            bridged.append(current)
            current = entries[at - 1]
        else:
            current = by_uuid.get(parent)
    return path[::-1], bridged[::-1]


def join_responses(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic messages, the entries of one response (same message.id) joined into one message.

    Results written between two entries of one response (a call ran while the response streamed)
    stay after the joined message, which keeps every call before its result.
    """
    messages: list[dict[str, Any]] = []
    last: tuple[Any, int] | None = None  # (message.id, position) of the latest assistant message
    for entry in entries:
        content = entry["message"].get("content")
        if entry["type"] != "assistant":
            messages.append({"role": "user", "content": content if content is not None else ""})
            continue
        response_id = entry["message"].get("id")
        same = last is not None and response_id is not None and response_id == last[0]
        if same and last is not None and all(_only_results(m["content"]) for m in messages[last[1] + 1 :]):
            joined = messages[last[1]]
            joined["content"] = _blocks(joined["content"]) + _blocks(content)
            continue
        messages.append({"role": "assistant", "content": content if content is not None else ""})
        last = (response_id, len(messages) - 1)
    return messages


def _only_results(content: Any) -> bool:
    return isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, list):
        return list(content)
    return [{"type": "text", "text": content}] if content else []


def _meta(entries: list[dict[str, Any]], branch: list[dict[str, Any]]) -> dict[str, Any]:
    first = next((e for e in branch if e.get("type") in MESSAGE_ENTRIES), {})
    model = next((obj(e.get("message")).get("model") for e in branch if e.get("type") == "assistant"), None)
    uuids = {e.get("uuid") for e in branch}
    summaries = [
        str(e.get("summary", ""))
        for e in entries
        if e.get("type") == "summary" and e.get("leafUuid") in uuids
    ]
    meta: dict[str, Any] = {
        key: first[key] for key in ("sessionId", "cwd", "version", "gitBranch") if key in first
    }
    if model:
        meta["model"] = model
    if summaries:
        meta["summaries"] = summaries
    meta["compactions"] = sum(1 for e in branch if e.get("subtype") == "compact_boundary")
    return meta


READER = ClaudeCodeReader()
