"""A trajectory file read once and parsed lazily, so every reader's detector shares one parse.

Bytes are decoded as UTF-8 with errors="replace": recorded agent output holds arbitrary bytes,
and a reader must never crash on them. JSON errors carry the file, the line and the column.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from contextweaver.formats.base import TrajectoryError


@dataclass
class Record:
    """One JSON value of a JSON Lines file, with its 1-based line number."""

    line: int
    value: Any


@dataclass
class Source:
    """The text of a trajectory file plus its parses: the whole document, or JSON Lines records."""

    path: Path
    text: str
    _errors: dict[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def read(cls, path: str | Path) -> Source:
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise TrajectoryError(f"{path}: cannot read trajectory file: {exc.strerror or exc}") from exc
        text = data.decode("utf-8", errors="replace")
        return cls(path, text.removeprefix("\ufeff"))

    @property
    def name(self) -> str:
        return str(self.path)

    @cached_property
    def document(self) -> Any | None:
        """The file parsed as one JSON value, or None (the reason kept for `json_error`)."""
        try:
            return json.loads(self.text)
        except json.JSONDecodeError as exc:
            self._errors["document"] = (
                f"invalid JSON at line {exc.lineno} column {exc.colno} (char {exc.pos}): {exc.msg}"
            )
            self._errors["extra_data"] = "1" if exc.msg == "Extra data" else ""
            return None

    @cached_property
    def records(self) -> list[Record] | None:
        """The file as JSON Lines (blank lines skipped), or None (the bad line kept for `json_error`).

        A one-line file that parses as a whole document counts as one record.
        """
        records = []
        for number, line in enumerate(
            self.text.split("\n"), start=1
        ):  # not splitlines: U+0085, U+2028 sit in text
            if not line.strip():
                continue
            try:
                records.append(Record(number, json.loads(line)))
            except json.JSONDecodeError as exc:
                self._errors["records"] = f"line {number}: invalid JSON at column {exc.colno}: {exc.msg}"
                return None
        return records

    @property
    def looks_like_jsonl(self) -> bool:
        """Several JSON values one per line: a .jsonl name, or a first value followed by more data."""
        if self.path.suffix.lower() in (".jsonl", ".ndjson"):
            return True
        return self.document is None and bool(self._errors.get("extra_data"))

    def json_error(self) -> str | None:
        """Why the file is not JSON (nor JSON Lines), naming the place; None when it parses."""
        if self.looks_like_jsonl:
            return None if self.records is not None else self._errors["records"]
        if self.document is not None:
            return None
        if not self.text.strip():
            return "the file is empty"
        return self._errors.get("document", "the file holds only JSON null")

    def error(self, problem: str) -> TrajectoryError:
        return TrajectoryError(f"{self.name}: {problem}")


def record_values(source: Source) -> list[Record] | None:
    """JSON Lines records, or the whole document as record 1 when it is a single JSON object."""
    if source.looks_like_jsonl:
        return source.records
    document = source.document
    if isinstance(document, dict):
        return [Record(1, document)]
    return None
