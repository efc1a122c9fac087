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
