"""Name -> class registries with lazy imports, so optional backends cost nothing until used."""

from __future__ import annotations

import importlib
from typing import Any


class Registry:
    """Maps short names to "module:attribute" paths, in the order given (where order matters, as in
    format detection, the registry is that order); an unknown name lists the valid ones."""

    def __init__(self, kind: str, entries: dict[str, str]) -> None:
        self.kind = kind
        self._entries = dict(entries)

    def register(self, name: str, path: str) -> None:
        self._entries[name] = path

    def names(self) -> list[str]:
        return list(self._entries)

    def get(self, name: str) -> Any:
        try:
            module_name, _, attribute = self._entries[name].partition(":")
        except KeyError:
            raise ValueError(f"unknown {self.kind} {name!r}; valid: {', '.join(self.names())}") from None
        return getattr(importlib.import_module(module_name), attribute)
