"""What the proxy examples share: the package's fake upstream (`contextweaver.testing.fake_server`, a real
local HTTP server speaking OpenAI chat, Anthropic Messages and OpenAI Responses, no key) with
`contextweaver serve` in front of it, as you would run it in front of a real provider.

    python -m contextweaver.examples.proxy_upstream     # starts both, prints the proxy's banner, stops
"""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from contextweaver.examples import require

require("proxy_upstream")  # before the imports it needs: a missing one is one line, exit 2

import httpx

from contextweaver.examples import example_path
from contextweaver.formats import load_trajectory
from contextweaver.testing.fake_server import FakeLLMServer
from contextweaver.tokens import count_text

RUN = load_trajectory(example_path("bugfix"))  # the steps the example clients "take"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serve_command() -> list[str]:
    """`contextweaver serve`: the command installed beside this Python, else the same entry point."""
    installed = Path(sys.executable).with_name("contextweaver")
    if installed.exists():
        return [str(installed), "serve"]
    found = shutil.which("contextweaver")
    return (
        [found, "serve"]
        if found
        else [sys.executable, "-c", "from contextweaver.cli import main; main()", "serve"]
    )


@contextmanager
def proxy_in_front_of_fake_upstream(budget: int):
    """Yields (proxy base URL without /v1, the fake upstream, whose `requests` hold what reached it)."""
    with FakeLLMServer() as upstream, tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        # fmt: off
        command = [*serve_command(), "--upstream", upstream.base_url, "--budget", str(budget),
                   "--store", f"{tmp}/sessions.db", "--port", str(port), "--weaving-processes", "0"]
        # fmt: on
        with open(Path(tmp) / "proxy.log", "w+") as log:
            proxy = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy())
            try:
                yield wait_for(proxy, log, f"http://127.0.0.1:{port}"), upstream
            finally:
                proxy.terminate()
                proxy.wait(30)


def wait_for(proxy: subprocess.Popen, log, base: str) -> str:
    """The proxy's URL once its health answers (up to 30 s); its banner says where to point each client."""
    for _ in range(300):
        if proxy.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"the proxy exited:\n{log.read()}")
        try:
            if httpx.get(f"{base}/contextweaver/health", timeout=1).status_code == 200:
                log.seek(0)
                print("\n".join(log.read().strip().splitlines()[:3]))
                return base
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError("the proxy did not start in 30 s")


def text_of(value) -> str:
    """Every string inside a request body, one per line (what the tokens are counted on)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(text_of(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(text_of(v) for v in value)
    return ""


def report(step: int, sent_body, received_body) -> None:
    """One line per request: the tokens the client sent and the tokens that reached the upstream."""
    sent_text, received_text = text_of(sent_body), text_of(received_body)
    sent, received = count_text(sent_text), count_text(received_text)
    cut = received_text.count("Old environment output")
    shrank, report.last = received < getattr(report, "last", 0), received
    if shrank or step == len(RUN.steps):  # a cut, and the last request
        print(
            f"after step {step:2d}: client sent {sent:,} tokens -> upstream got {received:,} ({cut} placeholders)"
        )


def show_note(received_body) -> None:
    received_text = text_of(received_body)
    start = received_text.find("[ContextWeaver working state")
    if start >= 0:
        print(
            "\nThe working-state note the upstream got:\n"
            + received_text[start:].split("\n- parts of")[0][:900]
        )


if __name__ == "__main__":
    with proxy_in_front_of_fake_upstream(budget=3_000) as (base, upstream):
        print(f"proxy at {base}/v1, fake upstream at {upstream.base_url}")
