"""Read time of long Claude Code transcripts and Codex rollouts, and the proxy's wire conversion cost.

A synthetic run of N tool turns (each: an assistant response written as two entries, one call,
a result of ~40 lines) in each format; best of 3, wall clock. The wire rows time one request's
conversion both ways (request -> chat messages -> request), which the proxy pays per request.
Run: .venv/bin/python benchmarks/session_files.py [turns]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from contextweaver.formats import anthropic, load_trajectory, responses

OUTPUT = "\n".join(f"src/module.py:{i}: value_{i} = compute({i})" for i in range(40))


def claude_entries(turns: int) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    parent = None

    def add(kind: str, message: dict[str, Any]) -> None:
        nonlocal parent
        uuid = f"u{len(entries)}"
        entries.append(
            {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s", "message": message}
        )
        parent = uuid

    add("user", {"role": "user", "content": "Fix the failing test."})
    for n in range(turns):
        add(
            "assistant",
            {"id": f"m{n}", "role": "assistant", "content": [{"type": "text", "text": f"Step {n}."}]},
        )
        call = {
            "type": "tool_use",
            "id": f"t{n}",
            "name": "Bash",
            "input": {"command": f"grep -n value src/m{n}.py"},
        }
        add("assistant", {"id": f"m{n}", "role": "assistant", "content": [call]})
        add(
            "user",
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": OUTPUT}]},
        )
    return entries


def codex_items(turns: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix it."}]}
    ]
    for n in range(turns):
        items.append({"type": "reasoning", "summary": [{"type": "summary_text", "text": f"step {n}"}]})
        items.append({"type": "function_call", "call_id": f"c{n}", "name": "shell",
                      "arguments": json.dumps({"command": ["bash", "-lc", f"grep -n value src/m{n}.py"]})})  # fmt: skip
        items.append({"type": "function_call_output", "call_id": f"c{n}", "output": OUTPUT})
    return items


def best(run: Any, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def _size(path: Path) -> str:
    return f"{path.stat().st_size / 1e6:.1f} MB"


def main(turns: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        claude = Path(folder) / "session.jsonl"
        claude.write_text("".join(json.dumps(e) + "\n" for e in claude_entries(turns)))
        codex = Path(folder) / "rollout.jsonl"
        codex.write_text(
            "".join(json.dumps({"type": "response_item", "payload": i}) + "\n" for i in codex_items(turns))
        )
        request = [e["message"] for e in claude_entries(turns)]
        items = codex_items(turns)
        rows = [
            ("claude-code read", _size(claude), best(lambda: load_trajectory(claude))),
            ("codex read", _size(codex), best(lambda: load_trajectory(codex))),
            ("messages wire round trip", "", best(lambda: anthropic.from_chat(anthropic.to_chat(request)))),
            ("responses wire round trip", "", best(lambda: responses.from_chat(responses.to_chat(items)))),
        ]
    print(f"{turns} tool turns")
    for name, size, seconds in rows:
        print(f"{name:28} {seconds * 1000:8.1f} ms  {seconds * 1e6 / turns:7.1f} us/turn  {size}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
