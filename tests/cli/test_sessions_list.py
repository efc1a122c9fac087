"""`sessions list` in an 80-column terminal shows each session id whole: `sessions show ID` needs it."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from contextweaver.cli import main
from contextweaver.store import open_store

LONG_ID = "cw-2f9d1c7e4b8a4f0e9a6b3d2c1e0f9a8b-claude"


def test_the_session_id_is_never_cut(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "s.db"))
    for session_id in (LONG_ID, "short"):
        store.create_session(session_id, [{"role": "system", "content": "x"}], {})
    store.close()
    result = CliRunner().invoke(
        main, ["sessions", "list", "--store", str(tmp_path / "s.db")], env={"COLUMNS": "80"}
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert any(line.startswith(LONG_ID + " ") for line in lines), result.output
    assert max(len(line) for line in lines) <= 80


def test_billed_tokens_print_as_whole_tokens(tmp_path: Path) -> None:
    """They printed as `237,453.0`."""
    store = open_store(str(tmp_path / "s.db"))
    store.create_session("s1", [{"role": "system", "content": "x"}], {})
    row = {"at": 1.0, "wire": "chat", "status": 200, "streamed": 0, "step": 1, "added": 1, "latency_ms": 1.0,
           "sent_tokens": 10, "full_tokens": 20, "tool_tokens": 0, "cached_tokens": 0, "sim_sent": 0.0,
           "sim_full": 0.0, "usage": "reported", "input_tokens": 237_000, "cache_read_tokens": 4_530,
           "cache_write_tokens": 0, "output_tokens": 12, "billed": 237_453.0, "passthrough": 300_000.4}  # fmt: skip
    store.record_request("s1", row)
    store.close()
    args = ["sessions", "list", "--store", str(tmp_path / "s.db")]
    listed = CliRunner().invoke(main, args, env={"COLUMNS": "160"})
    assert listed.exit_code == 0, listed.output
    assert "237,453 " in listed.output and "300,000 " in listed.output and "62,547 (20.85%)" in listed.output
    assert "237,453.0" not in listed.output and ".4" not in listed.output.replace("(20.85%)", "")
    shown = CliRunner().invoke(main, ["sessions", "show", "--store", str(tmp_path / "s.db"), "s1"])
    assert shown.exit_code == 0, shown.output
    assert "billed 237,453, passed through whole (estimate) 300,000, saved 62,547" in " ".join(
        shown.output.split()
    )
