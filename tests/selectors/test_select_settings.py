"""The selection's settings file: the shipped defaults, the round trip, and an error for each bad file."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from contextweaver.config import WeaverConfig, load_config
from contextweaver.config.select_weights import (
    FORMAT,
    SHIPPED,
    SelectSettings,
    SelectWeightsError,
    load_settings,
    weights_document,
)
from contextweaver.errors import ContextWeaverError
from contextweaver.records import Step
from contextweaver.selectors.select import SelectSelector
from contextweaver.strategies import build_strategy
from contextweaver.weaver import ContextWeaver

VIEW = "\n".join(f"{n:>4}\tline {n} of the module" for n in range(1, 201)).replace(
    "line 150 of the module", "def compute_total_price(order):"
)
STEPS = [
    Step("read the module", "nl -ba shop/pricing.py", VIEW),
    *[Step(f"look {i}", f"ls dir{i}", f"file_{i}.txt\nother_{i}.txt") for i in range(8)],
    Step("the bug must be in compute_total_price", "grep -n total shop/*.py", "no match"),
]


def write(path: Path, settings: SelectSettings) -> Path:
    path.write_text(json.dumps(weights_document(settings, note="test")), encoding="utf-8")
    return path


def contexts(weaver: ContextWeaver) -> list[str]:
    """Every step's context messages as JSON; the last one as its text."""
    weaver.begin([{"role": "system", "content": "sys"}, {"role": "user", "content": "fix the bug"}])
    out = []
    for step in STEPS:
        weaver.add_step(step)
        context = weaver.context()
        out.append(json.dumps(context.messages) if len(out) < len(STEPS) - 1 else context.text())
    return out


def select_weaver(**settings: object) -> ContextWeaver:
    return build_strategy("cw-select", settings).strategy  # type: ignore[return-value]


def test_the_shipped_file_holds_the_record_defaults() -> None:
    assert load_settings() == load_settings(SHIPPED) == SelectSettings()
    assert json.loads(SHIPPED.read_text())["format"] == FORMAT


def test_round_trip(tmp_path: Path) -> None:
    changed = replace(SelectSettings(), lookback=3, parent_bonus=0.5, trim_passing=False, extra_tokens=3600)
    assert load_settings(write(tmp_path / "w.json", changed)) == changed


def test_default_contexts_are_those_of_the_record_defaults(tmp_path: Path) -> None:
    """No file, the shipped file named, a file of the record's defaults, the record itself: one context."""
    reference = select_weaver()
    direct = select_weaver()
    direct.selector = SelectSelector(SelectSettings())
    named = select_weaver(select={"weights": str(SHIPPED)})
    written = select_weaver(select={"weights": str(write(tmp_path / "w.json", SelectSettings()))})
    expected = contexts(reference)
    assert contexts(direct) == contexts(named) == contexts(written) == expected


def test_a_file_setting_changes_the_context(tmp_path: Path) -> None:
    wider = write(tmp_path / "w.json", replace(SelectSettings(), context_lines=4))
    text = contexts(select_weaver(select={"weights": str(wider)}))[-1]
    assert " 146\tline 146 of the module" in text
    assert " 146\tline 146 of the module" not in contexts(select_weaver())[-1]
    none = write(tmp_path / "none.json", replace(SelectSettings(), extra_tokens=0))
    assert "compute_total_price(order)" not in contexts(select_weaver(select={"weights": str(none)}))[-1]


def test_config_tokens_override_the_file(tmp_path: Path) -> None:
    path = str(write(tmp_path / "w.json", replace(SelectSettings(), extra_tokens=0)))
    selector = SelectSelector.from_config(WeaverConfig(select={"weights": path, "extra_tokens": 1000}))
    assert selector.extra_tokens == 1000 and selector.excerpt_tokens == 900


def test_override_on_the_command_line(tmp_path: Path) -> None:
    path = write(tmp_path / "w.json", replace(SelectSettings(), lookback=3))
    config = load_config(overrides=[f"select.weights={path}", "selector=select"])
    assert ContextWeaver(config).selector.lookback == 3  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("document", "says"),
    [
        ({"format": FORMAT, "settings": {"lookbak": 3}}, "unknown setting(s) lookbak"),
        ({"format": FORMAT, "settings": {"lookback": "3"}}, "settings.lookback = '3' must be a int"),
        ({"format": FORMAT, "settings": {"trim_passing": 1}}, "settings.trim_passing = 1 must be a bool"),
        ({"format": FORMAT, "settings": {"lookback": 0}}, "settings.lookback = 0 is outside 1..50"),
        ({"format": FORMAT, "settings": {"extra_tokens": -5}}, "settings.extra_tokens = -5 is outside"),
        ({"format": "contextweaver.select_weights/0", "settings": {}}, "write the file again"),
        ({"settings": {}}, "format None is not"),
        ({"format": FORMAT, "settings": [1]}, "key 'settings' must be an object"),
        ([1, 2], "expected a JSON object"),
    ],
)
def test_bad_files_say_which_file_key_and_fix(tmp_path: Path, document: object, says: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(SelectWeightsError) as caught:
        load_settings(path)
    assert str(path) in str(caught.value) and says in str(caught.value)
    assert isinstance(caught.value, ContextWeaverError)
    with pytest.raises(ValueError, match="bad.json"):  # the config names it before any run starts
        load_config(overrides=[f"select.weights={path}"])


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(SelectWeightsError, match="cannot read the selection weights"):
        load_settings(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{\n  oops", encoding="utf-8")
    with pytest.raises(SelectWeightsError, match=r"broken.json: not JSON \(line 2"):
        load_settings(broken)


def test_a_rewritten_file_is_read_again(tmp_path: Path) -> None:
    path = write(tmp_path / "w.json", SelectSettings())
    assert load_settings(path).lookback == 5
    write(path, replace(SelectSettings(), lookback=7))
    import os

    os.utime(path, ns=(1, 10**18))  # a new stamp even where the clock is coarse
    assert load_settings(path).lookback == 7
    assert asdict(load_settings(path))["lookback"] == 7
