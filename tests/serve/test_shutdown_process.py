"""A shutdown of `contextweaver serve` has a deadline: a weave still running past it is stopped, not awaited."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from pathlib import Path

import httpx
import pytest

from contextweaver.store.sqlite import SQLiteStore
from tests.serve.processes import CLI, serve_process, upstream_process
from tests.serve.test_bystander_process import headers, huge_step

pytestmark = pytest.mark.skipif(not CLI.exists(), reason="the contextweaver script is not installed")
MB = 1024 * 1024


@pytest.mark.slow
def test_a_weave_running_past_the_shutdown_deadline_is_stopped(tmp_path: Path) -> None:
    with (
        upstream_process(tmp_path) as (port, _),
        serve_process(tmp_path, f"http://127.0.0.1:{port}/v1", "--budget", "20000", "--weaving-processes", "1",
                      "--max-body-mb", "128", "--shutdown-timeout", "1", token="proxy-token-0123456789abcdef") as proxy,
    ):  # fmt: skip
        # 96 MB: extracting the step takes the weaving process ~5 s before it is stored, well past the
        # deadline below; at 48 MB an idle machine stored it in time in 2 of 5 runs
        body = json.dumps({"model": "m", "messages": huge_step("huge", 96 * MB)})

        def send() -> None:
            with contextlib.suppress(httpx.HTTPError):
                httpx.post(
                    f"{proxy.url}/v1/chat/completions", content=body, headers=headers("huge"), timeout=120
                )

        thread = threading.Thread(target=send)
        thread.start()
        health = f"{proxy.url}/contextweaver/health"
        while httpx.get(health, headers=headers("-"), timeout=10).json()["in_flight"]["requests"] < 1:
            time.sleep(0.01)
        time.sleep(1.5)  # read, parsed and sent to the weaving process, which takes seconds over it
        proxy.process.terminate()
        proxy.process.wait(60)  # uvicorn re-raises the SIGTERM it handled: the exit code says nothing
        thread.join()
    log = proxy.log()
    assert "terminating weaving process" in log, log[-3000:]
    assert "Application shutdown complete" in log
    assert SQLiteStore(proxy.store).step_count("huge") == 0  # the cut weave stored no step
