"""Writes: the text a step's action put into a file, where the action itself holds that text.

A later edit most often replaces what the agent itself wrote (a script it created, a function it
rewrote), and a cut may drop the step that wrote it. The action holds that text exactly: an editor's
`create` file text, a `str_replace`'s old and new strings, an `insert`'s new lines, a heredoc's body,
Claude Code's `Write` / `Edit`. `sed -i` and scripts that rewrite files do not (the result needs the
file), so they are not writes here. Computed once per step, from its action alone.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass

from contextweaver.nodes.views import PATH_KEYS, TOOL_CALL

_EDITOR = re.compile(r"^\s*str_replace_editor\s+(create|str_replace|insert)\s")
_HEREDOC = re.compile(
    r"^\s*(?:.*?(?:&&|;)\s*)?cat\s+(?:(>>?)\s*(\S+)\s+)?<<(-?)\s*['\"]?(\w+)['\"]?(?:\s*(>>?)\s*(\S+?))?"
    r"\s*(?:(?:&&|\|\||;).*)?$"
)
"""`cat <<'EOF' > path` and `cat > path <<'EOF'`, after `cd dir &&` or before `&& python path`: the body up
to the terminator is the file's text."""
NEW_KEYS = ("file_text", "content", "new_str", "new_string")
OLD_KEYS = ("old_str", "old_string")


@dataclass(frozen=True)
class Write:
    """Text put into `path`: the whole file (`old` None, not `append`), `new` in place of `old`, or
    `new` added where the action does not say exactly (`append`: an insert, `>>`)."""

    path: str
    new: str
    old: str | None = None
    append: bool = False


def find_writes(action: str) -> list[Write]:
    """The writes of one action, in order."""
    editor = _EDITOR.match(action)
    if editor:
        return _editor_cli(action)
    if "{" in action:
        calls = [w for name, arguments in TOOL_CALL.findall(action) if (w := _tool_call(arguments))]
        if calls:
            return calls
    return _heredocs(action) if "<<" in action else []


def _editor_cli(action: str) -> list[Write]:
    """`str_replace_editor create PATH --file_text '...'` and its `str_replace` / `insert` (SWE-agent)."""
    try:
        words = shlex.split(action)
    except ValueError:
        return []
    if len(words) < 3:
        return []
    command, path = words[1], words[2]
    flags = {words[i][2:]: words[i + 1] for i in range(3, len(words) - 1) if words[i].startswith("--")}
    return _write(command, path, flags)


def _tool_call(arguments: str) -> Write | None:
    """An editor or Claude Code call rendered as `name {json}`."""
    try:
        parsed = json.loads(arguments)
    except (ValueError, RecursionError):
        return None
    if not isinstance(parsed, dict):
        return None
    path = next((p for key in PATH_KEYS if isinstance(p := parsed.get(key), str) and p), None)
    if path is None:
        return None
    command = str(parsed.get("command", "create" if "content" in parsed else "str_replace"))
    writes = _write(command, path, {k: v for k, v in parsed.items() if isinstance(v, str)})
    return writes[0] if writes else None


def _write(command: str, path: str, args: dict[str, str]) -> list[Write]:
    new = next((args[key] for key in NEW_KEYS if key in args), None)
    old = next((args[key] for key in OLD_KEYS if key in args), None)
    if new is None:
        return []
    if command == "create" or (old is None and "content" in args):
        return [Write(path, new)]
    if command == "insert":
        return [Write(path, new, append=True)]
    if command == "str_replace" and old:
        return [Write(path, new, old)]
    return []


def _heredocs(action: str) -> list[Write]:
    """Each `cat` heredoc into a file: its body, whole (`>`) or appended (`>>`)."""
    writes: list[Write] = []
    lines = action.splitlines()
    index = 0
    while index < len(lines):
        match = _HEREDOC.match(lines[index])
        index += 1
        if not match:
            continue
        arrow, path = (match.group(1), match.group(2)) if match.group(2) else (match.group(5), match.group(6))
        tabs, end = match.group(3), match.group(4)
        body: list[str] = []
        while index < len(lines) and (lines[index].lstrip("\t") if tabs else lines[index]).strip() != end:
            body.append(lines[index].lstrip("\t") if tabs else lines[index])
            index += 1
        index += 1
        if path and arrow and not path.startswith("/dev/"):
            writes.append(Write(path.strip("'\""), "\n".join(body) + "\n", append=arrow == ">>"))
    return writes
