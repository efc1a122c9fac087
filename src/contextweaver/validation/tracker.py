"""TestTracker: the global test state across steps, node verdicts, and supersession at test level."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

from contextweaver.records import TestStatus, ValidationStatus
from contextweaver.validation.detector import ValidationDetector
from contextweaver.validation.observation import parse_clean
from contextweaver.validation.report import WHOLE_SUITE, TestReport
from contextweaver.validation.text import clean_observation

_MARKS = {
    TestStatus.PASSED: "✓",
    TestStatus.FAILED: "✗",
    TestStatus.ERROR: "✗",
    TestStatus.SKIPPED: "○",
    TestStatus.XFAIL: "✓",
    TestStatus.XPASS: "!",
}


MAX_ID_CHARS = 200
"""A longer test id is cut in the TEST STATUS line (the tracker keeps it whole)."""
_UNSAFE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Control, format (bidi overrides, zero-width), surrogate and line/paragraph separator characters."""
_SEPARATORS = (", ", ": ", '"', "✓", "✗", "○")
"""What the TEST STATUS line separates its entries with: an id holding one is quoted."""


def shown_id(test: str) -> str:
    """A test id as the TEST STATUS line writes it: as printed, unless it holds a control or format
    character (then escaped) or what the line itself is made of, a status mark or `, ` or `: ` (then
    quoted), or is too long (then cut, saying how much): an id read from tool output cannot write lines
    or entries of its own (`x: PASSED, ✓ y`) into the context."""
    if len(test) <= MAX_ID_CHARS and test.isprintable() and not any(s in test for s in _SEPARATORS):
        return test
    cut = test[:MAX_ID_CHARS]
    unsafe = any(unicodedata.category(c) in _UNSAFE for c in cut)
    if unsafe or any(s in cut for s in _SEPARATORS):
        escaped = "".join(
            c.encode("unicode_escape", "backslashreplace").decode("ascii")
            if unicodedata.category(c) in _UNSAFE
            else "\\" + c
            if c in '"\\'
            else c
            for c in cut
        )
        cut = f'"{escaped}"'
    return cut if len(test) <= MAX_ID_CHARS else f"{cut}… (+{len(test) - MAX_ID_CHARS} chars)"


@dataclass(frozen=True)
class Verdict:
    """What the validation layer decided for one new node."""

    status: ValidationStatus
    results: dict[str, TestStatus]
    supersedes: tuple[int, ...]
    report: TestReport | None
    reason: str
    inferred: tuple[str, ...] = ()
    """Open failures counted as passing because the run passed their whole scope."""


@dataclass
class TestTracker:
    """Replaying the same observations in order rebuilds the same state (no clocks, no randomness)."""

    __test__ = False  # not a pytest test class

    detector: ValidationDetector = field(default_factory=ValidationDetector)
    latest: dict[str, tuple[TestStatus, int]] = field(default_factory=dict)
    _open_failures: dict[int, set[str]] = field(default_factory=dict)
    """Node index -> tests that failed there and have not passed since."""
    _failed_by: dict[str, frozenset[str]] = field(default_factory=dict)
    """Test -> the runner(s) that reported its failure (a whole-suite pass covers only its own runner)."""

    def observe(self, index: int, command: str, observation: str) -> Verdict:
        """Parse node `index`'s observation, update the global state, and say which nodes it supersedes."""
        clean = clean_observation(observation)
        report = parse_clean(clean, command)
        label = self.detector.label(report, clean, command)
        if report is None:
            return Verdict(label.status, {}, (), None, label.reason)
        inferred = tuple(self._inferred_passes(report))
        supersedes = self.record(index, report.tests, inferred, report.runner)
        return Verdict(label.status, dict(report.tests), supersedes, report, label.reason, inferred)

    def record(
        self, index: int, tests: dict[str, TestStatus], inferred: tuple[str, ...], runner: str
    ) -> tuple[int, ...]:
        """Apply node `index`'s parsed results to the global state; returns the nodes it supersedes.

        `observe` calls it after parsing; a stored session calls it with the stored results instead."""
        results = dict(tests)
        for test_id in inferred:
            results.setdefault(test_id, TestStatus.PASSED)
        for test_id, status in results.items():
            self.latest.pop(test_id, None)
            self.latest[test_id] = (status, index)
        supersedes = self._resolve(index, results)
        failing = {test_id for test_id, status in tests.items() if status.is_failure}
        if failing:
            self._open_failures[index] = failing
            runners = frozenset(runner.split("+"))
            self._failed_by.update(dict.fromkeys(failing, runners))
        return supersedes

    def _inferred_passes(self, report: TestReport) -> list[str]:
        """Open failures inside a scope (file, directory, class, whole suite) the runner showed as wholly
        passing without naming its tests now pass; never more of them than the run's unnamed passes."""
        if not report.passed_scopes or not report.complete:
            return []
        runners = frozenset(report.runner.split("+"))
        open_tests = {test for tests in self._open_failures.values() for test in tests}
        inferred = sorted(
            test
            for test in open_tests
            if test not in report.tests
            and (
                _scope_of(test, report.passed_scopes) is not None
                or (
                    WHOLE_SUITE in report.passed_scopes
                    and "::" in test
                    and bool(self._failed_by.get(test, frozenset()) & runners)
                )
            )
        )
        unnamed = _unnamed_passes(report)
        return inferred if unnamed is None or len(inferred) <= unnamed else []

    def _resolve(self, index: int, results: dict[str, TestStatus]) -> tuple[int, ...]:
        """An earlier node is superseded once every test that failed there has passed since, and one did now."""
        passed_now = {test for test, status in results.items() if status is TestStatus.PASSED}
        superseded = []
        for node in sorted(self._open_failures):
            tests = self._open_failures[node]
            fixed_now = tests & passed_now
            if not fixed_now:
                continue
            tests -= fixed_now
            if not tests:
                superseded.append(node)
        for node in superseded:
            del self._open_failures[node]
        return tuple(superseded)

    def failing(self) -> list[tuple[str, int]]:
        """Tests failing now, each with the step that last ran it."""
        return [(test, step) for test, (status, step) in self.latest.items() if status.is_failure]

    def fixed(self) -> list[str]:
        """Tests that failed in this run and pass now, sorted (the failures were recorded from a set)."""
        return sorted(
            t for t in self._failed_by if t in self.latest and self.latest[t][0] is TestStatus.PASSED
        )

    def status_line(self, max_chars: int = 600) -> str | None:
        """`TEST STATUS: ✓ a: PASSED, ✗ b: FAILED`, failures first; counts plus failing names when long."""
        if not self.latest:
            return None
        ordered = sorted(self.latest.items(), key=lambda item: not item[1][0].is_failure)
        full = "TEST STATUS: " + ", ".join(
            f"{_MARKS[status]} {shown_id(test)}: {status.name}" for test, (status, _) in ordered
        )
        if len(full) <= max_chars:
            return full
        counts: dict[TestStatus, int] = {}
        for status, _ in self.latest.values():
            counts[status] = counts.get(status, 0) + 1
        summary = ", ".join(f"{n} {s.value}" for s, n in sorted(counts.items(), key=lambda kv: -kv[1]))
        head = f"TEST STATUS: {len(self.latest)} tests ({summary})"
        failing = [test for test, (status, _) in ordered if status.is_failure]
        if not failing:
            return head[:max_chars]
        line = head + "; failing:"
        for shown, test in enumerate(failing):
            rest = len(failing) - shown
            more = f" … +{rest} more"
            candidate = f"{line} ✗ {shown_id(test)}" + ("," if rest > 1 else "")
            if len(candidate) + len(more) > max_chars:
                return (line.rstrip(",") + more)[:max_chars]
            line = candidate
        return line[:max_chars]


def _unnamed_passes(report: TestReport) -> int | None:
    """How many passes the run counted without naming them (None when it printed no count)."""
    totals = report.totals or {}
    passed = totals.get("passed")
    if passed is None and "total" in totals:
        passed = totals["total"] - sum(totals.get(key, 0) for key in ("failed", "error", "skipped"))
    if passed is None:
        return None
    return passed - sum(1 for status in report.tests.values() if status is TestStatus.PASSED)


def _scope_of(test: str, scopes: frozenset[str]) -> str | None:
    """The scope holding a test id: `path.py` or a directory of it for `path.py::test`, `pkg.Class`
    for `pkg.Class.test`."""
    for separator in ("::", "."):
        head = test
        while separator in head:
            head = head.rsplit(separator, 1)[0]
            if head in scopes:
                return head
    if "::" in test:
        path = test.split("::", 1)[0]
        for scope in scopes:
            if scope != WHOLE_SUITE and path.startswith(scope + "/"):
                return scope
    return None
