"""LangChain v1 `create_agent` with ContextWeaver's middleware, offline: langchain-core's fake chat model
answers with scripted tool calls (no API key) and a real shell tool fixes a small repository in a
temporary folder. Each model call prints what the model received; the agent's state keeps every message.

    pip install 'contextweaver-agents[langgraph]'
    python -m contextweaver.examples.langchain_agent
"""

import subprocess
import sys
import tempfile
from pathlib import Path

from contextweaver.examples import require

require("langchain_agent")  # before the imports it needs: a missing one is one line, exit 2

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from contextweaver.examples.toy_repo import make_repo
from contextweaver.integrations.langgraph import ContextWeaverMiddleware
from contextweaver.tokens import count_text

PYTEST = f"{sys.executable} -m pytest -v --no-header -p no:cacheprovider"
TURNS = [
    ("Look at the repository.", "ls -la"),
    ("Read the module.", "cat -n calc.py"),
    ("Run the tests to see the failure.", PYTEST),
    ("add subtracts: fix it.", "sed -i 's/return a - b/return a + b/' calc.py"),
    ("Run the tests again.", PYTEST),
    ("Check the change.", "git diff"),
]


class ScriptedModel(GenericFakeChatModel):
    """The fake chat model, printing the size of every message list it receives."""

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, *args, **kwargs):
        tokens = sum(count_text(str(m.content)) for m in messages)
        cut = sum(str(m.content).startswith("Old environment output") for m in messages)
        print(f"model call: {len(messages)} messages, {tokens:,} tokens, {cut} tool outputs as placeholders")
        ScriptedModel.last = messages
        return super()._generate(messages, *args, **kwargs)


with tempfile.TemporaryDirectory() as tmp:
    repo = Path(tmp)
    make_repo(repo)

    @tool
    def shell(command: str) -> str:
        """Run a shell command in the repository."""
        done = subprocess.run(command, shell=True, cwd=repo, capture_output=True, text=True, timeout=120)
        return done.stdout + done.stderr

    replies = [
        AIMessage(content=t, tool_calls=[{"name": "shell", "args": {"command": c}, "id": f"call_{n}"}])
        for n, (t, c) in enumerate(TURNS)
    ]
    model = ScriptedModel(messages=iter([*replies, AIMessage(content="Fixed add in calc.py.")]))
    # --8<-- [start:agent]
    agent = create_agent(model, [shell], middleware=[ContextWeaverMiddleware(strategy="cw", budget=1_200)])
    state = agent.invoke({"messages": [{"role": "user", "content": "test_add fails: fix calc.py."}]})
    # --8<-- [end:agent]
    notes = [m.content for m in ScriptedModel.last if "[ContextWeaver working state" in str(m.content)]
    print("\nThe working-state note in the last call:\n" + (notes[0] if notes else "(none: nothing was cut)"))
    print(
        f"\nthe agent's state still holds all {len(state['messages'])} messages;"
        f" its answer: {state['messages'][-1].content}"
    )
