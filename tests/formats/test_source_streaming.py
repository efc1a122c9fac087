"""A JSON Lines file is parsed line by line from the disk: never held whole, and read as the whole text
would be (blank lines, a BOM, bytes that are not UTF-8, "\\r\\n" endings)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contextweaver.formats import FORMATS, load_trajectory
from contextweaver.formats.base import NotATrajectory
from contextweaver.formats.source import Source

STEP = {"thought": "t", "action": "ls", "observation": "a\u2028b"}


def test_json_lines_records_are_read_without_the_whole_text(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    body = "\ufeff" + json.dumps({"task": "fix"}) + "\r\n\n" + json.dumps(STEP, ensure_ascii=False) + "\n"
    path.write_bytes(body.encode("utf-8") + b'{"observation": "bad \xff byte"}\n')
    source = Source.read(path)
    streamed = source.records
    assert "text" not in vars(source)  # the records came from the disk, line by line
    whole = Source(path, path.read_bytes().decode("utf-8", errors="replace").removeprefix("\ufeff"))
    assert streamed == whole.records
    assert streamed is not None and [r.line for r in streamed] == [1, 3, 4]
    assert load_trajectory(path).steps[1].observation == "bad \ufffd byte"


def test_no_reader_reads_a_json_lines_file_whole_to_detect_its_format(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(STEP) + "\n" for _ in range(5)), encoding="utf-8")
    source = Source.read(path)
    claimed = [name for name in FORMATS.names() if FORMATS.get(name).detect(source)]
    assert claimed[0] == "jsonl"
    assert "text" not in vars(source) and source.document is None and source.looks_like_jsonl


def test_a_file_of_whitespace_is_empty_however_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "blank.jsonl"
    path.write_bytes("\ufeff \n\u3000\n".encode())
    assert Source.read(path).is_blank
    with pytest.raises(NotATrajectory, match="the file is empty"):
        load_trajectory(path)
