"""One name, one meaning: every entry point resolves a strategy name to the same configuration."""

from __future__ import annotations

import pytest

from contextweaver.cli.replay import _factory
from contextweaver.integrations.settings import WeavingSettings
from contextweaver.integrations.settings import build_strategy as integration_build
from contextweaver.strategies import (
    ALIASES,
    GROUPS,
    TABLE,
    build_strategy,
    cw_settings,
    names_in,
    needs_model,
    spec,
)
from contextweaver.weaver import ContextWeaver


def _identity(strategy: object) -> tuple[str, object]:
    if isinstance(strategy, ContextWeaver):
        return ("cw", strategy.config.model_dump())
    return (
        type(strategy).__name__,
        {k: v for k, v in vars(strategy).items() if k in ("n", "k", "keep_last")},
    )


@pytest.mark.parametrize("name", list(TABLE))
def test_every_name_means_one_configuration_everywhere(name: str) -> None:
    library = _identity(build_strategy(name).strategy)
    replay = _identity(_factory(name, {})())
    evaluate = _identity(
        build_strategy(name, cw_settings([]) if spec(name).baseline is None else {}).strategy
    )
    integration = _identity(integration_build(WeavingSettings(strategy=name))[0])
    assert library == replay == evaluate == integration


def test_names_fix_their_settings_and_user_settings_apply_on_top() -> None:
    ancestry = build_strategy("cw-paper", {"window": 7}).strategy
    assert isinstance(ancestry, ContextWeaver)
    assert (ancestry.config.selector, ancestry.config.analyzer, ancestry.config.window) == (
        "ancestry",
        "heuristic",
        7,
    )
    assert spec("cw-heuristic") is spec("cw-paper") is spec("cw-ancestry")  # the names it had before
    assert spec("cw-adaptive") is spec("cw")  # one entry, two names
    assert build_strategy("sliding_window", {"window": 3}).strategy.n == 3  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="takes only `window`"):
        build_strategy("masking", {"analyzer": "llm"})


def test_aliases_and_unknown_names() -> None:
    for alias, target in ALIASES.items():
        assert spec(alias) is TABLE[target]
    with pytest.raises(ValueError, match="valid: cw, cw-select, cw-paper, full, sliding_window") as raised:
        spec("cw-magic")
    assert "cw-ancestry" not in str(raised.value)  # the old names are accepted, not listed


def test_every_name_is_in_one_group_and_the_user_chooses_between_three() -> None:
    assert {entry.group for entry in TABLE.values()} == set(GROUPS)
    assert names_in("contextweaver") == ["cw", "cw-select", "cw-paper"]
    assert all(TABLE[n].baseline is not None for n in names_in("baseline"))
    assert all(TABLE[n].baseline is None for n in names_in("research"))


def test_memory_model_is_built_exactly_for_the_names_that_call_one() -> None:
    for name in TABLE:
        built = build_strategy(name)
        assert (built.model is not None) == needs_model(name), name
    assert {n for n in TABLE if needs_model(n)} == {"llm_summary", "llm_summary_lazy", "cw-llm", "cw-hybrid"}
