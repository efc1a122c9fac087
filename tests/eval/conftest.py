"""Small trajectories the eval tests build themselves, and the path of the shared dev set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contextweaver.formats.base import Trajectory
from contextweaver.records import Step

DEV = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "trajectories" / "mini-swe-agent"
ROOT = [
    {"role": "system", "content": "You fix bugs with one shell command per reply."},
    {"role": "user", "content": "Fix the rounding bug in the discount module."},
]


def bugfix_steps() -> list[Step]:
    """A run where later steps need identifiers that only earlier observations showed."""
    return [
        Step(
            "Find the code.",
            "grep -rn round shop/",
            "shop/discount.py:12: return apply_rate(price)\nshop/tax.py:3: pass",
        ),
        Step(
            "Look at it.",
            "cat shop/discount.py",
            "def apply_rate(price):\n    return math.floor(price * RATE_TABLE[0])\n",
        ),
        Step(
            "Run tests.",
            "pytest tests",
            "FAILED tests/test_discount.py::test_half_cent - assert 1.99 == 2.00",
        ),
        Step(
            "Check RATE_TABLE.",
            "grep -n RATE_TABLE shop/constants.py",
            "constants.py:4: RATE_TABLE = (0.995,)",
        ),
        Step("Look at helpers.", "ls shop", "discount.py tax.py constants.py helpers_v2.py"),
        Step(
            "Read helpers.",
            "cat shop/helpers_v2.py",
            "def round_half_up(value):\n    return int(value + 0.5)\n",
        ),
        Step(
            "Use round_half_up in apply_rate.",
            "sed -i 's/math.floor(price \\* RATE_TABLE\\[0\\])/round_half_up(price * RATE_TABLE[0])/' shop/discount.py",
            "",
        ),
        Step("Re-run test_half_cent.", "pytest tests/test_discount.py::test_half_cent", "1 passed in 0.01s"),
    ]


@pytest.fixture
def bugfix() -> Trajectory:
    return Trajectory(
        root=list(ROOT),
        steps=bugfix_steps(),
        source="bugfix",
        format="test",
        meta={"instance_id": "shop__shop-1"},
    )


def write_jsonl(
    path: Path, steps: list[Step], task: str = "Fix the rounding bug in the discount module."
) -> Path:
    lines = [json.dumps({"system": ROOT[0]["content"], "task": task})]
    lines += [
        json.dumps({"thought": s.thought, "action": s.action, "observation": s.observation}) for s in steps
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def trajectory_dir(tmp_path: Path) -> Path:
    """Three runs in two repository groups, as JSON Lines files."""
    folder = tmp_path / "runs"
    folder.mkdir()
    steps = bugfix_steps()
    write_jsonl(folder / "shop__shop-1.jsonl", steps)
    write_jsonl(folder / "shop__shop-2.jsonl", steps[:6])
    write_jsonl(folder / "cart__cart-7.jsonl", steps[2:] + steps[:2], task="Make the cart tests pass.")
    (folder / "notes.json").write_text('{"not": "a trajectory"}', encoding="utf-8")
    return folder


def dev_files() -> list[Path]:
    return sorted(DEV.glob("*.traj.json")) if DEV.is_dir() else []
