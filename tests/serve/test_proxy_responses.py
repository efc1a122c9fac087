"""OpenAI Responses through the proxy, with the official `openai` client and a local upstream.

Codex CLI sends its whole history as `input` items (store=false): the upstream must receive what
ContextWeaver weaves from it, with function_call / function_call_output paired, `instructions`
and `prompt_cache_key` untouched. A request with `previous_response_id` goes through unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
from click.testing import CliRunner

from contextweaver.cli import main
from contextweaver.records import PLACEHOLDER
from contextweaver.serve.wires.responses import RESPONSES
from contextweaver.store.sqlite import SQLiteStore
from contextweaver.testing.fake_server import FakeLLMServer, Reply, Request
from contextweaver.testing.fake_wire import responses_object
from tests.serve.harness import run_tool, running_proxy
from tests.serve.wire_expect import PER_STEP, woven_field

SECRET = "sk-test-responses-never-stored-1b2"
INSTRUCTIONS = "You are a coding agent. Call bash once per turn."
TOOLS = [{"type": "function", "name": "bash", "parameters": {"type": "object"}, "strict": False}]


def codex_reply(request: Request) -> Reply:
    items = request.body["input"]
    marker = str(items[0].get("content", "-")).split()[-1].strip("'\"}]")
    n = len(items)
    output = [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"Looking at file_{n}.", "annotations": []}]},
        {"type": "function_call", "call_id": f"call_{n:03d}", "name": "bash", "arguments": json.dumps({"command": f"cat file_{n}.py  # {marker}"})},
    ]  # fmt: skip
    return Reply(body=responses_object(request.body["model"], output))


def agent_loop(client: openai.OpenAI, items: list[dict[str, Any]], marker: str, turns: int,
               stream: bool = False) -> list[list[dict[str, Any]]]:  # fmt: skip
    """Codex's loop: send the whole history, run the calls, append outputs, ask again."""
    sent = []
    for _ in range(turns):
        sent.append(json.loads(json.dumps(items)))
        request = dict(model="gpt-test", instructions=INSTRUCTIONS, input=items, tools=TOOLS, store=False,
                       prompt_cache_key="cw-test-key")  # fmt: skip
        if stream:
            with client.responses.stream(**request) as events:  # type: ignore[arg-type]
                response = events.get_final_response()
        else:
            response = client.responses.create(**request)  # type: ignore[arg-type]
        output = [item.model_dump(exclude_none=True) for item in response.output]
        items.extend(output)
        for item in output:
            if item["type"] == "function_call":
                items.append({"type": "function_call_output", "call_id": item["call_id"],
                              "output": run_tool(item["arguments"], marker)})  # fmt: skip
    return sent


def expected_input(sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return woven_field(RESPONSES, {"input": sent, "instructions": INSTRUCTIONS})  # type: ignore[no-any-return]


def task(marker: str) -> list[dict[str, Any]]:
    return [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": f"Fix the test. {marker}"}],
        }
    ]


def test_responses_are_woven_and_cache_fields_pass_intact(tmp_path: Path) -> None:
    with FakeLLMServer(codex_reply) as upstream, running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url, PER_STEP) as (url, manager):  # fmt: skip
        client = openai.OpenAI(base_url=url, api_key=SECRET, max_retries=0)
        items = task("resp-001")
        sent = agent_loop(client, items, "resp-001", 8)
        sessions = manager.store.sessions()
    received = [r for r in upstream.requests if r.path == "/v1/responses"]
    assert len(received) == 8 and len(sessions) == 1 and sessions[0].steps == 7
    for request in received:
        assert request.headers["authorization"] == f"Bearer {SECRET}"
        assert (
            request.body["instructions"] == INSTRUCTIONS and request.body["prompt_cache_key"] == "cw-test-key"
        )
        assert request.body["store"] is False
        calls = [i["call_id"] for i in request.body["input"] if i.get("type") == "function_call"]
        outputs = [i["call_id"] for i in request.body["input"] if i.get("type") == "function_call_output"]
        assert calls == outputs
    last = received[-1].body["input"]
    assert last == expected_input(sent[-1])
    assert any(str(i.get("output", "")).startswith(PLACEHOLDER.split("(")[0]) for i in last)
    assert last[1] == sent[-1][1]  # an item weaving keeps goes upstream verbatim (its id and status too)


def test_streaming_responses_and_previous_response_id_passes_through(tmp_path: Path) -> None:
    with FakeLLMServer(codex_reply) as upstream, running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url, PER_STEP) as (url, manager):  # fmt: skip
        client = openai.OpenAI(base_url=url, api_key=SECRET, max_retries=0)
        items = task("resp-002")
        sent = agent_loop(client, items, "resp-002", 4, stream=True)
        assert items[-2]["arguments"] == json.dumps({"command": "cat file_10.py  # resp-002"})
        assert upstream.requests[-1].body["input"] == expected_input(sent[-1])
        stored = len(manager.store.steps(manager.store.sessions()[0].id))
        follow = [{"type": "function_call_output", "call_id": "call_007", "output": "ok"}]
        raw = client.responses.with_raw_response.create(
            model="gpt-test", input=follow, previous_response_id="resp_x"
        )  # type: ignore[arg-type]
        assert raw.headers["x-contextweaver-passthrough"] == "previous_response_id"
        assert upstream.requests[-1].body["input"] == follow
        assert len(manager.store.steps(manager.store.sessions()[0].id)) == stored == 3
        session_id = manager.store.sessions()[0].id
    out = tmp_path / "session.json"
    runner = CliRunner()
    exported = runner.invoke(main, ["sessions", "export", "--store", str(tmp_path / "s.db"), session_id,
                                    "--format", "messages", "--out", str(out)])  # fmt: skip
    assert exported.exit_code == 0, exported.output
    replayed = runner.invoke(main, ["replay", str(out), "--json", "--strategy", "cw,full"])
    assert replayed.exit_code == 0, replayed.output
    assert len(replayed.output.splitlines()) == 3


def test_in_the_default_lazy_mode_an_unfilled_context_goes_upstream_as_sent(tmp_path: Path) -> None:
    with FakeLLMServer(codex_reply) as upstream, running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url) as (url, manager):  # fmt: skip
        client = openai.OpenAI(base_url=url, api_key=SECRET, max_retries=0)
        sent = agent_loop(client, task("resp-003"), "resp-003", 4)
        assert manager.store.sessions()[0].steps == 3
    assert [r.body["input"] for r in upstream.requests] == sent
