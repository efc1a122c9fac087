"""A small graph whose every text field is hostile, and a headless-Chromium runner (skips when absent)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from contextweaver.records import Decision, Node, Parent, Step, ValidationStatus, WovenContext

HOSTILE = (
    "x</script><script>document.title='PWNED'</script> <img src=x onerror=\"document.title='PWNED'\"> "
    '<script>alert(1)</script> "--> ]]> %% end ]; N0-->N1 \\" \\n {a} `b` #quot; &amp; <!-- \u2028 \x1b[31mred'
)


def hostile_graph() -> SimpleNamespace:
    """Root, three agent steps and a user step; texts, summaries and reasons carry HOSTILE."""
    root = Node(0, Step(observation="task: " + HOSTILE, kind="user"))
    steps = [
        Node(1, Step("look " + HOSTILE, "ls " + HOSTILE, HOSTILE), summary=HOSTILE),
        Node(
            2,
            Step("test", "pytest -q", "1 failed, 2 passed in 0.1s\n" + HOSTILE),
            validation_status=ValidationStatus.FAILED,
            superseded_by=4,
        ),
        Node(3, Step(observation=HOSTILE, kind="user")),
        Node(4, Step("retest", "pytest -q", "3 passed in 0.1s"), validation_status=ValidationStatus.PASSED),
    ]
    steps[0].parents = (Parent(0, 0.9, "reads the task " + HOSTILE),)
    steps[1].parents = (Parent(1, 0.6, HOSTILE), Parent(0, 0.2, "recent"))
    steps[2].parents = (Parent(2, 0.4, "answers"),)
    steps[3].parents = (Parent(2, 0.8, "re-runs the failing test"), Parent(1, 0.3, HOSTILE))
    for node in steps:
        node.full_tokens = 10 * node.index
    return SimpleNamespace(nodes=[root, *steps])


def hostile_context() -> WovenContext:
    decisions = [
        Decision(1, "compressed", "not an ancestor " + HOSTILE, 5),
        Decision(2, "full", "parent of step 4", 20),
        Decision(3, "full", "user message", 8),
        Decision(4, "full", "current step", 9),
    ]
    return WovenContext(
        messages=[], decisions=decisions, tokens=42, full_history_tokens=80, strategy="contextweaver"
    )


@pytest.fixture
def hostile() -> str:
    return HOSTILE


@pytest.fixture
def graph() -> SimpleNamespace:
    return hostile_graph()


@pytest.fixture
def context() -> WovenContext:
    return hostile_context()


CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
]


@pytest.fixture
def chromium(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run headless Chromium with a fresh profile: chromium(*args) -> completed process."""
    binary = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
    if binary is None:
        pytest.skip("no chromium on PATH (CI: apt-get install -y chromium)")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
        command = [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=90)

    return run
