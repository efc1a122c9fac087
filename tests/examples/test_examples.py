"""Every script in examples/ runs as a user runs it (a subprocess, offline, no key) and prints what it
promises: a cut, the tokens before and after, the working-state note. A script whose framework is not
installed skips and says how to install it; the docs include these files, so one that rots fails here."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
NOTE = "[ContextWeaver working state at step"


def run(script: str, python: str = sys.executable, timeout: int = 240) -> str:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    done = subprocess.run(
        [python, str(EXAMPLES / script)], capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT
    )
    assert done.returncode == 0, f"{script} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def needs(module: str, install: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed: {install} (or FULL=1 bash scripts/setup.sh)")


def test_every_example_has_a_test() -> None:
    """A new script in examples/ needs its test here (proxy_upstream.py and toy_repo.py are helpers)."""
    source = Path(__file__).read_text()
    helpers = {"proxy_upstream.py", "toy_repo.py"}
    untested = [
        p.name for p in EXAMPLES.glob("*.py") if p.name not in helpers and f'"{p.name}"' not in source
    ]
    assert not untested, untested


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
    assert snippet == section, "README's library snippet differs from examples/library.py's loop section"
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
