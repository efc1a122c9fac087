"""The processor's output is a history SWE-agent takes: every item it adds or rewrites valid as SWE-agent's own
`HistoryItem` (`sweagent/types.py`, checked by pydantic; SWE-agent's own recorded items are not all valid
as it, e.g. `message_type: system_prompt`, so the others are checked to be the recorded items), and, as SWE-agent's `_history_to_messages` sends it, each tool item
answering with `tool_call_ids[0]` a call of the assistant item just before it, every call answered. Run on
SWE-agent's recorded demonstration histories (function calling and text), before each model query, at
budgets that cut. SWE-agent's types come from an installed SWE-agent or a git copy of its repository
(CONTEXTWEAVER_SWE_AGENT_GIT, default the `fetch` mirror); the test skips without either."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from contextweaver.integrations.sweagent import ContextWeaverHistoryProcessor
from contextweaver.tokens import count_message
from contextweaver.weaving.budget import BudgetError
from tests.shared_data import SHARED_DATA, absent

DEMOS = SHARED_DATA / "trajectories" / "swe-agent" / "demonstrations"
MIRROR = Path(__file__).resolve().parents[3] / ".mirror" / "SWE-agent+SWE-agent" / "repo"
"""Where a snapshot of SWE-agent's repository lies beside the project (a bare git directory), if anywhere."""
GIT = Path(os.environ.get("CONTEXTWEAVER_SWE_AGENT_GIT", MIRROR))
FUNCTION_CALLING = "replay__marshmallow-code__marshmallow-1867__function_calling"
TEXT = "replay__marshmallow-code__marshmallow-1867__default__"


def history_item_type() -> Any:
    """SWE-agent's `HistoryItem` TypedDict, from the installed package or its repository's sweagent/types.py."""
    try:
        from sweagent.types import HistoryItem  # type: ignore[import-not-found]

        return HistoryItem
    except ImportError:
        pass
    if not GIT.exists():
        pytest.skip(f"SWE-agent is neither installed nor at {GIT} (set CONTEXTWEAVER_SWE_AGENT_GIT)")
    source = subprocess.run(
        ["git", f"--git-dir={GIT}", "show", "HEAD:sweagent/types.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "sweagent_types.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("sweagent_types", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["sweagent_types"] = module
    spec.loader.exec_module(module)
    return module.HistoryItem


def histories() -> list[Path]:
    if not DEMOS.exists():
        pytest.skip(absent(DEMOS), allow_module_level=True)  # called while collecting (parametrize)
    return sorted(p for p in DEMOS.glob("*.traj") if p.name.startswith((FUNCTION_CALLING, TEXT)))


def sdk_messages(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """SWE-agent's `_history_to_messages` (sweagent/agent/models.py): one tool call per observation."""
    out = []
    for item in history:
        if item["role"] == "tool":
            out.append({"role": "tool", "content": item["content"], "tool_call_id": item["tool_call_ids"][0]})
        elif item.get("tool_calls") is not None:
            out.append({"role": item["role"], "content": item["content"], "tool_calls": item["tool_calls"]})
        else:
            out.append({"role": item["role"], "content": item["content"]})
    return out


def unanswered(messages: list[dict[str, Any]]) -> list[str]:
    """Tool results without their call just before them, calls without their result (the OpenAI API's rule)."""
    problems, open_calls = [], set()
    for position, message in enumerate(messages):
        if message["role"] == "tool":
            if message["tool_call_id"] not in open_calls:
                problems.append(f"item {position}: tool result without its call")
            open_calls.discard(message["tool_call_id"])
            continue
        if open_calls:
            problems.append(f"item {position}: calls {sorted(open_calls)} unanswered")
        open_calls = {c["id"] for c in message.get("tool_calls") or ()}
    return problems


@pytest.mark.parametrize("share", [0.35, 0.6, 0.85])
@pytest.mark.parametrize("run", histories(), ids=lambda p: p.name[27:60])
def test_every_woven_history_is_one_swe_agent_takes(run: Path, share: float) -> None:
    adapter = TypeAdapter(history_item_type())
    history = json.loads(run.read_text())["history"]
    tools = [] if not any(i.get("tool_calls") for i in history) else None
    budget = int(share * sum(count_message(m) for m in sdk_messages(history)))
    processor = ContextWeaverHistoryProcessor(budget=budget, tools=tools or [])
    queries = [k for k in range(2, len(history) + 1) if history[k - 1]["role"] != "assistant"]
    woven_count = cut = 0
    for k in queries:
        try:
            woven = processor(json.loads(json.dumps(history[:k])))
        except BudgetError:
            continue
        woven_count += 1
        cut += woven != history[:k]
        for item in woven:
            if item not in history:  # added (TEST STATUS) or rewritten (a placeholder, a trimmed output)
                # its recorded calls as they were: SWE-agent types them `list[dict[str, str]]`, its own
                # records nest `function` as a dict, so they are checked by `unanswered` instead
                adapter.validate_python({k: v for k, v in item.items() if k != "tool_calls"})
                assert item.get("agent") == history[-1].get("agent")
        assert unanswered(sdk_messages(woven)) == [], k
        assert woven[:2] == history[:2]  # the system prompt and the first item, verbatim
    assert woven_count >= len(queries) // 2 and cut > 0
