"""Baselines behind the same interface as ContextWeaver (begin / add_step / context)."""

from __future__ import annotations

from contextweaver.registry import Registry

BASELINES = Registry(
    "strategy",
    {
        "full": "contextweaver.baselines.full:FullHistory",
        "sliding_window": "contextweaver.baselines.recent:SlidingWindow",
        "masking": "contextweaver.baselines.recent:ObservationMasking",
        "bm25": "contextweaver.baselines.bm25:BM25Retrieval",
        "llm_summary": "contextweaver.baselines.llm_summary:LLMSummary",
        "llm_summary_lazy": "contextweaver.baselines.lazy_summary:LazySummary",
    },
)
