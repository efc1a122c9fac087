"""File views: which file a read-only step printed, and the lines of its output that open a definition.

An old view of the file the work is on now (`cat`, `nl -ba`, `sed -n 'a,bp'`, `head`, an editor's
`view`) is long-range evidence a window loses: the agent returns to the file to edit it or to write a
test against it, and uses its names and line numbers. Its output rarely names the file, so the
selection finds the view through the file the step's command printed (read here with the command's
options, `nl -ba a.py | sed -n '10,40p'`, which the analyzer's facts do not need); its outline (the definition lines, with
whatever line numbers the view shows) is the cheapest faithful map of that file. Computed once per
node; paths match by their tail (`./a/b.py`, `/testbed/a/b.py` and `a/b.py` are one file).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence


def file_key(path: str) -> str:
    """The file's name: the index key under which views of it are found."""
    return path.rstrip("/").rsplit("/", 1)[-1]


def folder_of(path: str) -> str | None:
    """The folder a path names (`/testbed/shop` of `/testbed/shop/cart.py`); None for a bare file name."""
    folder = path.removeprefix("./").rstrip("/").rpartition("/")[0]
    return folder or None


def beside(a: str, b: str) -> bool:
    """`a` is in the folder of `b` (`shop/cart.py` beside `/testbed/src/shop/order.py`)."""
    folder_a, folder_b = folder_of(a), folder_of(b)
    return folder_a is not None and folder_b is not None and same_file(folder_a, folder_b)


def same_file(a: str, b: str) -> bool:
    """`a/b.py` is `./a/b.py`, `/testbed/a/b.py` and `b.py`: one path ends with the other."""
    a, b = a.removeprefix("./"), b.removeprefix("./")
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


class SpellingIndex:
    """Known paths by file name, so the spellings of one file (`same_file`) are found without a pass over
    every path: two spellings of one file share its `file_key`, but a path that names no file (`/`, `./`,
    "") may match others of any name, so those are checked with every lookup (and look at every path)."""

    def __init__(self) -> None:
        self.by_key: dict[str, dict[str, int]] = {}
        """file_key -> its paths, each with the order it was added in."""
        self._nameless: dict[str, int] = {}
        self._added = 0

    def add(self, path: str) -> None:
        """Know `path`, after every path known so far (a path known already keeps its place)."""
        key = file_key(path)
        bucket = self.by_key.setdefault(key, {})
        if path not in bucket:
            self._added += 1
            bucket[path] = self._added
            if _nameless(path):
                self._nameless[path] = self._added

    def discard(self, path: str) -> None:
        key = file_key(path)
        bucket = self.by_key.get(key, {})
        if bucket.pop(path, None) is not None and not bucket:
            del self.by_key[key]
        self._nameless.pop(path, None)

    def spellings(self, path: str) -> list[str]:
        """The known paths `same_file` as `path`, the first added first."""
        if _nameless(path):
            candidates = {p: order for bucket in self.by_key.values() for p, order in bucket.items()}
        else:
            candidates = {**self.by_key.get(file_key(path), {}), **self._nameless}
        return sorted((p for p in candidates if same_file(p, path)), key=candidates.__getitem__)

    def order(self, path: str) -> int:
        """When `path` was added (larger: later)."""
        return self.by_key[file_key(path)][path]


def _nameless(path: str) -> bool:
    """A path with no file name (`/`, `./`, ""): `same_file` may match it with paths of any name."""
    return not path.removeprefix("./").rstrip("/")


VIEW = re.compile(
    r"\b(?:cat|head|tail|nl|less|more|bat|open|view|sed\s+-n\s+(?:'[^']*'|\"[^\"]*\"|\S+)"
    r"|grep\s+(?:-\S+\s+)*(?:'[^']*'|\"[^\"]*\"|\S+))\s+(?:-\S+\s+(?:\d+\s+)?)*['\"]?([\w./-]+\.\w{1,5})\b"
)
"""A command that prints a file, its options allowed (`nl -ba a.py`, `cat -n a.py`, `head -n 50 a.py`), its
path quoted or not (SWE-agent's function-calling `open "a.py" 120`)."""


TOOL_CALL = re.compile(r"^[^\S\n]*([\w.-]+)[^\S\n]+(\{.*\})[^\S\n]*$", re.MULTILINE)
"""A structured tool call as the readers render it: `name {json arguments}` on one line (its spaces stay
on the line: `\\s*` under re.M ran through every following blank line and back)."""
VIEW_TOOLS = frozenset({"read", "read_file", "view_file", "open_file"})
EDIT_TOOLS = frozenset(
    {"edit", "multiedit", "write", "write_file", "edit_file", "create_file", "notebookedit"}
)
VIEW_COMMANDS = frozenset({"view"})
EDIT_COMMANDS = frozenset({"create", "str_replace", "insert", "undo_edit", "write", "append"})
"""An editor tool's `command` argument (`str_replace_editor`, OpenHands' `file_editor`)."""
PATH_KEYS = ("path", "file_path", "filename", "notebook_path", "target_file")
FILE_NAME = re.compile(r"[^/]\.\w{1,5}$")


def viewed_paths(commands: str) -> set[str]:
    """The files the command lines print (heredoc bodies already removed), shell or editor tool."""
    shell = {path for path in VIEW.findall(commands) if any(c.isalpha() for c in path)}
    return shell | tool_paths(commands)[0]


def tool_paths(commands: str) -> tuple[set[str], set[str]]:
    """(viewed, edited) files of structured tool calls: an editor's `view` / `str_replace` / `create`
    on a path (SWE-agent, OpenHands), `Read` / `Edit` / `Write` on a file path (Claude Code)."""
    viewed: set[str] = set()
    edited: set[str] = set()
    if "{" not in commands:
        return viewed, edited
    for name, arguments in TOOL_CALL.findall(commands):
        try:
            parsed = json.loads(arguments)
        except (ValueError, RecursionError):  # RecursionError: arguments nested 100k deep
            continue
        if not isinstance(parsed, dict):
            continue
        path = next((p for key in PATH_KEYS if isinstance(p := parsed.get(key), str) and p), None)
        if path is None or not FILE_NAME.search(path):
            continue
        tool, command = name.lower(), str(parsed.get("command", "")).lower()
        if command in VIEW_COMMANDS or tool in VIEW_TOOLS:
            viewed.add(path)
        elif command in EDIT_COMMANDS or tool in EDIT_TOOLS:
            edited.add(path)
    return viewed, edited


def viewed_file(viewed: Iterable[str], edited: Iterable[str]) -> str | None:
    """The one file a read-only step printed, else None (an edit's output is not a view)."""
    paths = sorted(set(viewed))
    if len(paths) != 1 or set(edited):
        return None
    return paths[0]


OUTLINE = re.compile(
    r"(?:\s{0,8}\d{1,6}(?:\t|: |:|  | \|))?\s*(?:async def|def|class|func|fn|pub fn|function|interface|struct|impl)\s+\w"
    r"|(?:\s{0,8}\d{1,6}(?:\t|: |:|  | \|))?\s*(?:public|private|protected)\s[\w<>\[\], ]*\w+\s*\("
)
"""A line that opens a definition (Python, Go, Rust, JS/TS, Java): a file view's outline. Import lines and
indented assignments were tried on the train splits and not kept (docs/TUNING.md)."""
MAX_OUTLINE_CHARS = 300


def outline(lines: Sequence[str]) -> tuple[int, ...]:
    """The lines of a file view that open a definition, with whatever line number they carry."""
    return tuple(n for n, line in enumerate(lines) if len(line) < MAX_OUTLINE_CHARS and OUTLINE.match(line))


ELISION = re.compile(
    r"\s{0,8}(?:\d{1,6}\s+)?(?:\.{2,}|…|\[|<|\()?\s*"
    r"(?:eliding|elided|omitting|omitted|skipping|hiding)\s+lines?\s+\d",
    re.IGNORECASE,
)
"""An editor's marker for the lines a whole-file view left out (SWE-agent's `   98 ... eliding lines 98-120 ...`):
it shows the numbers of both ends of the elided range. Counted as outline lines too, these markers lost
margin on the train splits (docs/TUNING.md), so they serve only as the line numbers they show."""


NUMBERED = re.compile(r"\s{0,8}(\d{1,6})(?:\t|: |:| )")
"""A view's line that shows its file line number (`   240\t...`, `    71 class A:`, `240: ...`)."""
ELIDED_RANGE = re.compile(r"lines?\s+(\d{1,6})\s*(?:-|to)\s*(\d{1,6})")


def line_numbers(lines: Sequence[str]) -> dict[int, int]:
    """File line number -> the view's line that shows it; an elision marker shows both ends of its range."""
    numbers: dict[int, int] = {}
    for n, line in enumerate(lines):
        found = NUMBERED.match(line)
        if found is None:
            if ELISION.match(line) and (ends := ELIDED_RANGE.search(line)):
                for end in ends.groups():
                    numbers.setdefault(int(end), n)
            continue
        numbers.setdefault(int(found.group(1)), n)
        if len(line) < MAX_OUTLINE_CHARS and ELISION.match(line) and (ends := ELIDED_RANGE.search(line)):
            numbers.setdefault(int(ends.group(2)), n)
    return numbers
