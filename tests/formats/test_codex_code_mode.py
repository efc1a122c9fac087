"""Codex CLI 0.171 rollouts: the given items are the root, and code mode's `exec` reads as its commands."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from contextweaver.cli import main
from contextweaver.formats import detect_format, load_trajectory
from contextweaver.formats.toolcalls import action_text, code_mode_actions
from contextweaver.nodes.facts import extract_facts
from contextweaver.tokens import content_text
from contextweaver.weaver import ContextWeaver

BASE = "You are Codex, an agent based on GPT. Keep edits small."
TASK = "test_add in test_calc.py fails: add(2, 3) should be 5. Fix calc.py."
PATCH = "*** Begin Patch\n*** Update File: calc.py\n@@\n-    return a - b\n+    return a + b\n*** End Patch\n"
FAILING = """============================= test session starts ==============================
collected 2 items

test_calc.py::test_add FAILED                                            [ 50%]
test_calc.py::test_mul PASSED                                            [100%]

=========================== short test summary info ============================
FAILED test_calc.py::test_add - assert -1 == 5
========================= 1 failed, 1 passed in 0.02s ==========================
"""
PASSING = """============================= test session starts ==============================
collected 2 items

test_calc.py::test_add PASSED                                            [ 50%]
test_calc.py::test_mul PASSED                                            [100%]

============================== 2 passed in 0.01s ===============================
"""
PYTEST = "python -m pytest -v test_calc.py"
SCRIPTS = [  # (the exec script, what it printed)
    ('const r = await tools.exec_command({cmd: "ls"});\ntext(r.output);', "calc.py\ntest_calc.py\n"),
    ("const r = await tools.exec_command({cmd: 'cat calc.py'});\ntext(r.output);",
     "def add(a, b):\n    return a - b\n"),
    (f"const r = await tools.exec_command({{cmd: `{PYTEST}`}});\ntext(r.output);", FAILING),
    (f"const r = await tools.apply_patch({json.dumps(PATCH)});\ntext(r);", "{}"),
    (f'const r = await tools.exec_command({{"cmd": "{PYTEST}", yield_time_ms: 10000}});\ntext(r.output);',
     PASSING),
]  # fmt: skip


def line(kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": "2026-12-01T18:44:44.576Z", "type": kind, "payload": payload})


def text_message(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def rollout(tmp_path: Path, base: str = BASE) -> Path:
    """A 0.171-shaped rollout: tools and instructions as input items, then code-mode calls."""
    tools = [{"type": "namespace", "name": "functions", "tools": [{"type": "custom", "name": "exec"}]}]
    lines = [
        line("session_meta", {"id": "s1", "cwd": "/repo", "cli_version": "0.171.0", "base_instructions": {"text": base}}),
        line("event_msg", {"type": "task_started"}),
        line("response_item", {"type": "additional_tools", "id": "at_1", "role": "developer", "tools": tools}),
        line("response_item", text_message("developer", BASE)),
        line("response_item", text_message("developer", "<skills_instructions>none</skills_instructions>")),
        line("response_item", text_message("user", "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>")),
        line("world_state", {"full": True, "state": {}}),
        line("turn_context", {"cwd": "/repo", "model": "gpt-6.2-sol"}),
        line("response_item", text_message("user", TASK)),
    ]  # fmt: skip
    for n, (script, printed) in enumerate(SCRIPTS, 1):
        header = f"Script completed\nWall time 0.{n} seconds\nOutput:\n"
        output = [{"type": "input_text", "text": header}, {"type": "input_text", "text": printed}]
        lines += [
            line("response_item", {"type": "custom_tool_call", "status": "completed", "call_id": f"c{n}",
                                   "name": "exec", "input": script}),
            line("event_msg", {"type": "item_completed", "item": {"type": "CommandExecution"}}),
            line("response_item", {"type": "custom_tool_call_output", "call_id": f"c{n}", "output": output}),
        ]  # fmt: skip
    lines.append(line("response_item", text_message("assistant", "Fixed: add now adds; both tests pass.")))
    path = tmp_path / "rollout-2026-12-01T18-44-44-s1.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_given_items_are_the_root_and_each_call_is_a_step(tmp_path: Path) -> None:
    path = rollout(tmp_path)
    assert detect_format(path) == "codex"
    run = load_trajectory(path)
    assert content_text(run.root[-1]["content"]) == TASK and run.meta["model"] == "gpt-6.2-sol"
    assert [m["role"] for m in run.root] == ["developer", "developer", "developer", "user", "user"]
    assert '"name": "exec"' in run.root[0]["content"]  # the tool list, counted where the model saw it
    texts = [json.dumps(m["content"]) for m in run.root]
    assert sum(BASE in t for t in texts) == 1  # the base instructions, sent once as a developer message
    assert len(run.steps) == len(SCRIPTS) + 1 and all(s.kind == "agent" for s in run.steps)
    assert run.steps[-1].thought.startswith("Fixed: add now adds")


def test_base_instructions_not_sent_as_a_message_stay_a_system_message(tmp_path: Path) -> None:
    run = load_trajectory(rollout(tmp_path, base="Older header instructions."))
    assert run.root[0] == {"role": "system", "content": "Older header instructions."}
    assert len(run.root) == 6 and content_text(run.root[-1]["content"]) == TASK


def test_code_mode_steps_read_as_the_commands_they_ran(tmp_path: Path) -> None:
    steps = load_trajectory(rollout(tmp_path)).steps
    assert [s.action for s in steps[:5]] == ["ls", "cat calc.py", PYTEST, f"apply_patch {PATCH}", PYTEST]
    assert [s.observation for s in steps[:5]] == [printed for _, printed in SCRIPTS]  # no "Script completed"
    assert "Wall time" in json.dumps(steps[0].messages)  # the messages stay as the model saw them
    assert extract_facts(steps[1]).viewed_files == {"calc.py"}


def test_the_failing_run_is_superseded_by_the_passing_one(tmp_path: Path) -> None:
    run = load_trajectory(rollout(tmp_path))
    weaver = ContextWeaver()
    weaver.begin(run.root)
    nodes = [weaver.add_step(step) for step in run.steps]
    statuses = [weaver.graph.nodes[n.index].validation_status.value for n in nodes]
    assert statuses[2] == "superseded" and statuses[4] == "passed"
    result = CliRunner().invoke(main, ["replay", str(tmp_path / run.source.rsplit("/", 1)[-1])])
    assert result.exit_code == 0, result.output
    assert "6 steps (codex)" in result.output
    rows = [line for line in result.output.splitlines() if re.match(r"\s+\d+  \S  ", line)]
    # each row is printed as its step is computed: the run failed, then passed, which superseded it
    assert [row.split()[1] for row in rows][2:5:2] == ["✗", "✓"], rows
    assert "↷ superseded later by a run of the same tests: steps 3" in result.output


def test_nested_calls_in_every_literal_form() -> None:
    script = (
        "// @exec: {\"yield_time_ms\": 1000}\n"
        "await tools.exec_command({workdir: '/repo', cmd: ['bash', '-lc', 'grep -n add calc.py']});\n"
        "await tools.exec_command(\"pwd\");\n"
        "await tools.exec_command({cmd: `echo \\`date\\` \\u00e9\\x41`});\n"
        "const p = await tools.apply_patch({input: '*** Begin Patch\\n*** Add File: a.py\\n+x = 1\\n*** End Patch'});\n"
        "await tools.exec_command({cmd: someVariable});\n"
    )  # fmt: skip
    assert code_mode_actions(script) == [
        "grep -n add calc.py",
        "pwd",
        "echo `date` éA",
        "apply_patch *** Begin Patch\n*** Add File: a.py\n+x = 1\n*** End Patch",
    ]
    patch_about_tools = 'await tools.apply_patch("+await tools.exec_command({cmd: \\"rm -rf x\\"})\\n");'
    assert code_mode_actions(patch_about_tools) == [
        'apply_patch +await tools.exec_command({cmd: "rm -rf x"})\n'
    ]


def test_a_script_without_nested_calls_is_its_own_action() -> None:
    assert action_text("exec", "text(ALL_TOOLS.length);") == "text(ALL_TOOLS.length);"
    assert (
        action_text("exec", 'tools.exec_command({cmd: "never closed')
        == 'tools.exec_command({cmd: "never closed'
    )
    assert action_text("exec", '{"cmd": "ls"}') == "ls"  # a JSON-argument tool of the same name


@pytest.mark.slow
def test_the_scan_never_raises() -> None:
    """Its time on the same hostile inputs grows linearly: `benchmarks/hostile_steps.py --codex`."""
    rng = random.Random(22)
    alphabet = [
        "tools.exec_command(",
        "tools.apply_patch(",
        "{cmd:",
        "[",
        "]",
        '"',
        "'",
        "`",
        "\\",
        "x",
        " ",
        ",",
    ]
    for _ in range(2000):
        code_mode_actions("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))))
    for hostile in (
        "tools.exec_command({" * 20_000,
        "tools.exec_command(['a', " * 20_000,
        "tools.apply_patch(`" * 20_000,
    ):
        assert isinstance(code_mode_actions(hostile), list)
