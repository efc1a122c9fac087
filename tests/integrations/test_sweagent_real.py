"""The history processor inside the real SWE-agent (skipped where SWE-agent is not installed: it is not
on the package index). `type: contextweaver` in a SWE-agent YAML goes through SWE-agent's own config
parsing, its agent construction (which deep-copies the config) and its command line, run with a
replayed model and SWE-ReX's dummy deployment (no Docker, no network)."""

from __future__ import annotations

import copy
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from contextweaver.integrations.feed import tool_tokens
from contextweaver.tokens import count_message
from tests.integrations.announcements import fresh_announcements, warnings_of  # noqa: F401 (an autouse fixture)
from tests.integrations.test_sweagent_processor import action_item, observation_item, root_items

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm's shipped map: no download
sweagent = pytest.importorskip(
    "sweagent",
    reason="SWE-agent is not on PyPI: install it from its repository to run these (docs/development.md)",
)

from sweagent.agent.agents import DefaultAgent  # noqa: E402
from sweagent.run.run_single import RunSingleConfig  # noqa: E402

from contextweaver.integrations import sweagent as integration  # noqa: E402

PROCESSORS = [{"type": "contextweaver", "strategy": "cw-paper", "window": 2}]
COMMANDS = [
    "ls",
    "cat calc.py",
    "python -m pytest -q",
    "sed -i s/-/+/ calc.py",
    "python -m pytest -q",
    "git diff",
]


def config(processors: list[dict]) -> dict:
    return {"agent": {"model": {"name": "instant_empty_submit"}, "history_processors": processors}}


def test_the_yaml_entry_is_parsed_by_swe_agents_own_config_after_register():
    integration.register()
    integration.register()  # idempotent
    parsed = RunSingleConfig.model_validate(config(PROCESSORS))
    processor = parsed.agent.history_processors[0]
    assert isinstance(processor, integration.ContextWeaverHistoryProcessor)
    assert processor.weaver.window == 2 and processor.weaver_config().selector == "ancestry"
    with pytest.raises(ValueError, match=r"weaver.selector\n.*unknown selector 'ancestr'"):
        RunSingleConfig.model_validate(config([{"type": "contextweaver", "weaver": {"selector": "ancestr"}}]))
    dumped = parsed.model_dump(mode="json")["agent"]["history_processors"][0]
    assert RunSingleConfig.model_validate(config([dumped])).agent.history_processors[0].weaver.window == 2


def test_building_the_agent_deep_copies_and_pickles_the_processor():
    integration.register()
    parsed = RunSingleConfig.model_validate(config(PROCESSORS))
    original = parsed.agent.history_processors[0]
    original([{"role": "system", "content": "s", "agent": "main", "message_type": "system"}])
    agent = DefaultAgent.from_config(parsed.agent)  # deep-copies the config: used to crash on the lock
    built = agent.history_processors[0]
    assert built is not original and built.weaver == original.weaver and not built._feeds
    restored = pickle.loads(pickle.dumps(built))
    assert restored.weaver == built.weaver and copy.deepcopy(restored).weaver_config().selector == "ancestry"


def test_a_swe_agent_run_from_its_command_line_weaves_every_query(tmp_path: Path):
    actions = [
        {
            "message": f"Step {n}: run {command}",
            "tool_calls": [
                {
                    "type": "function",
                    "id": f"call_{n}",
                    "function": {"name": "bash", "arguments": json.dumps({"command": command})},
                }
            ],
        }
        for n, command in enumerate(COMMANDS, start=1)
    ]
    actions += [
        "No tool call: the run ends after three format errors."
    ] * 4  # the dummy runtime never submits
    replay = tmp_path / "replay.jsonl"
    replay.write_text(json.dumps({"toy-1": actions}) + "\n")
    user_config = tmp_path / "contextweaver.yaml"
    processors = [*PROCESSORS, {"type": "cache_control", "last_n_messages": 2}]
    user_config.write_text(
        yaml.safe_dump(
            {
                "agent": {
                    "model": {"name": "replay", "replay_path": str(replay)},
                    "history_processors": processors,
                }
            }
        )
    )
    default = Path(sweagent.CONFIG_DIR) / "default.yaml"
    subprocess.run(  # the documented command line, as a user runs it
        [sys.executable, "-m", "contextweaver.integrations.sweagent", "run", "--config", str(default),
         "--config", str(user_config), "--env.deployment.type=dummy", "--env.repo.type=preexisting",
         "--env.repo.repo_name=testbed", "--problem_statement.text=fix calc", "--problem_statement.id=toy-1",
         "--output_dir", str(tmp_path / "out")],
        check=True, capture_output=True, stdin=subprocess.DEVNULL, timeout=280,
    )  # fmt: skip
    trajectory = json.loads(next((tmp_path / "out").rglob("*.traj")).read_text())
    steps = trajectory["trajectory"]
    assert [s["action"] for s in steps[: len(COMMANDS)]] == COMMANDS
    query = steps[len(COMMANDS)]["query"]  # what the model was sent after the last command's output
    results = [m for m in query if m.get("role") == "tool"]
    calls = [c["id"] for m in query if m.get("role") == "assistant" for c in m.get("tool_calls") or ()]
    assert (
        calls
        == [r["tool_call_ids"][0] for r in results]
        == [f"call_{n}" for n in range(1, len(COMMANDS) + 1)]
    )
    text = [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"] for m in results]
    assert sum(t.startswith("Old environment output: (") for t in text) >= 3  # W=2 of 6 steps
    assert not text[-1].startswith("Old environment output")  # the newest output is kept
    assert not any("Old environment output" in str(m["content"]) for m in steps[0]["query"])


def default_config(processor: dict) -> dict:
    """SWE-agent's own default.yaml (function calling: bash, str_replace_editor, submit) with our processor."""
    raw = yaml.safe_load((Path(sweagent.CONFIG_DIR) / "default.yaml").read_text())
    raw["agent"]["history_processors"] = [processor]
    raw["agent"]["model"] = {"name": "instant_empty_submit"}
    return raw


def tool_turns(count: int) -> list[dict]:
    out = []
    for n in range(1, count + 1):
        out.append(action_item(f"Reading part {n}.", f"cat src/part_{n}.py", tool_call_id=f"call_{n}"))
        output = "\n".join(f"def part_{n}_{line}(): return {line}" for line in range(20))
        out.append(observation_item(output, tool_call_id=f"call_{n}"))
    return out


def test_the_agents_tools_count_against_the_budget(caplog: pytest.LogCaptureFixture):
    integration.register()
    root = sum(count_message(m) for m in root_items())
    probe = RunSingleConfig.model_validate(default_config({"type": "contextweaver"}))
    tools = tool_tokens(probe.agent.tools.tools)
    budget = root + tools + 400  # the tools take most of what the root leaves
    parsed = RunSingleConfig.model_validate(default_config({"type": "contextweaver", "budget": budget}))
    agent = DefaultAgent.from_config(parsed.agent)  # the deep copy keeps the tools the config gave
    assert agent.history_processors[0].tools == agent.tools.config.tools and tools > 500
    agent.history = [*root_items(), *tool_turns(12)]
    sent = sum(count_message(m) for m in agent.messages)  # SWE-agent's own processor chain
    assert sent + tools <= budget
    assert sent > budget - tools - 200  # the rest of the budget is used
    assert agent.history_processors[0].feed_for(agent.history).stats()["tool_tokens"] == tools
    assert "tools" not in parsed.model_dump(mode="json")["agent"]["history_processors"][0]
    assert not any("not counted" in w for w in warnings_of(caplog))


def test_a_text_parser_sends_no_tools_and_a_processor_without_them_says_so(caplog: pytest.LogCaptureFixture):
    integration.register()
    raw = default_config({"type": "contextweaver", "budget": 5000})
    raw["agent"]["tools"]["parse_function"] = {"type": "thought_action"}
    assert RunSingleConfig.model_validate(raw).agent.history_processors[0].tools == []
    untold = integration.ContextWeaverHistoryProcessor(budget=5000)
    untold([*root_items(), *tool_turns(1)])
    (said,) = [w for w in warnings_of(caplog) if "not counted" in w]
    assert "register()" in said and "tools=" in said
