"""pytest: -v / -rA / -q lines, the closing summary, collection errors, xfail/xpass, parametrized ids."""

from __future__ import annotations

import re

from contextweaver.records import TestStatus
from contextweaver.validation.parsers.base import RunnerParser, counts_from, framed
from contextweaver.validation.report import WHOLE_SUITE, TestReport, any_failure, merge_reports, record

_WORD = r"(?:failed|passed|skipped|deselected|xfailed|xpassed|warnings?|errors?|rerun)"
# Every pattern starts at a literal "\n" over framed text (see base.framed): fast to search for.
_SESSION_START = re.compile(r"\n=+ test session starts =+(?=\n)")
_SUMMARY_LINE = (
    rf"(?=[=\dn])(?:=+ )?(\d+ {_WORD}(?:(?:, |\s)\d+ {_WORD})*|no tests ran)"
    r",? in [\d.]+ ?s(?:econds)?(?: \([^)\n]*\))?(?: =+)?(?=\n)"
)
_SUMMARY = re.compile(r"\n" + _SUMMARY_LINE)
"""The first-character guard, and a first count before the repeated group, spare most lines the
costly setup of a regex repeat."""
_COUNT = re.compile(rf"(\d+) ({_WORD})")
_ID = r"(?P<id>[\w./\\-][^\s\[]*+(?:\[[^\n]*?\])?)"
"""Possessive: the id's first run stops at a space or `[` anyway, so it never needs to backtrack."""
_STATUS = r"(?P<status>PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)"
_VERBOSE = re.compile(
    rf"\n(?:\[gw\d+\] (?:\[\s*\d+%\] )?{_STATUS} {_ID}(?=\n| )|{_ID.replace('id>', 'vid>')} "
    rf"{_STATUS.replace('status>', 'vstatus>')}(?=\n| ))"
)
_STARTED = re.compile(rf"\n{_ID} ")
"""A -v line's start (an id with `::`): the id and a space, whatever follows (with -s, the test's output)."""
_LINE_END_STATUS = re.compile(rf"{_STATUS}(?: \([^\n]*\))?(?: +\[\s*\d+%\])?(?=\n)")
"""A status word ending a line, as pytest writes it after a test's own output."""
_SHORT = re.compile(rf"\n{_STATUS} {_ID}(?: - [^\n]*)?(?=\n)")
_RUN_EVENT = re.compile(
    rf"\n(?:(?P<start>=+ test session starts =+)|(?P<report>=+ (?:FAILURES|ERRORS|PASSES) =+)|{_SUMMARY_LINE})(?=\n)"
)
"""Session headers, report sections and summary lines in one pass (split_runs). A session printed in a
report section (pytester output under FAILURES, or under PASSES with -rA) belongs to that report."""
_PRETTY_RESULTS = re.compile(r"\nResults \([\d.]+s\):((?:\n +\d+ [a-z]+)+)(?=\n)")
"""pytest-pretty's closing block: `Results (0.77s):` then one `  N passed` line per outcome."""
_COLLECT_ERROR = re.compile(r"\n_+ ERROR collecting (\S+) _+(?=\n)")
_COLLECT_EXCEPTION = re.compile(r"\nE +((?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception)\b[^\n]*)")
_INTERRUPTED = re.compile(r"\n(?:!+ )?Interrupted: \d+ errors? during collection")
_PROGRESS = re.compile(r"\n(?:(\S+\.py) ([.FEsxXpP]+)(?:\s+\[\s*\d+%\])?|([.FEsxXpP]+)\s+\[\s*\d+%\])(?=\n)")
_FILTERS = re.compile(
    r"(?:^|\s)(?:-k|-m|--lf|--last-failed|--deselect|--ignore|--ignore-glob|--sw|--stepwise)\b|::"
)
"""Options that run a subset of the collected tests: a clean run then says nothing about the rest."""
_MODULE_RUN = re.compile(r"\s-m\s+py\.?test\b")
"""`python -m pytest`: its `-m` is Python's, not pytest's marker filter."""
_INVOCATION = re.compile(r"(?:^|[\s;&|(])(?:python[\d.]*\s+-m\s+)?py\.?test\b([^;&|\n)]*)")
_VALUE_OPTIONS = frozenset(
    [
        "-p",
        "-c",
        "-o",
        "-W",
        "-n",
        "-r",
        "--tb",
        "--maxfail",
        "--rootdir",
        "--confcutdir",
        "--basetemp",
        "--durations",
        "--junitxml",
        "--junit-xml",
        "--cov",
        "--cov-report",
        "--log-level",
        "--timeout",
        "--color",
        "--capture",
        "--import-mode",
    ]
)
"""Options whose value is the next word (not a path to test)."""
_NAMES = {
    "xfailed": "xfail",
    "xpassed": "xpass",
    "errors": "error",
    "warning": "warnings",
}
_STATUSES = {
    "PASSED": TestStatus.PASSED,
    "FAILED": TestStatus.FAILED,
    "ERROR": TestStatus.ERROR,
    "SKIPPED": TestStatus.SKIPPED,
    "XFAIL": TestStatus.XFAIL,
    "XPASS": TestStatus.XPASS,
}


class PytestParser(RunnerParser):
    """Reads pytest's own anchors: session header, per-test status words, short summary, closing line."""

    passing_rows = (
        r"\S+::\S.*? PASSED(?: +\[ *\d+%\])?",
        r"PASSED \S+::\S+",
        r"\S+\.py [.sx]+(?: +\[ *\d+%\])?|[.sx]+ +\[ *\d+%\]|\.{4,}",
    )
    runner = "pytest"
    family = "pytest"
    python_runner = True
    crash_pattern = re.compile(r"\n(?:ImportError while loading conftest '[^'\n]*+'\.|INTERNALERROR> )")
    command_pattern = re.compile(r"\bpy\.?test\b")
    failure_marker = re.compile(r"\n(?:(?:FAILED|ERROR) [^\s:]++::\S|=+ (?:FAILURES|ERRORS) =+(?=\n))")
    hints = ("test session starts", " in ", "::", "Results (")
    marker_pattern = re.compile(
        rf"\n(?:=+ test session starts =+(?=\n)|{_SUMMARY_LINE}|(?:FAILED|ERROR|XPASS) \S+::\S|Results \([\d.]+s\):\n +\d|"
        r"(?=\S++ (?:PASSED|FAILED|ERROR)\b)\S+::\S)"
    )

    def parse(self, text: str, command: str = "") -> TestReport | None:
        runs = [self._parse_run(segment, complete, command) for segment, complete in split_runs(text)]
        return merge_reports(run for run in runs if run is not None)

    def _parse_run(self, text: str, complete: bool, command: str) -> TestReport | None:
        text = framed(text)
        start, end = 0, len(text)
        tests: dict[str, TestStatus] = {}
        for gw_status, gw_id, test_id, status in _VERBOSE.findall(text):
            if gw_id:
                test_id, status = gw_id, gw_status
            if "::" in test_id:
                record(tests, test_id, _STATUSES[status])
        for test_id, status in interrupted_lines(text, tests):
            record(tests, test_id, _STATUSES[status])
        for status, test_id in _SHORT.findall(text):
            if "::" in test_id or status in ("ERROR", "FAILED"):
                record(tests, test_id, _STATUSES[status])
        collect_errors = list(_COLLECT_ERROR.finditer(text))
        for collect_error in collect_errors:
            record(tests, collect_error.group(1), TestStatus.ERROR)
        summaries: list[re.Match[str]] = list(_SUMMARY.finditer(text, start, end))
        if not summaries and "\nResults (" in text:
            summaries = list(_PRETTY_RESULTS.finditer(text, start, end))
            complete = complete or bool(summaries)
        interrupted = bool(_INTERRUPTED.search(text, start, end))
        header = bool(_SESSION_START.search(text))
        if not tests and not summaries and not interrupted and not header:
            return None
        totals = counts_from(_COUNT.findall(summaries[-1].group(1)), _NAMES) if summaries else None
        report = TestReport(
            runner=self.runner,
            tests=tests,
            totals=totals,
            complete=complete and bool(summaries),
            failed_signal=interrupted or any_failure(tests.values()),
            reason=_collect_reason(text, collect_errors[0]) if collect_errors else "",
        )
        if totals is not None:
            report.failed_signal |= totals.get("failed", 0) > 0 or totals.get("error", 0) > 0
            if not totals.get("deselected") and not _FILTERS.search(_MODULE_RUN.sub(" ", command)):
                scopes = _clean_files(text, start, end)
                if _all_passed(totals, tests):
                    scopes |= command_scopes(command)
                report.passed_scopes = scopes
        return report


def _collect_reason(text: str, header: re.Match[str]) -> str:
    """`error collecting <file>: <its exception line>` (the block's last `E   SomeError: ...` line)."""
    end = len(text)
    for stop in ("\n_", "\n="):
        found = text.find(stop, header.end())
        if found >= 0:
            end = min(end, found)
    exception = ""
    for match in _COLLECT_EXCEPTION.finditer(text, header.end(), end):
        exception = match.group(1)
    return f"error collecting {header.group(1)}" + (f": {exception[:160]}" if exception else "")


def interrupted_lines(text: str, named: dict[str, TestStatus]) -> list[tuple[str, str]]:
    """(id, status) of -v lines the test's own output broke (`-s`, or output written past the capture):
    pytest prints the id, then what the test printed, then the status word, ending a later line. The
    last such word before the next test's line or section is the test's (the output may print one)."""
    lines = [match for match in _STARTED.finditer(text) if "::" in match.group("id")]
    found: list[tuple[str, str]] = []
    for number, match in enumerate(lines):
        test_id = match.group("id")
        if test_id in named:
            continue
        end = lines[number + 1].start() if number + 1 < len(lines) else len(text)
        section = text.find("\n=", match.end(), end)
        end = min(len(text), (section if section >= 0 else end) + 1)  # + 1: the line's own "\n"
        statuses = list(_LINE_END_STATUS.finditer(text, match.end(), end))
        if statuses:
            found.append((test_id, statuses[-1].group("status")))
    return found


def split_runs(text: str) -> list[tuple[str, bool]]:
    """Split the output into pytest runs; sessions printed inside a failure report (pytester) stay
    nested in their outer run and are cut out of it. Returns (run text, closed by a summary line)."""
    text = framed(text)
    events = [
        (m.start(), "start" if m.group("start") else "report" if m.group("report") else "summary", m.end())
        for m in _RUN_EVENT.finditer(text)
    ]
    runs: list[tuple[str, bool]] = []
    run_start: int | None = None
    pieces_from = 0
    pieces: list[str] = []
    in_report = False
    depth = 0
    last_end = 0
    last_summary = max((i for i, event in enumerate(events) if event[1] == "summary"), default=-1)
    # A state machine over the events reads better than a table here: a session header means a new run
    # or a nested one depending on the report section and nesting depth the events before it left.
    for index, (position, kind, end) in enumerate(events):
        if kind == "summary" and depth > 0 and index == last_summary:
            # the output's last closing line closes the outer run: a nested session left unclosed
            # (pytester stopped by the failure being reported) ends where the outer run's line begins
            depth, pieces_from = 0, position
        if kind == "report":
            in_report = in_report or (run_start is not None and depth == 0)
        elif kind == "start":
            if run_start is not None and in_report:
                if depth == 0:
                    pieces.append(text[pieces_from:position])
                depth += 1
                continue
            if run_start is not None:
                runs.append(("".join(pieces) + text[pieces_from:position], False))
            elif text[last_end:position].strip():
                runs.append((text[last_end:position], False))
            run_start, pieces_from, pieces, in_report = position, position, [], False
        elif depth > 0:
            depth -= 1
            if depth == 0:
                pieces_from = end
        else:
            begin = run_start if run_start is not None else last_end
            if run_start is None:
                pieces_from, pieces = begin, []
            runs.append(("".join(pieces) + text[pieces_from:end], True))
            run_start, pieces, in_report, last_end = None, [], False, end
    if run_start is not None:
        runs.append(("".join(pieces) + (text[pieces_from:] if depth == 0 else ""), False))
    elif not runs:
        runs.append((text, False))
    elif text[last_end:].strip():
        runs.append((text[last_end:], False))
    return runs


def _all_passed(totals: dict[str, int], tests: dict[str, TestStatus]) -> bool:
    """Tests ran and every one passed: nothing failed, errored, was skipped or xfailed."""
    others = sum(v for k, v in totals.items() if k not in ("passed", "warnings", "rerun"))
    return totals.get("passed", 0) > 0 and not others and all(s is TestStatus.PASSED for s in tests.values())


def command_scopes(command: str) -> frozenset[str]:
    """What one pytest invocation ran: its path arguments, or WHOLE_SUITE when it names none. Several
    invocations in one command cannot be told apart, so they give no scope."""
    invocations = _INVOCATION.findall(command)
    if len(invocations) != 1:
        return frozenset()
    paths: list[str] = []
    words = invocations[0].split()
    skip_value = False
    for word in words:
        if skip_value:
            skip_value = False
        elif word.startswith("-"):
            skip_value = word in _VALUE_OPTIONS
        elif not word.startswith(("<", ">")):
            path = word.strip("'\"").removeprefix("./").rstrip("/")
            if path:
                paths.append(path)
    return frozenset(paths) if paths else frozenset({WHOLE_SUITE})


def _clean_files(text: str, start: int, end: int) -> frozenset[str]:
    """Files whose progress characters were all passes: each of their tests passed in this run."""
    outcomes: dict[str, str] = {}
    current = ""
    for match in _PROGRESS.finditer(text, start, end):
        if match.group(1):
            current = match.group(1)
            outcomes[current] = outcomes.get(current, "") + match.group(2)
        elif current:
            outcomes[current] += match.group(3)
    return frozenset(path for path, chars in outcomes.items() if chars and set(chars) <= {".", "p"})
