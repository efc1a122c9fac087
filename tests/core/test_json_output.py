"""JSON-wrapped tool output (mini-swe-agent 2's `mini.yaml`): placeholders count the output's own lines,
trims and excerpts cut inside its strings and leave valid JSON; any other text is handled as before."""

from __future__ import annotations

import gc
import json
import weakref

import pytest

from contextweaver.nodes import render
from contextweaver.nodes.extract import make_node
from contextweaver.nodes.render import json_output, placeholder, trim_output, trim_text, trimmed_messages
from contextweaver.records import PLACEHOLDER, Step
from contextweaver.tokens import count_message, count_text
from contextweaver.weaving.excerpts import OutputLines, build_excerpt

FILE = "".join(f'{n:>6}\tdef helper_{n}(value): return "<{n}>" * value  # é\n' for n in range(1, 73))
"""A 72-line file as `nl -ba` prints it: quotes, angle brackets and non-ASCII to escape."""


def wrapped(output: str, returncode: int = 0) -> str:
    """The observation as mini.yaml's template writes it (jinja's `tojson` escapes `<`, `>`, `&`, `'`)."""
    literal = json.dumps(output).replace("<", "\\u003c").replace(">", "\\u003e")
    return f'{{\n  "returncode": {returncode},\n  "output": {literal}\n}}'


def long_wrapped(output: str) -> str:
    head, tail = json.dumps(output[:5000]), json.dumps(output[-5000:])
    return (
        f'{{\n  "returncode": 0,\n  "output_head": {head},\n  "output_tail": {tail},\n'
        f'  "elided_chars": {len(output) - 10000},\n  "warning": "Output too long."\n}}'
    )


def tool_step(content: str) -> Step:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "bash", "arguments": '{"command": "nl -ba a.py"}'},
    }
    return Step(
        "read the file",
        "nl -ba a.py",
        FILE,
        messages=(
            {"role": "assistant", "content": "read the file", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": content},
        ),
    )


def test_the_placeholder_counts_the_outputs_lines_not_the_wrappers():
    assert placeholder(wrapped(FILE)) == PLACEHOLDER.format(lines=72)
    assert placeholder(FILE) == PLACEHOLDER.format(lines=72)
    assert placeholder(long_wrapped(FILE * 3)) == PLACEHOLDER.format(
        lines=len((FILE * 3)[:5000].splitlines()) + len((FILE * 3)[-5000:].splitlines())
    )


@pytest.mark.parametrize("budget", [60, 120, 400, 900])
@pytest.mark.parametrize("make", [wrapped, long_wrapped])
def test_a_trim_keeps_the_json_valid_within_the_budget(budget: int, make):
    text = make(FILE * 3)
    out = trim_output(text, budget)
    assert count_text(out) <= budget
    data = json.loads(out)
    assert data["returncode"] == 0
    original = json.loads(text)
    kept = {key: value for key, value in data.items() if key.startswith("output")}
    assert set(kept) == {key for key in original if key.startswith("output")}
    assert any("omitted" in value for value in kept.values())
    for key, value in kept.items():  # each string keeps its own head and tail, decoded and re-encoded
        head, _, tail = value.partition("\n... [")
        assert original[key].startswith(head) and original[key].endswith(tail.partition("] ...\n")[2])
    assert data["returncode"] == original["returncode"] and len(data) == len(original)


def test_a_budget_below_the_wrapper_leaves_nothing_as_a_plain_trim_does():
    assert trim_output(long_wrapped(FILE * 3), 20) == "" == trim_text(FILE * 3, 5)


def test_a_trim_that_fits_returns_the_text_unchanged():
    text = wrapped(FILE)
    assert trim_output(text, count_text(text)) == text


@pytest.mark.parametrize(
    "text",
    [
        FILE,
        '{"returncode": 0, "output": "a"} and then prose',
        '{"returncode": 0, "output": "unterminated}',
        '{"returncode": 0}',
        '{"status": 0, "output": "' + "x " * 2000 + '"}',
        "{" + '"returncode": 0, "output": ' + "[" * 5000 + "]" * 5000 + "}",
    ],
)
def test_any_other_text_is_trimmed_byte_for_byte_as_before(text: str):
    assert json_output(text) is None
    for budget in (30, 200):
        assert trim_output(text, budget) == trim_text(text, budget)
    assert placeholder(text) == PLACEHOLDER.format(lines=len(text.splitlines()))


def test_a_trimmed_step_sends_valid_json():
    node = make_node(1, tool_step(wrapped(FILE)))
    messages, tokens = trimmed_messages(node, 300)
    assert tokens <= 300 and tokens == sum(count_message(m) for m in messages)
    assert json.loads(messages[1]["content"])["output"].startswith(FILE[:30])


def test_an_excerpt_cuts_lines_of_the_output_and_keeps_the_json_valid():
    content = wrapped(FILE)
    node = make_node(1, tool_step(content))
    lines = OutputLines.of(node)
    assert lines.lines[:72] == tuple(FILE.split("\n")[:72])  # the file's lines, not the wrapper's four
    kept = {0, 1, 40, 41}
    excerpt = build_excerpt(node, lines, kept, "why")
    sent = json.loads(excerpt.messages[1]["content"])
    assert sent["returncode"] == 0
    rows = sent["output"].split("\n")
    assert rows[:2] == list(lines.lines[:2]) and lines.lines[40] in rows
    assert "[lines 3-40 cut]" in rows  # the file's own line numbers (nl -ba), inside the string
    assert excerpt.tokens == sum(count_message(m) for m in excerpt.messages)
    whole = build_excerpt(node, lines, set(range(len(lines.lines))), "why")
    assert whole.messages[1]["content"] == content  # nothing cut: the output verbatim, wrapper included
    none = build_excerpt(node, lines, set(), "why")
    assert none.messages[1]["content"] == PLACEHOLDER.format(lines=72)


def test_an_excerpt_of_a_head_and_tail_output_keeps_both_fields():
    content = long_wrapped(FILE * 3)
    node = make_node(1, tool_step(content))
    lines = OutputLines.of(node)
    head_lines = len((FILE * 3)[:5000].split("\n"))
    excerpt = build_excerpt(node, lines, {0, head_lines + 2}, "why")
    sent = json.loads(excerpt.messages[1]["content"])
    assert (
        sent["output_head"].startswith(lines.lines[0]) and lines.lines[head_lines + 2] in sent["output_tail"]
    )
    assert sent["elided_chars"] == len(FILE * 3) - 10000 and sent["warning"] == "Output too long."


def test_mini_yaml_renders_what_these_tests_assume():
    """The real template, rendered as mini-swe-agent renders it, is read the same way."""
    pytest.importorskip("minisweagent")
    import yaml
    from jinja2 import StrictUndefined, Template
    from minisweagent.config import builtin_config_dir

    template = yaml.safe_load((builtin_config_dir / "mini.yaml").read_text())["model"]["observation_template"]
    for output in (FILE, FILE * 3):
        text = Template(template, undefined=StrictUndefined).render(
            output={"returncode": 1, "output": output, "exception_info": ""}
        )
        found = json_output(text)
        assert found is not None and "".join(found.values) in (output, output[:5000] + output[-5000:])
        out = trim_output(text, 150)
        assert count_text(out) <= 150 and json.loads(out)["returncode"] == 1


class Output(str):
    """An output whose liveness a test can see (a plain str takes no weak reference)."""

    __slots__ = ("__weakref__",)


def test_the_parse_cache_keeps_outputs_within_its_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 44: the cache kept its last 256 JSON-wrapped outputs alive, whatever their size."""
    monkeypatch.setattr(render, "JSON_OUTPUT_BYTES", 4 * 2**20, raising=False)
    outputs = [Output(json.dumps({"returncode": 0, "output": f"{n}\n" + "x" * 2**20})) for n in range(8)]
    alive = [weakref.ref(text) for text in outputs]
    for text in outputs:
        assert json_output(text) is not None
    del outputs, text
    gc.collect()
    kept = [n for n, ref in enumerate(alive) if ref() is not None]
    assert kept == [7], "the newest, which fits; the older ones freed"
    huge = Output(json.dumps({"returncode": 0, "output": "y" * 3 * 2**20}))
    assert json_output(huge) is not None  # parsed, not kept: the one that fitted stays
    huge_ref = weakref.ref(huge)
    del huge
    assert huge_ref() is None and alive[7]() is not None
