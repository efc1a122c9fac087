"""SWE-agent's own `cache_control` processor (the default config has it) with ContextWeaver before or
after it: every request carries the markers cache_control would set on it (Anthropic accepts 4), never
markers left over from earlier requests. Skipped where SWE-agent is not installed."""

from __future__ import annotations

import copy
import json

import pytest

pytest.importorskip(
    "sweagent.agent.history_processors",
    reason="SWE-agent is not on PyPI: install it from its repository to run these (docs/development.md)",
)

from contextweaver.integrations.sweagent import ContextWeaverHistoryProcessor, history_processors  # noqa: E402
from tests.integrations.test_sweagent_processor import item, root_items  # noqa: E402

CACHE_CONTROL = {"type": "cache_control", "last_n_messages": 2}
WEAVE = {"type": "contextweaver", "strategy": "cw-paper", "window": 2, "budget": 2_000}
TURNS = 20


def turn(number: int) -> list[dict]:
    """One function-calling turn: the call and a 30-line output (string content, as SWE-agent keeps it)."""
    command = f"cat src/part_{number}.py"
    call = {"id": f"call_{number}", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": command})}}  # fmt: skip
    output = "\n".join(f"def part_{number}_{line}(): return {line}" for line in range(30))
    return [
        item(
            "assistant",
            f"Reading part {number}.",
            "action",
            thought=f"Reading part {number}.",
            action=command,
            tool_calls=[call],
        ),  # fmt: skip
        item("tool", output, "observation", tool_call_ids=[f"call_{number}"]),
    ]


def markers(request: list[dict]) -> list[int]:
    """Positions of the request's items that carry a cache marker (on the item or a content part)."""
    found = []
    for position, entry in enumerate(request):
        parts = entry["content"] if isinstance(entry["content"], list) else []
        if "cache_control" in entry or any("cache_control" in part for part in parts):
            found.append(position)
    return found


def expected(request: list[dict]) -> list[int]:
    """Where cache_control puts its markers: the last two user or tool items."""
    return [i for i, entry in enumerate(request) if entry["role"] in ("user", "tool")][-2:]


def run(entries: list[dict]) -> tuple[list[list[dict]], ContextWeaverHistoryProcessor, list[dict]]:
    """SWE-agent's loop: the same history items (which cache_control edits in place), chained processors."""
    processors = history_processors(entries)
    weaver = next(p for p in processors if isinstance(p, ContextWeaverHistoryProcessor))
    history, requests = root_items(), []
    for number in range(1, TURNS + 1):
        history += turn(number)
        messages = list(history)
        for processor in processors:
            messages = processor(messages)
        requests.append(copy.deepcopy(messages))  # what is sent, before the next call edits items
    return requests, weaver, history


@pytest.mark.parametrize("order", ["after", "before"])
def test_every_request_carries_only_the_markers_cache_control_sets(order: str):
    entries = [CACHE_CONTROL, WEAVE] if order == "after" else [WEAVE, CACHE_CONTROL]
    requests, weaver, history = run(entries)
    for request in requests:
        assert markers(request) == expected(request)
    last = requests[-1]
    assert any(str(entry["content"]).startswith("Old environment output") for entry in last)  # it did cut
    feed = weaver.feed_for(history)
    assert feed is not None and feed.rebuilds == 0  # one conversation, its steps added once each
    assert len(feed.strategy.graph.nodes) == TURNS + 1  # markers moving is not a changed history


def test_without_cache_control_nothing_is_marked():
    requests, _, _ = run([WEAVE])
    assert all(markers(request) == [] for request in requests)
