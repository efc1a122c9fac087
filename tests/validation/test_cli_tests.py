"""`contextweaver tests`: table and JSON output from a file or stdin."""

import json
import os
import pty
import subprocess
import sys
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


PYTEST_RUN = (
    "============================= test session starts ==============================\n"
    "collected 2 items\n\n"
    "test_calc.py::test_add FAILED                                            [ 50%]\n"
    "test_calc.py::test_mul PASSED                                            [100%]\n\n"
    "=========================== short test summary info ============================\n"
    "FAILED test_calc.py::test_add - assert -1 == 5\n"
    "========================= 1 failed, 1 passed in 0.02s ==========================\n"
)


def mini_yaml_observation(output: str, returncode: int) -> str:
    """The tool message mini-swe-agent 2's `mini.yaml` sends (its template's shape and escaping)."""
    literal = json.dumps(output).replace("<", "\\u003c").replace(">", "\\u003e")
    return f'{{\n  "returncode": {returncode},\n  "output": {literal}\n}}\n'


def test_mini_yaml_json_output_is_read_as_the_agent_saw_it(tmp_path: Path) -> None:
    path = tmp_path / "observation.json"
    path.write_text(mini_yaml_observation(PYTEST_RUN, 1))
    result = CliRunner().invoke(main, ["tests", "--json", str(path), "--command", "pytest -v"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["runner"] == "pytest" and payload["status"] == "failed"
    assert payload["tests"] == {"test_calc.py::test_add": "failed", "test_calc.py::test_mul": "passed"}
    assert payload["totals"] == {"failed": 1, "passed": 1}
    plain = CliRunner().invoke(main, ["tests", "--json", "-"], input=PYTEST_RUN)
    assert json.loads(plain.output)["tests"] == payload["tests"]  # the same labels as the text itself


def test_json_that_is_not_an_observation_is_read_as_it_is() -> None:
    text = '{"returncode": 0, "note": "no output field"}'
    result = CliRunner().invoke(main, ["tests", "-"], input=text)
    assert result.exit_code == 0 and "no test-runner output detected" in result.output


def test_at_a_terminal_it_says_it_reads_standard_input() -> None:
    """No FILE and a terminal on stdin: a line says what it waits for, instead of a silent wait."""
    primary, secondary = pty.openpty()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen(
        [sys.executable, "-m", "contextweaver", "tests"], stdin=secondary, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    os.close(secondary)
    os.write(primary, b"3 passed in 0.1s\n\x04")  # the line, then Ctrl-D as a person would type it
    out, err = process.communicate(timeout=60)
    os.close(primary)
    assert process.returncode == 0, err
    assert "reading test-runner output from standard input" in err and "Ctrl-D" in err
    piped = CliRunner().invoke(main, ["tests"], input="3 passed in 0.1s\n")
    assert "reading test-runner output" not in piped.output  # a pipe is not asked
