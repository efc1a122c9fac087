"""The SQLite response cache: the second replay of the same requests costs no call."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from contextweaver.analyzers.llm import LLMAnalyzer
from contextweaver.config import ModelConfig, WeaverConfig
from contextweaver.models import CachedModel, build_model, usage_of
from contextweaver.models.fake import FakeModel
from contextweaver.testing.planted import NEW_STEP, TASK, planted_graph

HELLO = [{"role": "user", "content": "hi"}]


def replay(path: Path) -> tuple[list[tuple[int, ...]], FakeModel, CachedModel]:
    inner = FakeModel()
    cached = CachedModel(inner, path)
    analyzer = LLMAnalyzer(WeaverConfig(), cached)
    chosen = []
    for k in range(2, NEW_STEP + 1):
        graph = planted_graph()
        parents = analyzer.select_parents(graph.node(k), graph.candidates(k), graph, TASK, 3)
        chosen.append(tuple(p.index for p in parents))
    return chosen, inner, cached


def test_second_replay_costs_nothing(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    first, inner1, cached1 = replay(path)
    assert inner1.usage.total.calls == 4 and cached1.misses == 4
    cached1.close()
    second, inner2, cached2 = replay(path)
    assert second == first
    assert inner2.usage.total.calls == 0 and inner2.usage.total.prompt_tokens == 0
    assert cached2.hits == 4 and cached2.misses == 0


def test_key_covers_the_whole_request(tmp_path: Path) -> None:
    inner = FakeModel()
    cached = CachedModel(inner, tmp_path / "c.sqlite")
    cached.complete(HELLO)
    cached.complete(HELLO, max_tokens=7)
    cached.complete(HELLO, json_schema={"title": "x"})
    cached.complete([{"role": "user", "content": "hi!"}])
    cached.complete(HELLO)
    assert inner.usage.total.calls == 4 and cached.hits == 1


def test_table_is_self_contained_beside_other_tables(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY)")
        db.execute("INSERT INTO sessions VALUES ('s1')")
    model = build_model(ModelConfig(backend="fake", cache_path=str(path)))
    assert isinstance(model, CachedModel) and usage_of(model) is not None
    model.complete(HELLO)
    CachedModel(FakeModel(), path).complete(HELLO)  # reopening: CREATE TABLE IF NOT EXISTS
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM llm_cache").fetchone() == (1,)
        assert db.execute("SELECT id FROM sessions").fetchall() == [("s1",)]
