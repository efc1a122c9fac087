"""Cheap structured facts from one step: code-like items, files, commands, error lines, test ids.

Computed once when a node is created; the heuristic analyzer and explanations read them.
"""

from __future__ import annotations

import re

from contextweaver.types import Facts, Step
from contextweaver.views import tool_paths, viewed_paths

_WORD = re.compile(r"[A-Za-z0-9_./:-]*[A-Za-z0-9_]")
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]")
_NUMBER = re.compile(r"(?<![\w.])\d{2,}(?![\w])")
_QUOTED = re.compile(r"""'([^'\n]{4,80})'|"([^"\n]{4,80})"|`([^`\n]{4,80})`""")
_PATH = re.compile(
    r"(?:[\w.-]+/)+[\w.-]+\.\w{1,5}\b|\b[\w-]+\.(?:py|pyi|js|ts|tsx|go|rs|java|c|h|cpp|rb|txt|cfg|toml|yaml|yml|json|md|rst|ini|sh)\b"
)
_TEST_ID = re.compile(r"[\w./-]+\.py::[\w\[\]./:-]+|\btest_\w+")
_ERROR_LINE = re.compile(
    r"^\s*(?:\w+(?:Error|Exception|Warning)\b.*|Traceback \(most recent call last\):|FAILED\b.*|E\s{2,}.+|error(?:\[\w+\])?: .+|panic: .+)$",
    re.MULTILINE,
)
_EDIT = re.compile(
    r"sed\s+-i\S*\s+(?:'[^']*'|\"[^\"]*\"|\S+)\s+(\S+)|cat\s+(?:<<-?\s*['\"]?\w+['\"]?\s*)?>\s*(\S+)|>\s*(\S+\.\w{1,5})\b|\b(?:str_replace|create|insert)\b\s+(\S+)"
)
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")
_MAX_ITEMS = 4000  # a giant observation contributes at most this many items


def is_code_like(word: str) -> bool:
    """Identifier-like evidence: 4+ chars holding `_`, `.`, `/`, a digit or an inner capital letter."""
    if len(word) < 4 or not any(c.isalpha() for c in word):
        return False
    return (
        any(c in word for c in "_./") or any(c.isdigit() for c in word) or bool(_INNER_CAPITAL.search(word))
    )


def code_items(text: str, limit: int = _MAX_ITEMS) -> frozenset[str]:
    """Code-like tokens, numbers of 2+ digits and quoted strings of 4+ characters in `text`."""
    items: set[str] = set()
    for match in _WORD.finditer(text):
        word = match.group().strip(".:/-")
        if is_code_like(word):
            items.add(word)
            if len(items) >= limit:
                return frozenset(items)
    items.update(_NUMBER.findall(text)[:limit])
    for groups in _QUOTED.findall(text):
        items.add(next(g for g in groups if g))
    return frozenset(items)


def shell_lines(action: str) -> str:
    """The action without heredoc bodies: code written into a file is not a command (`x > 8.84`)."""
    lines, terminator = [], None
    for line in action.splitlines():
        if terminator is not None:
            if line.strip() == terminator:
                terminator = None
            continue
        lines.append(line)
        heredoc = _HEREDOC.search(line)
        terminator = heredoc.group(1) if heredoc else None
    return "\n".join(lines)


def extract_facts(step: Step) -> Facts:
    """Facts of one step; the observation is scanned once here and never again."""
    said = f"{step.thought}\n{step.action}"
    commands = shell_lines(step.action)
    edited = {next(g for g in m if g) for m in _EDIT.findall(commands)}
    errors = {line.strip()[:200] for line in _ERROR_LINE.findall(step.observation[:200_000])}
    return Facts(
        files=frozenset(_PATH.findall(said)),
        symbols=code_items(said),
        observed=code_items(step.observation),
        commands=tuple(line.strip() for line in step.action.splitlines() if line.strip())[:20],
        errors=frozenset(list(errors)[:50]),
        tests=frozenset(_TEST_ID.findall(said)),
        edited_files=frozenset(f.strip("'\"") for f in edited if any(c.isalpha() for c in f))
        | tool_paths(commands)[1],
        viewed_files=frozenset(viewed_paths(commands)),
    )
