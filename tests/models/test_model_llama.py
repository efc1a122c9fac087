"""A real model end to end: llama.cpp's OpenAI-compatible server with SmolLM2-135M, started here on a free
port, replays a recorded mini-swe-agent run's first steps through the `llm`, `hybrid` and fused memory.

The model is tiny, so this checks the protocol and the fallbacks, never the quality of its judgement.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.llama_server import llama_server
from tests.shared_data import absent

from contextweaver.config import ModelConfig, WeaverConfig
from contextweaver.weaver import ContextWeaver

pytestmark = [pytest.mark.model, pytest.mark.slow]

STEPS = 6
SMALL_PROMPTS = {"TASK_TOKENS": 120, "SUMMARY_TOKENS": 40, "DEPENDENCY_TOKENS": 60}
SMALL_STEP = {"thought": 40, "action": 60, "observation": 80}
TRAJECTORIES = Path(__file__).resolve().parents[3] / "shared" / "data" / "trajectories" / "mini-swe-agent"


@pytest.fixture(scope="module")
def llama_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with llama_server(tmp_path_factory.mktemp("llama")) as url:
        yield url


@pytest.fixture(scope="module")
def trajectory():  # type: ignore[no-untyped-def]
    files = sorted(TRAJECTORIES.glob("*.traj.json"))
    if not files:
        pytest.skip(absent(TRAJECTORIES))
    from contextweaver.formats import load_trajectory

    return load_trajectory(files[0])


@pytest.fixture
def small_prompts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shorter prompt caps: CPU time of a shared CI core, not a change of the protocol under test."""
    from contextweaver.prompts import render

    for name, value in SMALL_PROMPTS.items():
        monkeypatch.setattr(render, name, value)
    monkeypatch.setattr(render, "STEP_TOKENS", SMALL_STEP)


@pytest.mark.timeout(900)
@pytest.mark.usefixtures("small_prompts")
@pytest.mark.parametrize(
    ("analyzer", "mode"), [("llm", "three_call"), ("hybrid", "three_call"), ("hybrid", "fused")]
)
def test_replay_through_a_real_model(llama_url: str, trajectory, analyzer: str, mode: str) -> None:  # type: ignore[no-untyped-def]
    memory = ModelConfig(
        backend="openai", model="smollm2-135m", base_url=llama_url, response_format="json_object_schema",
        timeout=180, max_retries=1, max_tokens=250,
    )  # fmt: skip
    config = WeaverConfig(analyzer=analyzer, llm_mode=mode, hybrid_top_c=3, memory_model=memory)
    weaver = ContextWeaver(config)
    weaver.begin(trajectory.root)
    for step in trajectory.steps[:STEPS]:
        weaver.add_step(step)

    worker = weaver.annotator if mode == "fused" else weaver.annotator.analyzer  # type: ignore[attr-defined]
    usage = worker.model.usage
    stats = worker.stats
    assert usage.total.failures == 0 and usage.total.prompt_tokens > 0 and usage.total.completion_tokens > 0
    assert usage.total.calls == stats["calls"]  # every request reached the server and was answered
    expected_calls = STEPS if mode == "fused" else STEPS - 1  # step 1 has one candidate: no analyzer call
    assert stats["calls"] == expected_calls + stats["retries"]
    fell_back = []
    for node in weaver.graph.nodes[1:]:
        assert 1 <= len(node.parents) <= config.max_parents
        assert all(0 <= p.index < node.index and 0 <= p.confidence <= 1 for p in node.parents)
        reasons = {p.reason.split(":")[0].split(" (")[0] for p in node.parents}
        assert reasons <= {"llm", "fallback to heuristic", "only candidate"}, reasons
        if "fallback to heuristic" in reasons:
            fell_back.append(node.index)
        assert node.summary and node.dependency_summary
    assert fell_back == worker.fallback_steps and stats["fallbacks"] == len(fell_back)
    failures = stats["malformed"] + stats["empty"] + stats["missing"] + stats["unknown_ids"]
    assert stats["retries"] <= failures and stats["fallbacks"] <= stats["retries"]
    assert weaver.context().messages[0] == trajectory.root[0]
