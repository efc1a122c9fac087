"""The OpenHands SDK with ContextWeaver's condenser, offline: the SDK's own Agent and Conversation fix a
small repository with a shell tool; the LLM is the package's fake upstream (a local HTTP server scripted
with tool calls, reached over real HTTP through litellm, no key). Prints what the LLM received each call.
The SDK needs Python 3.12+.

    pip install 'contextweaver-agents[openhands]'
    python -m contextweaver.examples.openhands_condenser
"""

import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

from contextweaver.examples import require

require("openhands_condenser")  # before the imports it needs: a missing one is one line, exit 2

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm: no cost-map download
os.environ.setdefault("LOG_LEVEL", "ERROR")  # the SDK's own logging: errors only
os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")

from openhands.sdk import LLM, Agent, Conversation, Tool
from openhands.sdk.tool import Action, Observation, ToolDefinition, ToolExecutor, register_tool
from pydantic import Field, SecretStr

from contextweaver.examples.toy_repo import make_repo
from contextweaver.integrations.openhands import RECALL_TOOL, ContextWeaverCondenser
from contextweaver.testing.fake_server import FakeLLMServer, Reply
from contextweaver.tokens import content_text, count_message

warnings.filterwarnings("ignore", message="Cost calculation failed")  # the fake model has no price
PYTEST = f"{sys.executable} -m pytest -v --no-header -p no:cacheprovider"
TURNS = [
    ("Look at the repository.", "shell", {"command": "ls -la"}),
    ("Read the module.", "shell", {"command": "cat -n calc.py"}),
    ("Run the tests to see the failure.", "shell", {"command": PYTEST}),
    ("add subtracts: fix it.", "shell", {"command": "sed -i 's/return a - b/return a + b/' calc.py"}),
    ("Run the tests again.", "shell", {"command": PYTEST}),
    ("Check the change.", "shell", {"command": "git diff"}),
    ("Read the failing run again.", "contextweaver_recall", {"steps": "3"}),
    ("Fixed.", "finish", {"message": "Fixed add in calc.py."}),
]


class ShellAction(Action):
    command: str = Field(description="the shell command to run")


class ShellObservation(Observation):
    pass


class ShellExecutor(ToolExecutor):
    def __init__(self, cwd):
        self.cwd = cwd

    def __call__(self, action, conversation=None):
        done = subprocess.run(action.command, shell=True, cwd=self.cwd, capture_output=True, text=True)
        return ShellObservation.from_text(done.stdout + done.stderr)


class ShellTool(ToolDefinition[ShellAction, ShellObservation]):
    @classmethod
    def create(cls, conv_state=None, **params):
        return [
            cls(
                description="Run a shell command in the repository.",
                action_type=ShellAction,
                observation_type=ShellObservation,
                executor=ShellExecutor(params["cwd"]),
            )
        ]


def scripted_llm(request):
    """The fake LLM: the next scripted tool call; prints the size of what it received."""
    tokens = sum(count_message(m) for m in request.messages)
    cut = sum("Old environment output" in str(m.get("content")) for m in request.messages)
    print(
        f"LLM call {len(replies_sent) + 1}: {len(request.messages)} messages, {tokens:,} tokens, {cut} placeholders"
    )
    thought, name, arguments = TURNS[len(replies_sent)]
    call = {
        "id": f"call_{len(replies_sent)}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    replies_sent.append(call)
    message = {"role": "assistant", "content": thought, "tool_calls": [call]}
    return Reply(
        body={
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": "fake",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": tokens, "completion_tokens": 5, "total_tokens": tokens + 5},
        }
    )


replies_sent = []
register_tool("ExampleShell", ShellTool)
with tempfile.TemporaryDirectory() as tmp, FakeLLMServer(reply=scripted_llm) as server:
    make_repo(Path(tmp))
    llm = LLM(model="openai/fake", base_url=server.base_url, api_key=SecretStr("no-key"), usage_id="agent")
    # --8<-- [start:agent]
    condenser = ContextWeaverCondenser(contextweaver={"strategy": "cw", "budget": 4_600})
    agent = Agent(
        llm=llm,
        tools=[Tool(name="ExampleShell", params={"cwd": tmp}), RECALL_TOOL],  # recall: omitted steps, whole
        include_default_tools=["FinishTool"],
        condenser=condenser,
    )
    conversation = Conversation(agent=agent, workspace=tmp, visualizer=None)
    conversation.send_message("test_add fails: add(2, 3) should be 5. Fix calc.py.")
    conversation.run()
    # --8<-- [end:agent]
    last = server.requests[-1].messages
    texts = [content_text(m.get("content")) for m in last]
    notes = [t for t in texts if "[ContextWeaver working state" in t]
    print("\nThe working-state note in the last call:\n" + (notes[0] if notes else "(none: nothing was cut)"))
    recalled = next(t for m, t in zip(last, texts, strict=True) if m.get("tool_call_id") == "call_6")
    print(f"\ncontextweaver_recall of step 3 returned the failing run whole: {'1 failed' in recalled}")
    print(f"\ncalc.py fixed: {'return a + b' in (Path(tmp) / 'calc.py').read_text()}")
