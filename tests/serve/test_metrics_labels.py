"""/metrics by model and owner: the provider's usage and its spend agree with a scripted session's stored
rows, the upstream's times are observed once per request, and hostile model names and keys stay bounded."""

from __future__ import annotations

import math
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from contextweaver.config import WeaverConfig
from contextweaver.serve.ledger.labels import OTHER, BoundedLabel
from contextweaver.serve.ledger.metrics import MODELS, OWNERS
from contextweaver.serve.ledger.spend import DEFAULT_PRICES, BadPrices, PriceTable, load_prices
from contextweaver.store.sqlite import SQLiteStore
from contextweaver.testing.fake_upstream import fake_upstream
from contextweaver.testing.scripted_agent import ScriptedAgent
from tests.serve.harness import running_proxy
from tests.serve.test_metering import wait_for

TOKEN = "metrics-labels-token-0123456789"
HEADERS = {"x-contextweaver-token": TOKEN}


def samples(base: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Every sample of /metrics by name, parsed by prometheus_client's own parser."""
    text = httpx.get(base + "/metrics", headers={"authorization": f"Bearer {TOKEN}"}).text
    found: dict[str, list[tuple[dict[str, str], float]]] = defaultdict(list)
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[sample.name].append((sample.labels, sample.value))
    return found


def test_usage_and_spend_by_model_and_owner_agree_with_the_stored_session(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    with fake_upstream() as upstream, running_proxy(store, upstream.base_url, WeaverConfig(), budget=3000,
                                                    auth_token=TOKEN) as (url, _):  # fmt: skip
        agent = ScriptedAgent(url, {**HEADERS, "authorization": "Bearer sk-agent-one",
                                    "x-contextweaver-session": "m-1"}, turns=12)  # fmt: skip
        agent.run()
        wait_for(lambda: len(store.requests("m-1")) == 12)
        base = url.removesuffix("/v1")
        found = samples(base)
    rows = store.requests("m-1")
    tokens = {kind: sum(labels["kind"] == kind and v for labels, v in found["contextweaver_model_tokens_total"])
              for kind in ("input", "cache_read", "cache_write", "output")}  # fmt: skip
    assert tokens == {"input": sum(r["input_tokens"] for r in rows), "cache_read": sum(r["cache_read_tokens"] for r in rows),
                      "cache_write": 0, "output": sum(r["output_tokens"] for r in rows)}  # fmt: skip
    assert tokens["cache_read"] > 0  # the fake upstream's prefix cache
    (labels, spent), *more = found["contextweaver_spend_total"]
    assert not more and labels["model"] == "gpt-4.1-mini" and labels["provider"] == "openai"
    assert labels["currency"] == "USD" and len(labels["owner"]) == 8 and "sk-" not in labels["owner"]
    price = DEFAULT_PRICES["gpt-4.1-mini"]
    expected = (
        tokens["input"] * price.input
        + tokens["cache_read"] * price.cache_read
        + tokens["output"] * price.output
    ) / 1e6
    assert math.isclose(spent, expected, rel_tol=1e-9)
    whole = found["contextweaver_passthrough_spend_total"][0][1]
    expected_whole = (
        sum(  # each request's input spend at its own pass-through ratio, its output as it was
            (r["input_tokens"] * price.input + r["cache_read_tokens"] * price.cache_read)
            * r["passthrough"]
            / r["billed"]
            + r["output_tokens"] * price.output
            for r in rows
        )
        / 1e6
    )
    assert math.isclose(whole, expected_whole, rel_tol=1e-6)
    for name in ("contextweaver_upstream_seconds_count", "contextweaver_upstream_first_byte_seconds_count"):
        assert [v for labels, v in found[name] if labels["model"] == "gpt-4.1-mini"] == [12.0]
    assert sum(v for _, v in found["contextweaver_proxy_seconds_count"]) == 12


@pytest.mark.slow
def test_three_thousand_hostile_model_names_and_keys_keep_the_label_sets_bounded(tmp_path: Path) -> None:
    with fake_upstream() as upstream, running_proxy(SQLiteStore(tmp_path / "s.db"), upstream.base_url,
                                                    auth_token=TOKEN) as (url, _):  # fmt: skip
        with httpx.Client(timeout=30) as client, ThreadPoolExecutor(8) as pool:

            def hostile(
                n: int,
            ) -> int:  # every 10th woven (a session each), the rest passed through (cheaper)
                key, model = {**HEADERS, "x-api-key": f"sk-hostile-{n}"}, f"evil-{n}-" + "x" * 200
                if n % 10:
                    body = {
                        "model": model,
                        "input": [{"role": "user", "content": "hi"}],
                        "previous_response_id": f"r{n}",
                    }
                    return client.post(url + "/responses", headers=key, json=body).status_code
                body = {"model": model, "messages": [{"role": "user", "content": "hi"}]}
                return client.post(url + "/chat/completions", headers=key, json=body).status_code

            assert set(pool.map(hostile, range(3000))) == {200}
        found = samples(url.removesuffix("/v1"))
    models = {labels["model"] for labels, _ in found["contextweaver_model_tokens_total"]}
    owners = {labels["owner"] for labels, _ in found["contextweaver_model_tokens_total"]}
    assert OTHER in models and len(models) <= MODELS + 1 and all(len(m) <= 64 for m in models)
    assert OTHER in owners and len(owners) <= OWNERS + 1
    assert len(found["contextweaver_model_tokens_total"]) <= (MODELS + 1) * (OWNERS + 1) * 4
    assert sum(v for _, v in found["contextweaver_unpriced_answers_total"]) == 3000
    assert sum(v for _, v in found["contextweaver_upstream_seconds_count"]) == 3000


def test_a_bounded_label_names_the_frequent_values_and_not_a_flood_of_one_offs() -> None:
    label = BoundedLabel(limit=4, admit_after=3)
    assert [label(v) for v in ("a", "b")] == ["a", "b"]  # the first half: named from the first request
    assert [label(f"flood-{n}") for n in range(3000)].count(OTHER) == 3000
    assert [label("late") for _ in range(3)] == [OTHER, OTHER, "late"]  # a frequent later value gets a slot
    assert label("x" * 500) == OTHER and label(None) == "none" and len(label.counts) <= label.candidates


def test_a_price_table_in_another_currency_replaces_the_defaults(tmp_path: Path) -> None:
    assert PriceTable().price("claude-sonnet-4-20250514") == DEFAULT_PRICES["claude-sonnet-4"]
    assert PriceTable().price("openai/gpt-4o-mini-2024-07-18") == DEFAULT_PRICES["gpt-4o-mini"]
    assert PriceTable().price("llama-3-70b") is None
    table = tmp_path / "prices.yaml"
    table.write_text("currency: eur\nmodels:\n  llama-3: {input: 0.5, output: 0.9}\n")
    euros = load_prices(table)
    assert (
        euros.currency == "EUR" and euros.price("llama-3-70b") is not None and euros.price("gpt-4o") is None
    )
    table.write_text("models:\n  llama-3: {input: cheap}\n")
    with pytest.raises(BadPrices, match="llama-3"):
        load_prices(table)
