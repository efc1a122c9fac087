"""A current output too big for the room keeps the lines nearest what recent steps mention, beside its head and tail."""

from __future__ import annotations

from contextweaver.config import WeaverConfig
from contextweaver.nodes.extract import make_node
from contextweaver.records import Step
from contextweaver.weaver import ContextWeaver
from contextweaver.weaving.aimed_trim import Aim, aimed_excerpt
from contextweaver.weaving.excerpts import OutputLines

VIEW = "\n".join(
    ["[File: src/TypeParser.java (140 lines total)]"]
    + [f"{n}:    int field{n} = compute(part{n}, other{n});" for n in range(1, 141)]
).replace("int field70 = compute", "List<JavaType> parseTypes = compute")
THOUGHT = "We will modify the parseTypes method to add a depth check."


def weaver(steps: list[Step]) -> ContextWeaver:
    cw = ContextWeaver(WeaverConfig(selector="select", mode="per_step"))
    cw.begin(
        [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "limit the depth of type parameters"},
        ]
    )
    for step in steps:
        cw.add_step(step)
    return cw


def test_a_trimmed_current_view_keeps_the_lines_its_thought_names_with_its_head_and_tail() -> None:
    cw = weaver(
        [
            *(Step("look", f"ls dir{i}", f"file{i}") for i in range(6)),
            Step(THOUGHT, "open src/TypeParser.java", VIEW),
        ]
    )
    budget = cw.graph.node(0).full_tokens + cw.graph.node(7).full_tokens // 2
    context = cw.context(max_tokens=budget)
    text = context.text()
    assert context.tokens <= budget
    assert next(d for d in context.decisions if d.index == 7).mode == "trimmed"
    assert "70:    List<JavaType> parseTypes = compute(part70, other70);" in text  # the middle line named
    assert "69:    int field69" in text and "71:    int field71" in text  # and its neighbours
    assert "1:    int field1 = " in text and "140:    int field140 = " in text  # head and tail
    assert "open src/TypeParser.java" in text  # the call itself, verbatim


def test_an_aimed_excerpt_fits_its_room_and_gives_way_when_no_marked_line_fits() -> None:
    node = make_node(1, Step(THOUGHT, "open src/TypeParser.java", VIEW))
    lines = OutputLines.of(node)
    marked = lines.words["parseTypes"]
    for room in (200, 400, 800):
        excerpt = aimed_excerpt(node, Aim(lines, marked), room, "why")
        assert excerpt is not None and excerpt.tokens <= room
        assert any("parseTypes = compute" in str(m["content"]) for m in excerpt.messages)
    assert aimed_excerpt(node, Aim(lines, marked), lines.call_tokens + 5, "why") is None
