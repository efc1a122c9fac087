"""Test runs exactly as agents saw them, from the training runs in ../shared/data/train (read in place).

Every observation of a mini-swe-agent (gemini) or SWE-agent 0.x (nebius, Llama) run that holds a test
runner's closing line becomes a case; its truth comes from that closing line alone, read here with a few
plain patterns and no code of the parsers: pytest's last `N passed, M failed in Xs` (earlier ones may be
sessions printed inside it by pytester), unittest's and Django's
`Ran N tests` + `OK`/`FAILED (failures=..)`, sympy's `tests finished: ..` (wrapped or not).
Run: PYTHONPATH=src .venv/bin/python benchmarks/parser_agent_runs.py [--split validation]
"""

from __future__ import annotations

import argparse
import json
import re
import tarfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from contextweaver.eval.splits import split_of

DEFAULT_TRAIN = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "train"
ARCHIVES = ("mini-swe-agent__gemini-3-pro__303.tar.gz", "swe-agent__nebius-llama__150.tar.gz")

_FENCE = re.compile(r"```[a-z]*\n(.*?)```", re.S)
_PYTEST = re.compile(
    r"^=*\s*((?:\d+ \w+(?:, )?)+|no tests ran) in [\d.]+s(?:econds)?(?: \([^)]*\))?\s*=*$", re.M
)
_PYTEST_COUNT = re.compile(
    r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|rerun)"
)
_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s\n+(?:.*\n){0,3}?(OK|FAILED)(?: \((.*)\))?$", re.M)
_SYMPY = re.compile(r"tests finished: ([^\n]*(?:\n[^\n=]*)?) in [\d.]+ seconds", re.M)
_SYMPY_COUNT = re.compile(
    r"(\d+) (passed|failed|skipped|expected to fail but passed|expected to fail|exceptions?)"
)
_KEYS = {
    "errors": "error",
    "error": "error",
    "xfailed": "xfail",
    "xpassed": "xpass",
    "warning": "warnings",
    "failures": "failed",
    "expected failures": "xfail",
    "unexpected successes": "xpass",
    "expected to fail": "xfail",
    "expected to fail but passed": "xpass",
    "exceptions": "error",
    "exception": "error",
}


@dataclass
class AgentRun:
    """One observation with a closing line, and what that line says."""

    source: str
    instance_id: str
    step: int
    command: str
    observation: str
    runner: str
    totals: dict[str, int]
    verdict: str | None
    """`failed`, `passed`, or None when the closing line shows neither (nothing ran)."""


def truth(text: str) -> tuple[str, dict[str, int], str | None] | None:
    """The runner, its totals summed over its closing lines, and the verdict; None without exactly one
    runner's closing lines."""
    text = text.replace("\r\n", "\n")
    found: dict[str, list[dict[str, int]]] = {}
    closing = list(_PYTEST.finditer(text))
    if closing:  # the last line closes the run the agent asked for; earlier ones may be nested sessions
        found["pytest"] = [_sum(_PYTEST_COUNT.findall(closing[-1].group(1)))]
    for match in _RAN.finditer(text):
        totals = {"total": int(match.group(1))}
        for item in (match.group(3) or "").split(","):
            key, _, value = item.strip().partition("=")
            if value.isdigit():
                totals[_KEYS.get(key, key)] = totals.get(_KEYS.get(key, key), 0) + int(value)
        totals["_failed_word"] = int(match.group(2) == "FAILED")
        found.setdefault("unittest", []).append(totals)
    for match in _SYMPY.finditer(text):
        found.setdefault("sympy", []).append(_sum(_SYMPY_COUNT.findall(match.group(1).replace("\n", " "))))
    if len(found) != 1:
        return None
    runner, runs = next(iter(found.items()))
    totals: Counter[str] = Counter()
    for run in runs:
        totals.update(run)
    failed = totals.pop("_failed_word", 0) or totals.get("failed", 0) or totals.get("error", 0)
    ran = totals.get("passed", 0) or totals.get("total", 0) - totals.get("skipped", 0)
    verdict = "failed" if failed else "passed" if ran > 0 else None
    return runner, {key: value for key, value in totals.items() if value}, verdict


def _sum(pairs: list[tuple[str, str]]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for number, word in pairs:
        key = _KEYS.get(word, word)
        totals[key] = totals.get(key, 0) + int(number)
    return totals


def _steps(member: str, data: dict) -> Iterator[tuple[str, str]]:  # type: ignore[type-arg]
    """(command, observation) pairs of one run, in either agent's layout."""
    if "messages" in data:
        messages = data["messages"]
        for before, after in zip(messages, messages[1:], strict=False):
            if before.get("role") == "assistant" and after.get("role") == "user":
                fences = _FENCE.findall(str(before.get("content") or ""))
                content = str(after.get("content") or "")
                if fences and "<returncode>" in content:
                    yield fences[-1].strip(), content
    else:
        turns = data.get("trajectory") or []
        for before, after in zip(turns, turns[1:], strict=False):
            if before.get("role") == "ai" and after.get("role") == "user":
                fences = _FENCE.findall(str(before.get("text") or ""))
                if fences:
                    yield fences[-1].strip(), str(after.get("text") or "")


def agent_runs(train: Path = DEFAULT_TRAIN, split: str | None = "validation") -> Iterator[AgentRun]:
    """Every labelled test run in the archives, of one split of instance ids (None: both)."""
    for archive in ARCHIVES:
        path = train / archive
        if not path.exists():
            continue
        with tarfile.open(path) as tar:
            for member in tar:
                if not member.isfile() or not member.name.endswith(".json"):
                    continue
                handle = tar.extractfile(member)
                if handle is None:
                    continue
                data = json.loads(handle.read())
                instance = str(data.get("instance_id") or Path(member.name).name.split(".")[0])
                if split is not None and split_of(instance) != split:
                    continue
                for step, (command, observation) in enumerate(_steps(member.name, data)):
                    label = truth(observation)
                    if label is not None:
                        runner, totals, verdict = label
                        source = archive.split("__")[0]
                        yield AgentRun(source, instance, step, command, observation, runner, totals, verdict)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=Path, default=DEFAULT_TRAIN)
    parser.add_argument("--split", choices=["train", "validation", "all"], default="validation")
    args = parser.parse_args()
    runs = list(agent_runs(args.train, None if args.split == "all" else args.split))
    counts = Counter((run.source, run.runner, run.verdict) for run in runs)
    print(f"{len(runs)} labelled test runs ({args.split})")
    for (source, runner, verdict), n in sorted(counts.items(), key=str):
        print(f"  {source:<16} {runner:<9} {verdict or 'nothing ran':<12} {n}")


if __name__ == "__main__":
    main()
