"""Each seed of an eval run reaches the memory model over HTTP, so seeds can differ where the model samples."""

from __future__ import annotations

import pytest

from contextweaver.config import ModelConfig
from contextweaver.eval.trajectory_run import evaluate
from contextweaver.formats.base import Trajectory
from contextweaver.testing.fake_server import FakeLLMServer


@pytest.mark.slow
def test_every_memory_request_of_a_replay_carries_its_seed(bugfix: Trajectory) -> None:
    with FakeLLMServer() as server:
        memory = ModelConfig(backend="openai", base_url=server.base_url)
        for seed in (5, 6):
            result = evaluate(bugfix, "cw-llm", [None], seed=seed, model_config=memory)
            assert result["seed"] == seed and result["llm"]["calls"] > 0
        seeds = [r.body.get("seed") for r in server.requests]
    assert len(seeds) > 2 and set(seeds) == {5, 6}
    assert seeds == sorted(seeds)  # all of seed 5's requests, then all of seed 6's
