"""A scripted model for the real Claude Code and Codex CLIs: the same seven-call session on both wires.

The session fixes tests/integrations/toyrepo.py's repository: list files, read calc.py, run pytest
(fails), edit, run pytest (passes), `git diff`, answer. Which call comes next is read from the newest
call the request holds (its id names its turn), so the script needs nothing of the history the proxy
may have cut: only the newest step, which the proxy must always keep.

python scripted.py LOG.jsonl [INPUT_TOKENS] [--recall | --mcp]   # prints the port, serves until killed, logs bodies

INPUT_TOKENS: the prompt size the first Responses answer reports (a large one makes Codex compact); a request
holding Codex's `compaction_trigger` gets exactly one `compaction` item back.

With `--recall`, once a request's context carries the proxy's recall command (a cut happened), the
seventh call runs it through the CLI's own shell for the first step the context names, before the answer.
With `--mcp`, the seventh call (after a cut) asks the `contextweaver mcp` server's `recall` tool by words of
the failing test run: Claude Code's `mcp__contextweaver__recall` tool, or in Codex's code mode
`tools.mcp__contextweaver__recall(...)` inside its `exec` tool (both CLIs defer MCP tools: they are named to
the model, and callable, without their schemas in the request).
"""

from __future__ import annotations

import base64
import json
import re
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from contextweaver.testing import fake_wire  # noqa: E402
from contextweaver.testing.fake_server import FakeLLMServer, Reply, Request  # noqa: E402
from tests.integrations.toyrepo import PYTHON  # noqa: E402

PYTEST = f"{PYTHON} -m pytest -v -p no:cacheprovider test_calc.py"
ANSWER = "Fixed: add in calc.py subtracted; it now adds and both tests pass."
TURN_ID = re.compile(r"step(\d+)")
RECALL = re.compile(r"curl -s (http://[^\s`]+/contextweaver/recall/[0-9a-f]{24}/)N")
NAMED = re.compile(r"omitted, #(\d+)[)\]]|steps omitted: ([\d, -]+) \(")
FAILING_RUN = 3
"""The step that ran the failing tests (a shell output on both CLIs): recalled when the context names it."""
RECALLING = "--recall" in sys.argv
MCP = "--mcp" in sys.argv
MCP_QUERY = "the failing test run: FAILED test_add assert"
"""Words of what the model looks for (it remembers a test failed, not the step number)."""
MCP_TOOL = "mcp__contextweaver__recall"
MCP_BUDGET = 300
"""Tokens of the answer (a small one: the proxy that cut has little room for the next context)."""
PATCH = "*** Begin Patch\n*** Update File: calc.py\n@@\n-    return a - b\n+    return a + b\n*** End Patch\n"


def claude_call(turn: int, cwd: str) -> dict[str, Any]:
    """Claude Code's tool call for turn 1-6 (its own tool names and input schemas)."""
    calls = [
        ("Bash", {"command": "ls", "description": "List files"}),
        ("Read", {"file_path": f"{cwd}/calc.py"}),
        ("Bash", {"command": PYTEST, "description": "Run the tests"}),
        ("Edit", {"file_path": f"{cwd}/calc.py", "old_string": "return a - b", "new_string": "return a + b"}),
        ("Bash", {"command": PYTEST, "description": "Run the tests again"}),
        ("Bash", {"command": "git diff -- calc.py", "description": "Show the diff"}),
    ]
    name, arguments = calls[turn - 1]
    return {"type": "tool_use", "id": f"toolu_step{turn}", "name": name, "input": arguments}


def codex_call(turn: int) -> dict[str, Any]:
    """Codex's code-mode call for turn 1-6: JavaScript for its `exec` tool that calls nested tools."""
    commands = ["ls", "cat calc.py", PYTEST, None, PYTEST, "git diff -- calc.py"]
    command = commands[turn - 1]
    source = (
        f"const r = await tools.apply_patch({json.dumps(PATCH)});\ntext(r);"
        if command is None
        else f"const r = await tools.exec_command({{cmd: {json.dumps(command)}}});\ntext(r.output);"
    )
    return {"type": "custom_tool_call", "call_id": f"call_step{turn}", "name": "exec", "input": source}


def recall_command(request: Request) -> str | None:
    """`curl -s URL/N` when the request's note gives the recall command: N the failing test run when the
    context names it (a placeholder's `#N` or the note's omitted steps), else the first step it names."""
    text = json.dumps(request.body, ensure_ascii=False)
    hint = RECALL.search(text)
    named: list[int] = []
    for mark, ranges in NAMED.findall(text):
        for part in (mark or ranges).split(", "):
            first, _, last = part.partition("-")
            named += range(int(first), int(last or first) + 1)
    if hint is None or not named:
        return None
    return f"curl -s {hint.group(1)}{FAILING_RUN if FAILING_RUN in named else named[0]}"


def recall_call(wire: str, command: str) -> dict[str, Any]:
    """The seventh call: the recall command through the CLI's shell tool."""
    if wire == "messages":
        return {"type": "tool_use", "id": "toolu_step7", "name": "Bash",
                "input": {"command": command, "description": "Read an omitted step again"}}  # fmt: skip
    source = f"const r = await tools.exec_command({{cmd: {json.dumps(command)}}});\ntext(r.output);"
    return {"type": "custom_tool_call", "call_id": "call_step7", "name": "exec", "input": source}


def mcp_call(wire: str) -> dict[str, Any]:
    """The seventh call: the MCP server's `recall` by words, as each CLI exposes it to the model."""
    if wire == "messages":
        return {
            "type": "tool_use",
            "id": "toolu_step7",
            "name": MCP_TOOL,
            "input": {"query": MCP_QUERY, "budget": MCP_BUDGET},
        }
    source = (
        f"const r = await tools.{MCP_TOOL}({{query: {json.dumps(MCP_QUERY)}, budget: {MCP_BUDGET}}});\n"
        'text(typeof r === "string" ? r : r.content.map((c) => c.text ?? "").join(""));'
    )
    return {"type": "custom_tool_call", "call_id": "call_step7", "name": "exec", "input": source}


def newest_turn(request: Request) -> int:
    """The turn of the newest call in the request (0: none yet)."""
    found = TURN_ID.findall(json.dumps(request.body.get("messages") or request.body.get("input") or []))
    return int(found[-1]) if found else 0


def cwd_of(request: Request) -> str:
    match = re.search(r"Primary working directory: ([^\s\\]+)", json.dumps(request.body))
    return match.group(1) if match else "."


REPORTED: list[int] = []
"""The prompt sizes reported so far (only the first is INPUT_TOKENS)."""
COMPACTION = {"type": "compaction", "encrypted_content": "gAAAA-scripted-compaction-of-the-history=="}


def compacting(request: Request) -> bool:
    items = request.body.get("input")
    return isinstance(items, list) and any(
        isinstance(i, dict) and i.get("type") == "compaction_trigger" for i in items
    )


def scripted_reply(request: Request, input_tokens: int = 10) -> Reply:
    """The next turn of the session on the request's wire (text answers for side requests)."""
    model = request.body.get("model", "scripted")
    wire = fake_wire.wire_of(request.path)
    if wire == "responses" and compacting(request):
        return Reply(body=fake_wire.responses_object(model, [COMPACTION], input_tokens=100))
    turn = newest_turn(request) + 1
    command = recall_command(request) if (RECALLING or MCP) and turn == 7 and wire is not None else None
    if command is not None:
        call = mcp_call(wire) if MCP else recall_call(wire, command)
        if wire == "messages":
            return Reply(body=fake_wire.anthropic_message(model, [call]))
        return Reply(body=fake_wire.responses_object(model, [call]))
    if wire == "messages":
        block = {"type": "text", "text": ANSWER} if turn > 6 else claude_call(turn, cwd_of(request))
        return Reply(body=fake_wire.anthropic_message(model, [block]))
    if wire == "responses":
        item = (
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": ANSWER, "annotations": []}],
            }  # fmt: skip
            if turn > 6
            else codex_call(turn)
        )
        reported = (
            input_tokens if not REPORTED else 10
        )  # a large prompt once: one compaction, not one per turn
        REPORTED.append(reported)
        return Reply(body=fake_wire.responses_object(model, [item], input_tokens=reported))
    return Reply(text=ANSWER)


def main() -> None:
    lock = threading.Lock()
    input_tokens = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    with Path(sys.argv[1]).open("a", encoding="utf-8") as log:

        def reply(request: Request) -> Reply:
            with lock:
                raw = base64.b64encode(request.raw).decode()
                log.write(json.dumps({"path": request.path, "body": request.body, "raw": raw}) + "\n")
                log.flush()
            return scripted_reply(request, input_tokens)

        server = FakeLLMServer(reply)
        print(server.port, flush=True)
        server._httpd.serve_forever()


if __name__ == "__main__":
    main()
