"""Integrations say at start what they will do: without a budget the lazy default cuts nothing (a
WARNING, once per process), a budget taken from the model's context window is named with its source,
and what is recorded is the configuration that runs (cw-paper: selector ancestry, mode per_step)."""

from __future__ import annotations

import copy
import logging
import sys
from types import SimpleNamespace
from typing import Any

import pytest

from contextweaver.integrations.settings import (
    WeavingSettings,
    announce,
    cuts_nothing,
    describe,
    litellm_window,
)
from contextweaver.integrations.sweagent import ContextWeaverHistoryProcessor
from tests.integrations.announcements import LOGGER, fresh_announcements, warnings_of  # noqa: F401 (an autouse fixture)


@pytest.mark.parametrize(
    ("block", "nothing"),
    [
        ({}, True),
        ({"window": 5}, True),
        ({"strategy": "full"}, True),
        ({"strategy": "llm_summary_lazy"}, True),
        ({"budget": 32000}, False),
        ({"strategy": "cw-paper"}, False),
        ({"strategy": "sliding_window", "window": 3}, False),
        ({"weaver": {"mode": "per_step"}}, False),
    ],
)
def test_what_cuts_nothing(block: dict[str, Any], nothing: bool) -> None:
    assert cuts_nothing(WeavingSettings.model_validate(block)) is nothing


def test_no_budget_is_said_once_as_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    settings = WeavingSettings.model_validate({"window": 5})
    announce("ContextWeaver (test)", settings)
    announce("ContextWeaver (test)", settings)
    (said,) = warnings_of(caplog)
    assert "selector adaptive, mode lazy" in said and "no budget" in said and "nothing is cut" in said
    assert "Set `budget:`" in said


def test_a_budget_taken_is_named_with_its_source(caplog: pytest.LogCaptureFixture) -> None:
    settings = WeavingSettings().with_budget(128000)
    announce("ContextWeaver (test)", settings, "the context window of gpt-4o, 128,000 tokens")
    (said,) = warnings_of(caplog)
    assert "no budget was set" in said and "gpt-4o" in said and "budget 128,000 tokens" in said


def test_a_configured_strategy_is_described_as_it_runs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    settings = WeavingSettings.model_validate({"strategy": "cw-paper", "window": 5, "budget": 9000})
    assert describe(settings).startswith("cw-paper (selector ancestry, mode per_step, analyzer heuristic")
    announce("ContextWeaver (test)", settings)
    assert warnings_of(caplog) == []  # nothing surprising: said at INFO
    assert any("budget 9,000 tokens" in r.getMessage() for r in caplog.records)


def test_saved_settings_are_the_effective_ones() -> None:
    settings = WeavingSettings.model_validate({"strategy": "cw-paper", "window": 5})
    weaver = settings.model_dump(mode="json")["weaver"]
    assert (weaver["selector"], weaver["mode"], weaver["window"]) == ("ancestry", "per_step", 5)
    assert settings.model_dump(exclude_unset=True) == {"strategy": "cw-paper", "weaver": {"window": 5}}
    again = WeavingSettings.model_validate(settings.model_dump())
    assert again.weaver_config() == settings.weaver_config()
    default = WeavingSettings().model_dump(mode="json")["weaver"]
    assert (default["selector"], default["mode"]) == ("adaptive", "lazy")  # the default really is lazy


def test_litellm_window_only_when_litellm_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    def info(name: str) -> dict[str, int]:
        if name != "known-model":
            raise ValueError(f"model {name} not mapped")
        return {"max_input_tokens": 200000}

    monkeypatch.delitem(sys.modules, "litellm", raising=False)
    assert litellm_window("known-model") is None  # not imported: not imported just for this
    monkeypatch.setitem(sys.modules, "litellm", SimpleNamespace(get_model_info=info))
    assert litellm_window("known-model") == 200000
    assert litellm_window("unknown") is None and litellm_window("") is None


def test_real_litellm_knows_a_model_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # its shipped map: no download
    litellm = pytest.importorskip("litellm")
    assert litellm_window("gpt-4o") == litellm.get_model_info("gpt-4o")["max_input_tokens"] > 0


def test_swe_agent_processor_says_at_construction_once(caplog: pytest.LogCaptureFixture) -> None:
    processor = ContextWeaverHistoryProcessor(window=5)
    copy.deepcopy(processor)  # SWE-agent copies its config per agent: still said once
    (said,) = warnings_of(caplog)
    assert said.startswith("ContextWeaver (SWE-agent history processor)") and "nothing is cut" in said
    assert "the budget is yours to set" in said
    caplog.clear()
    ContextWeaverHistoryProcessor(strategy="cw-paper", window=5)
    assert warnings_of(caplog) == []


def test_swe_agent_processor_records_the_strategy_it_runs() -> None:
    dumped = ContextWeaverHistoryProcessor(strategy="cw-paper", window=5).model_dump(mode="json")
    assert dumped["type"] == "contextweaver" and dumped["weaver"]["selector"] == "ancestry"
    assert dumped["weaver"]["mode"] == "per_step"
