"""An OpenHands SDK saved conversation: a folder with `base_state.json` and `events/`, one JSON file per
event named `event-<index>-<event id>.json` (the SDK writes it where `persistence_dir` points).

The events are read in index order (the number in the name, not the text order: indices past 99999 have
six digits) into one event list, which the `openhands-sdk` reader reads like any other event stream.
Such a folder passes for one run wherever a trajectory file does.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from contextweaver.formats.base import TrajectoryError
from contextweaver.formats.source import Source

EVENTS = "events"
EVENT_FILE = re.compile(r"event-(\d{5,})-[0-9A-Fa-f-]{8,}\.json")


def events_dir(path: str | Path) -> Path | None:
    """The events folder of a saved conversation given as the conversation folder or as its `events/`."""
    path = Path(path)
    for candidate in (path / EVENTS, path):
        if candidate.is_dir() and any(EVENT_FILE.fullmatch(p.name) for p in candidate.iterdir()):
            return candidate
    return None


def conversation_source(path: str | Path) -> Source:
    """The events as one JSON list, in index order; a file that does not parse names itself and its line."""
    folder = events_dir(path)
    if folder is None:
        raise TrajectoryError(
            f"{path}: not a saved OpenHands conversation (no events/event-NNNNN-<id>.json files)"
        )
    numbered = sorted((int(m.group(1)), p) for p in folder.iterdir() if (m := EVENT_FILE.fullmatch(p.name)))
    events = []
    for _, file in numbered:
        try:
            events.append(json.loads(file.read_text(encoding="utf-8", errors="replace")))
        except json.JSONDecodeError as exc:
            raise TrajectoryError(
                f"{file}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
            ) from None
        except OSError as exc:
            raise TrajectoryError(f"{file}: cannot read the event file: {exc.strerror or exc}") from None
    return Source(Path(path), json.dumps(events))
