"""Selectors decide, per step, which steps the context keeps in full (a Plan for weaving)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from contextweaver.protocols import Selector
from contextweaver.registry import SELECTORS

if TYPE_CHECKING:
    from contextweaver.config import WeaverConfig


def build_selector(config: WeaverConfig) -> Selector:
    """A selector with settings of its own (`select`) reads them from the config (`from_config`)."""
    cls = SELECTORS.get(config.selector)
    from_config = getattr(cls, "from_config", None)
    selector: Selector = from_config(config) if from_config is not None else cls()
    return selector
