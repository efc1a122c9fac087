"""A scripted coding agent for the demo: it asks a chat endpoint what to do and runs the call in a fake shell.

The shell answers from a script (a module's source, its `def` lines, a test run that fails on odd modules
and passes on even ones), long enough that a small budget has to cut the history; a `curl` of the proxy's
recall URL is really fetched, so the step a cut left out comes back through the proxy. Everything is
deterministic: the same turns give the same requests.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

SYSTEM = (
    "You are a coding agent in a small shop repository. Run one shell command per turn with the bash tool."
)
TASK = "The discount tests fail: find the bug in the shop modules and make every test pass."
TOOLS = [{"type": "function", "function": {
    "name": "bash", "description": "Run a shell command and read its output.",
    "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
}}]  # fmt: skip
MODULE = re.compile(r"module_(\d+)")


def source(k: int) -> str:
    """A module of the fake repository, about 600 tokens."""
    lines = [f'"""Shop module {k}: prices, discounts and the basket rules of catalogue {k}."""', ""]
    for n in range(1, 9):
        lines += [
            f"def price_{k}_{n}(basket, rate={n / 10:.1f}):",
            f'    """Price of basket line {n} with the catalogue {k} discount applied."""',
            "    total = sum(item.price * item.quantity for item in basket)",
            f"    return round(total * (1 - rate) + {k * n}, 2)",
            "",
        ]
    return "\n".join(lines)


def test_run(k: int) -> str:
    if k % 2:
        return (f"F.....                                                                   [100%]\n"
                f"FAILED tests/test_module_{k}.py::test_discount - assert 90.0 == 81.0\n"
                f"  price_{k}_1 applies the rate after the fixed fee: expected 81.0\n"
                "1 failed, 5 passed in 0.21s")  # fmt: skip
    return (
        "......                                                                   [100%]\n6 passed in 0.18s"
    )


def shell(command: str) -> str:
    """The fake shell's output for a command of the fake model's plan."""
    found = MODULE.search(command)
    k = int(found.group(1)) if found else 1
    if command.startswith("cat "):
        return source(k)
    if command.startswith("grep "):
        return "\n".join(
            f"{3 + 5 * (n - 1)}:def price_{k}_{n}(basket, rate={n / 10:.1f}):" for n in range(1, 9)
        )
    if "pytest" in command:
        return test_run(k)
    return f"bash: {command.split()[0] if command.split() else command}: command not found"


@dataclass
class ScriptedAgent:
    """Drives `turns` turns of one session through the chat endpoint at `base_url` (with /v1)."""

    base_url: str
    headers: dict[str, str]
    turns: int = 24
    pace: float = 0.0
    """Seconds between turns (so a person watching sees the dashboard fill)."""
    model: str = "gpt-4.1-mini"
    """Priced as that model in /metrics' spend (an estimate; the fake upstream bills nothing)."""
    said: Callable[[str], None] = lambda line: None
    messages: list[dict[str, Any]] = field(default_factory=list)
    recalls: int = 0

    def run(self) -> None:
        import httpx

        self.messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
        with httpx.Client(timeout=60.0, headers=self.headers) as client:
            for turn in range(1, self.turns + 1):
                answer = client.post(f"{self.base_url}/chat/completions",
                                     json={"model": self.model, "messages": self.messages, "tools": TOOLS})  # fmt: skip
                answer.raise_for_status()
                message = answer.json()["choices"][0]["message"]
                self.messages.append({k: v for k, v in message.items() if v is not None or k == "content"})
                for call in message.get("tool_calls") or []:
                    command = json.loads(call["function"]["arguments"]).get("command", "")
                    output = self._run(client, command)
                    self.said(f"turn {turn:2d}: {command}")
                    self.messages.append({"role": "tool", "tool_call_id": call["id"], "content": output})
                time.sleep(self.pace)

    def _run(self, client: Any, command: str) -> str:
        """The output of `command`: a recall URL on the proxy is fetched, anything else is the fake shell's."""
        url = command.removeprefix("curl -s ").strip()
        if command.startswith("curl -s ") and url.startswith(self.base_url.removesuffix("/v1") + "/"):
            self.recalls += 1
            return str(client.get(url).text)
        return shell(command)
