"""API keys come only from the environment variable the config names, reach the server, and are never
logged, shown, stored in the cache, or put in error messages."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from contextweaver.config import ModelConfig
from contextweaver.models import MissingAPIKey, ModelRequestError, build_model
from contextweaver.testing.fake_server import FakeLLMServer, Reply

SECRET = "sk-test-Zq81vD0secretvalue"
HELLO = [{"role": "user", "content": "hi"}]


def test_key_is_sent_but_never_logged_shown_or_cached(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    monkeypatch.setenv("CW_TEST_MEMORY_KEY", SECRET)
    caplog.set_level(logging.DEBUG)  # every logger, SDK and HTTP client included
    cache = tmp_path / "cache.sqlite"
    replies = [Reply(status=500), "ok"]
    with FakeLLMServer(lambda r: replies.pop(0) if replies else Reply(status=401)) as server:
        config = ModelConfig(
            backend="openai",
            base_url=server.base_url,
            api_key_env="CW_TEST_MEMORY_KEY",
            backoff=0,
            max_retries=1,
            cache_path=str(cache),
        )
        model = build_model(config)
        assert model.complete(HELLO).text == "ok"
        with pytest.raises(ModelRequestError) as failure:
            model.complete([{"role": "user", "content": "again"}])
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in caplog.text
    assert SECRET not in str(failure.value)
    assert SECRET not in repr(model) and SECRET not in repr(getattr(model, "inner", model))
    assert SECRET not in config.model_dump_json()
    assert SECRET.encode() not in cache.read_bytes()
    rows = sqlite3.connect(cache).execute("SELECT * FROM llm_cache").fetchall()
    assert rows and all(SECRET not in str(row) for row in rows)


def test_missing_variable_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CW_TEST_UNSET_KEY", raising=False)
    with pytest.raises(MissingAPIKey, match="CW_TEST_UNSET_KEY"):
        build_model(ModelConfig(backend="openai", api_key_env="CW_TEST_UNSET_KEY"))


def test_anthropic_requires_a_named_variable() -> None:
    with pytest.raises(MissingAPIKey, match="api_key_env"):
        build_model(ModelConfig(backend="anthropic"))


def test_provider_default_variables_are_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the variable named in the config is read, never the SDK's own OPENAI_API_KEY."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeLLMServer(lambda r: "ok") as server:
        build_model(ModelConfig(backend="openai", base_url=server.base_url)).complete(HELLO)
    assert SECRET not in server.requests[0].headers.get("authorization", "")
