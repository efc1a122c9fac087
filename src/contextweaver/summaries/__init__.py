"""Node summaries and incremental dependency summaries (feed the analyzer, never the agent)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from contextweaver.registry import Registry

if TYPE_CHECKING:
    from contextweaver.config import WeaverConfig
    from contextweaver.protocols import Model, Summarizer

SUMMARIZERS = Registry(
    "summarizer",
    {
        "extractive": "contextweaver.summaries.extractive:ExtractiveSummarizer",
        "llm": "contextweaver.summaries.llm:LLMSummarizer",
    },
)


def build_summarizer(config: WeaverConfig, model: Model | None = None) -> Summarizer:
    summarizer: Summarizer = SUMMARIZERS.get(config.summarizer)(config, model)
    return summarizer
