"""`contextweaver tests`: table and JSON output from a file or stdin."""

import json
from pathlib import Path

from click.testing import CliRunner

from contextweaver.cli import main

RUN = "=== RUN   TestA\n--- FAIL: TestA (0.00s)\nFAIL\tacme/a\t0.01s\n"


def test_json_from_stdin() -> None:
    result = CliRunner().invoke(main, ["tests", "--json", "-"], input=RUN)
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["runner"] == "go" and payload["status"] == "failed"
    assert payload["tests"] == {"acme/a.TestA": "failed"}


def test_table_from_file(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("t.py::test_x[a] PASSED\n==== 1 passed in 0.1s ====\n")
    result = CliRunner().invoke(main, ["tests", str(path), "--command", "pytest -v"])
    assert result.exit_code == 0, result.output
    assert "t.py::test_x[a]" in result.output and "passed" in result.output
