"""Spend in money: the provider's reported usage priced by a table the operator can set (`serve --prices`).

The defaults are the providers' list prices per million tokens for common models, in USD, as published
on PRICES_TAKEN: estimates (no discount, batch or regional price, no tier above a long-context threshold),
to be replaced by the operator's own table where money is counted. A model is found by the longest
prefix of its lower-cased name (`claude-sonnet-4-20250514` is `claude-sonnet-4`), after a provider
prefix such as `openai/`; a model the table lacks is not priced, and counted as such.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contextweaver.errors import ContextWeaverError
from contextweaver.serve.upstream.usage import Usage

PRICES_TAKEN = "2026-11-30"
PER = 1_000_000
"""Prices are per million tokens."""


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cache_read: float
    cache_write: float | None = None
    """None: cache writes cost the input price (OpenAI bills none apart)."""

    def of(self, usage: Usage) -> tuple[float, float]:
        """The spend of `usage`: (its input side, its output side)."""
        write = self.input if self.cache_write is None else self.cache_write
        spent_in = usage.input * self.input + usage.cache_read * self.cache_read + usage.cache_write * write
        return spent_in / PER, usage.output * self.output / PER


DEFAULT_PRICES = {
    "gpt-4o": Price(2.50, 10.00, 1.25),
    "gpt-4o-mini": Price(0.15, 0.60, 0.075),
    "gpt-4.1": Price(2.00, 8.00, 0.50),
    "gpt-4.1-mini": Price(0.40, 1.60, 0.10),
    "gpt-4.1-nano": Price(0.10, 0.40, 0.025),
    "gpt-5": Price(1.25, 10.00, 0.125),
    "gpt-5-mini": Price(0.25, 2.00, 0.025),
    "gpt-5-nano": Price(0.05, 0.40, 0.005),
    "o3": Price(2.00, 8.00, 0.50),
    "o4-mini": Price(1.10, 4.40, 0.275),
    "claude-opus-4": Price(15.00, 75.00, 1.50, 18.75),
    "claude-opus-4-5": Price(5.00, 25.00, 0.50, 6.25),
    "claude-sonnet-4": Price(3.00, 15.00, 0.30, 3.75),
    "claude-3-7-sonnet": Price(3.00, 15.00, 0.30, 3.75),
    "claude-haiku-4-5": Price(1.00, 5.00, 0.10, 1.25),
    "claude-3-5-haiku": Price(0.80, 4.00, 0.08, 1.00),
}


class BadPrices(ContextWeaverError, ValueError):
    """A price table that cannot be read: the message names the file and the entry."""


@dataclass(frozen=True)
class PriceTable:
    currency: str = "USD"
    models: dict[str, Price] | None = None

    def price(self, model: str) -> Price | None:
        """The price of `model` by the longest matching prefix, None when the table lacks it."""
        name = model.lower().rsplit("/", 1)[-1]
        table = DEFAULT_PRICES if self.models is None else self.models
        found = [prefix for prefix in table if name.startswith(prefix)]
        return table[max(found, key=len)] if found else None


def load_prices(path: str | Path) -> PriceTable:
    """A table from a JSON or YAML file: `{"currency": "EUR", "models": {"gpt-4.1": {"input": 1.8,
    "output": 7.4, "cache_read": 0.46}}}` (per million tokens; `cache_write` optional). In USD its models
    are added to the defaults; in another currency they replace them (no price is converted)."""
    import yaml

    try:
        text = Path(path).read_text(encoding="utf-8")
        data: Any = json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise BadPrices(f"--prices {path}: cannot read it ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise BadPrices(f"--prices {path}: give a mapping with 'models' (and 'currency', USD by default)")
    currency = str(data.get("currency", "USD")).upper()
    models = dict(DEFAULT_PRICES) if currency == "USD" else {}
    for name, entry in data["models"].items():
        try:
            models[str(name).lower()] = Price(float(entry["input"]), float(entry["output"]),
                                              float(entry.get("cache_read", entry["input"])),
                                              None if entry.get("cache_write") is None else float(entry["cache_write"]))  # fmt: skip
        except (TypeError, KeyError, ValueError) as exc:
            raise BadPrices(f"--prices {path}: model {name!r} needs numbers 'input' and 'output' per million "
                            f"tokens (and may give 'cache_read', 'cache_write'): {exc!r}") from exc  # fmt: skip
    return PriceTable(currency, models)
