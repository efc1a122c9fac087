"""Every example script the package ships runs as a user runs it (`python -m contextweaver.examples.NAME`
in a subprocess, offline, no key) and prints what it promises: a cut, the tokens before and after, the
working-state note. A script whose framework is not installed says so in one line, exit 2; the docs include
these files, so one that rots fails here."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from contextweaver import extras
from contextweaver.examples import HELPERS, SCRIPTS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "src" / "contextweaver" / "examples"
NOTE = "[ContextWeaver working state at step"


def run(script: str, python: str = sys.executable, timeout: int = 240) -> str:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT / "src")}
    module = f"contextweaver.examples.{script.removesuffix('.py')}"
    done = subprocess.run(
        [python, "-m", module], capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT
    )
    assert done.returncode == 0, f"{script} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def needs(module: str, install: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed: {install} (or FULL=1 bash scripts/setup.sh)")


def test_every_example_has_a_test() -> None:
    """A new script needs its line in `SCRIPTS` (what `contextweaver examples list` shows) and its test here."""
    source = Path(__file__).read_text()
    scripts = {p.stem for p in EXAMPLES.glob("*.py")} - {"__init__"}
    assert scripts == set(SCRIPTS) | set(HELPERS)
    untested = [name for name in SCRIPTS if f'"{name}.py"' not in source]
    assert not untested, untested


BLOCKED = """import runpy, sys
for name in sys.argv[2:]:
    sys.modules[name] = None  # as if not installed: find_spec answers None, an import fails
runpy.run_module(sys.argv[1], run_name="__main__")
"""


@pytest.mark.parametrize("name", [n for n, s in SCRIPTS.items() if s.extra or s.modules])
def test_a_missing_extra_is_one_line_naming_it_exit_2(name: str) -> None:
    """It ended in a bare ModuleNotFoundError (the frameworks), or in StopIteration with no pytest."""
    script = SCRIPTS[name]
    blocked = [*(extras.EXTRAS[script.extra].modules if script.extra else ()), *script.modules]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    args = [sys.executable, "-c", BLOCKED, f"contextweaver.examples.{name}", *blocked]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60, env=env, cwd=ROOT)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"python -m contextweaver.examples.{name} needs "), line
    if sys.version_info >= script.python:
        assert (f"the '{script.extra}' extra" if script.extra else "pytest") in line and "pip install" in line
    for module in script.modules:  # the extra present, pytest missing
        only = [sys.executable, "-c", BLOCKED, f"contextweaver.examples.{name}", module]
        if script.extra and extras.missing(script.extra) or sys.version_info < script.python:
            continue
        done = subprocess.run(only, capture_output=True, text=True, timeout=60, env=env, cwd=ROOT)
        assert done.returncode == 2 and f"needs {module}" in done.stderr, done.stderr


def test_library() -> None:
    out = run("library.py")
    assert "step 12: cut" in out and "kept in full" in out
    assert NOTE in out and "files changed so far: CHANGELOG.md" in out


def test_cut_picture(tmp_path: Path) -> None:
    out = run("cut_picture.py")
    assert "A cut at step 31 of bugfix.jsonl" in out and "left out" in out and NOTE in out


def test_minisweagent() -> None:
    needs("minisweagent", "pip install 'contextweaver-agents[minisweagent]'")
    out = run("minisweagent_agent.py")
    assert "outputs as placeholders, with the working-state note" in out
    assert NOTE in out and "exit: Submitted" in out and "run.contexts.jsonl" in out


def test_sweagent() -> None:
    out = run("sweagent_processor.py")
    assert "33 steps: history" in out and NOTE in out


def test_langchain() -> None:
    needs("langchain", "pip install 'contextweaver-agents[langgraph]'")
    out = run("langchain_agent.py")
    assert "tool outputs as placeholders" in out and NOTE in out
    assert "its answer: Fixed add in calc.py." in out


def openhands_python() -> str:
    """The OpenHands SDK needs Python 3.12+: scripts/setup.sh (FULL=1) puts it in .venv-openhands."""
    given = os.environ.get("CONTEXTWEAVER_OPENHANDS_PYTHON")
    if given:
        return given
    if importlib.util.find_spec("openhands") is not None:
        return sys.executable
    venv = ROOT / ".venv-openhands" / "bin" / "python"
    if venv.exists():
        return str(venv)
    pytest.skip("no OpenHands SDK (Python 3.12+): FULL=1 bash scripts/setup.sh makes .venv-openhands")


def test_openhands() -> None:
    out = run("openhands_condenser.py", python=openhands_python(), timeout=300)
    cuts = [int(n) for n in re.findall(r"(\d+) placeholders", out)]
    assert cuts[0] == 0 and max(cuts) > 0, out  # nothing cut at first, outputs cut once the budget is reached
    assert NOTE in out and "calc.py fixed: True" in out
    assert "contextweaver_recall of step 3 returned the failing run whole: True" in out


@pytest.mark.parametrize("script", ["proxy_openai.py", "proxy_claude_code.py", "proxy_codex.py"])
def test_proxy(script: str) -> None:
    needs("uvicorn", "pip install 'contextweaver-agents[serve]'")
    out = run(script)
    assert "contextweaver proxy on http://127.0.0.1:" in out
    assert "after step 33: client sent" in out and NOTE in out


def code_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.M | re.S)


def test_the_readme_library_snippet_is_the_example_and_runs_as_written(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    snippet = code_blocks(readme, "python")[0]
    example = (EXAMPLES / "library.py").read_text()
    section = example.split("# --8<-- [start:loop]\n")[1].split("# --8<-- [end:loop]")[0]
    assert snippet == section, "README's library snippet differs from the library example's loop section"
    (tmp_path / "snippet.py").write_text(snippet)
    done = subprocess.run(
        [sys.executable, "snippet.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "step 12: cut" in done.stdout


def test_the_readme_is_a_front_door() -> None:
    """At most 250 lines, none over 120 characters outside code blocks, and every relative link resolves."""
    text = (ROOT / "README.md").read_text()
    lines = text.splitlines()
    assert len(lines) <= 250
    prose = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S).splitlines()
    assert [line for line in prose if len(line) > 120] == []
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (ROOT / target).exists(), target
