"""The session cache of a weaving process is bounded in bytes, the root (system prompt, task) included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from contextweaver.config import WeaverConfig
from contextweaver.serve import SessionManager, read_conversation
from contextweaver.serve.sessions.session_bytes import MEASURED, WORST, multipliers, root_bytes, shares
from contextweaver.store.sqlite import SQLiteStore
from tests.serve.harness import task

KB = 1024


def with_root(marker: str, task_size: int, output: str = "ok") -> list[dict[str, Any]]:
    """A one-step mini-swe-agent conversation whose task is `task_size` characters."""
    system, first = task(marker)
    big_task = {**first, "content": first["content"] + "\n" + "requirement line\n" * (task_size // 17)}
    return [system, big_task, {"role": "assistant", "content": "```bash\nls\n```"},
            {"role": "user", "content": output}, {"role": "assistant", "content": "done"}]  # fmt: skip


def manager(tmp_path: Path, cache_bytes: int, **settings: Any) -> SessionManager:
    config = WeaverConfig.model_validate(settings)
    return SessionManager(SQLiteStore(tmp_path / "s.db"), config, cache_bytes=cache_bytes)


def test_large_roots_are_counted_and_evicted(tmp_path: Path) -> None:
    """Sessions with a 300 KB task and a tiny step: the old estimate (steps only) kept all ten in 2 MB."""
    sessions = manager(tmp_path, 2_000 * KB)
    evicted: list[str] = []
    sessions.on_evict = evicted.append
    for n in range(10):
        sessions.weave(read_conversation(with_root(f"r{n}", 300 * KB)), f"r{n}")
        assert sessions.cached_bytes <= 2_000 * KB
    one = root_bytes(with_root("x", 300 * KB)[:2], multipliers(sessions.config))
    assert len(sessions._cache) == 2_000 * KB // one < 10
    assert list(sessions._cache) == [f"r{n}" for n in range(10 - len(sessions._cache), 10)], "the newest stay"
    assert evicted == [f"r{n}" for n in range(10 - len(sessions._cache))], "the oldest go first"


def test_a_session_larger_than_the_bound_is_woven_but_not_kept(tmp_path: Path) -> None:
    sessions = manager(tmp_path, 1_000 * KB)
    sessions.weave(read_conversation(with_root("small", 1 * KB)), "small")
    messages = with_root("huge", 600 * KB)
    woven = sessions.weave(read_conversation(messages[:4]), "huge")
    assert woven.context is not None and woven.added == 1
    assert not sessions.holds("huge") and sessions.holds("small"), "only the one too large is dropped"
    again = sessions.weave(read_conversation([*messages, {"role": "user", "content": "next"}]), "huge")
    assert again.steps == 2 and again.added == 1, "read back from the store, it goes on"
    assert sessions.store.step_count("huge") == 2 and not sessions.holds("huge")


def test_steps_are_charged_at_the_strategy_rate(tmp_path: Path) -> None:
    """A 200 KB output in a 1 MB cache: kept under the lazy default, too large for the per-step selection."""
    output = "y" * 200 * KB
    lazy = manager(tmp_path, 1_500 * KB)
    lazy.weave(read_conversation(with_root("lazy", 1 * KB, output)), "lazy")
    select = manager(tmp_path, 1_500 * KB, selector="select", mode="per_step")
    select.weave(read_conversation(with_root("select", 1 * KB, output)), "select")
    assert lazy.holds("lazy") and not select.holds("select")


@pytest.mark.parametrize("name", list(MEASURED))
def test_each_measured_strategy_gets_its_own_rates(name: str) -> None:
    from contextweaver.strategies import TABLE

    assert multipliers(WeaverConfig.model_validate(dict(TABLE[name].weaver))) is MEASURED[name]


def test_an_unmeasured_configuration_is_charged_the_largest_rates() -> None:
    config = WeaverConfig.model_validate({"selector": "recency", "mode": "per_step"})
    assert multipliers(config) is WORST
    assert WORST.step == max(m.step for m in MEASURED.values())


def test_the_bound_is_shared_between_sessions_and_histories() -> None:
    sessions, histories = shares(512 * 1024 * KB)
    assert sessions + histories == 512 * 1024 * KB and 0 < histories <= sessions // 7


def test_token_ids_kept_for_trimming_are_bounded_in_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Giant outputs are encoded once for re-trimming; the ids kept (and the texts keying them) fit the bound."""
    from contextweaver.nodes import render

    monkeypatch.setattr(render, "TOKEN_IDS_BYTES", 400 * KB)
    monkeypatch.setattr(render, "_ids", type(render._ids)())
    outputs = [f"output {n}: " + " ".join(f"word{n}_{i}" for i in range(5_000)) for n in range(6)]
    for text in outputs:
        assert "tokens of this output omitted" in render.trim_text(text, 100)
    kept = sum(len(text) + 4 * len(ids) for text, ids in render._ids.items())
    assert 0 < kept <= 400 * KB and list(render._ids)[-1] is outputs[-1], "the newest kept, the oldest gone"


@pytest.mark.slow
def test_serve_bounds_its_weaving_process_by_the_option(tmp_path: Path) -> None:
    """`--session-cache-mb 16` reaches the weaving process: a 5 MB task (about 17 MB loaded) is woven, not kept."""
    import httpx

    from tests.serve.processes import serve_process, upstream_process

    messages = with_root("wired", 5 * 1024 * KB)
    with upstream_process(tmp_path) as (port, _), serve_process(
        tmp_path, f"http://127.0.0.1:{port}/v1", "--weaving-processes", "1", "--session-cache-mb", "16"
    ) as proxy:  # fmt: skip
        for end in (4, 5):
            answer = httpx.post(f"{proxy.url}/v1/chat/completions", json={"model": "m", "messages": messages[:end]},
                                headers={"x-contextweaver-session": "wired"}, timeout=120)  # fmt: skip
            assert answer.status_code == 200, answer.text
        log = proxy.log()
    assert log.count("session wired: about 1") == 2 and "more than the session cache's 14 MB: not kept" in log
