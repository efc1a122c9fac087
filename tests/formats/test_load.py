from __future__ import annotations

import pytest

from contextweaver.formats import FORMATS, TrajectoryError, detect_format, load_trajectory


def test_unknown_format_name_lists_the_valid_ones(write):
    path = write("x.jsonl", '{"thought": "a"}\n')
    with pytest.raises(TrajectoryError) as info:
        load_trajectory(path, format="nope")
    for name in FORMATS.names():
        assert name in str(info.value)


def test_unrecognised_document_says_what_it_found_and_expected(write):
    path = write("other.json", {"foo": 1, "bar": [1]})
    with pytest.raises(TrajectoryError) as info:
        load_trajectory(path)
    message = str(info.value)
    assert str(path) in message and "'foo'" in message
    assert "mini-swe-agent" in message and "JSON Lines" in message
    assert all(name in message for name in FORMATS.names())
    assert "SWE-agent .traj" in message and "OpenHands SDK" in message and "tool_calls" in message


def test_explicit_format_skips_detection_but_still_checks_shape(write):
    path = write("steps.json", {"thought": "a", "action": "b", "observation": "c"})
    assert detect_format(path) == "jsonl"
    with pytest.raises(TrajectoryError, match="expected a mini-swe-agent"):
        load_trajectory(path, format="mini-swe-agent")


@pytest.mark.parametrize("content", ["", "   \n", "not json at all"])
def test_empty_or_garbage_files_raise(write, content):
    path = write("junk.json", content)
    with pytest.raises(TrajectoryError) as info:
        load_trajectory(path)
    assert str(path) in str(info.value) and "expected" in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(TrajectoryError, match="cannot read"):
        load_trajectory(tmp_path / "absent.traj.json")
