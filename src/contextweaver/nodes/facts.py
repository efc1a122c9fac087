"""Cheap structured facts from one step: code-like items, files, commands, error lines, test ids.

Computed once when a node is created; the heuristic analyzer and explanations read them.
"""

from __future__ import annotations

import re

from contextweaver.nodes.views import tool_paths, viewed_paths
from contextweaver.types import Facts, Step

_WORD = re.compile(r"[A-Za-z0-9_./:-]+")
"""A maximal run, its edge punctuation stripped in Python: a pattern that must end in a letter or digit
retries every start of a long run of `.`, `-`, `/`, `:` (quadratic; 16 KB of dashes took 2 s)."""
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]")
_NUMBER = re.compile(r"(?<![\w.])\d{2,}(?![\w])")
_QUOTED = re.compile(r"""'([^'\n]{4,80})'|"([^"\n]{4,80})"|`([^`\n]{4,80})`""")
_PATH = re.compile(
    r"(?<![\w.-])(?:[\w.-]+/)+[\w.-]+\.\w{1,5}\b|\b[\w-]+\.(?:py|pyi|js|ts|tsx|go|rs|java|c|h|cpp|rb|txt|cfg|toml|yaml|yml|json|md|rst|ini|sh)\b"
)
_TEST_ID = re.compile(r"(?<![\w./-])[\w./-]+\.py::[\w\[\]./:-]+|\btest_\w+")
"""The lookbehinds (here and in `_PATH`) try a path only where its run of path characters starts: a start
inside a run fails wherever the one before it failed, but was retried across the whole run (quadratic)."""
_ERROR_LINE = re.compile(
    r"^[^\S\n]*(?:\w+(?:Error|Exception|Warning)\b.*|Traceback \(most recent call last\):|FAILED\b.*|E[^\S\n]{2,}.+"
    r"|error(?:\[\w+\])?: .+|panic: .+)$",
    re.MULTILINE,
)
"""Whitespace that stays on its line: `\\s*` under re.M ran on through every following blank line and
back (quadratic on a run of blank lines)."""
_EDIT = re.compile(
    r"sed\s+-i\S*\s+(?:'[^']*'|\"(?:[^\"\\]|\\.)*\"|\S+)\s+(\S+)|cat\s+(?:<<-?\s*['\"]?\w+['\"]?\s*)?>>?\s*(\S+)"
    r"|>>?\s*(\S+\.\w{1,5})\b|\b(?:str_replace|create|insert)\b\s+(\S+)"
)
"""`>>` appends (a `>` alone read the second `>` as the path); a double-quoted sed script may escape quotes."""
_DELETE = re.compile(r"(?:^|[;&|(]|\bthen|\bdo)[ \t]*(?:git[ \t]+rm|rm)((?:[ \t]+[^\s;&|)<>]+)+)", re.M)
"""`rm` and `git rm` with their arguments, up to the command's end."""
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")
_SWE_EDIT = re.compile(r"\s*edit\s+\d+(?::\d+)?\s*$")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update File|Add File|Move to): ([^\n]+)$", re.MULTILINE)
"""A file an `apply_patch` patch writes (Codex): in the action's heredoc body, so read from the action."""
_MAX_ITEMS = 4000  # a giant observation contributes at most this many items
SCAN_CHARS = 200_000
"""Each regex pass over an observation reads at most its first this many characters (views and
repeats use the same cap): a giant output costs a bounded, linear scan."""


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
    """The action without heredoc bodies, nor the body of SWE-agent's `edit N:M` (up to `end_of_edit`):
    code written into a file is not a command (`x > 8.84`, `-> t.Optional`)."""
    lines, terminator = [], None
    for line in action.splitlines():
        if terminator is not None:
            if line.strip() == terminator:
                terminator = None
            continue
        lines.append(line)
        heredoc = _HEREDOC.search(line)
        terminator = heredoc.group(1) if heredoc else "end_of_edit" if _SWE_EDIT.match(line) else None
    return "\n".join(lines)


def deleted_paths(commands: str) -> frozenset[str]:
    """Paths an `rm` or `git rm` in `commands` (heredoc bodies removed) names, as written: options,
    globs, variables and redirections are not paths."""
    return frozenset(
        arg.strip("'\"")
        for match in _DELETE.finditer(commands)
        for arg in match.group(1).split()
        if not arg.startswith("-") and not any(c in arg for c in "*?[{$`") and any(c.isalpha() for c in arg)
    )


def extract_facts(step: Step) -> Facts:
    """Facts of one step; the observation is scanned once here and never again."""
    said = f"{step.thought}\n{step.action}"
    commands = shell_lines(step.action)
    edited = {next(g for g in m if g) for m in _EDIT.findall(commands)}
    errors = {line.strip()[:200] for line in _ERROR_LINE.findall(step.observation[:SCAN_CHARS])}
    return Facts(
        files=frozenset(_PATH.findall(said)),
        symbols=code_items(said),
        observed=code_items(step.observation[:SCAN_CHARS]),
        commands=tuple(line.strip() for line in step.action.splitlines() if line.strip())[:20],
        errors=frozenset(list(errors)[:50]),
        tests=frozenset(_TEST_ID.findall(said)),
        edited_files=frozenset(f.strip("'\"") for f in edited if any(c.isalpha() for c in f))
        | tool_paths(commands)[1]
        | {path.strip() for path in _PATCH_FILE.findall(step.action[:SCAN_CHARS])},
        viewed_files=frozenset(viewed_paths(commands)),
        deleted_files=deleted_paths(commands),
    )
