"""An integration imported without its framework says which framework and the line that installs it.

The framework is hidden from a fresh interpreter (so the test holds whether it is installed or not)."""

from __future__ import annotations

import subprocess
import sys

import pytest

HIDE = """
import sys

class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {hidden!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Hide())
"""


def run(hidden: set[str], code: str) -> subprocess.CompletedProcess[str]:
    script = HIDE.format(hidden=hidden) + code
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    ("module", "hidden", "install"),
    [
        ("minisweagent", {"minisweagent"}, "pip install 'mini-swe-agent>=2.4'"),
        ("langgraph", {"langchain", "langchain_core"}, "pip install 'langchain>=1.0' 'langgraph>=1.0'"),
        ("openhands", {"openhands"}, "pip install 'openhands-sdk>=1.50'"),
    ],
)
def test_import_names_the_framework_and_the_install_line(module: str, hidden: set[str], install: str) -> None:
    code = f"""
try:
    import contextweaver.integrations.{module}
except ModuleNotFoundError as exc:
    print(exc)
    raise SystemExit(3)
"""
    result = run(hidden, code)
    assert result.returncode == 3, result.stderr
    assert f"contextweaver.integrations.{module} needs" in result.stdout
    assert install in result.stdout


def test_sweagent_command_line_without_sweagent_is_a_message() -> None:
    code = "from contextweaver.integrations.sweagent import main\nmain(['run', '--config', 'x.yaml'])\n"
    result = run({"sweagent"}, code)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "needs SWE-agent" in result.stderr and "pip install -e ." in result.stderr


def test_sweagent_processor_itself_needs_no_sweagent() -> None:
    code = (
        "from contextweaver.integrations.sweagent import ContextWeaverHistoryProcessor\n"
        "print(ContextWeaverHistoryProcessor(window=5).type)\n"
    )
    result = run({"sweagent"}, code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-1] == "contextweaver"
