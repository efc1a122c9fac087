"""Credentials in the upstream URL are the operator's, like --api-key-env: lent only to token holders that
send no key of their own, never replacing or joining one."""

from __future__ import annotations

import base64
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from contextweaver.store.sqlite import SQLiteStore
from contextweaver.testing.fake_server import FakeLLMServer, Request
from tests.serve.harness import running_proxy, task, tool_call_reply
from tests.serve.processes import CLI, start_serve

TOKEN = "proxy-token-0123456789abcdef"
BASIC = "Basic " + base64.b64encode(b"op:pw-secret").decode()


def upstream_saw(tmp_path: Path, headers: dict[str, str], *, token: str | None = TOKEN,
                 **settings: str) -> tuple[int, Request | None]:  # fmt: skip
    """The status the caller got and the request the upstream received (None: none reached it)."""
    with FakeLLMServer(tool_call_reply) as upstream:
        url = upstream.base_url.replace("http://", "http://op:pw-secret@") + "?key=qk-secret&api-version=2"
        with running_proxy(SQLiteStore(tmp_path / "s.db"), url, auth_token=token, **settings) as (proxy, _):
            answer = httpx.post(f"{proxy}/chat/completions", json={"model": "m", "messages": task("url")},
                                headers=headers, timeout=30)  # fmt: skip
        return answer.status_code, upstream.requests[-1] if upstream.requests else None


def query(request: Request) -> dict[str, list[str]]:
    return parse_qs(urlsplit(request.path).query)


def test_a_caller_with_only_the_proxy_token_borrows_the_url_credentials(tmp_path: Path) -> None:
    status, seen = upstream_saw(tmp_path, {"authorization": f"Bearer {TOKEN}"})
    assert status == 200 and seen is not None
    assert seen.headers["authorization"] == BASIC
    assert query(seen) == {"key": ["qk-secret"], "api-version": ["2"]}


@pytest.mark.parametrize(
    "own", [{"authorization": "Bearer sk-own"}, {"x-api-key": "sk-own"}, {"api-key": "sk-own"}]
)
def test_a_token_holder_with_its_own_key_keeps_it_alone(tmp_path: Path, own: dict[str, str]) -> None:
    status, seen = upstream_saw(tmp_path, {"x-contextweaver-token": TOKEN, **own})
    assert status == 200 and seen is not None
    name, value = next(iter(own.items()))
    assert seen.headers[name] == value
    assert name == "authorization" or "authorization" not in seen.headers
    assert query(seen) == {"api-version": ["2"]}  # the URL's key stays home; its api-version does not


def test_a_caller_without_the_token_gets_nothing_of_them(tmp_path: Path) -> None:
    status, seen = upstream_saw(tmp_path, {"authorization": "Bearer sk-stranger"})
    assert status == 401 and seen is None
    status, seen = upstream_saw(tmp_path, {}, token=None)  # an embedded proxy without a token lends nothing
    assert status == 200 and seen is not None
    assert "authorization" not in seen.headers and query(seen) == {"api-version": ["2"]}


def test_the_operator_key_is_not_added_beside_a_callers_x_api_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CW_OP_KEY", "sk-operator")
    status, seen = upstream_saw(tmp_path, {"x-contextweaver-token": TOKEN, "x-api-key": "sk-own"},
                                api_key_env="CW_OP_KEY")  # fmt: skip
    assert status == 200 and seen is not None
    assert seen.headers["x-api-key"] == "sk-own" and "authorization" not in seen.headers


@pytest.mark.skipif(not CLI.exists(), reason="the contextweaver script is not installed")
def test_serve_refuses_url_credentials_without_a_token(tmp_path: Path) -> None:
    for url in ("http://op:pw-secret@127.0.0.1:9/v1", "http://127.0.0.1:9/v1?key=pw-secret"):
        process, _, stderr, _ = start_serve(tmp_path, url)
        assert process.wait(60) != 0
        said = stderr.read_text()
        assert "--auth-token-env" in said and "pw-secret" not in said, said
