"""`contextweaver serve` and the fake upstream as real processes, for tests and benchmarks/proxy_security.py.

with upstream_process(tmp) as (port, log), serve_process(tmp, f"http://127.0.0.1:{port}/v1") as proxy:
    httpx.get(proxy.url + "/contextweaver/health", headers=proxy.auth)
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

CLI = Path(sys.executable).with_name("contextweaver")
SERVE_ENV: dict[str, str] = {}
"""Extra environment of every `contextweaver serve` started here (e.g. PYTHONPATH of another checkout)."""
UPSTREAM = Path(__file__).with_name("upstream_process.py")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Proxy:
    url: str
    """http://127.0.0.1:PORT (no /v1)."""
    process: subprocess.Popen[str]
    stderr: Path
    store: Path
    auth: dict[str, str] = field(default_factory=dict)

    def log(self) -> str:
        return self.stderr.read_text(errors="replace")


@contextmanager
def upstream_process(tmp: Path) -> Iterator[tuple[int, Path]]:
    """The fake upstream in its own process: its port and the JSONL log of the bodies it received."""
    log = tmp / "upstream.jsonl"
    process = subprocess.Popen([sys.executable, str(UPSTREAM), str(log)], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    try:
        yield int(process.stdout.readline()), log
    finally:
        process.terminate()
        process.wait(20)


def start_serve(tmp: Path, upstream: str, *args: str, env: dict[str, str] | None = None,
                port: int | None = None) -> tuple[subprocess.Popen[str], int, Path, Path]:  # fmt: skip
    """Start `contextweaver serve` (not waiting for it): the process, its port, stderr file, store."""
    port = port or free_port()
    store, stderr = tmp / f"sessions-{port}.db", tmp / f"serve-{port}.log"
    command = [str(CLI), "serve", "--upstream", upstream, "--store", str(store), "--port", str(port), *args]
    with stderr.open("w") as sink:
        process = subprocess.Popen(command, stderr=sink, stdout=sink, text=True,
                                   env={**os.environ, "PYTHONHASHSEED": "0", **SERVE_ENV, **(env or {})})  # fmt: skip
    return process, port, stderr, store


@contextmanager
def serve_process(tmp: Path, upstream: str, *args: str, env: dict[str, str] | None = None,
                  token: str | None = None) -> Iterator[Proxy]:  # fmt: skip
    """A running proxy (`token`: its --auth-token-env value, sent as Authorization by `Proxy.auth`)."""
    if token is not None:
        env, args = {**(env or {}), "CW_PROXY_TOKEN": token}, ("--auth-token-env", "CW_PROXY_TOKEN", *args)
    process, port, stderr, store = start_serve(tmp, upstream, *args, env=env)
    proxy = Proxy(f"http://127.0.0.1:{port}", process, stderr, store,
                  {"authorization": f"Bearer {token}"} if token else {})  # fmt: skip
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(f"{proxy.url}/contextweaver/health", timeout=1)
            break  # any answer (even 401) means it is serving
        except httpx.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"the proxy did not start: {proxy.log()}")
        time.sleep(0.1)
    try:
        yield proxy
    finally:
        stop(process)


def stop(process: subprocess.Popen) -> None:
    """Ask a test's process to end; kill it after 20 s."""
    process.terminate()
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)
