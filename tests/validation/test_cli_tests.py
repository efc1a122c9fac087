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


def test_hostile_lines_give_a_result_not_a_traceback() -> None:
    huge = "7" * 5000
    for text in (
        f"===== {huge} passed in 0.1s =====",
        f"<returncode>{huge}</returncode>\n<output>\nok\n</output>",
        '{"Time":"t","Action":"fail","Package":"p","Test":"T\\q"}',
    ):
        for extra in ([], ["--json"]):
            result = CliRunner().invoke(main, ["tests", *extra, "-"], input=text)
            assert result.exit_code == 0 and result.exception is None, result.output
            assert "label:" in result.output or "status" in result.output or "no test-runner" in result.output


def test_a_long_report_is_listed_whole_and_ids_cannot_write_lines() -> None:
    rows = [f"t.py::test_{i} PASSED" for i in range(3000)]
    text = "\n".join(["t.py::test_x\x07y FAILED", *rows, "==== 1 failed, 3000 passed in 1.0s ===="])
    result = CliRunner().invoke(main, ["tests", "-"], input=text)
    assert result.exit_code == 0, result.output
    assert "\x07" not in result.output and '"t.py::test_x\\x07y"' in result.output
    assert all(f"t.py::test_{i} " in result.output for i in (0, 1500, 2999))
