"""The select selector: a recency floor, excerpts of older outputs recent steps mention, repeats elided."""

from __future__ import annotations

import re

from contextweaver.config import WeaverConfig
from contextweaver.nodes.extract import make_node
from contextweaver.records import Step
from contextweaver.selectors import SELECTORS
from contextweaver.selectors.select import SelectSelector
from contextweaver.tokens import count_message
from contextweaver.weaver import ContextWeaver
from contextweaver.weaving.excerpts import MARKER, OutputLines, build_excerpt

FILE_VIEW = "\n".join(f"{n:>4}\tline {n} of the module" for n in range(1, 201))
FILE_VIEW = FILE_VIEW.replace("line 150 of the module", "def compute_total_price(order):")


def weaver_with(steps: list[Step], task: str = "fix the bug", **settings: object) -> ContextWeaver:
    weaver = ContextWeaver(WeaverConfig(selector="select", mode="per_step", **settings))  # type: ignore[arg-type]
    weaver.begin([{"role": "system", "content": "sys"}, {"role": "user", "content": task}])
    for step in steps:
        weaver.add_step(step)
    return weaver


def filler(n: int) -> list[Step]:
    return [Step(f"look {i}", f"ls dir{i}", f"file_{i}.txt\nother_{i}.txt") for i in range(n)]


def test_registered() -> None:
    assert SELECTORS.get("select") is SelectSelector


def test_floor_keeps_the_last_w_outputs_whole() -> None:
    weaver = weaver_with(filler(12))
    context = weaver.context()
    full = [d.index for d in context.decisions if d.mode == "full"]
    assert full == [8, 9, 10, 11, 12]
    for step in weaver.graph.nodes[8:]:
        assert step.step.observation in context.text()


def test_older_output_kept_as_an_excerpt_around_what_recent_steps_mention() -> None:
    steps = [Step("read the module", "nl -ba shop/pricing.py", FILE_VIEW), *filler(8)]
    steps.append(Step("the bug must be in compute_total_price", "grep -n total shop/*.py", "no match"))
    context = weaver_with(steps).context()
    decision = next(d for d in context.decisions if d.index == 1)
    assert decision.mode == "trimmed"
    assert "compute_total_price" in decision.reason
    text = context.text()
    assert " 150\tdef compute_total_price(order):" in text
    assert " 148\tline 148 of the module" in text  # the lines around the hit, whole
    assert " 20\tline 20 of the module" not in text
    markers = re.findall(r"\[lines (\d+)-(\d+) cut(, #1)?\]", text)
    assert ("1", "147", ", #1") in markers and ("153", "200", "") in markers  # the step named once
    assert decision.tokens < weaver_with(steps).graph.node(1).full_tokens / 5


def test_nothing_older_is_kept_when_recent_steps_mention_nothing_in_it() -> None:
    steps = [Step("read the module", "nl -ba shop/pricing.py", FILE_VIEW), *filler(9)]
    context = weaver_with(steps).context()
    assert next(d for d in context.decisions if d.index == 1).mode == "compressed"


def test_the_extra_token_allowance_bounds_the_excerpts() -> None:
    steps = [Step("read the module", "nl -ba shop/pricing.py", FILE_VIEW), *filler(8)]
    steps.append(Step("the bug must be in compute_total_price", "grep -n total shop/*.py", "no match"))
    context = weaver_with(steps, select={"extra_tokens": 0}).context()
    assert next(d for d in context.decisions if d.index == 1).mode == "compressed"


def test_a_run_of_big_steps_spends_a_bigger_excerpt_allowance() -> None:
    """The same old views and recent words: with steps of twice REFERENCE_STEP, twice the allowance."""
    allowance = 2400

    def view(n: int) -> str:
        return "\n".join(f"{i:>5}\tk_{n}_{i}" for i in range(1, 90))

    def excerpt_tokens(pad: int) -> int:
        old = [Step(f"read {n}", f"nl -ba pkg/mod_{n}.py", view(n)) for n in range(8)]
        padding = "\n".join(f"noise line {i} of padding" for i in range(pad))
        recent = [Step(f"look {i}", f"ls dir{i}", f"file_{i}.txt\n{padding}") for i in range(5)]
        ask = " ".join(f"k_{n}_{i}" for n in range(8) for i in range(3, 90, 7))
        steps = [*old, *recent, Step(f"use {ask}", "ls", "ok")]
        context = weaver_with(steps, select={"extra_tokens": allowance}).context()
        return sum(d.tokens for d in context.decisions if d.index <= 8 and d.mode == "trimmed")

    small, big = excerpt_tokens(0), excerpt_tokens(600)
    calls = 8 * 40  # an excerpt carries its step's call, about 40 tokens each
    assert 0.75 * allowance < small <= allowance + calls < big and big > 1.8 * small, (small, big)


def test_lines_repeated_in_a_later_kept_output_are_elided() -> None:
    rerun = "\n".join(f"collected item test_case_{i} PASSED" for i in range(40))
    steps = [
        *filler(6),
        Step("run", "pytest -v", rerun + "\nfirst"),
        Step("again", "pytest -v", rerun + "\nsecond"),
    ]
    context = weaver_with(steps).context()
    older = next(d for d in context.decisions if d.index == 7)
    assert older.mode == "trimmed"
    assert "first" in context.text()
    assert context.text().count("collected item test_case_3 PASSED") == 1
    assert "repeated in step 8 (output" in older.reason


def test_lines_a_kept_step_wrote_in_its_action_are_elided_from_an_older_output() -> None:
    """The agent prints a file, then rewrites it with a heredoc: the old printout's lines that the
    heredoc repeats are in the context once (in the action); the changed line stays in the output."""
    body = [f"    total_{i} = compute_line_{i}(order, discount_{i})" for i in range(30)]
    old = "\n".join(body)
    new = "\n".join([*body[:15], "    total_15 = compute_fixed(order)", *body[16:]])
    steps = [
        *filler(5),
        Step("look at it", "cat shop/lines.py", old),
        Step("rewrite it", f"cat <<'EOF' > shop/lines.py\n{new}\nEOF", ""),
        Step("check", "python -m pytest -q", "1 passed"),
    ]
    context = weaver_with(steps).context()
    printed = next(d for d in context.decisions if d.index == 6)
    assert printed.mode == "trimmed" and "repeated in step 7" in printed.reason
    text = context.text()
    assert text.count(body[3].strip()) == 1  # once, in the heredoc
    assert body[15].strip() in text  # the line the rewrite changed stays where it was printed


def test_a_block_an_output_prints_again_is_cut_after_its_first_copy() -> None:
    warning = [f"  warnings.warn('deprecated option number {i}', DeprecationWarning)" for i in range(8)]
    output = "\n".join(["test_a PASSED", *warning, "test_b PASSED", *warning, "2 passed, 16 warnings"])
    steps = [*filler(6), Step("run", "python -m pytest -q", output), Step("next", "ls", "a.py")]
    context = weaver_with(steps).context()
    run = next(d for d in context.decisions if d.index == 7)
    assert run.mode == "trimmed" and "repeated earlier in this output" in run.reason
    text = context.text()
    assert text.count(warning[2].strip()) == 1
    assert "test_b PASSED" in text and "2 passed, 16 warnings" in text

    current = weaver_with(steps[:7]).context().text()  # the current output stays whole
    assert current.count(warning[2].strip()) == 2


def test_lines_an_output_repeats_from_the_task_are_cut() -> None:
    """The task is in every context: an output that prints its example again costs only what is new."""
    example = [f"    result_{i} = convert(value_{i}, unit='metre_{i}')" for i in range(10)]
    task = "Fix convert. To reproduce:\n" + "\n".join(example)
    steps = [*filler(5), Step("run it", "cat repro.py", "\n".join([*example, "print(result_0)"]))]
    steps.append(Step("next", "ls", "a.py"))
    context = weaver_with(steps, task=task).context()
    printed = next(d for d in context.decisions if d.index == 6)
    assert printed.mode == "trimmed" and "repeated in the task" in printed.reason
    assert context.text().count(example[4].strip()) == 1
    assert "print(result_0)" in context.text()


def test_excerpt_keeps_whole_lines_and_says_what_was_cut() -> None:
    text = "\n".join(f"line {n}: " + " ".join(f"word_{n}_{i}" for i in range(12)) for n in range(1, 6))
    node = make_node(1, Step("t", "cat f.py", text))
    lines = OutputLines.of(node)
    excerpt = build_excerpt(node, lines, {1, 2}, "not needed")
    observation = excerpt.messages[-1]["content"]
    assert observation.splitlines() == [
        MARKER.format(start=1, end=1, handle=""),
        lines.lines[1],
        lines.lines[2],
        MARKER.format(start=4, end=5, handle=""),
    ]
    assert excerpt.messages[0] == node.step.chat_messages()[0]
    assert excerpt.tokens == sum(count_message(m) for m in excerpt.messages)


def test_a_numbered_view_names_its_cut_lines_by_their_own_numbers() -> None:
    """`nl -ba a.py | sed -n '200,209p'`: the agent re-reads lines 202-208, not the output's rows 3-9."""
    text = "\n".join(f"{n:6d}\t    value_{n} = compute_{n}(argument_{n}, other_{n})" for n in range(200, 210))
    node = make_node(1, Step("t", "nl -ba a.py | sed -n '200,209p'", text))
    lines = OutputLines.of(node)
    observation = build_excerpt(node, lines, {0, 1, 9}, "not needed").messages[-1]["content"]
    assert observation.splitlines() == [
        lines.lines[0],
        lines.lines[1],
        MARKER.format(start=202, end=208, handle=""),
        lines.lines[9],
    ]


def test_a_gap_cheaper_than_its_marker_is_kept() -> None:
    node = make_node(1, Step("t", "cat f.py", "alpha\nbeta\ngamma"))
    excerpt = build_excerpt(node, OutputLines.of(node), {0, 2}, "x")
    assert excerpt.messages[-1]["content"] == "alpha\nbeta\ngamma"


def test_per_step_work_reads_only_recent_steps_and_posted_outputs() -> None:
    weaver = weaver_with(filler(300))
    selector = weaver.selector
    assert isinstance(selector, SelectSelector)
    weaver.context()
    assert selector.index.indexed == 300
    weaver.add_step(Step("look", "ls", "x"))
    weaver.context()
    assert selector.index.indexed == 301  # one new node indexed, the rest untouched


def test_a_long_recent_output_keeps_head_tail_and_mentions_but_the_current_stays_whole() -> None:
    long_view = "\n".join(f"{n:>5}\tvalue_{n} = compute(part_{n}, other_{n})" for n in range(1, 401))
    long_view = long_view.replace("value_200 = compute", "target_setting = compute")
    steps = [
        *filler(6),
        Step("read it", "nl -ba big.py", long_view),
        Step("where is target_setting used?", "grep -rn target_setting .", "big.py:200"),
        Step("check", "ls", "a"),
        Step("again", "nl -ba big.py", long_view.replace("other_", "more_")),
    ]
    context = weaver_with(steps).context()
    older = next(d for d in context.decisions if d.index == 7)
    assert older.mode == "trimmed" and "head, tail" in older.reason
    text = context.text()
    assert "target_setting = compute(part_200, other_200)" in text  # mentioned by a recent step
    assert "value_1 = compute(part_1, other_1)" in text  # head
    assert "value_400 = compute(part_400, other_400)" in text  # tail
    assert "value_300 = compute(part_300, other_300)" not in text
    assert next(d for d in context.decisions if d.index == 10).mode == "full"  # the current output


def test_a_recent_output_stays_whole_unless_it_alone_takes_more_than_its_share_of_the_room() -> None:
    view = "\n".join(f"{n:>5}\tvalue_{n} = compute(part_{n}, other_{n})" for n in range(1, 201))
    steps = [*filler(6), Step("read it", "nl -ba big.py", view), *filler(2)]
    weaver = weaver_with(steps)
    selector = weaver.selector
    assert isinstance(selector, SelectSelector)
    size = weaver.graph.node(7).full_tokens
    assert (
        size < selector.recent_share * selector.long_output
    )  # within its share of the room without a budget
    unbounded = weaver.context()
    assert next(d for d in unbounded.decisions if d.index == 7).mode == "full"
    assert view in unbounded.text()
    # a budget whose room above the root gives the output less than its share: trimmed, head and tail kept
    budget = int(0.9 * size / selector.recent_share) + weaver.graph.node(0).full_tokens
    tight = weaver.context(max_tokens=budget)
    trimmed = next(d for d in tight.decisions if d.index == 7)
    assert trimmed.mode == "trimmed" and "head, tail" in trimmed.reason
    assert "value_1 = compute(part_1, other_1)" in tight.text()
    assert "value_200 = compute(part_200, other_200)" in tight.text()
    assert "value_100 = compute(part_100, other_100)" not in tight.text()


def test_a_long_recent_output_stays_whole_when_its_excerpt_would_keep_nearly_all_of_it() -> None:
    """Head and tail are most of a 100-line view: the few middle lines an excerpt cuts are what an edit
    of the view would target, and cutting them saves little room."""
    view = "\n".join(f"{n:>5}\tvalue_{n} = compute(part_{n}, other_{n})" for n in range(1, 101))
    steps = [*filler(6), Step("read it", "nl -ba big.py", view), *filler(2)]
    weaver = weaver_with(steps)
    selector = weaver.selector
    assert isinstance(selector, SelectSelector)
    assert selector.head_lines + selector.tail_lines >= 0.8 * 100  # the excerpt would keep nearly all
    budget = (
        int(0.9 * weaver.graph.node(7).full_tokens / selector.recent_share) + weaver.graph.node(0).full_tokens
    )
    tight = weaver.context(max_tokens=budget)
    assert next(d for d in tight.decisions if d.index == 7).mode == "full"
    assert "value_70 = compute(part_70, other_70)" in tight.text()


MODULE = "\n".join(
    [
        "import os",
        "",
        "class Cart:",
        *[f"    value_{n} = {n}" for n in range(60)],
        "    def add_item(self, sku):",
    ]
    + [f"        step_{n}()" for n in range(60)]
    + ["def checkout(cart):", "    return cart"]
)


def test_an_older_view_of_a_file_recent_steps_name_keeps_its_definition_lines() -> None:
    steps = [Step("read the cart", "cat shop/cart.py", MODULE), *filler(8)]
    steps.append(Step("now edit the cart module", "sed -i 's/x/y/' ./shop/cart.py", ""))
    context = weaver_with(steps).context()
    (mode, reason), text = next((d.mode, d.reason) for d in context.decisions if d.index == 1), context.text()
    assert (mode, "shop/cart.py, a file recent steps name" in reason) == ("trimmed", True)
    for line in ("class Cart:", "    def add_item(self, sku):", "def checkout(cart):"):
        assert line in text
    assert "value_30 = 30" not in text and "step_30()" not in text


def test_a_view_of_a_file_in_another_folder_is_not_linked() -> None:
    steps = [Step("read the cart", "cat shop/cart.py", MODULE), *filler(8)]
    steps.append(Step("now edit the order module", "sed -i 's/x/y/' billing/order.py", ""))
    context = weaver_with(steps).context()
    assert next(d for d in context.decisions if d.index == 1).mode == "compressed"


def test_an_older_view_of_a_file_beside_one_recent_steps_name_keeps_its_definition_lines() -> None:
    """A new script or edit uses names of the module's neighbours: `/testbed/src/shop/cart.py` is in the
    folder of `shop/order.py`, as paths written either way."""
    steps = [Step("read the cart", "cat /testbed/src/shop/cart.py", MODULE), *filler(8)]
    steps.append(Step("now edit the order module", "sed -i 's/x/y/' shop/order.py", ""))
    context = weaver_with(steps).context()
    (mode, reason), text = next((d.mode, d.reason) for d in context.decisions if d.index == 1), context.text()
    assert (mode, "beside files recent steps name" in reason) == ("trimmed", True), reason
    for line in ("class Cart:", "    def add_item(self, sku):", "def checkout(cart):"):
        assert line in text
    assert "value_30 = 30" not in text


def test_an_edit_output_that_echoes_its_own_call_offers_nothing() -> None:
    """An editor prints the new text numbered (and unquoted): the call holds those lines already."""
    call = "str_replace_editor str_replace /a/pricing.py --old_str 'x = 1' --new_str 'def compute_total_price(order):\n    return order'\"'\"'s total'"
    echo = "The file /a/pricing.py has been edited:\n   150\tdef compute_total_price(order):\n   151\t    return order's total\nReview the changes."
    steps = [Step("edit", call, echo), *filler(8)]
    steps.append(Step("the bug must be in compute_total_price", "grep -n total shop/*.py", "no match"))
    context = weaver_with(steps).context()
    assert next(d for d in context.decisions if d.index == 1).mode == "compressed"


def test_an_output_just_before_the_floor_offers_more_lines_than_an_older_one() -> None:
    view = "\n".join(
        f"{i:>5}\tvalue_{i} = compute(value_{i - 1}, 'a padding string of some length')"
        for i in range(1, 300)
    )
    ask = " ".join(f"value_{i}" for i in range(3, 300, 3))

    def kept(older: int) -> int:
        steps = [Step("read", "nl -ba pkg/mod.py", view), *filler(older), Step(f"use {ask}", "ls", "ok")]
        context = weaver_with(steps).context()
        return next(d.tokens for d in context.decisions if d.index == 1)

    near, far = kept(5), kept(10)  # 6 and 11 outputs back, the floor being the last 5
    assert near > 1.5 * far, (near, far)


def test_an_older_view_offers_the_round_line_numbers_around_a_range_recent_views_page_through() -> None:
    whole = "\n".join(f"{n:>6}\t    pass" for n in range(1, 401))  # no word a recent step says
    page = "\n".join(f"{n:>6}\t    pass" for n in range(200, 251))
    steps = [Step("read", "nl -ba pkg/mod.py", whole), *filler(8)]
    steps.append(Step("page", "nl -ba pkg/mod.py | sed -n '200,250p'", page))
    context = weaver_with(steps).context()
    text = next(m["content"] for m in context.messages if "   300\t" in str(m.get("content", "")))
    shown = {int(n) for n in re.findall(r"^ *(\d+)\t", text, re.M)}
    assert {150, 190, 260, 300} <= shown and 20 not in shown and 155 not in shown
    assert next(d for d in context.decisions if d.index == 1).mode == "trimmed"
