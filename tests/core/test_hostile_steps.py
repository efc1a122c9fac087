"""The whole add_step path on hostile tool output: every step is stored and woven, with sane facts.

The parser-level shapes are in tests/validation; here a trigger goes through extraction, validation
and annotation, and the steps after it must still arrive (one bad line never switches memory off)."""

from __future__ import annotations

import pytest

from contextweaver.config import WeaverConfig
from contextweaver.nodes import extract
from contextweaver.nodes.facts import extract_facts
from contextweaver.records import Step, ValidationStatus
from contextweaver.weaver import ContextWeaver
from tests.core.helpers import ROOT, step

HUGE = "9" * 5000
TRIGGERS = {
    "pytest totals": f"===== {HUGE} passed in 0.1s =====",
    "returncode": f"<returncode>{HUGE}</returncode>\n<output>\n===== 1 passed in 0.1s =====\n</output>",
    "go escape": '{"Time":"t","Action":"pass","Package":"p","Test":"T\\q"}\n{"Time":"t","Action":"pass","Package":"p"}',
    "go surrogate": '{"Time":"t","Action":"fail","Package":"p","Test":"T\\ud800"}',
    "dart escape": '{"test":{"id":1,"name":"x\\q","suiteID":0,"groupIDs":[]},"type":"testStart","time":1}',
    "nested tool call": 'read_file {"path": "a.py", "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
}
HOSTILE = [c * 200_000 for c in ".-/:_ a\n\t=*#"] + ["  \n" * 70_000]


def _weaver() -> ContextWeaver:
    weaver = ContextWeaver(WeaverConfig(mode="per_step"))
    weaver.begin(ROOT)
    return weaver


@pytest.mark.parametrize("name", sorted(TRIGGERS))
def test_a_trigger_step_is_stored_and_later_steps_are_woven(name: str) -> None:
    weaver = _weaver()
    weaver.add_step(step(1))
    weaver.add_step(Step("Run the tests.", TRIGGERS[name], TRIGGERS[name]))
    weaver.add_step(step(3))
    context = weaver.context()
    assert len(weaver.nodes) == 4
    assert "step3_line0" in context.text()
    for test in weaver.nodes[2].test_results:
        test.encode("utf-8")  # ids reach the context and the store: always encodable
    if weaver.tracker.latest:
        assert "TEST STATUS" in context.text()


def test_a_step_whose_extraction_raises_keeps_a_plain_placeholder(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(s: Step) -> None:
        raise RuntimeError("extraction bug")

    monkeypatch.setattr(extract, "extract_facts", boom)
    weaver = _weaver()
    weaver.add_step(step(1))
    odd = weaver.add_step(Step("Look.", "cat odd.txt", "odd output\n" * 50))
    monkeypatch.undo()
    weaver.add_step(step(3))
    assert odd.facts == extract.Facts()
    assert (
        odd.compressed is not None
        and odd.compressed[-1]["content"] == "Old environment output: (? lines omitted, #2)"
    )
    assert odd.full_tokens > odd.compressed_tokens > 0
    assert "step3_line0" in weaver.context(max_tokens=400).text()


def test_a_step_whose_validation_or_annotation_raises_is_still_a_node(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    weaver = _weaver()
    weaver.add_step(step(1))

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("memory bug")

    monkeypatch.setattr(weaver.tracker, "observe", boom)
    monkeypatch.setattr(weaver.annotator, "annotate", boom)
    odd = weaver.add_step(step(2))
    monkeypatch.undo()
    later = weaver.add_step(step(3))
    assert odd.validation_status is ValidationStatus.UNKNOWN and odd.parents == ()
    assert later.index == 3 and later.parents  # the next step is annotated as usual
    assert "step3_line0" in weaver.context().text()


@pytest.mark.parametrize("text", HOSTILE, ids=lambda t: repr(t[:3]))
def test_hostile_output_gives_sane_facts_and_a_node(text: str) -> None:
    facts = extract_facts(Step("Print it.", "cat big.txt", text))
    assert not facts.errors and not facts.observed and not facts.tests
    weaver = _weaver()
    node = weaver.add_step(Step("Print it.", "cat big.txt", text))
    assert node.full_tokens > 0 and node.validation_status is ValidationStatus.UNKNOWN


@pytest.mark.parametrize("text", HOSTILE, ids=lambda t: repr(t[:3]))
def test_hostile_action_gives_sane_facts(text: str) -> None:
    facts = extract_facts(Step("", text, ""))
    assert not facts.files and not facts.tests and not facts.symbols and not facts.edited_files


def test_facts_inside_hostile_runs_are_still_found() -> None:
    text = "-" * 50_000 + " src/app.py::test_x " + "." * 50_000 + "\nValueError: bad\n" + "\n" * 50_000
    facts = extract_facts(Step("", text, text))
    assert "src/app.py" in facts.files and "src/app.py::test_x" in facts.tests
    assert facts.errors == frozenset({"ValueError: bad"})
