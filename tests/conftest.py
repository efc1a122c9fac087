"""Shared fixtures: where the third-party data lives (read in place), and small step builders."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
MINI_SWE_AGENT = SHARED_DATA / "trajectories" / "mini-swe-agent"


@pytest.fixture
def mini_swe_agent_files() -> list[Path]:
    files = sorted(MINI_SWE_AGENT.glob("*.traj.json"))
    if not files:
        pytest.skip("../shared/data is absent: no mini-swe-agent trajectories to replay")
    return files
