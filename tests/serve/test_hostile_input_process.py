"""Hostile request bodies against a real `contextweaver serve`: clear 4xx in OpenAI's shape, sessions stay usable."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from contextweaver.store.sqlite import SQLiteStore
from tests.serve.harness import task
from tests.serve.processes import CLI, Proxy, serve_process, upstream_process
from tests.serve.test_access_process import chat, run, step

TOKEN = "proxy-token-0123456789abcdef"
pytestmark = pytest.mark.skipif(not CLI.exists(), reason="the contextweaver script is not installed")
HEADERS = {
    "x-contextweaver-token": TOKEN,
    "authorization": "Bearer sk-caller",
    "content-type": "application/json",
}


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    tmp = tmp_path_factory.mktemp("hostile")
    with (
        upstream_process(tmp) as (port, _),
        serve_process(tmp, f"http://127.0.0.1:{port}/v1", "--weaving-processes", "1", token=TOKEN) as proxy,
    ):
        yield proxy


def post(proxy: Proxy, body: bytes, session: str = "raw") -> httpx.Response:
    headers = {**HEADERS, "x-contextweaver-session": session}
    return httpx.post(f"{proxy.url}/v1/chat/completions", content=body, headers=headers, timeout=60)


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (
            b'{"model": "m", "temperature": NaN, "messages": [{"role": "user", "content": "t"}]}',
            "invalid_number",
        ),
        (b'{"model": "m", "top_p": 1e999, "messages": [{"role": "user", "content": "t"}]}', "invalid_number"),
        (
            b'{"model": "m", "seed": ' + b"9" * 5000 + b', "messages": [{"role": "user", "content": "t"}]}',
            "invalid_number",
        ),  # fmt: skip
        (
            b'{"model": "m", "messages": [{"role": "user", "content": "t"}], "x": '
            + b"[" * 3000
            + b"]" * 3000
            + b"}",
            "too_deep",
        ),  # fmt: skip
        (  # the proxy would read the last, the upstream (sent the bytes as they came) maybe the first
            b'{"model": "m", "messages": [{"role": "user", "content": "t"}], "messages": []}',
            "duplicate_key",
        ),
    ],
    ids=["nan", "1e999", "5000-digit-int", "3000-deep", "duplicate-key"],
)
@pytest.mark.slow
def test_numbers_and_nesting_are_400s_not_500s(proxy: Proxy, body: bytes, code: str) -> None:
    answer = post(proxy, body)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["code"] == code
    if code == "duplicate_key":
        assert "'messages'" in answer.json()["error"]["message"]


def test_unknown_routes_and_methods_answer_in_openai_shape(proxy: Proxy) -> None:
    missing = httpx.get(f"{proxy.url}/v1/nothing-here", headers=HEADERS)
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "not_found_error"
    wrong = httpx.get(f"{proxy.url}/v1/chat/completions", headers=HEADERS)
    assert wrong.status_code == 405 and "error" in wrong.json()


def test_a_malformed_tool_call_is_a_400_and_the_session_goes_on(proxy: Proxy) -> None:
    headers = {**HEADERS, "x-contextweaver-session": "calls"}
    messages = run(proxy, headers, "calls", 2)
    bad = [*messages, {"role": "assistant", "content": None, "tool_calls": [{"id": "c9", "type": "function",
           "function": "bash -c ls"}]}, {"role": "tool", "tool_call_id": "c9", "content": "x"}]  # fmt: skip
    answer = chat(proxy, bad, headers)
    assert answer.status_code == 400 and "function" in answer.json()["error"]["message"]
    assert chat(proxy, messages, headers).status_code == 200, "the same session answers the next good request"
    assert SQLiteStore(proxy.store).step_count("calls") == 2


@pytest.mark.parametrize(
    "output",
    ["lone surrogate \ud800 here", "a NUL \x00 byte", '{"examples": [' + "[" * 100_000],
    ids=["surrogate", "nul", "deep-json-output"],
)
def test_an_odd_tool_output_never_poisons_the_session(proxy: Proxy, output: str) -> None:
    session = f"odd-{len(output)}"
    headers = {**HEADERS, "x-contextweaver-session": session}
    messages = task(session)
    answer = chat(proxy, messages, headers)
    messages = step(messages, answer, output)
    for n in range(3):  # the odd step stays in the agent's history, as it would
        answer = chat(proxy, messages, headers)
        assert answer.status_code == 200, answer.text
        messages = step(messages, answer, f"plain output {n}")
    stored = SQLiteStore(proxy.store)
    count = stored.step_count(session)
    assert count in (0, 3), "either every step is stored or (memory failed on the odd one) none"
    if count:
        assert "\x00" not in stored.steps(session)[0].step.observation
