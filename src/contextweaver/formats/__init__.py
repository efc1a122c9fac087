"""Trajectory readers: one module per recorded-run format, found by name or by sniffing the file.

`load_trajectory(path)` tries each reader's cheap `detect` in registry order (most specific
first) and reads with the first that claims the file; `load_trajectory(path, format=...)` skips
detection. An unreadable file raises TrajectoryError naming the file, the place and what was
expected, so the user can tell a truncated file from a file of another format; so does a file read
as no step at all, with the format it was taken for and the nearest other (formats/nearest.py). A
folder is walked for runs in the layouts agents write (formats/discovery.py).
"""

from __future__ import annotations

from pathlib import Path

from contextweaver.formats.archive import load_archive
from contextweaver.formats.base import NotATrajectory, Reader, SeveralRuns, Trajectory, TrajectoryError
from contextweaver.formats.conversation_dir import conversation_source, events_dir
from contextweaver.formats.discovery import LAYOUTS, file_id, is_archive, is_single_run, run_id, run_paths
from contextweaver.formats.nearest import nearest
from contextweaver.formats.source import Source
from contextweaver.formats.toolcalls import chat_step
from contextweaver.registry import Registry

__all__ = [
    "FORMATS",
    "NotATrajectory",
    "SeveralRuns",
    "Reader",
    "Trajectory",
    "TrajectoryError",
    "chat_step",
    "detect_format",
    "load_trajectory",
]


FORMATS = Registry(
    "trajectory format",
    {  # in detection order: formats with a distinctive marker before looser shapes
        "mini-swe-agent": "contextweaver.formats.minisweagent:READER",
        "nebius": "contextweaver.formats.nebius:READER",
        "swe-agent": "contextweaver.formats.sweagent:READER",
        "openhands-sdk": "contextweaver.formats.openhands_sdk:READER",
        "openhands-v0": "contextweaver.formats.openhands:READER",
        "claude-code": "contextweaver.formats.claude_code:READER",
        "codex": "contextweaver.formats.codex:READER",
        "anthropic": "contextweaver.formats.anthropic:READER",  # before jsonl, whose header has `system`
        "jsonl": "contextweaver.formats.jsonl:READER",
        "openai": "contextweaver.formats.openai:READER",
    },
)


def _readers() -> list[Reader]:
    return [FORMATS.get(name) for name in FORMATS.names()]


def _expected() -> str:
    expectations = [reader.expected for reader in _readers()]
    return "expected " + ", or ".join(expectations) + f" (formats: {', '.join(FORMATS.names())})"


def detect_format(path: str | Path) -> str:
    """The name of the format that claims the file; TrajectoryError when none does."""
    source = Source.read(path)
    return _detect(source).name


def _detect(source: Source) -> Reader:
    if source.is_blank:  # not a broken run: in a folder it is passed over (Claude Code leaves some)
        raise NotATrajectory(f"{source.name}: the file is empty; {_expected()}")
    problem = source.json_error()
    if problem is not None:
        mended = next((r for r in _readers() if _reads_damage(r, source) and r.detect(source)), None)
        if mended is None:
            raise source.error(f"{problem}; {_expected()}")
        return mended
    for reader in _readers():
        if reader.detect(source):
            return reader
    near = nearest(source, _readers())
    raise NotATrajectory(
        f"{source.name}: unrecognised trajectory ({_shape(source)}); {near + '; ' if near else ''}{_expected()}"
    )


def _shape(source: Source) -> str:
    """A few words on what the file holds, so the user sees why no reader claimed it."""
    document = source.document
    if isinstance(document, dict):
        return "a JSON object with keys " + ", ".join(repr(k) for k in list(document)[:8])
    if isinstance(document, list):
        return f"a JSON list of {len(document)} items"
    if document is None:
        return f"JSON Lines with {len(source.records or [])} records"
    return f"a JSON {type(document).__name__}"


def load_trajectories(path: str | Path, format: str | None = None) -> list[Trajectory]:
    """Every run in the file: evaluation outputs (OpenHands output.jsonl) hold one run per line;
    a `.tar.gz` / `.tgz` / `.tar` archive of runs is read in place, member by member; an OpenHands
    saved-conversation folder is one run; any other folder gives the runs found under it."""
    if is_archive(path):
        return load_archive(path, format, _read_runs)
    if Path(path).is_dir():
        if events_dir(path) is not None:  # an OpenHands saved conversation
            return _read_runs(conversation_source(path), format or "openhands-sdk")
        return _load_folder(Path(path), run_paths(path), format)
    source = Source.read(path)
    return _read_runs(source, format)


def _load_folder(folder: Path, paths: list[Path], format: str | None) -> list[Trajectory]:
    """The runs of every file no reader refuses; a file a reader claims but cannot read raises."""
    runs: list[Trajectory] = []
    passed: list[str] = []
    for path in paths:
        try:
            runs += load_trajectories(path, format)
        except NotATrajectory:
            passed.append(path.name)
    if not runs:
        raise _empty_folder(folder, passed)
    return runs


def _empty_folder(folder: str | Path, passed: list[str]) -> TrajectoryError:
    """The error of a folder that holds no run: what was passed over, the layouts and formats read."""
    looked = (
        f"passed over {', '.join(passed[:5])}{', ...' if len(passed) > 5 else ''}"
        if passed
        else "no .json, .jsonl, .traj or archive in it"
    )
    return TrajectoryError(
        f"{folder}: no recorded run in the folder ({looked}); runs are found in these layouts: {LAYOUTS}; "
        f"formats read: {', '.join(FORMATS.names())}"
    )


def _read_runs(source: Source, format: str | None) -> list[Trajectory]:
    reader = _reader(source, format)
    read_all = getattr(reader, "read_all", None)
    runs: list[Trajectory] = read_all(source) if read_all is not None else [reader.read(source)]
    if not any(trajectory.steps for trajectory in runs):
        near = nearest(source, _readers(), tried=reader.name)
        raise source.error(
            f"read as {reader.name} ({reader.expected}), it holds no steps"
            f"{'; ' + near if near else ''}; formats read: {', '.join(FORMATS.names())}"
        )
    for trajectory in runs:
        trajectory.source = trajectory.source or str(source.path)
        trajectory.format = trajectory.format or reader.name
    return runs


def load_trajectory(
    path: str | Path, format: str | None = None, instance: str | int | None = None
) -> Trajectory:
    """Read one recorded run into root messages + Steps; `format` (a FORMATS name) skips detection.

    A file or folder holding several runs needs `instance`: a run's id (its instance_id, else its
    file's name without the suffixes), or its 0-based position. `path#instance` selects the same way
    when no file has that literal name.
    """
    path = Path(path)
    if instance is None and not path.exists() and "#" in path.name:
        name, _, instance = path.name.rpartition("#")
        path = path.with_name(name)
    if instance is not None and path.is_dir() and not is_single_run(path):
        named = [p for p in run_paths(path) if file_id(p) == str(instance)]
        path = named[0] if len(named) == 1 else path  # the run's own file: the others are not read
    runs = load_trajectories(path, format)
    if instance is None:
        if len(runs) > 1:
            raise SeveralRuns(path, _ids(runs), len(runs))
        return runs[0]
    for trajectory in runs:
        if run_id(trajectory) == str(instance):
            return trajectory
    if str(instance).isdigit() and int(instance) < len(runs):
        return runs[int(instance)]
    raise TrajectoryError(f"{path}: no run {instance!r}; runs: {_ids(runs)}")


def _reader(source: Source, format: str | None) -> Reader:
    if format is None:
        return _detect(source)
    try:
        reader: Reader = FORMATS.get(format)
    except ValueError as exc:
        raise TrajectoryError(str(exc)) from None
    problem = source.json_error()
    if problem is not None and not _reads_damage(reader, source):
        raise source.error(f"{problem}; expected {reader.expected}")
    return reader


def _reads_damage(reader: Reader, source: Source) -> bool:
    """Whether `reader` reads JSON Lines around the lines that do not parse (a user's own transcript)."""
    return bool(getattr(reader, "reads_damaged_lines", False)) and source.looks_like_jsonl


def _ids(runs: list[Trajectory]) -> str:
    ids = [run_id(t) for t in runs]
    return ", ".join(ids[:10]) + (", ..." if len(ids) > 10 else "")
