"""`contextweaver demo` seen as a newcomer sees it, in a real headless Chromium: the printed sign-in link, the
sign-in form, the session's row filling, then a cut with its note and a recall, within 60 s of the start.

CW_DEMO_PYTHON=PATH runs the demo with that Python (a fresh venv holding only the wheel and its `[serve]`
extra); CW_SCREENSHOTS=DIR keeps the screenshots (sign-in, sessions, session) in DIR.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.serve.cdp import chromium_page
from tests.serve.processes import stop
from tests.serve.test_dashboard_browser import shots

pytestmark = pytest.mark.browser
LINK = re.compile(r"dashboard: (http://127\.0\.0\.1:\d+)/contextweaver/dashboard\?token=(\S+)")


def started_demo() -> tuple[subprocess.Popen[str], str, str]:
    """The demo as a process (its own Python, or this one with this checkout), its base URL and token."""
    python = os.environ.get("CW_DEMO_PYTHON") or sys.executable
    env = dict(os.environ)
    if "CW_DEMO_PYTHON" not in os.environ:
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2] / "src")
    process = subprocess.Popen([python, "-m", "contextweaver", "demo", "--port", "0", "--exit-after", "90"],
                               stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
    assert process.stderr is not None
    for line in process.stderr:
        found = LINK.search(line)
        if found:  # the rest is read on, so a full pipe never stalls the demo
            threading.Thread(target=process.stderr.read, daemon=True).start()
            return process, found.group(1), found.group(2)
    raise AssertionError(f"the demo printed no dashboard link (exit {process.wait()})")


@pytest.mark.slow
def test_the_demo_shows_a_cut_and_a_recall_on_the_dashboard_within_a_minute(tmp_path: Path) -> None:
    folder = shots(tmp_path)
    began = time.monotonic()
    process, base, token = started_demo()
    try:
        with chromium_page(tmp_path / "profile") as page:
            page.go(f"{base}/contextweaver/dashboard")  # no cookie yet: the sign-in form
            page.wait(
                "document.body.dataset.page === 'sign-in' && document.querySelector('input[name=token]') !== null"
            )
            page.screenshot(folder / "demo-sign-in.png")
            page.js(f"document.querySelector('input[name=token]').value = {token!r}")
            page.js("document.querySelector('form').submit()")
            page.wait(
                "location.pathname === '/contextweaver/dashboard' && document.body.dataset.ready === '1'"
            )
            assert "Operator's view" in page.js("document.querySelector('.view').textContent")
            page.wait("document.querySelector('tr[data-session=\"demo-1\"]') !== null", timeout=40)
            page.wait("Number(document.querySelector('[data-figure=cuts]').textContent) >= 1", timeout=40)
            owner = page.js("document.querySelector('tr[data-session=\"demo-1\"] td.owner').textContent")
            assert re.fullmatch(r"[0-9a-f]{8}", owner)  # the agent's key, as a short hash
            page.screenshot(folder / "demo-sessions.png")

            page.go(f"{base}/contextweaver/dashboard/session/demo-1")
            page.wait("document.querySelectorAll('#cuts details.cut').length >= 1", timeout=40)
            page.wait("document.querySelectorAll('#recalls li').length >= 1", timeout=40)
            seen = time.monotonic() - began
            note = page.js("document.querySelector('#cuts details.cut pre').textContent")
            assert note.startswith("[ContextWeaver") and "/contextweaver/recall/" in note
            recall = page.js("document.querySelector('#recalls li').textContent")
            assert re.match(
                r"N\d+ read back step \d+: curl -s http://127\.0\.0\.1:\d+/contextweaver/recall/", recall
            )
            sizes = page.js(
                "[...document.querySelectorAll('#cuts table.left td:nth-child(4)')].map(t => t.textContent)"
            )
            assert sizes and "0 tok" not in sizes  # a dropped step shows its size
            page.wait("document.querySelector('#graph').contentDocument.body.dataset.ready === '1'")
            page.screenshot(folder / "demo-session.png")
            assert seen < 60, f"the cut and the recall showed after {seen:.1f} s"
            print(f"cut and recall on the dashboard {seen:.1f} s after the demo started")
    finally:
        stop(process)
