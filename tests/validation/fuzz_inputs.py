"""Inputs for fuzzing the parsers: each runner's real line shapes, one failure marker per runner, noise.
Shared by tests/validation/test_fuzz.py and benchmarks/fuzz_parsers.py."""

from __future__ import annotations

from hypothesis import strategies as st

from contextweaver.records import ValidationStatus
from contextweaver.validation import TestTracker, parse_observation

FRAGMENTS = {
    "pytest": ["===== test session starts =====\n", "t.py::test_a PASSED\n", "==== 2 passed in 0.1s ====\n"],
    "unittest": ["test_a (m.C) ... ok\n", "-" * 70 + "\n", "Ran 3 tests in 0.1s\n\nOK\n"],
    "sympy": [
        "==== test process starts ====\n",
        "sympy/a.py[2] ..  [OK]\n",
        "== tests finished: 2 passed, in 1.0 seconds ==\n",
    ],
    "go": ["=== RUN   TestA\n", "--- PASS: TestA (0.00s)\n", "ok  \tacme/a\t0.01s\n", "PASS\n"],
    "go-json": [
        '{"Time":"t","Action":"pass","Package":"p","Test":"TestA"}\n',
        '{"Time":"t","Action":"pass","Package":"p"}\n',
    ],
    "cargo": [
        "running 1 test\n",
        "test a ... ok\n",
        "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n",
    ],
    "jest": ["PASS src/a.test.js\n", "  ✓ works (2 ms)\n", "Tests:       1 passed, 1 total\n"],
    "mocha": ["  Suite\n", "    ✔ works\n", "\n  1 passing (3ms)\n"],
    "maven": [
        "[INFO] Tests run: 1, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.1 s - in a.B\n",
        "[INFO] Results:\n",
        "[INFO] Tests run: 1, Failures: 0, Errors: 0, Skipped: 0\n",
    ],
    "junit-xml": [
        "<testsuites>",
        '<testsuite name="s">',
        '<testcase classname="a" name="b"/>',
        "</testsuite>",
        "</testsuites>\n",
    ],
    "dotnet-xml": ["<TestRun>", '<UnitTestResult testName="a" outcome="Passed"/>', "</TestRun>\n"],
    "rspec-json": [
        "Run options: exclude {:slow=>true}\n",
        '{"version":"3.13.0","examples":[{"full_description":"C a","status":"passed","file_path":"./c.rb"}],'
        '"summary":{"example_count":1,"failure_count":0,"pending_count":0},"summary_line":"1 example"}\n',
    ],
    "gradle": ["> Task :test\n", "com.a.BTest > works() PASSED\n", "BUILD SUCCESSFUL in 2s\n"],
    "phpunit": [
        "PHPUnit 10.5.0 by Sebastian Bergmann and contributors.\n",
        "..  2 / 2 (100%)\n",
        "OK (2 tests, 2 assertions)\n",
    ],
    "vitest": [
        " RUN  v1.6.0 /app\n",
        " ✓ src/a.test.ts  (2 tests) 3ms\n",
        " Test Files  1 passed (1)\n",
        "      Tests  2 passed (2)\n",
    ],
    "tap": ["TAP version 13\n", "ok 1 - works\n", "1..1\n", "# tests 1\n", "# pass 1\n", "# fail 0\n"],
    "rspec-text": [
        "Randomized with seed 1\n",
        "..\n",
        "Finished in 0.01 seconds (files took 0.1 seconds to load)\n",
        "2 examples, 0 failures\n",
    ],
    "minitest": ["# Running:\n", "..\n", "2 runs, 2 assertions, 0 failures, 0 errors, 0 skips\n"],
    "ctest": [
        "Test project /b\n",
        "1/1 Test #1: unit .....   Passed    0.01 sec\n",
        "100% tests passed, 0 tests failed out of 1\n",
    ],
    "dart-json": [
        '{"protocolVersion":"0.1.1","type":"start","time":0}\n',
        '{"suite":{"id":0,"path":"test/a_test.dart"},"type":"suite","time":0}\n',
        '{"test":{"id":1,"name":"a","suiteID":0},"type":"testStart","time":1}\n',
        '{"testID":1,"result":"success","skipped":false,"hidden":false,"type":"testDone","time":2}\n',
        '{"success":true,"type":"done","time":3}\n',
    ],
}
FAILURES = {
    "pytest": "FAILED t.py::test_b - AssertionError\n",
    "unittest": "FAIL: test_b (m.C)\n",
    "sympy": "== tests finished: 1 passed, 1 failed, in 1.0 seconds ==\n",
    "go": "--- FAIL: TestB (0.00s)\n",
    "go-json": '{"Time":"t","Action":"fail","Package":"p","Test":"TestB"}\n',
    "cargo": "test b ... FAILED\n",
    "jest": "  ✕ breaks (1 ms)\n",
    "mocha": "\n  1 failing\n",
    "maven": "[ERROR] b(a.B)  Time elapsed: 0.1 s  <<< FAILURE!\n",
    "junit-xml": '<testcase classname="a" name="c"><failure message="x"/></testcase>',
    "dotnet-xml": '<UnitTestResult testName="c" outcome="Failed"/>',
    "rspec-json": '{"version":"3.13.0","examples":[{"full_description":"C b","status":"failed"}],'
    '"summary":{"example_count":1,"failure_count":1,"pending_count":0}}',
    "gradle": "com.a.BTest > breaks() FAILED\n",
    "phpunit": "FAILURES!\nTests: 2, Assertions: 2, Failures: 1.\n",
    "vitest": "      Tests  1 failed | 1 passed (2)\n",
    "tap": "not ok 2 - breaks\n",
    "rspec-text": "2 examples, 1 failure\n",
    "minitest": "2 runs, 2 assertions, 1 failures, 0 errors, 0 skips\n",
    "ctest": "50% tests passed, 1 tests failed out of 2\n",
    "dart-json": '{"test":{"id":9,"name":"b","suiteID":0},"type":"testStart","time":4}\n'
    '{"testID":9,"result":"failure","skipped":false,"hidden":false,"type":"testDone","time":5}',
}
NOISE = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)


def pieces(runner: str) -> st.SearchStrategy[list[str]]:
    return st.lists(
        st.one_of(st.sampled_from(FRAGMENTS[runner]), NOISE, st.just("\n"), st.just("\r")), max_size=30
    )


def check(runner: str, parts: list[str], failure_at: int, wrap: bool) -> None:
    text = "".join(parts)
    parse_observation(text, runner)  # must not raise on any mix
    cut = min(failure_at, len(parts))
    failing = "".join(parts[:cut]) + "\n" + FAILURES[runner] + "\n" + "".join(parts[cut:])
    if wrap:
        failing = "<returncode>1</returncode>\n<output>\n" + failing + "\n</output>"
    verdict = TestTracker().observe(1, runner, failing)
    assert verdict.status is not ValidationStatus.PASSED, (runner, failing)


def mixed_pieces() -> st.SearchStrategy[list[str]]:
    """Fragments of every runner mixed together (one runner's failure must survive another's summary)."""
    every = sorted({line for lines in FRAGMENTS.values() for line in lines})
    return st.lists(st.one_of(st.sampled_from(every), NOISE, st.just("\n")), max_size=30)


def check_mixed(parts: list[str], failing_runner: str, failure_at: int) -> None:
    cut = min(failure_at, len(parts))
    text = "".join(parts[:cut]) + "\n" + FAILURES[failing_runner] + "\n" + "".join(parts[cut:])
    verdict = TestTracker().observe(1, "", text)
    assert verdict.status is not ValidationStatus.PASSED, (failing_runner, text)
