"""Node summaries and incremental dependency summaries (feed the analyzer, never the agent)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from contextweaver.registry import SUMMARIZERS

if TYPE_CHECKING:
    from contextweaver.config import WeaverConfig
    from contextweaver.protocols import Model, Summarizer


def build_summarizer(config: WeaverConfig, model: Model | None = None) -> Summarizer:
    summarizer: Summarizer = SUMMARIZERS.get(config.summarizer)(config, model)
    return summarizer
