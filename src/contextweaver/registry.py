"""Name -> class registries with lazy imports, so optional backends cost nothing until used; and the
tables of the components a `WeaverConfig` names (analyzers, summarizers, selectors), here so the config
checks a name when it is read without importing the components. A new one is a line in its table."""

from __future__ import annotations

import importlib
from typing import Any

from contextweaver.errors import UnknownName


class Registry:
    """Maps short names to "module:attribute" paths, in the order given (where order matters, as in
    format detection, the registry is that order); an unknown name lists the valid ones."""

    def __init__(self, kind: str, entries: dict[str, str]) -> None:
        self.kind = kind
        self._entries = dict(entries)

    def names(self) -> list[str]:
        return list(self._entries)

    def check(self, name: str) -> None:
        """Raise UnknownName, listing the valid names, unless `name` is registered."""
        if name not in self._entries:
            raise UnknownName(f"unknown {self.kind} {name!r}; valid: {', '.join(self.names())}")

    def get(self, name: str) -> Any:
        self.check(name)
        module_name, _, attribute = self._entries[name].partition(":")
        return getattr(importlib.import_module(module_name), attribute)


ANALYZERS = Registry(
    "analyzer",
    {
        "heuristic": "contextweaver.analyzers.heuristic:HeuristicAnalyzer",
        "llm": "contextweaver.analyzers.llm:LLMAnalyzer",
        "hybrid": "contextweaver.analyzers.hybrid:HybridAnalyzer",
    },
)
SUMMARIZERS = Registry(
    "summarizer",
    {
        "extractive": "contextweaver.summaries.extractive:ExtractiveSummarizer",
        "llm": "contextweaver.summaries.llm:LLMSummarizer",
    },
)
SELECTORS = Registry(
    "selector",
    {
        "ancestry": "contextweaver.selectors.ancestry:AncestrySelector",
        "frontier": "contextweaver.selectors.frontier:FrontierSelector",
        "recency": "contextweaver.selectors.recency:RecencySelector",
        "adaptive": "contextweaver.selectors.adaptive:AdaptiveSelector",
        "select": "contextweaver.selectors.select:SelectSelector",
    },
)
COMPONENTS = {"analyzer": ANALYZERS, "summarizer": SUMMARIZERS, "selector": SELECTORS}
"""The `WeaverConfig` setting -> the registry its value names."""
