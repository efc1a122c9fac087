"""A trajectory file read once and parsed lazily, so every reader's detector shares one parse.

Bytes are decoded as UTF-8 with errors="replace": recorded agent output holds arbitrary bytes,
and a reader must never crash on them. JSON errors carry the file, the line and the column.
A JSON Lines file is parsed line by line from the disk, never held whole as bytes or text (a 1 GB run
costs its parsed records, not three copies of itself); a single JSON document is read whole.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from contextweaver.formats.errors import TrajectoryError

CHUNK = 1 << 16
JSONL_SUFFIXES = (".jsonl", ".ndjson")


@dataclass
class Record:
    """One JSON value of a JSON Lines file, with its 1-based line number."""

    line: int
    value: Any


@dataclass
class Source:
    """The text of a trajectory file plus its parses: the whole document, or JSON Lines records."""

    path: Path
    given: str | None = None
    """The text, when it does not come from `path` on disk (an archive's member, a folder's events)."""
    _errors: dict[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def read(cls, path: str | Path) -> Source:
        """The file at `path`, checked readable now and read when a parse needs it."""
        path = Path(path)
        try:
            with path.open("rb"):
                pass
        except OSError as exc:
            raise cls(path).error(f"cannot read trajectory file: {exc.strerror or exc}") from exc
        return cls(path)

    @property
    def name(self) -> str:
        return str(self.path)

    @cached_property
    def text(self) -> str:
        """The whole text (a single JSON document needs it; JSON Lines records do not)."""
        if self.given is not None:
            return self.given
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise self.error(f"cannot read trajectory file: {exc.strerror or exc}") from exc
        return data.decode("utf-8", errors="replace").removeprefix("\ufeff")

    @property
    def is_blank(self) -> bool:
        """Whether the file holds only whitespace (read up to its first other character)."""
        if self.given is not None or "text" in self.__dict__:
            return not self.text.strip()
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        try:
            with self.path.open("rb") as handle:
                first = True
                while chunk := handle.read(CHUNK):
                    text = decoder.decode(chunk)
                    if (text.removeprefix("\ufeff") if first else text).strip():
                        return False
                    first = first and not text
                return not decoder.decode(b"", final=True).strip()
        except OSError as exc:
            raise self.error(f"cannot read trajectory file: {exc.strerror or exc}") from exc

    def _lines(self) -> Iterator[tuple[int, str]]:
        """The lines split on "\\n" only (not `splitlines`: U+0085, U+2028 sit in text), numbered from 1;
        a file's lines are read from the disk one at a time."""
        if self.given is not None or "text" in self.__dict__:
            yield from enumerate(self.text.split("\n"), start=1)
            return
        try:
            with self.path.open("rb") as handle:
                for number, raw in enumerate(handle, start=1):
                    line = raw.decode("utf-8", errors="replace")
                    yield number, line.removeprefix("\ufeff") if number == 1 else line
        except OSError as exc:
            raise self.error(f"cannot read trajectory file: {exc.strerror or exc}") from exc

    @cached_property
    def document(self) -> Any | None:
        """The file parsed as one JSON value, or None (the reason kept for `json_error`). A `.jsonl` file is
        answered from its records when they parse (several values are no document), not read whole."""
        if self.given is None and "text" not in self.__dict__ and self.path.suffix.lower() in JSONL_SUFFIXES:
            records = self.records
            if records is not None and len(records) > 1:
                self._errors["document"] = f"invalid JSON at line {records[1].line} column 1: Extra data"
                self._errors["extra_data"] = "1"
                return None
            if records:
                return records[0].value
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
        for number, value, problem in self._parsed():
            if problem is not None:
                self._errors["records"] = f"line {number}: {problem}"
                return None
            records.append(Record(number, value))
        return records

    @cached_property
    def sound_records(self) -> tuple[list[Record], dict[int, str]]:
        """The JSON Lines records with every line that does not parse left out, and those lines (number ->
        problem): a user's own transcript where an edit split a line in two still reads around it."""
        if self.records is not None:
            return self.records, {}
        records: list[Record] = []
        damaged: dict[int, str] = {}
        for number, value, problem in self._parsed():
            if problem is None:
                records.append(Record(number, value))
            else:
                damaged[number] = problem
        return records, damaged

    def _parsed(self) -> Iterator[tuple[int, Any, str | None]]:
        """Each non-blank line's number, its JSON value and, when it does not parse, the problem."""
        for number, line in self._lines():
            if not line.strip():
                continue
            try:
                yield number, json.loads(line), None
            except json.JSONDecodeError as exc:
                yield number, None, f"invalid JSON at column {exc.colno}: {exc.msg}"

    @property
    def looks_like_jsonl(self) -> bool:
        """Several JSON values one per line: a .jsonl name, or a first value followed by more data."""
        if self.path.suffix.lower() in JSONL_SUFFIXES:
            return True
        return self.document is None and bool(self._errors.get("extra_data"))

    def json_error(self) -> str | None:
        """Why the file is not JSON (nor JSON Lines), naming the place; None when it parses."""
        if self.looks_like_jsonl:
            return None if self.records is not None else self._errors["records"]
        if self.document is not None:
            return None
        if self.is_blank:
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
