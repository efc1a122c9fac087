"""The deterministic fake backend: registered like a real one, real token counts, scripted replies."""

from __future__ import annotations

import json

import pytest

from contextweaver.config import ModelConfig
from contextweaver.models import MODELS, ModelTimeout, build_model
from contextweaver.models.fake import FakeModel
from contextweaver.models.fake_rules import answer, parse_blocks
from contextweaver.tokens import count_message, count_text

PROMPT = """TASK:
Fix the parser.

NEW STEP:
[NEW N4]
thought: parse_header in lib/parse.py fails on tabs
action: sed -n 1,40p lib/parse.py

CANDIDATES (earlier steps; N0 is the task itself):
[N0] status: unknown
summary: the task (see TASK)
dependency summary: -

[N1] status: unknown
summary: grep found lib/parse.py:12 def parse_header
dependency summary: -

[N3] status: unknown
summary: listed the docs folder
dependency summary: -

INSTRUCTIONS:
Select at most 2 parents of N4."""

SCHEMA = {"title": "parent_selection", "properties": {"parents": {"maxItems": 2}}}


def test_registered_and_unknown_backends_list_the_valid_ones() -> None:
    assert isinstance(build_model(ModelConfig(backend="fake")), FakeModel)
    assert {"openai", "anthropic", "fake"} <= set(MODELS.names())
    with pytest.raises(ValueError, match="valid: openai, anthropic, fake"):
        build_model(ModelConfig(backend="nope"))


def test_blocks_are_parsed_from_the_prompt_format() -> None:
    blocks = parse_blocks(PROMPT)
    assert [(b.index, b.new) for b in blocks] == [(4, True), (0, False), (1, False), (3, False)]
    assert blocks[2].lines["summary"].startswith("grep found")


def test_rule_picks_the_candidate_that_shares_paths_and_symbols() -> None:
    reply = json.loads(answer(PROMPT, SCHEMA))
    assert [p["id"] for p in reply["parents"]] == ["N1"]
    assert 0 <= reply["parents"][0]["confidence"] <= 1 and "parse" in reply["parents"][0]["reasoning"]


def test_without_overlap_the_most_recent_candidate_is_chosen() -> None:
    prompt = PROMPT.replace("parse_header in lib/parse.py fails on tabs", "zzz").replace(
        "sed -n 1,40p lib/parse.py", "qqq"
    )
    assert [p["id"] for p in json.loads(answer(prompt, SCHEMA))["parents"]] == ["N3"]


def test_deterministic_and_counts_real_tokens() -> None:
    messages = [{"role": "system", "content": "rules"}, {"role": "user", "content": PROMPT}]
    first, second = (
        FakeModel().complete(messages, json_schema=SCHEMA),
        FakeModel().complete(messages, json_schema=SCHEMA),
    )
    assert first == second
    assert first.prompt_tokens == sum(count_message(m) for m in messages)
    assert first.completion_tokens == count_text(first.text) > 0


def test_scripted_queue_comes_first_then_rules() -> None:
    model = FakeModel(replies=["not json", ModelTimeout("scripted timeout")])
    messages = [{"role": "user", "content": PROMPT}]
    assert model.complete(messages).text == "not json"
    with pytest.raises(ModelTimeout):
        model.complete(messages)
    assert json.loads(model.complete(messages, json_schema=SCHEMA).text)["parents"]
    assert len(model.requests) == 3 and model.usage.total.calls == 2 and model.usage.total.failures == 1


def test_schema_is_inferred_from_the_instructions_when_absent() -> None:
    prompt = PROMPT + '\nReply as JSON:\n{"parents": [{"id": "N3"}]}'
    assert json.loads(answer(prompt, None))["parents"][0]["id"] == "N1"
