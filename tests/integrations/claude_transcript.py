"""A Claude Code transcript written here, from the documented entry format (uuid/parentUuid chains, tool_use
and tool_result blocks, a `compact_boundary` entry and the `isCompactSummary` prompt after it)."""

from __future__ import annotations

import json
from pathlib import Path

SESSION = "7a1d3c52-0000-4e6e-9d1a-0c0ffee00001"
CWD = "/home/dev/shop"
SUMMARY = (
    "This session is being continued from a previous conversation that ran out of context. The "
    "conversation is summarized below: the user asked to deploy the shop; the setup script ran."
)


def write_transcript(path: Path, secret: str, steps: int = 30, after: int = 3, compact: bool = True) -> Path:
    """A run whose first command prints `secret` once, `steps` commands later a compaction, then `after`
    more commands; nothing after the first output repeats the secret."""
    entries: list[dict] = []
    last: str | None = None

    def add(kind: str, body: dict, **extra: object) -> None:
        nonlocal last
        uuid = f"00000000-0000-4000-8000-{len(entries) + 1:012d}"
        entries.append({"parentUuid": last, "isSidechain": False, "userType": "external", "cwd": CWD,
                        "sessionId": SESSION, "version": "2.0.30", "type": kind, "uuid": uuid,
                        "timestamp": f"2026-03-02T10:{len(entries) % 60:02d}:00.000Z", **body, **extra})  # fmt: skip
        last = uuid

    def command(n: int, thought: str, line: str, output: str) -> None:
        add("assistant", {"message": {"id": f"msg_{n}", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": thought},
            {"type": "tool_use", "id": f"toolu_{n}", "name": "Bash", "input": {"command": line}}]}})  # fmt: skip
        add("user", {"message": {"role": "user", "content": [
            {"tool_use_id": f"toolu_{n}", "type": "tool_result", "content": output, "is_error": False}]}})  # fmt: skip

    add(
        "user",
        {"message": {"role": "user", "content": "Set up the shop's staging deploy and fix the cart tests."}},
    )
    setup = "\n".join(["creating venv", "installing 41 packages", f"DEPLOY_TOKEN={secret}", "setup done"])
    command(1, "Run the setup script first.", "./scripts/setup.sh --staging", setup)
    for n in range(2, steps + 1):
        listing = "\n".join(f"shop/module_{n}_{j}.py: def handler_{n}_{j}(request): return render(request)"
                            for j in range(40))  # fmt: skip
        command(n, f"Look at part {n} of the shop.", f"grep -rn handler_{n} shop/", listing)
    boundary = last
    if compact:
        add("system", {"subtype": "compact_boundary", "content": "Conversation compacted", "level": "info",
                   "logicalParentUuid": boundary, "compactMetadata": {"trigger": "manual", "preTokens": 90000}})  # fmt: skip
        entries[-1]["parentUuid"] = None
        add("user", {"message": {"role": "user", "content": SUMMARY}, "isCompactSummary": True})
    for n in range(steps + 1, steps + after + 1):
        command(n, "Check the cart tests.", "python -m pytest -q tests/test_cart.py", "2 passed in 0.02s")
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path
