"""TAP (node --test, tap, prove, bats): `ok N - name` / `not ok N - name` lines, the `1..N` plan, `# pass N`
counts; and node's spec reporter (`✔ name (1ms)`, `ℹ tests 3`)."""

from __future__ import annotations

import re

from contextweaver.records import TestStatus
from contextweaver.validation.parsers.base import RunnerParser, bounded_int, framed
from contextweaver.validation.report import TestReport, closing_report, record

_RESULT = re.compile(r"\n( *+)(ok|not ok) \d++(?: -)? ?([^\n#]*+)(?:# *+(SKIP|TODO|skip|todo)\b)?")
_PLAN = re.compile(r"\n *+1\.\.(\d++)")
_COUNT = re.compile(r"\n(?:# |ℹ )(tests|pass|fail|skipped|todo|cancelled) (\d++)(?=\n)")
_SPEC = re.compile(r"\n( *+)([✔✖﹣]) ([^\n]+?)(?: \([\d.]+m?s\))?(?=\n)")
_SPEC_STATUS = {"✔": TestStatus.PASSED, "✖": TestStatus.FAILED, "﹣": TestStatus.SKIPPED}
_KEYS = {"tests": "total", "pass": "passed", "fail": "failed", "skipped": "skipped", "todo": "skipped"}


class TapParser(RunnerParser):
    """A run is complete when its plan or its `# tests N` count is printed; nested subtests keep their name."""

    runner = "tap"
    family = "tap"
    command_pattern = re.compile(r"\bnode\b[^\n|;&]*--test\b|\btap\b|\bprove\b|\bbats\b")
    failure_marker = re.compile(r"\n *+not ok \d++(?! [^\n#]*+# *+(?:TODO|todo)\b)|\n(?:# |ℹ )fail [1-9]")
    hints = ("ok ", "ℹ tests ", "TAP version")
    marker_pattern = re.compile(r"\n(?:TAP version \d|(?:# |ℹ )tests \d++(?=\n)|not ok \d++ |ok \d++ - )")

    def parse(self, text: str, command: str = "") -> TestReport | None:
        text = framed(text)
        tests: dict[str, TestStatus] = {}
        for _indent, word, name, directive in _RESULT.findall(text):
            if directive.lower() in ("skip", "todo"):
                status = (
                    TestStatus.SKIPPED if word == "ok" or directive.lower() == "todo" else TestStatus.FAILED
                )
            else:
                status = TestStatus.PASSED if word == "ok" else TestStatus.FAILED
            record(tests, name.strip() or "(unnamed)", status)
        if "ℹ tests " in text:
            for _indent, mark, name in _SPEC.findall(text):
                record(tests, name.strip(), _SPEC_STATUS[mark])
        totals: dict[str, int] | None = None
        for key, value in _COUNT.findall(text):
            totals = totals or {}
            totals[_KEYS.get(key, key)] = totals.get(_KEYS.get(key, key), 0) + bounded_int(value)
        planned = bool(_PLAN.search(text))
        if not tests and totals is None:
            return None
        return closing_report(self.runner, tests, totals, complete=planned)
