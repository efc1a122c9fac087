"""The run seed reaches the memory model: sent over HTTP where the API takes one, and part of the cache key,
so replays with different seeds can differ (eval's stability columns measure something)."""

from __future__ import annotations

from pathlib import Path

from contextweaver.config import ModelConfig
from contextweaver.models import CachedModel, build_model
from contextweaver.models.fake import FakeModel
from contextweaver.strategies import build_strategy
from contextweaver.testing.fake_server import FakeLLMServer, Request

HELLO = [{"role": "user", "content": "Say hi."}]


def sent_bodies(seed: int | None) -> list[dict]:
    seen: list[Request] = []

    def reply(request: Request) -> str:
        seen.append(request)
        return "hi"

    with FakeLLMServer(reply) as server:
        build_model(ModelConfig(backend="openai", base_url=server.base_url), seed=seed).complete(HELLO)
    return [r.body for r in seen]


def test_the_openai_client_sends_the_seed_only_when_given() -> None:
    assert [b.get("seed") for b in sent_bodies(7)] == [7]
    assert all("seed" not in b for b in sent_bodies(None))


def test_the_cache_keeps_one_reply_per_seed(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    counts = []
    for seed in (1, 2, 1, None, None):
        inner = FakeModel(seed=seed)
        cached = CachedModel(inner, path)
        cached.complete(HELLO)
        counts.append((cached.seed, inner.usage.total.calls))
        cached.close()
    assert counts == [(1, 1), (2, 1), (1, 0), (None, 1), (None, 0)]


def test_the_eval_harness_hands_its_seed_to_the_memory_model() -> None:
    built = build_strategy("cw-llm", seed=3)
    assert built.model is not None and built.model.seed == 3
    assert build_strategy("llm_summary", seed=4).model.seed == 4  # type: ignore[union-attr]
    assert build_strategy("cw-llm").model.seed is None  # type: ignore[union-attr]
