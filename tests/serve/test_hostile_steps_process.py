"""One hostile line in one step of a 10-step session through a real `contextweaver serve` with a budget:
every step is still stored and every context woven within the budget (the memory never switches off)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from contextweaver.store.sqlite import SQLiteStore
from tests.serve.harness import task
from tests.serve.processes import CLI, serve_process, upstream_process
from tests.serve.test_access_process import chat, step

BUDGET = 4000
DEEP = "[" * 2_000 + "]" * 2_000
"""Past json.loads's recursion limit, yet a call that fits the budget."""
TRIGGERS = {
    "5000-digit-totals": "===== " + "1" * 5000 + " passed in 0.12s =====",
    "5000-digit-returncode": "<returncode>" + "9" * 5000 + "</returncode>\n<output>\nok\n</output>",
    "go-json-bad-escape": '{"Action":"fail","Package":"p","Test":"TestA\\q"}\n' * 3,
    "dart-json-lone-surrogate": '{"type":"testStart","test":{"id":1,"name":"a\\ud800"}}\n'
    '{"type":"testDone","testID":1,"result":"error"}\n',
    "64k-dashes": "-" * 65_536,
    "blank-lines": " \n" * 30_000,
    "deep-arguments": "plain output",
}
pytestmark = pytest.mark.skipif(not CLI.exists(), reason="the contextweaver script is not installed")


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201 - a processes.Proxy
    tmp = tmp_path_factory.mktemp("hostile-steps")
    with (
        upstream_process(tmp) as (port, _),
        serve_process(tmp, f"http://127.0.0.1:{port}/v1", "--budget", str(BUDGET)) as proxy,
    ):
        yield proxy


@pytest.mark.parametrize("name", list(TRIGGERS))
@pytest.mark.slow
def test_a_hostile_step_leaves_the_session_storing_and_weaving(proxy: Any, name: str) -> None:
    headers = {"x-contextweaver-session": f"hostile-{name}"}
    messages = task(name)
    for n in range(10):
        answer = chat(proxy, messages, headers)
        assert answer.status_code == 200, answer.text
        assert "x-contextweaver-fallback" not in answer.headers, answer.headers
        messages = step(messages, answer, TRIGGERS[name] if n == 2 else f"output {n}\n" * 40)
        if n == 2 and name == "deep-arguments":
            messages[-2]["tool_calls"][0]["function"]["arguments"] = DEEP
    assert chat(proxy, messages, headers).status_code == 200
    assert SQLiteStore(proxy.store).step_count(f"hostile-{name}") == 10
    woven = re.findall(rf"session hostile-{re.escape(name)}: \+\d+ steps, (\d+) of", proxy.log())
    assert len(woven) >= 10 and max(map(int, woven)) <= BUDGET
