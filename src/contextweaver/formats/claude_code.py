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

The blocks become chat messages with tool calls through formats/anthropic.py, then Steps as for
any chat (formats/openai.py). The system prompt is not recorded, so the root is the first prompt.
"""

from __future__ import annotations

from typing import Any

from contextweaver.formats import anthropic
from contextweaver.formats.base import Trajectory
from contextweaver.formats.openai import chat_trajectory
from contextweaver.formats.source import Source, record_values
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

    def detect(self, source: Source) -> bool:
        records = record_values(source)
        if not records:
            return False
        values = [r.value for r in records[:50]]
        typed = all(isinstance(v, dict) and isinstance(v.get("type"), str) for v in values)
        return typed and any(_is_message_entry(v) for v in values)

    def read(self, source: Source) -> Trajectory:
        records = record_values(source)
        if records is None:
            raise source.error(f"not JSON Lines; expected {self.expected}")
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
        branch = active_branch(main)
        messages = join_responses([e for e in branch if e.get("type") in MESSAGE_ENTRIES])
        root, steps = chat_trajectory(anthropic.to_chat(messages))
        meta = _meta(entries, branch)
        meta["sidechain_entries"] = len(linked) - len(main) if main is not linked else 0
        meta["off_branch_entries"] = len(main) - len(branch)
        return Trajectory(root=root, steps=steps, source=str(source.path), format=self.name, meta=meta)


def _parent(entry: dict[str, Any]) -> Any:
    return entry.get("parentUuid") or entry.get("logicalParentUuid")


def active_branch(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries from the first to the last message along parent links (file order when unlinked)."""
    by_uuid = {e["uuid"]: e for e in entries if isinstance(e.get("uuid"), str)}
    leaf = next((e for e in reversed(entries) if e.get("type") in MESSAGE_ENTRIES), None)
    if not by_uuid or leaf is None:
        return entries
    path, seen = [], set()
    current: dict[str, Any] | None = leaf
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        path.append(current)
        current = by_uuid.get(_parent(current))
    return path[::-1]


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
