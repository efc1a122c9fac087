"""A headless Chromium driven over the DevTools protocol: navigate, evaluate, wait, take screenshots.

--dump-dom reads a page once; a live page (one that redraws as requests arrive) needs the browser kept
open while the test acts, so the test talks to it over the protocol's websocket (`websockets`).
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.serve.processes import stop

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--hide-scrollbars", "--remote-debugging-port=0",
         "--window-size=1400,1000"]  # fmt: skip


class Page:
    def __init__(self, socket: Any) -> None:
        self.socket = socket
        self.sent = 0

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.sent += 1
        self.socket.send(json.dumps({"id": self.sent, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv(timeout=60))
            if message.get("id") == self.sent:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})  # type: ignore[no-any-return]

    def go(self, url: str) -> None:
        self.call("Page.navigate", url=url)

    def js(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait(self, expression: str, timeout: float = 30.0) -> Any:
        """The value of `expression` once it is truthy (the page polls and redraws on its own)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self.js(expression)
            except RuntimeError:
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {expression}")
            time.sleep(0.1)

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        path.write_bytes(base64.b64decode(data))
        return path


@contextmanager
def chromium_page(profile: Path) -> Iterator[Page]:
    """A headless Chromium with a fresh profile and one page; skips when Chromium is absent."""
    pytest.importorskip("websockets")
    from websockets.sync.client import connect

    binary = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
    if binary is None:
        pytest.skip("no chromium on PATH (CI: apt-get install -y chromium)")
    process = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().strip()):
            assert time.monotonic() < deadline and process.poll() is None, "chromium did not start"
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as answer:
            target = next(t for t in json.loads(answer.read()) if t["type"] == "page")
        with connect(target["webSocketDebuggerUrl"], max_size=64 * 1024 * 1024) as socket:
            page = Page(socket)
            page.call("Page.enable")
            page.call("Runtime.enable")
            yield page
    finally:
        stop(process)
