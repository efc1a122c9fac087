"""Accuracy of the test-output parsers on the real logs in ../shared/data/test_logs (read in place).

Per set and runner: exact-match rate of the totals and of the per-test statuses, then every miss.
Run: .venv/bin/python benchmarks/parser_accuracy.py [--data PATH]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import data_absent

from contextweaver.records import TestStatus, ValidationStatus
from contextweaver.validation import TestReport, TestTracker, parse_observation

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "test_logs"


@dataclass
class Case:
    """One input with what the data says the runner reported."""

    set_name: str
    runner: str
    name: str
    text: str
    command: str = ""
    totals: dict[str, int] | None = None
    statuses: dict[str, str] | None = None
    multiset: Counter[tuple[str, str]] | None = None
    counts: dict[str, int] | None = None
    """Per-status counts the per-test results must add up to (jest: its Tests: line)."""
    verdict: str | None = None
    """The run's verdict when the data states it (otherwise derived from the totals)."""


@dataclass
class Tally:
    totals_ok: int = 0
    totals_n: int = 0
    tests_ok: int = 0
    tests_n: int = 0
    verdict_ok: int = 0
    verdict_n: int = 0
    misses: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- agent-observations
_OBS_KEYS = {
    "ran": "total",
    "failures": "failed",
    "errors": "error",
    "xfailed": "xfail",
    "xpassed": "xpass",
    "expected to fail": "xfail",
    "expected to fail but passed": "xpass",
    "exceptions": "error",
}


def agent_observation_cases(root: Path) -> Iterator[Case]:
    path = root / "agent-observations" / "observations.jsonl"
    for line in path.read_text().splitlines():
        row = json.loads(line)
        summary = row["runner_summary"]
        totals = None
        if summary is not None:
            totals = {_OBS_KEYS.get(k, k): v for k, v in summary.items() if k != "result"}
        yield Case("agent-observations", row["runner"], row["id"], row["observation"], row["command"], totals)


# ---------------------------------------------------------------- agent runs (../shared/data/train)
def _agent_runs_module():  # type: ignore[no-untyped-def]
    """benchmarks/parser_agent_runs.py, loaded by path (benchmarks/ is not a package)."""
    path = Path(__file__).with_name("parser_agent_runs.py")
    spec = importlib.util.spec_from_file_location("parser_agent_runs", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("parser_agent_runs", module)
    spec.loader.exec_module(module)
    return module


def agent_run_cases(split: str):  # type: ignore[no-untyped-def]
    def cases(root: Path) -> Iterator[Case]:
        module = _agent_runs_module()
        for run in module.agent_runs(root.parent / "train", split):
            name = f"{run.instance_id}#{run.step}"
            yield Case(
                f"agent-runs-{split}",
                f"{run.source}:{run.runner}",
                name,
                run.observation,
                run.command,
                run.totals,
                verdict=run.verdict,
            )

    return cases


# ---------------------------------------------------------------- go-junit-report
_GO_STATUS = {"failure": "failed", "error": "error", "skipped": "skipped"}
_PACKAGE_LEVEL = {"Failure": "[package failed]"}


def _junit_expected(xml_text: str) -> dict[str, str]:
    expected: dict[str, str] = {}
    for suite in ET.fromstring(xml_text).iter("testsuite"):
        for case in suite.iter("testcase"):
            status = "passed"
            for child in case:
                status = _GO_STATUS.get(child.tag, status)
            name = _PACKAGE_LEVEL.get(case.get("name", ""), case.get("name", ""))
            expected[f"{suite.get('name')}.{name}"] = status
    return expected


def go_junit_report_cases(root: Path) -> Iterator[Case]:
    folder = root / "go-junit-report"
    for report in sorted(folder.glob("*-report.xml")):
        prefix = report.name.split("-")[0]
        inputs = [p for p in folder.glob(f"{prefix}-*") if p != report]
        for source in inputs:
            runner = "go-json" if ".gojson." in source.name else "go"
            expected = _junit_expected(report.read_text())
            yield Case("go-junit-report", runner, source.name, source.read_text(), statuses=expected)


# ---------------------------------------------------------------- gotestsum
_TESTNAME = re.compile(r"^(PASS|FAIL|SKIP) (\S+?)\.(\S+) \([\d.]+s\)$", re.M)
_PACKAGE_FAIL = re.compile(r"^FAIL (\S+)$", re.M)
_GOTESTSUM_PAIRS = {
    "go-test-json.out": "testname.out",
    "go-test-json-with-shuffle.out": "testname-shuffle.out",
    "go-test-json-with-cover.out": "testname-coverage.out",
}


def _testname_expected(text: str) -> dict[str, str]:
    """gotestsum's testname format: one `PASS|FAIL|SKIP pkg.Test (time)` line per test, `FAIL pkg` per
    package that failed (a failure outside its tests when none of its tests failed)."""
    expected = {
        f"{pkg}.{name}": {"PASS": "passed", "FAIL": "failed", "SKIP": "skipped"}[status]
        for status, pkg, name in _TESTNAME.findall(text)
    }
    for pkg in _PACKAGE_FAIL.findall(text):
        if not any(k.startswith(pkg + ".") and v == "failed" for k, v in expected.items()):
            expected[f"{pkg}.[package failed]"] = "error"
    return expected


def gotestsum_cases(root: Path) -> Iterator[Case]:
    folder = root / "gotestsum"
    for source, rendered in _GOTESTSUM_PAIRS.items():
        expected = _testname_expected((folder / "format" / rendered).read_text())
        go_json = (folder / "input" / source).read_text()
        yield Case("gotestsum", "go-json", source, go_json, statuses=expected)
    verbose = {"standard-verbose.out": "testname.out", "standard-verbose-shuffle.out": "testname-shuffle.out"}
    for source, rendered in verbose.items():
        expected = _testname_expected((folder / "format" / rendered).read_text())
        yield Case("gotestsum", "go", source, (folder / "format" / source).read_text(), statuses=expected)


# ---------------------------------------------------------------- jest snapshots
_EXPORT = re.compile(r"^exports\[`(.*?)`\] = `\n?(.*?)`;$", re.M | re.S)
_JEST_TESTS_LINE = re.compile(r"^Tests:\s+(.*?)(\d+) total$", re.M)
_JEST_TEST_MARK = re.compile(r"^ +[✓✕○✎] ", re.M)
_JEST_SUITES_FAILED = re.compile(r"^(?: *\"summary\": \")?Test Suites: .*\b[1-9]\d* failed", re.M)
"""A suite that failed to run fails the run even when every test in the others passed."""
_JEST_COUNT = re.compile(r"(\d+) (passed|failed|skipped|todo|pending)")


def _unescape_snapshot(body: str) -> str:
    body = body.replace("\\`", "`").replace("\\${", "${").replace("\\\\", "\\").strip("\n")
    if body.startswith('"') and body.endswith('"'):
        body = body[1:-1]
    return body


def jest_cases(root: Path) -> Iterator[Case]:
    for snap in sorted((root / "jest-snapshots").glob("*.snap")):
        for title, body in _EXPORT.findall(snap.read_text()):
            text = _unescape_snapshot(body)
            line = _JEST_TESTS_LINE.search(text)
            if line is None:
                continue
            totals = {word: int(n) for n, word in _JEST_COUNT.findall(line.group(1))}
            totals["total"] = int(line.group(2))
            counts = None
            if _JEST_TEST_MARK.search(text):
                counts = {
                    "passed": totals.get("passed", 0),
                    "failed": totals.get("failed", 0),
                    "skipped": totals.get("skipped", 0) + totals.get("todo", 0),
                }
            yield Case(
                "jest-snapshots", "jest", f"{snap.name}: {title}", text, "npx jest", totals, counts=counts
            )


# ---------------------------------------------------------------- junit-xml-dorny
_DORNY_TOTALS = re.compile(
    r"\*\*(\d+)\*\* tests were completed in \*\*[^*]+\*\* with \*\*(\d+)\*\* passed, "
    r"\*\*(\d+)\*\* failed and \*\*(\d+)\*\* skipped"
)
_DORNY_REPORT = re.compile(r"\]\((?:#[^)]*)\)\|")
_DORNY_FIXTURE = re.compile(r"<a id=\"[^\"]+\" href=\"[^\"]+\">(fixtures/[^<]+)</a>")
_DORNY_TEST = re.compile(r"^\s*(✅|❌|⚪) (.+)$", re.M)


def junit_dorny_cases(root: Path) -> Iterator[Case]:
    folder = root / "junit-xml-dorny"
    for output in sorted((folder / "__outputs__").glob("*.md")):
        markdown = output.read_text()
        fixture = _DORNY_FIXTURE.search(markdown)
        totals = _DORNY_TOTALS.search(markdown)
        if fixture is None or totals is None:
            continue
        source = folder / fixture.group(1)
        if not source.exists():
            continue
        _, passed, failed, skipped = (int(x) for x in totals.groups())
        marks = {"✅": "passed", "❌": "failed", "⚪": "skipped"}
        multiset = Counter((marks[m], name.strip()) for m, name in _DORNY_TEST.findall(markdown))
        runner = source.suffix.lstrip(".") + ":" + source.stem
        text = source.read_text(errors="replace")
        yield Case(
            "junit-xml-dorny",
            runner,
            output.name,
            text,
            f"cat {fixture.group(1)}",
            {"passed": passed, "failed": failed, "skipped": skipped},
            multiset=multiset if "only-failed" not in output.name else None,
        )


# ---------------------------------------------------------------- the project's own fixtures
FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "validation" / "fixtures"


def fixture_cases(root: Path) -> Iterator[Case]:
    """Reports and runs the project wrote from the runners' documented formats (not ../shared data):
    the families the parsers once missed, with their truth in expected.json."""
    for name, want in json.loads((FIXTURES / "expected.json").read_text()).items():
        yield Case(
            "fixtures",
            want["family"],
            name,
            (FIXTURES / name).read_text(),
            want["command"],
            want.get("totals"),
            statuses=want["tests"] or None,
            verdict=want["verdict"],
        )


# ---------------------------------------------------------------- scoring
def _normalised_totals(case: Case, totals: dict[str, int]) -> dict[str, int]:
    """Compare only the keys the data records, with the data's own grouping."""
    if case.set_name == "junit-xml-dorny":
        return {
            "passed": totals.get("passed", 0),
            "failed": totals.get("failed", 0) + totals.get("error", 0),
            "skipped": totals.get("skipped", 0),
        }
    return {key: value for key, value in totals.items() if value}


def _match_id(expected: str, got: dict[str, TestStatus]) -> str | None:
    if expected in got:
        return expected
    for test_id in got:
        if test_id.endswith("/" + expected):
            return test_id
    for test_id in got:
        # a bare go test name when the input never names its package (go-junit-report's -package-name)
        if "." not in test_id and expected.endswith("." + test_id):
            return test_id
    return None


def _verdict(case: Case, where: str, tally: Tally) -> None:
    """The node label against the runner's own closing counts: failed when any failed or errored,
    passed when some passed and none did."""
    totals = case.totals or {}
    suites_failed = case.runner == "jest" and _JEST_SUITES_FAILED.search(case.text)
    if case.verdict is not None:
        want = ValidationStatus(case.verdict)
    elif totals.get("failed") or totals.get("error") or suites_failed:
        want = ValidationStatus.FAILED
    elif totals.get("passed") or totals.get("total", 0) - totals.get("skipped", 0) > 0:
        want = ValidationStatus.PASSED
    else:
        return
    got = TestTracker().observe(1, case.command, case.text).status
    tally.verdict_n += 1
    if got is want:
        tally.verdict_ok += 1
    else:
        tally.misses.append(f"{where}: verdict {got.value} != {want.value}")


def score(case: Case, tally: Tally) -> None:
    report = parse_observation(case.text, case.command)
    where = f"{case.set_name}/{case.runner}/{case.name}"
    if case.totals is not None or case.verdict is not None:
        _verdict(case, where, tally)
    if case.totals is not None:
        tally.totals_n += 1
        printed = (
            report.totals if report and report.totals is not None else (report.counts() if report else {})
        )
        got = _normalised_totals(case, printed) if report else None
        want = _normalised_totals(case, case.totals)
        if got == want:
            tally.totals_ok += 1
        else:
            tally.misses.append(f"{where}: totals {got} != {want}")
    if case.statuses is not None:
        got_tests = dict(report.tests) if report else {}
        matched: set[str] = set()
        for test_id, status in case.statuses.items():
            tally.tests_n += 1
            mine = _match_id(test_id, got_tests)
            if mine is not None and got_tests[mine].value == status:
                tally.tests_ok += 1
                matched.add(mine)
            else:
                seen = got_tests[mine].value if mine else "missing"
                tally.misses.append(f"{where}: {test_id} {seen} != {status}")
                if mine:
                    matched.add(mine)
        for extra in set(got_tests) - matched:
            tally.tests_n += 1
            tally.misses.append(f"{where}: extra {extra} {got_tests[extra].value}")
    if case.counts is not None:
        got_counts = Counter(
            "failed" if s.is_failure else s.value for s in (report.tests.values() if report else ())
        )
        for status, count in case.counts.items():
            tally.tests_n += count
            tally.tests_ok += min(count, got_counts.get(status, 0))
            if got_counts.get(status, 0) != count:
                tally.misses.append(f"{where}: {got_counts.get(status, 0)} {status} tests != {count}")
    if case.multiset is not None:
        _score_names(case, report, where, tally)


_SEVERITY = {"passed": 0, "skipped": 1, "failed": 2}
_NETTE_ID = re.compile(r"^(?:(?P<title>.*?) \| )?(?P<path>\S+\.phpt)(?: \[method=(?P<method>[^\]]+)\])?$")


def _dorny_name(test_id: str) -> str:
    """The name the summary tool shows for a Nette Tester case: it rewrites the runner's own
    `title | dir/file.phpt [method=m]` as `file.phpt::m`, or `title (file.phpt)` without a method."""
    match = _NETTE_ID.match(test_id)
    if match is None:
        return test_id
    file = match.group("path").rsplit("/", 1)[-1]
    if match.group("method"):
        return f"{file}::{match.group('method')}"
    return f"{match.group('title')} ({file})" if match.group("title") else test_id


def _score_names(case: Case, report: TestReport | None, where: str, tally: Tally) -> None:
    """Per distinct test name shown in the expected summary: the most severe status must agree (ids are
    unique keys, so repeated names collapse the same way on both sides)."""
    assert case.multiset is not None
    want: dict[str, str] = {}
    for status, name in case.multiset:
        if _SEVERITY[status] >= _SEVERITY.get(want.get(name, "passed"), 0):
            want[name] = status
    got = {
        _dorny_name(i): ("failed" if s.is_failure else s.value)
        for i, s in (report.tests.items() if report else ())
    }
    for name, status in want.items():
        tally.tests_n += 1
        suffixes = ("." + name, " " + name, "/" + name, "::" + name)
        mine = [v for k, v in got.items() if k == name or k.endswith(suffixes)]
        # the summary tool shortens some names (long jest titles): fall back to containment
        mine = mine or [v for k, v in got.items() if name.rstrip(".") in k]
        if not mine:
            tally.misses.append(f"{where}: {name!r} not found (expected {status})")
            continue
        worst = max(mine, key=lambda v: _SEVERITY.get(v, 1))
        if worst == status:
            tally.tests_ok += 1
        else:
            tally.misses.append(f"{where}: {name!r} {worst} != {status}")


SETS = {
    "agent-observations": agent_observation_cases,
    "go-junit-report": go_junit_report_cases,
    "gotestsum": gotestsum_cases,
    "jest-snapshots": jest_cases,
    "junit-xml-dorny": junit_dorny_cases,
    "agent-runs-validation": agent_run_cases("validation"),
    "agent-runs-train": agent_run_cases("train"),
    "fixtures": fixture_cases,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--set", choices=sorted(SETS), action="append")
    args = parser.parse_args()
    if not args.data.exists():
        return data_absent.report([args.data])
    tallies: dict[tuple[str, str], Tally] = defaultdict(Tally)
    for set_name in args.set or list(SETS):
        for case in SETS[set_name](args.data):
            score(case, tallies[(case.set_name, case.runner)])
    print(f"{'set':<20} {'runner':<34} {'verdict right':>16} {'totals exact':>16} {'per-test exact':>18}")
    for (set_name, runner), tally in sorted(tallies.items()):
        verdict = f"{tally.verdict_ok}/{tally.verdict_n}" if tally.verdict_n else "-"
        rate_v = f" {100 * tally.verdict_ok / tally.verdict_n:5.1f}%" if tally.verdict_n else ""
        totals = f"{tally.totals_ok}/{tally.totals_n}" if tally.totals_n else "-"
        tests = f"{tally.tests_ok}/{tally.tests_n}" if tally.tests_n else "-"
        rate_t = f" {100 * tally.totals_ok / tally.totals_n:5.1f}%" if tally.totals_n else ""
        rate_s = f" {100 * tally.tests_ok / tally.tests_n:5.1f}%" if tally.tests_n else ""
        print(
            f"{set_name:<20} {runner:<34} {verdict + rate_v:>16} {totals + rate_t:>16} {tests + rate_s:>18}"
        )
    for set_name in sorted({name for name, _ in tallies}):
        parts = [tally for (name, _), tally in tallies.items() if name == set_name]
        rates = []
        for label, ok, n in (
            ("verdict right", sum(t.verdict_ok for t in parts), sum(t.verdict_n for t in parts)),
            ("totals exact", sum(t.totals_ok for t in parts), sum(t.totals_n for t in parts)),
            ("per-test exact", sum(t.tests_ok for t in parts), sum(t.tests_n for t in parts)),
        ):
            rates.append(f"{label} {ok}/{n}" + (f" ({ok / n:.3f})" if n else ""))
        print(f"  set {set_name}: " + ", ".join(rates))
    misses = [miss for tally in tallies.values() for miss in tally.misses]
    print(f"\n{len(misses)} misses")
    for miss in sorted(misses):
        print("  " + miss)
    return 0


if __name__ == "__main__":
    sys.exit(main())
