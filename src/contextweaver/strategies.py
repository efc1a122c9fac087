"""Build any strategy by name: ContextWeaver modes and the baselines share one interface."""

from __future__ import annotations

from collections.abc import Callable

from contextweaver.baselines import BASELINES
from contextweaver.config import WeaverConfig
from contextweaver.protocols import Strategy

WEAVER_PREFIX = "cw"


def strategy_names() -> list[str]:
    return ["cw", *BASELINES.names()]


def strategy_factory(name: str, config: WeaverConfig | None = None) -> Callable[[], Strategy]:
    """`cw` is ContextWeaver with `config`; `cw-<selector>` or `cw-<analyzer>` changes one setting;
    any other name is a baseline."""
    if name == WEAVER_PREFIX or name.startswith(WEAVER_PREFIX + "-"):
        from contextweaver.weaver import ContextWeaver

        settings = config or WeaverConfig()
        if "-" in name:
            variant = name.split("-", 1)[1]
            from contextweaver.selectors import SELECTORS

            field = "selector" if variant in SELECTORS.names() else "analyzer"
            settings = settings.model_copy(update={field: variant})
        return lambda: ContextWeaver(settings)
    cls = BASELINES.get(name)
    return lambda: cls()
