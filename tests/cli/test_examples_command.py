"""`contextweaver examples`: the scripts the package ships, listed with what each needs, and copied into
a folder where each runs as a user's own script (outside the clone)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from contextweaver.cli import main
from contextweaver.examples import HELPERS, SCRIPTS

SRC = Path(__file__).resolve().parents[2] / "src"


def test_list_names_every_example_with_what_it_needs() -> None:
    result = CliRunner().invoke(main, ["examples", "list"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for name, script in SCRIPTS.items():
        (line,) = [line for line in lines if line.startswith(f"{name} ")]
        assert script.shows in line and (f"[{script.extra}]" if script.extra else "nothing more") in line
    assert "python -m contextweaver.examples.NAME" in result.output


def test_copy_writes_scripts_that_run_where_they_are_written(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    result = CliRunner().invoke(main, ["examples", "copy", str(folder)])
    assert result.exit_code == 0, result.output
    assert {p.stem for p in folder.glob("*.py")} == set(SCRIPTS) | set(HELPERS)
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, str(folder / "library.py")], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "step 12: cut" in done.stdout

    again = CliRunner().invoke(main, ["examples", "copy", str(folder)])
    assert again.exit_code == 2 and "already holds library.py" in again.output and "--force" in again.output
    (folder / "library.py").write_text("changed")
    forced = CliRunner().invoke(main, ["examples", "copy", str(folder), "--force"])
    assert forced.exit_code == 0 and (folder / "library.py").read_text() != "changed"
