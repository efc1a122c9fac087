"""nebius SWE-agent-trajectories layout, and archives of runs read in place."""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.shared_data import absent

from contextweaver.formats import TrajectoryError, detect_format, load_trajectories, load_trajectory

SHARED_TRAIN = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "train"


def run(instance: str = "octo__widgets-7") -> dict[str, Any]:
    return {
        "instance_id": instance,
        "model_name": "some-model",
        "target": True,
        "trajectory": [
            {"role": "system", "system_prompt": "You are a programmer.", "text": "None"},
            {"role": "user", "text": "ISSUE: widgets break on empty input"},
            {"role": "ai", "text": 'Find the widget code.\n\n```\nsearch_dir "class Widget"\n```'},
            {"role": "user", "text": 'Found 1 matches for "class Widget" in /repo:\n/repo/widgets/core.py'},
            {"role": "ai", "text": "Open it.\n```\nopen widgets/core.py\n```\n"},
            {
                "role": "user",
                "text": "[File: /repo/widgets/core.py (3 lines total)]\n1:class Widget:\n2:    pass",
            },
            {"role": "ai", "text": "Done.\n\n```\nsubmit\n```"},
        ],
    }


def test_reads_steps_thoughts_and_actions(write: Callable[[str, Any], Path]) -> None:
    path = write("octo__widgets-7.json", run())
    assert detect_format(path) == "nebius"
    trajectory = load_trajectory(path)
    assert trajectory.system == "You are a programmer."
    assert trajectory.task == "ISSUE: widgets break on empty input"
    assert [s.action for s in trajectory.steps] == [
        'search_dir "class Widget"',
        "open widgets/core.py",
        "submit",
    ]
    assert trajectory.steps[0].thought == "Find the widget code."
    assert "1:class Widget:" in trajectory.steps[1].observation
    assert trajectory.steps[2].observation == ""
    assert trajectory.meta["instance_id"] == "octo__widgets-7"


def test_a_swe_agent_traj_is_not_claimed(write: Callable[[str, Any], Path]) -> None:
    path = write("x.traj", {"trajectory": [{"action": "ls", "observation": "a", "thought": "t"}]})
    assert detect_format(path) == "swe-agent"


def _archive(tmp_path: Path, members: dict[str, bytes]) -> Path:
    path = tmp_path / "runs.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def test_archive_of_runs_read_in_place(tmp_path: Path) -> None:
    members = {
        "set/b__b-2.json": json.dumps(run("b__b-2")).encode(),
        "set/a__a-1.json": json.dumps(run("a__a-1")).encode(),
        "set/results.json": b'{"resolved": ["a__a-1"]}',
        "set/metadata.yaml": b"name: x\n",
    }
    runs = load_trajectories(_archive(tmp_path, members))
    assert [r.meta["instance_id"] for r in runs] == ["a__a-1", "b__b-2"]
    assert runs[0].source.endswith("runs.tar.gz/set/a__a-1.json")


def test_archive_without_runs_names_what_was_skipped(tmp_path: Path) -> None:
    with pytest.raises(TrajectoryError, match="results.json"):
        load_trajectories(_archive(tmp_path, {"results.json": b"{}"}))


@pytest.mark.parametrize(
    ("archive", "count", "format"),
    [
        ("swe-agent__nebius-llama__150.tar.gz", 150, "nebius"),
        ("swe-agent__gpt-4o__multi-swe-bench-java__89.tar.gz", 89, "swe-agent"),
    ],
)
def test_shared_training_archives(archive: str, count: int, format: str) -> None:
    path = SHARED_TRAIN / archive
    if not path.exists():
        pytest.skip(absent(path))
    runs = load_trajectories(path)
    assert len(runs) == count
    assert {r.format for r in runs} == {format}
    assert all(r.steps and r.task for r in runs)
