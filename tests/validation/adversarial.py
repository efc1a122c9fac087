"""Hostile observation shapes for the parsers: long runs a backtracking pattern can stall on, openers
with no closer, deep nesting. Shared by the linearity tests and benchmarks/parser_adversarial.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator

PREFIXES = (
    "",
    "\n",
    "\nPASS",
    "\nFAIL ",
    "\nPASS a.test.js",
    "\nTests: ",
    "\nTest Suites: ",
    "\n  ✓ ",
    "\n  ● ",
    "\n=",
    "\n===== ",
    "\n= test session starts ",
    "\n1 passed",
    "\nFAILED ",
    "\nt.py::",
    "\nt.py ",
    "\ntest_a (m.C)",
    "\ntest_a (m.C) ... ",
    "\nRan 1 test in 0.1s",
    "\nFAIL: test_a (",
    "\n--- FAIL: ",
    "\n=== RUN ",
    "\nok  \t",
    "\ntest a ... ",
    "\ntest result: ",
    "\n[INFO] Tests run: ",
    "\n[ERROR] ",
    "\n  1 passing",
    "\n    ✔ ",
    '\n{"Action":"',
    '\n{"type":"test","event":"',
    "<testsuite>",
    "<testsuite>\n<testcase ",
    "<testsuite><testcase><!--",
    "<testsuite><testcase><![CDATA[",
    "<testcase ",
    "<test-run ",
    "<test-case ",
    "<TestRun>",
    "<assembly ",
    "<UnitTestResult ",
    "\n____",
    "\nsympy/a.py[2] ",
    "\n== tests finished: ",
    "\x1b[",
    "\nBUILD ",
    "\n> Task :test",
    "\nnot ok ",
    "\nok 1 - ",
    "\n# tests ",
    "\nFinished in ",
    "\n1 example, ",
    "\n1 runs, ",
    "\n1/1 Test #1: ",
    "\nTests: 1, Assertions: ",
    "\n[gw0] ",
    "\nResults (",
    "\n Test Files ",
)
"""Openers of every runner's anchors, each followed by a long filler that never completes them."""

FILLERS = (
    " ",
    "\t",
    "a",
    "a ",
    ".",
    "a.",
    "\r",
    "abc\r",
    "\n ",
    "(",
    "[",
    "<",
    "=",
    "_",
    "1;",
    "\\",
    '"',
    ", ",
)


def _repeat(unit: str, size: int) -> str:
    return unit * max(1, size // max(1, len(unit)))


def _nested(depth: int) -> str:
    """jest/mocha describe blocks nested ever deeper, each with one test under it."""
    return "".join(
        f"\n{' ' * (2 * i + 2)}describe {i}\n{' ' * (2 * i + 4)}✓ t{i} (1 ms)" for i in range(depth)
    )


SPECIAL: dict[str, Callable[[int], str]] = {
    "PASS a.a.a": lambda n: "\nPASS " + _repeat("a.", n),
    "unterminated CSI": lambda n: "\x1b[" + _repeat("1;", n),
    "CSI repeated": lambda n: _repeat("\x1b[1;", n),
    "deep describe nesting": lambda n: _nested(int((n / 2) ** 0.5)),
    "deep XML nesting": lambda n: "<testsuites>" + _repeat("<testsuite>", n),
    "deep JSON nesting": lambda n: '{"examples": [' + _repeat("[", n),
    "testcase tags unclosed": lambda n: "<testsuite>" + _repeat("<testcase ", n),
    "comment openers": lambda n: "<testcase>" + _repeat("<!--", n),
    "unittest lines joined": lambda n: "\n" + _repeat("test_a (m.C) ... ", n),
    "pytest ids no status": lambda n: _repeat("\nt.py::test_a", n),
    "pytest id with bracket": lambda n: "\nt.py::t[" + _repeat("a", n),
    "pytest status no break": lambda n: _repeat("t.py::a PASSED ", n),
    "summary counts run": lambda n: "\n" + _repeat("1 passed, ", n),
    "go runs": lambda n: _repeat("\n=== RUN   T", n),
    "maven tests run": lambda n: _repeat("\n[INFO] Tests run: 1, ", n),
    "spaces lines": lambda n: _repeat(" " * 200 + "\n", n),
    "quoted values never closed": lambda n: "<testsuite>" + _repeat('<testcase name="', n),
    "one tag of quoted values": lambda n: "<testcase " + _repeat('a="b>" ', n),
    "suites with counts": lambda n: _repeat('<testsuite tests="9" failures="1" skipped="2">', n),
    "TRX definitions": lambda n: (
        "<TestRun>" + _repeat('<UnitTest id="i"><TestMethod className="C" name="a"/>', n)
    ),
    "TRX results of one name": lambda n: (
        "<TestRun><TestMethod " + _repeat('<UnitTestResult testName="a" testId="i" outcome="Passed"/>', n)
    ),
}


def shapes(size: int) -> Iterator[tuple[str, str]]:
    """Every prefix with every filler (one long run each), then the hand-made shapes, about `size` chars
    each (made one at a time: a thousand megabyte strings would not fit in memory at once)."""
    for prefix in PREFIXES:
        for filler in FILLERS:
            yield f"{prefix!r} + {filler!r}*", prefix + _repeat(filler, size)
    for name, make in SPECIAL.items():
        yield name, make(size)
