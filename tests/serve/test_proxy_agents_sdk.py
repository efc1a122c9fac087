"""The OpenAI Agents SDK, offline, running a tool-calling agent through the proxy's /v1/responses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contextweaver.serve.wires.responses import RESPONSES
from contextweaver.store.sqlite import SQLiteStore
from contextweaver.testing.fake_server import FakeLLMServer, Reply, Request
from contextweaver.testing.fake_wire import responses_object
from tests.serve.harness import running_proxy
from tests.serve.wire_expect import PER_STEP, woven_field

agents = pytest.importorskip("agents")
openai = pytest.importorskip("openai")

FILES = 7


def agent_reply(request: Request) -> Reply:
    """Read file_1 .. file_7 one call at a time, then answer."""
    outputs = [i for i in request.body["input"] if i.get("type") == "function_call_output"]
    if len(outputs) < FILES:
        n = len(outputs) + 1
        item = {"type": "function_call", "call_id": f"call_{n}", "name": "read_file", "arguments": json.dumps({"path": f"file_{n}.py"})}  # fmt: skip
    else:
        item = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done", "annotations": []}]}  # fmt: skip
    return Reply(body=responses_object(request.body["model"], [item]))


def test_an_agents_sdk_run_is_woven_and_stored(tmp_path: Path) -> None:
    agents.set_tracing_disabled(True)

    @agents.function_tool
    def read_file(path: str) -> str:
        """Read a file of the repository."""
        return "\n".join(f"{path}:{i}: value_{i} = {i}" for i in range(40))

    with FakeLLMServer(agent_reply) as upstream, running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url, PER_STEP) as (url, manager):  # fmt: skip
        client = openai.AsyncOpenAI(base_url=url, api_key="sk-agents-test", max_retries=0)
        agent = agents.Agent(name="fixer", instructions="Read the files, then answer.", tools=[read_file],
                             model=agents.OpenAIResponsesModel("gpt-test", client))  # fmt: skip
        result = agents.Runner.run_sync(agent, "Which value does file_7.py set last?", max_turns=12)
        stored = manager.store.steps(manager.store.sessions()[0].id)
    assert result.final_output == "done"
    calls = [r for r in upstream.requests if r.path == "/v1/responses"]
    assert len(calls) == FILES + 1 and len(stored) == FILES
    last = calls[-1].body
    assert last["instructions"] == "Read the files, then answer."
    sent = result.to_input_list()[:-1]  # everything but the final answer
    assert last["input"] == woven_field(RESPONSES, {"input": sent, "instructions": last["instructions"]})
    assert any(str(i.get("output", "")).startswith("Old environment output") for i in last["input"])
