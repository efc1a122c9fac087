"""Every parser is linear on hostile shapes: long runs that a backtracking pattern retries from every
position, openers that never close, deep nesting. A quadratic pattern takes minutes on these sizes."""

import re
import signal
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextweaver.validation import parse_observation
from contextweaver.validation.parsers.junit_xml import without_comments
from contextweaver.validation.text import MAX_PARSED_CHARS, capped, clean_observation
from tests.validation.adversarial import SPECIAL

HOSTILE = {
    "jest suite line of spaces": lambda n: "\nPASS" + " " * n,
    "jest suite line of tabs": lambda n: "\nFAIL " + "\t" * n,
    "jest totals of tabs": lambda n: "\nTests: " + "\t" * n,
    "jest suites totals of digits": lambda n: "\nTest Suites: " + "1" * n,
    "unclosed comment in a testcase": lambda n: "<testsuite><testcase><!--" + "a" * n,
    "unclosed CDATA in a testcase": lambda n: "<testsuite><testcase><![CDATA[" + "a." * (n // 2),
    "testcase opened, never closed": lambda n: "<testcase " + "a" * n,
    "test-run opened, never closed": lambda n: "<test-run " + " " * n,
    "maven failure line of brackets": lambda n: "\n[ERROR] " + "(" * n,
    "go marker over blank lines": lambda n: "\n \n" * (n // 3),
    "sympy continuation over blank lines": lambda n: "\nsympy/a.py[2] " + "\n " * (n // 2),
    **SPECIAL,
}


class _Slow(Exception):
    pass


def _seconds(text: str, limit: float = 3.0) -> float:
    """Best of two parse CPU times; the wall-clock limit stops a runaway pattern (the regex engine checks signals)."""

    def stop(*_: object) -> None:
        raise _Slow

    previous = signal.signal(signal.SIGALRM, stop)
    best = float("inf")
    try:
        for _ in range(2):
            signal.setitimer(signal.ITIMER_REAL, limit)
            start = time.process_time()  # CPU time: other processes on the machine do not count
            parse_observation(text, "")
            best = min(best, time.process_time() - start)
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _Slow:
        return float("inf")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return best


@pytest.mark.parametrize("shape", sorted(HOSTILE))
def test_parse_time_grows_linearly(shape: str) -> None:
    small, large = _seconds(HOSTILE[shape](32_000)), _seconds(HOSTILE[shape](128_000))
    assert large < 3.0, f"{shape}: 128 KB took more than 3 s"
    # 4x the input: linear is about 4x the time, quadratic 16x (plus slack for a busy machine)
    assert large < 8 * small + 0.1, (shape, small, large)


_OLD_IGNORED = re.compile(r"<!--.*?-->|<!\[CDATA\[.*?\]\]>", re.DOTALL)


@settings(max_examples=300, deadline=None, database=None)
@given(
    st.lists(st.sampled_from(["<!--", "-->", "<![CDATA[", "]]>", "a", "<testcase>", "-", "]"]), max_size=20)
)
def test_comment_removal_matches_the_xml_rule(parts: list[str]) -> None:
    """Comments and CDATA sections are blanked; an unclosed one, and what follows it, stays as text."""
    text = "".join(parts)
    assert without_comments(text) == _OLD_IGNORED.sub(" ", text)


def test_a_huge_output_is_parsed_as_head_and_tail() -> None:
    lines = [f"t.py::test_{i} PASSED" for i in range(200_000)]
    text = "\n".join(["===== test session starts =====", "t.py::test_first FAILED", *lines])
    text += "\n===== 1 failed, 200000 passed in 9.0s =====\n"
    assert len(text) > MAX_PARSED_CHARS
    kept = clean_observation(text).text
    assert len(kept) <= MAX_PARSED_CHARS + 100 and "characters not parsed" in kept
    assert kept.startswith("===== test session starts") and kept.endswith("in 9.0s =====\n")
    report = parse_observation(text, "pytest")
    assert report is not None and report.totals == {"failed": 1, "passed": 200000}
    assert report.tests["t.py::test_first"].value == "failed"
    assert capped("short") == "short"
