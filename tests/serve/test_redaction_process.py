"""Credentials in the upstream URL never show: not in health, the banner, INFO logs or error bodies."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from contextweaver.serve.gate.redact import redact_text, redact_url
from tests.serve.harness import task
from tests.serve.processes import CLI, free_port, serve_process, upstream_process
from tests.serve.test_access_process import chat

TOKEN = "proxy-token-0123456789abcdef"
PASSWORD, QUERY_KEY = "pw-secret-5b2c", "qs-secret-9e4a"


def test_urls_are_redacted() -> None:
    assert redact_url(f"https://user:{PASSWORD}@h:1/v1?key={QUERY_KEY}&api-version=2") == (
        "https://user:***@h:1/v1?key=***&api-version=***"
    )
    assert redact_url("https://token-only@h/v1") == "https://***@h/v1"
    assert redact_url("http://127.0.0.1:8080/v1") == "http://127.0.0.1:8080/v1"
    text = f'HTTP Request: POST http://u:{PASSWORD}@h/v1/chat/completions?key={QUERY_KEY} "HTTP/1.1 200 OK"'
    assert PASSWORD not in redact_text(text) and QUERY_KEY not in redact_text(text)
    # an upstream's error echoing the path it was asked for, now logged with the reason
    assert redact_text("no route /v1/models?key=caller-key-2f&x=1") == "no route /v1/models?key=***&x=***"


@pytest.mark.skipif(not CLI.exists(), reason="the contextweaver script is not installed")
@pytest.mark.slow
def test_no_credential_of_the_upstream_url_leaks(tmp_path: Path) -> None:
    headers = {"x-contextweaver-token": TOKEN, "authorization": "Bearer sk-caller"}
    dead = f"http://user:{PASSWORD}@127.0.0.1:{free_port()}/v1?key={QUERY_KEY}"
    with upstream_process(tmp_path) as (port, _):
        live = f"http://user:{PASSWORD}@127.0.0.1:{port}/v1?key={QUERY_KEY}"
        shown: list[
            str
        ] = []  # what the proxy itself writes (the live upstream's own bodies are its business)
        for upstream in (live, dead):
            with serve_process(
                tmp_path, upstream, "--log-level", "info", "--weaving-processes", "0", token=TOKEN
            ) as proxy:
                shown.append(httpx.get(proxy.url + "/contextweaver/health", headers=headers).text)
                answers = [chat(proxy, task("leak"), headers).text,  # the live one is logged by httpx at INFO
                           httpx.get(proxy.url + "/v1/models?key=caller-key-2f", headers=headers).text]  # fmt: skip
                shown += answers if upstream == dead else []
            shown.append(proxy.log())
    assert "127.0.0.1" in shown[0] and "cannot reach the upstream" in shown[3]
    assert "HTTP Request" in shown[1], "httpx's request log is on at INFO"
    for text in shown:
        assert PASSWORD not in text and QUERY_KEY not in text and "caller-key-2f" not in text
