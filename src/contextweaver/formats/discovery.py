"""Where the runs are: the one walk every command that takes runs uses (replay, graph, eval, fit).

A path is a run file, an archive of runs, an OpenHands conversation folder (one run), or a folder
walked for them in the layouts agents write:

- SWE-agent: `<run>/<instance>/<instance>.traj` (beside `.pred`, `.patch`, logs and `preds.json`)
- mini-swe-agent: `<dir>/<instance>/<instance>.traj.json` and `preds.json` beside
- OpenHands: `<conversations>/<id>/` holding `events/event-NNNNN-<id>.json`, one run per folder
- Claude Code: `~/.claude/projects/<project>/<session>.jsonl`
- Codex: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`

Files are candidates by their suffix, less the files agents and integrations write beside runs
(predictions, ContextWeaver's sidecars); the readers decide on the rest. Hidden folders below the
given one and symlinked folders are not entered, and the walk stops MAX_DEPTH folders down.
"""

from __future__ import annotations

import os
from pathlib import Path

from contextweaver.formats.base import Trajectory
from contextweaver.formats.conversation_dir import events_dir

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar")
RUN_SUFFIXES = (".json", ".jsonl", ".traj", ".ndjson")
SIDE_FILES = ("preds.json",)
"""Predictions SWE-agent and mini-swe-agent write beside the runs: never a run."""
SIDE_SUFFIXES = (".contexts.jsonl", ".contextweaver.json")
"""ContextWeaver's own sidecars beside a run (integrations/record.py)."""
SKIPPED_FOLDERS = ("node_modules", "__pycache__")
MAX_DEPTH = 6
"""Codex's `sessions/YYYY/MM/DD/` is four folders below `~/.codex`; six leaves room for a parent."""
LAYOUTS = (
    "SWE-agent <run>/<instance>/<instance>.traj, mini-swe-agent <dir>/<instance>/<instance>.traj.json, "
    "OpenHands conversation folders (events/), Claude Code ~/.claude/projects/<project>/*.jsonl, "
    "Codex ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl, and .tar.gz archives of runs"
)


def is_archive(path: str | Path) -> bool:
    return str(path).lower().endswith(ARCHIVE_SUFFIXES)


def is_run_file(name: str) -> bool:
    """A file (or archive member) name that may hold a run."""
    base = name.rsplit("/", 1)[-1].lower()
    if base in SIDE_FILES or base.endswith(SIDE_SUFFIXES):
        return False
    return base.endswith(RUN_SUFFIXES)


def file_id(path: str | Path) -> str:
    """`runs/django__django-1.traj.json` -> `django__django-1`: a run's id from its file name."""
    name = Path(path).name
    for suffix in (".jsonl", ".json", ".traj"):
        name = name.removesuffix(suffix)
    return name or "trajectory"


def run_id(trajectory: Trajectory, fallback: str = "") -> str:
    """The run's instance id, else its file's name without the trajectory suffixes (`fallback`'s
    when the run has no source): what `--instance` and `PATH#id` select, and eval's trajectory id."""
    found = trajectory.meta.get("instance_id")
    return str(found) if found else file_id(trajectory.source or fallback)


def is_single_run(path: str | Path) -> bool:
    """A path that is one input as it stands: a file, or an OpenHands conversation folder."""
    path = Path(path)
    return not path.is_dir() or events_dir(path) is not None


def run_paths(path: str | Path) -> list[Path]:
    """The run files, archives and conversation folders under `path` (itself when it is one), sorted."""
    path = Path(path)
    if is_single_run(path):
        return [path]
    found: list[Path] = []
    _walk(path, 0, found)
    return sorted(found)


def _walk(folder: Path, depth: int, found: list[Path]) -> None:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        child = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            if entry.name.startswith(".") or entry.name in SKIPPED_FOLDERS:
                continue
            if events_dir(child) is not None:
                found.append(child)
            elif depth + 1 < MAX_DEPTH:
                _walk(child, depth + 1, found)
        elif entry.is_file() and (is_run_file(entry.name) or is_archive(entry.name)):
            found.append(child)
