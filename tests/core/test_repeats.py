from __future__ import annotations

from contextweaver.config import WeaverConfig
from contextweaver.records import Step
from contextweaver.weaver import ContextWeaver
from tests.core.helpers import ROOT, FixedParents, step

RUN = "python -m pytest -q tests/test_pager.py"
SAME = "....F\nFAILED tests/test_pager.py::test_last_page\n1 failed, 4 passed in 0.10s"


def weaver(drop: bool) -> ContextWeaver:
    w = ContextWeaver(WeaverConfig(selector="ancestry", mode="per_step", drop_repeated_outputs=drop))
    w.annotator = FixedParents({9: [8, 3], 8: [7]})
    w.begin(ROOT)
    for i in range(1, 10):
        if i == 3:
            w.add_step(
                Step(
                    "Print lines 10-12.",
                    "sed -n '10,12p' src/pager.py",
                    "def paginate(items):\n    pages = len(items)\n    return pages",
                )
            )
        elif i == 8:
            w.add_step(
                Step(
                    "Print the file.",
                    "cat src/pager.py",
                    "import math\ndef paginate(items):\n    pages = len(items)\n    return pages\n",
                )
            )
        else:
            w.add_step(step(i))
    return w


def test_a_kept_output_repeated_within_a_later_kept_output_is_compressed() -> None:
    context = weaver(drop=True).context()
    assert 3 not in context.kept and 8 in context.kept
    reason = next(d.reason for d in context.decisions if d.index == 3)
    assert "recurs in step 8" in reason
    assert "pages = len(items)" in context.text()  # nothing is lost: step 8 holds every line


def test_the_saving_can_be_switched_off() -> None:
    on, off = weaver(drop=True).context(), weaver(drop=False).context()
    assert 3 in off.kept and off.tokens > on.tokens


def test_warmup_is_never_deduplicated() -> None:
    w = ContextWeaver()
    w.begin(ROOT)
    for _ in range(3):
        w.add_step(Step("Run the tests.", RUN, SAME))
    assert w.context().kept == [1, 2, 3]
