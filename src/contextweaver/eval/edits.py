"""Edit support (docs/evaluation.md, metric 3): did the context hold what an edit needed?

An edit needs its target file and the old text it replaces. This finds edits in an action (sed -i,
a heredoc or redirect into a file, str_replace in SWE-agent's or OpenHands' editor syntax) and turns
them into evidence items, filtered as next-step evidence is: only what came from an earlier
observation, never what the system prompt, the task or an earlier thought/action already holds. Old
texts are usually grepped for first (so already said), hence the step's own next-step evidence (the
identifiers, line numbers and strings the edit took from outputs) is counted with them.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass

from contextweaver.eval.evidence import EarlierText, StepEvidence, next_step_evidence
from contextweaver.formats.base import Trajectory
from contextweaver.nodes.facts import shell_lines

_SED = re.compile(
    r"\bsed\s+((?:-[^\s]+\s+)*)(?:-e\s+)?('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")[ \t]+((?:[^\s;&|]+[ \t]*)+)"
)
_REDIRECT = re.compile(r"(?<![0-9&=-])>>?\s*['\"]?([\w./-]+\.\w{1,8})['\"]?")
_HEREDOC_TO = re.compile(r"<<-?\s*['\"]?\w+['\"]?\s*>>?\s*['\"]?([\w./-]+)")
_EDITOR = re.compile(r"\bstr_replace_editor\s+(?:str_replace|insert|create|undo_edit)\s+(\S+)")
_TEE = re.compile(r"\|\s*tee\s+((?:-a\s+|--append\s+)?)([\w./-]+)")
"""`... | tee [-a] FILE` writes FILE (its output also goes on to the terminal)."""
_EDITOR_JSON = re.compile(
    r"^\s*(?:str_replace_editor|file_editor|edit_file|str_replace_based_edit_tool)\s+(\{.*\})\s*$", re.S
)
_PATCH = re.compile(r"^\*\*\* (?:Update File|Add File): ([^\n]+)$", re.MULTILINE)
_UNESCAPE = re.compile(r"\\(.)")
_QUOTED = re.compile(r"(>>?\s*)?('[^']*'|\"(?:[^\"\\]|\\.)*\")")
"""A quoted string, with the redirection before it when it is a redirection's target."""
_RANGE = re.compile(r"^\s*(\d+)(?:\s*,\s*(\d+))?")
_OPENS = re.compile(r"^\s*(open|create)\s+(\"[^\"\n]+\"|'[^'\n]+'|[^\s\"']+)")
"""SWE-agent 0.x's file commands (its documented `open <path> [<line_number>]` and `create <filename>`): each
makes the file the open one; `create` also writes it."""
_EDIT_OPEN = re.compile(r"^\s*edit(?:\s+(\d+):(\d+))?\s*$")
"""SWE-agent 0.x's `edit <start_line>:<end_line>` (replacement text to `end_of_edit`): lines of the open file."""
_REFUSED = ("Your proposed edit has introduced new syntax error", "Usage: edit", "No file open")
"""Outputs of an `edit` the tool did not apply (its linter's refusal, a malformed command, no open file)."""


@dataclass(frozen=True)
class Edit:
    """One edit: the file it writes and the old text it relies on (empty for creations and appends)."""

    path: str
    old: tuple[str, ...] = ()


def _sed_old(script: str) -> list[str]:
    """The pattern of each `s` command and the line numbers of address commands in a sed script."""
    body = script[1:-1]
    old: list[str] = []
    for command in re.split(r";\s*|\n", body):
        command = command.strip()
        numbers = _RANGE.match(command)
        if numbers:
            old += [n for n in numbers.groups() if n and len(n) >= 2]
            command = command[numbers.end() :].strip()
        if len(command) > 2 and command[0] == "s" and not command[1].isalnum():
            delimiter = command[1]
            parts = re.split(rf"(?<!\\){re.escape(delimiter)}", command[2:])
            if parts and parts[0]:
                old.append(_UNESCAPE.sub(r"\1", parts[0]).strip("^$"))
    return [o for o in old if o]


def _unless_target(match: re.Match[str]) -> str:
    return match.group(0) if match.group(1) else "''"


def find_edits(action: str) -> list[Edit]:
    """Edits an action makes, in order of appearance (paths as written in the action)."""
    match = _EDITOR_JSON.match(action)
    if match:
        return _json_editor_edits(match)
    edits = _sed_edits(action) + _editor_edits(action)
    edits += [Edit(path.strip()) for path in _PATCH.findall(action)]  # apply_patch (Codex)
    known = {e.path for e in edits}
    return edits + [Edit(path) for path in _written(action) if path not in known]


def _json_editor_edits(match: re.Match[str]) -> list[Edit]:
    """The edit of a JSON editor call (str_replace, insert, create, undo_edit naming a path), if any."""
    try:
        args = json.loads(match.group(1))
    except ValueError:
        args = None
    if (
        isinstance(args, dict)
        and args.get("command") in ("str_replace", "insert", "create", "undo_edit")
        and args.get("path")
    ):
        old = args.get("old_str")
        return [Edit(str(args["path"]), (str(old),) if old else ())]
    return []


def _sed_edits(action: str) -> list[Edit]:
    """`sed -i` in place: the first three files of each, with the texts its script replaces."""
    edits = []
    for m in _SED.finditer(action):
        flags = m.group(1) or ""
        if "-i" not in flags and not re.search(r"\s-i", m.group(0)):
            continue
        files = [f for f in m.group(3).split() if not f.startswith("-")]
        for path in files[:3]:
            edits.append(Edit(path.strip("'\""), tuple(_sed_old(m.group(2)))))
    return edits


def _editor_edits(action: str) -> list[Edit]:
    """SWE-agent's editor commands, each with its `--old_str` when given."""
    edits = []
    for m in _EDITOR.finditer(action):
        old = re.search(r"--old_str\s+('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\S+)", action[m.end() :])
        text: tuple[str, ...] = ()
        if old:
            try:
                text = tuple(shlex.split(old.group(1)))
            except ValueError:
                text = (old.group(1).strip("'\""),)
        edits.append(Edit(m.group(1), text))
    return edits


def _written(action: str) -> list[str]:
    """Files the shell writes (heredoc, `>` redirect, tee), each once, in order; /dev/ is not a file."""
    commands = shell_lines(action)  # a heredoc body is written, not run: its own heredocs write nothing
    targets = _HEREDOC_TO.findall(commands) + _REDIRECT.findall(
        _QUOTED.sub(_unless_target, commands)
    )  # not `>` in a quoted string either (a sed script's `a > b.c`)
    targets += [path for _, path in _TEE.findall(_QUOTED.sub("''", commands))]
    return [path for path in dict.fromkeys(targets) if not path.startswith("/dev/")]


_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", "\n"})


def trajectory_edits(trajectory: Trajectory) -> list[list[Edit]]:
    """Per step (0 = the first), the edits its action makes: `find_edits`, plus SWE-agent 0.x's commands on
    the open file, followed across steps (an `edit` names no file: it changes the last one opened or
    created, its old text the lines it replaces)."""
    out: list[list[Edit]] = []
    open_file: str | None = None
    for step in trajectory.steps:
        edits = find_edits(step.action)
        first = step.action.lstrip().split("\n", 1)[0]
        opens = _OPENS.match(first)
        if opens:
            open_file = opens.group(2).strip("'\"")
            if opens.group(1) == "create":
                edits.append(Edit(open_file))
        ranged = _EDIT_OPEN.match(first)
        if ranged and open_file and not any(text in step.observation[:2000] for text in _REFUSED):
            edits.append(Edit(open_file, tuple(n for n in ranged.groups() if n and len(n) >= 2)))
        out.append(edits)
    return out


def find_deletions(action: str) -> list[str]:
    """Paths an action's `rm` / `git rm` deletes, as written (heredoc bodies are not commands), found by
    shell tokenizing: options, globs, variables and what follows a redirection are not paths."""
    paths: list[str] = []
    for command in _commands(action, ("rm",)):
        words = command[2:] if command[:2] == ["git", "rm"] else command[1:] if command[:1] == ["rm"] else []
        paths += _path_words(words)
    return list(dict.fromkeys(paths))


def find_copies(action: str) -> list[str]:
    """Paths an action's `cp`, `mv` or `touch` writes (the last argument of `cp`/`mv`, the source's name
    in it when it ends in `/`; every argument of `touch`); a recursive copy writes a folder: left out."""
    paths: list[str] = []
    for command in _commands(action, ("cp", "mv", "touch")):
        words = _path_words(command[1:])
        if command[:1] == ["touch"]:
            paths += words
        elif command[:1] in (["cp"], ["mv"]) and len(words) >= 2 and not {"-r", "-R", "-a"} & set(command):
            target = words[-1]
            paths.append(target + words[0].rsplit("/", 1)[-1] if target.endswith("/") else target)
    return list(dict.fromkeys(paths))


def _commands(action: str, verbs: tuple[str, ...]) -> list[list[str]]:
    """The words of each command on the action's shell lines that hold one of `verbs`."""
    out: list[list[str]] = []
    for line in shell_lines(action).splitlines():
        if not any(verb in line for verb in verbs):
            continue
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.wordchars += "$`{}[]:,+@%^!#"  # a glob or variable stays one word, to be left out
        try:
            tokens = list(lexer)
        except ValueError:
            continue
        command: list[str] = []
        for token in [*tokens, ";"]:
            if token not in _SEPARATORS:
                command.append(token)
            elif command:
                out.append(command)
                command = []
    return out


def _path_words(words: list[str]) -> list[str]:
    paths: list[str] = []
    for word in words:
        if set(word) <= set("<>&"):  # a redirection: the rest is not a path argument
            break
        if not word.startswith("-") and any(c.isalpha() for c in word) and not set(word) & set("*?[{$`"):
            paths.append(word)
    return paths


def edit_items(edit: Edit) -> set[str]:
    """The items an edit needs: the target path (and its file name) and each old text."""
    items = {edit.path.strip("./") or edit.path}
    name = edit.path.rsplit("/", 1)[-1]
    if len(name) >= 4:
        items.add(name)
    items.update(o.strip() for o in edit.old if len(o.strip()) >= 2)
    return {i for i in items if i}


def edit_evidence(trajectory: Trajectory, evidence: list[StepEvidence] | None = None) -> list[StepEvidence]:
    """For each editing step k+1 >= 2: its target paths and old texts that an earlier observation supplied,
    plus the step's next-step evidence (identifiers, line numbers, strings the edit took from outputs)."""
    by_index = {
        e.index: e.items for e in (evidence if evidence is not None else next_step_evidence(trajectory))
    }
    per_step = trajectory_edits(trajectory)
    wanted = {
        nxt: set().union(*(edit_items(e) for e in edits))
        for nxt in range(1, len(per_step))
        if (edits := per_step[nxt])
    }
    earlier = EarlierText(trajectory, set().union(*wanted.values()))
    return [
        StepEvidence(
            nxt + 1, frozenset(set(by_index.get(nxt + 1, ())) | earlier.only_in_observations(items, nxt))
        )
        for nxt, items in wanted.items()
    ]
