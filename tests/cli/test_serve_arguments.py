"""`serve` refuses, before it starts, the arguments it would start with and then fail on: one line each,
exit 2, never a traceback (an upstream without a scheme made every request a 502; --port 99999 printed three
tracebacks)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from contextweaver.cli import main

pytest.importorskip("starlette", reason="the serve extra")
UPSTREAM = "http://127.0.0.1:9/v1"


def serve(*args: str, store: Path) -> Result:
    result = CliRunner().invoke(main, ["serve", "--store", str(store), *args])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    (line,) = result.stderr.strip().splitlines()  # one line: no usage, no traceback
    assert line.startswith("Error: ")
    return result


@pytest.mark.parametrize(
    ("upstream", "example"),
    [("api.openai.com", "https://api.openai.com/v1"), ("ftp://example.com/v1", "https://example.com/v1")],
)
def test_an_upstream_that_is_no_http_url_names_one_that_is(
    upstream: str, example: str, tmp_path: Path
) -> None:
    result = serve("--upstream", upstream, store=tmp_path / "s.db")
    assert (
        f"--upstream {upstream} is not an http(s) URL" in result.stderr and f"e.g. {example}" in result.stderr
    )


@pytest.mark.parametrize("port", ["99999", "0", "-1"])
def test_a_port_out_of_range_is_one_line(port: str, tmp_path: Path) -> None:
    result = serve("--upstream", UPSTREAM, "--port", port, store=tmp_path / "s.db")
    assert f"--port {port} is not a TCP port: give one from 1 to 65535" in result.stderr


def test_a_budget_of_nothing_says_what_a_budget_holds(tmp_path: Path) -> None:
    result = serve("--upstream", UPSTREAM, "--budget", "0", store=tmp_path / "s.db")
    assert "x>=1" not in result.stderr
    assert "--budget 0 holds no context" in result.stderr and "naming the least budget" in result.stderr


def test_a_port_in_use_is_said_before_starting(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        result = serve("--upstream", UPSTREAM, "--port", port, store=tmp_path / "s.db")
    assert f"port {port} on 127.0.0.1 is in use" in result.stderr
    assert not (tmp_path / "s.db").exists()  # nothing was started


def test_a_budget_is_read_as_people_write_it(tmp_path: Path) -> None:
    """8k passes the argument checks (the port in use stops it before it starts)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        result = serve("--upstream", UPSTREAM, "--budget", "8k", "--port", port, store=tmp_path / "s.db")
    assert "is in use" in result.stderr
