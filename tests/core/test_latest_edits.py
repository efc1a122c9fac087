"""Where the recency floor fills the room, each file's latest change still keeps its call: the text a
later edit replaces is most often what that change wrote, and a cut dropped it whole. A floor step that
is such a change keeps its call rather than its output (an editor's echo), unless that output is a test
run."""

from __future__ import annotations

from contextweaver.nodes.extract import make_node, root_node
from contextweaver.records import Node, Step, TestStatus
from contextweaver.validation.tracker import TestTracker
from contextweaver.weaving.plan import Plan
from contextweaver.weaving.weave import weave

ROOT = root_node(
    [{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": "Fix cart.py."}]
)
FIRST = "total = sum(item.price for item in cart)"
WROTE = "total = sum(item.price * item.count for item in cart)"
RUN = "FAILED tests/test_cart.py::test_total - AssertionError: 3 != 6\n" + "E   assert 3 == 6\n" * 30


def write(text: str) -> str:
    return f"cat > src/cart.py <<'EOF'\ndef total(cart):\n    {text}\n    return total\nEOF"


def read(n: int) -> Step:
    return Step(
        thought=f"read part {n}", action=f"cat src/part_{n}.py", observation=f"value_{n} = {n}\n" * 40
    )


def steps(floor_edit: Step) -> list[Node]:
    """1 writes cart.py, 2 rewrites it (its latest change outside the floor), 3-5 read, 6 edits
    other.py inside the floor, 7-8 read; the floor is 6-8."""
    made = [
        Step(thought="first try", action=write(FIRST), observation=""),
        Step(thought="count the items too", action=write(WROTE), observation=""),
        read(3),
        read(4),
        read(5),
        floor_edit,
        read(7),
        read(8),
    ]
    nodes = [make_node(n, step) for n, step in enumerate(made, start=1)]
    tracker = TestTracker()
    for node in nodes:  # the validation stage's labels, as the weaver sets them
        verdict = tracker.observe(node.index, node.step.action, node.step.observation)
        node.test_results = dict(verdict.results)
    return nodes


def woven_modes(nodes: list[Node], extra: int) -> tuple[dict[int, str], str, int]:
    plan = Plan(
        full=[(8, "current"), (7, "floor"), (6, "floor"), (5, "older")],
        compressed_reason="older",
        ahead_of_edits=frozenset({8, 7, 6}),
    )
    budget = ROOT.full_tokens + sum(nodes[i - 1].full_tokens for i in (8, 7)) + extra
    woven = weave(ROOT, nodes, plan, strategy="test", budget=budget)
    assert woven.tokens <= budget
    return {d.index: d.mode for d in woven.decisions}, woven.text(), budget


ECHO = Step(
    thought="fix other.py",
    action="sed -i 's/limit = 1/limit = 2/' src/other.py && cat src/other.py",
    observation="limit = 2\n" * 60,
)


def test_a_files_latest_change_keeps_its_call_where_the_floor_fills_the_room() -> None:
    nodes = steps(ECHO)
    # room for the floor's edit trimmed, which left nothing for older calls
    modes, text, _ = woven_modes(nodes, extra=nodes[5].compressed_tokens + 150)
    assert modes[8] == modes[7] == "full"
    assert modes[2] == "compressed" and WROTE in text  # cart.py's text as the next edit will see it
    assert FIRST not in text  # the change it replaced is not kept first
    assert modes[6] == "compressed" and "limit = 1" in text  # a floor edit keeps its call, not its echo


def test_a_floor_edit_whose_output_is_a_test_run_keeps_that_output() -> None:
    run = Step(
        thought="fix other.py and run the tests",
        action="sed -i 's/limit = 1/limit = 2/' src/other.py && python -m pytest tests/test_cart.py",
        observation=RUN,
    )
    nodes = steps(run)
    assert nodes[5].test_results == {"tests/test_cart.py::test_total": TestStatus.FAILED}
    modes, text, _ = woven_modes(nodes, extra=nodes[5].full_tokens + nodes[1].compressed_tokens + 60)
    assert modes[6] == "full" and "assert 3 == 6" in text
    assert modes[2] == "compressed"
