"""Logical Dependency Analyzers: choose each new node's parents. One strategy per file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from contextweaver.registry import ANALYZERS

if TYPE_CHECKING:
    from contextweaver.config import WeaverConfig
    from contextweaver.protocols import Analyzer, Model


def build_analyzer(config: WeaverConfig, model: Model | None = None) -> Analyzer:
    analyzer: Analyzer = ANALYZERS.get(config.analyzer)(config, model)
    return analyzer
