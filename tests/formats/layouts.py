"""The folders agents write their runs in, built small and synthetic (for the discovery tests)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.formats.test_openhands_sdk import EVENTS

FIXTURES = Path(__file__).parent / "fixtures"


def swe_agent_traj(task: str) -> dict:
    history = [{"role": "system", "content": "SETTING: programmer", "agent": "primary"},
               {"role": "user", "content": task, "agent": "primary"}]  # fmt: skip
    entries = [{"thought": "look", "action": "ls", "observation": "a.py", "response": "", "state": {}},
               {"thought": "test", "action": "pytest -q", "observation": "1 passed", "response": "", "state": {}}]  # fmt: skip
    return {"trajectory": entries, "history": history, "info": {"exit_status": "submitted"}}


def swe_agent_run(root: Path, instances: tuple[str, ...] = ("astro__astro-1", "numpy__numpy-2")) -> Path:
    """`<run>/<instance>/<instance>.traj` with the .pred, .patch, config and logs beside, and preds.json."""
    run = root / "sweagent-run"
    for name in instances:
        folder = run / name
        folder.mkdir(parents=True)
        (folder / f"{name}.traj").write_text(json.dumps(swe_agent_traj(f"ISSUE: {name}")))
        (folder / f"{name}.pred").write_text(json.dumps({"instance_id": name, "model_patch": ""}))
        (folder / f"{name}.patch").write_text("")
        (folder / f"{name}.config.yaml").write_text("agent: {}\n")
        (folder / f"{name}.debug.log").write_text("log\n")
    (run / "preds.json").write_text(json.dumps({n: {"model_patch": ""} for n in instances}))
    (run / "run_batch_exit_statuses.yaml").write_text("submitted: []\n")
    return run


def mini_swe_agent_run(root: Path) -> Path:
    """`<dir>/<instance>/<instance>.traj.json` and preds.json beside."""
    out = root / "mini-out"
    for name in ("flask__flask-1", "requests__requests-2"):
        messages = [{"role": "system", "content": "You are a helpful assistant."},
                    {"role": "user", "content": f"Solve {name}"},
                    {"role": "assistant", "content": "THOUGHT: look\n\n```bash\nls\n```"},
                    {"role": "user", "content": "<returncode>0</returncode>\n<output>\na.py\n</output>"}]  # fmt: skip
        (out / name).mkdir(parents=True)
        document = {"messages": messages, "trajectory_format": "mini-swe-agent-1", "instance_id": name}
        (out / name / f"{name}.traj.json").write_text(json.dumps(document))
    (out / "preds.json").write_text(json.dumps({"flask__flask-1": {"model_patch": ""}}))
    (out / "minisweagent.log").write_text("done\n")
    return out


def openhands_conversations(root: Path) -> Path:
    """`<conversations>/<id>/` with base_state.json and events/event-NNNNN-<id>.json, two conversations."""
    conversations = root / "conversations"
    for conversation in ("1f0c", "2a7d"):
        folder = conversations / conversation
        (folder / "events").mkdir(parents=True)
        (folder / "base_state.json").write_text(json.dumps({"id": conversation}))
        for index, event in enumerate(EVENTS):
            name = f"event-{index:05d}-{index:08x}-0000-4000-8000-000000000000.json"
            (folder / "events" / name).write_text(json.dumps(event))
    return conversations


def claude_code_projects(root: Path) -> Path:
    """`~/.claude/projects/<project>/<session>.jsonl` (the fixture session), a hidden folder beside."""
    projects = root / ".claude" / "projects"
    project = projects / "-home-dev-shop"
    project.mkdir(parents=True)
    shutil.copy(
        FIXTURES / "claude_code_session.jsonl", project / "5f0c2a9e-1111-4c4e-9d7e-0a0b0c0d0e0f.jsonl"
    )
    (projects / ".cache").mkdir()
    (projects / ".cache" / "x.jsonl").write_text("{}\n")
    return projects


def codex_sessions(root: Path) -> Path:
    """`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` (the fixture rollout), history.jsonl beside."""
    codex = root / ".codex"
    day = codex / "sessions" / "2026" / "03" / "04"
    day.mkdir(parents=True)
    shutil.copy(FIXTURES / "codex_rollout.jsonl", day / "rollout-2026-03-04T09-00-00-0199aa00.jsonl")
    (codex / "history.jsonl").write_text(
        json.dumps({"session_id": "0199aa00", "ts": 1, "text": "fix"}) + "\n"
    )
    return codex
