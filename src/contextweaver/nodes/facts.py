"""Cheap structured facts from one step: code-like items, files, commands, error lines, test ids.

Computed once when a node is created; the heuristic analyzer and explanations read them.
"""

from __future__ import annotations

import re

from contextweaver.nodes.views import FILE_NAME, tool_paths, viewed_paths
from contextweaver.records import Facts, Step

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
    r"|>>?\s*(\S+\.\w{1,5})\b|\b(?:str_replace|create|insert|undo_edit)\b\s+(\S+)|\|\s*tee\s+(?:-a\s+)?(\S+)"
)
"""`>>` appends (a `>` alone read the second `>` as the path); a double-quoted sed script may escape quotes."""
_COMMAND = r"(?:^|[;&|(]|\bthen|\bdo)[ \t]*{}((?:[ \t]+[^\s;&|)<>]+)+)"
"""A command at its start (a line, `;`, `&&`, `|`, `then`) with its arguments, up to the command's end."""
_DELETE = re.compile(_COMMAND.format(r"(?:git[ \t]+rm|rm)"), re.M)
_COPY = re.compile(_COMMAND.format(r"(cp|mv|touch)"), re.M)
"""`cp` and `mv` write their last argument (a folder: the sources' names in it), `touch` creates files."""
_REVERT = re.compile(_COMMAND.format(r"git[ \t]+(?:checkout|restore)"), re.M)
_RUNS_PYTHON = re.compile(r"(?:^|[;&|(])[ \t]*python[\d.]*\b", re.M)
_OPEN_FOR_WRITE = re.compile(
    r"""\bopen\(\s*(?:(['"])([^'"\n]{1,300})\1|(\w+))\s*,\s*(?:mode\s*=\s*)?['"][wax]"""
)
_ASSIGNED = re.compile(r"""^[ \t]*(\w+)[ \t]*=[ \t]*(['"])([^'"\n]{1,300})\2[ \t]*$""", re.M)
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")
SWE_EDIT = re.compile(r"\s*edit(?:\s+\d+(?::\d+)?)?\s*$")
"""SWE-agent 0.x's `edit N:M` (or `edit`) on the open file: its replacement text follows, to `end_of_edit`."""
_SHOWN_FILE = re.compile(r"^\[File: ([^\n]+?) \(\d+ lines total\)\]$", re.M)
_EDIT_APPLIED = "File updated."
"""How SWE-agent 0.x's `edit` reports a change it made; an edit its linter refused shows the same `[File: ...]`
header as what the edit 'would have looked' like, and changed nothing."""
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update File|Add File|Move to): ([^\n]+)$", re.MULTILINE)
"""A file an `apply_patch` patch writes (Codex): in the action's heredoc body, so read from the action."""
_MAX_ITEMS = 4000  # a giant observation contributes at most this many items
COPY_ARGUMENTS = 4096
"""Most characters of one `cp` / `mv` / `touch` command's arguments read (1 MB of them took 0.7 s)."""
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
        terminator = heredoc.group(1) if heredoc else "end_of_edit" if SWE_EDIT.match(line) else None
    return "\n".join(lines)


def deleted_paths(commands: str) -> frozenset[str]:
    """Paths an `rm` or `git rm` in `commands` (heredoc bodies removed) names, as written."""
    return frozenset(path for match in _DELETE.finditer(commands) for path in _paths(match.group(1)))


def copied_paths(commands: str) -> tuple[set[str], set[str]]:
    """The paths `cp`, `mv` and `touch` write, and those `mv` takes away. A recursive copy writes a
    folder, not a file: left out; so are arguments longer than COPY_ARGUMENTS (no hand-typed copy)."""
    written: set[str] = set()
    removed: set[str] = set()
    for verb, arguments in _COPY.findall(commands):
        if len(arguments) > COPY_ARGUMENTS:
            continue
        paths = _paths(arguments)
        if verb == "touch":
            written.update(paths)
            continue
        recursive = verb == "cp" and any(a[:1] == "-" and a[1:2] in "rRa" for a in arguments.split())
        if len(paths) < 2 or recursive:
            continue
        *sources, target = paths
        if (
            target.endswith("/")
            or len(sources) > 1
            or (FILE_NAME.search(sources[0]) and not FILE_NAME.search(target))
        ):
            written.update(f"{target.rstrip('/')}/{source.rsplit('/', 1)[-1]}" for source in sources)
        else:
            written.add(target)
        if verb == "mv":
            removed.update(sources)
    return written, removed


def reverted_paths(commands: str) -> frozenset[str]:
    """Files `git checkout` or `git restore` put back as the repository has them (the agent's changes
    undone). A branch or commit is not a file: a path holds a `/` or a file extension."""
    return frozenset(
        path
        for match in _REVERT.finditer(commands)
        if "--staged" not in match.group(1) or "--worktree" in match.group(1)
        for path in _paths(match.group(1))
        if "/" in path or FILE_NAME.search(path)
    )


def script_writes(action: str, commands: str) -> frozenset[str]:
    """Files a Python script the step runs opens for writing, by a literal path or a name assigned one
    (`path = 'a/b.py'` ... `open(path, 'w')`): the agent's scripted edits."""
    if not _RUNS_PYTHON.search(commands):
        return frozenset()
    text = action[:SCAN_CHARS]
    assigned = {name: value for name, _, value in _ASSIGNED.findall(text)}
    opened = (literal or assigned.get(name, "") for _, literal, name in _OPEN_FOR_WRITE.findall(text))
    return frozenset(
        path for path in opened if any(c.isalpha() for c in path) and ("/" in path or "." in path)
    )


def _paths(arguments: str) -> list[str]:
    """The arguments that are paths as written: options, globs, variables and redirections are not."""
    return [
        arg.strip("'\"")
        for arg in arguments.split()
        if not arg.startswith("-") and not any(c in arg for c in "*?[{$`") and any(c.isalpha() for c in arg)
    ]


def open_file_edit(action: str, observation: str) -> frozenset[str]:
    """The file SWE-agent 0.x's `edit` changed: the action names no file (it edits the open one), its output
    shows the file's path in a `[File: ...]` header and says `File updated.`"""
    first = action.lstrip().split("\n", 1)[0]
    if not SWE_EDIT.match(first) or _EDIT_APPLIED not in observation[-SCAN_CHARS:]:
        return frozenset()
    shown = shown_file(observation)
    return frozenset({shown}) if shown else frozenset()


def shown_file(observation: str) -> str | None:
    """The path of the file SWE-agent 0.x's `open`, `create` or `edit` shows (its `[File: ...]` header)."""
    shown = _SHOWN_FILE.search(observation[:SCAN_CHARS])
    return shown.group(1).strip() if shown else None


def extract_facts(step: Step) -> Facts:
    """Facts of one step; the observation is scanned once here and never again."""
    said = f"{step.thought}\n{step.action}"
    commands = shell_lines(step.action)
    edited = {next(g for g in m if g) for m in _EDIT.findall(commands)}
    copied, moved_away = copied_paths(commands)
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
        | {path.strip() for path in _PATCH_FILE.findall(step.action[:SCAN_CHARS])}
        | copied
        | script_writes(step.action, commands)
        | open_file_edit(step.action, step.observation),
        viewed_files=frozenset(viewed_paths(commands)),
        deleted_files=deleted_paths(commands) | moved_away,
        reverted_files=reverted_paths(commands),
    )
