"""The proxy in front of a real model: llama.cpp's server with SmolLM2-135M (when installed).

The upstream gets the woven messages of a mini-swe-agent conversation; at temperature 0 the answer
the caller gets through the proxy is the answer the model gives to those woven messages directly,
streamed or not. The model is tiny: only the protocol is checked, never the quality.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from contextweaver.config import WeaverConfig
from contextweaver.records import PLACEHOLDER
from contextweaver.store.sqlite import SQLiteStore
from tests.llama_server import llama_server
from tests.serve.harness import running_proxy, task
from tests.serve.test_proxy_openai import expected_upstream_messages

pytestmark = [pytest.mark.model, pytest.mark.slow]
SAMPLING: dict[str, Any] = {"temperature": 0, "max_tokens": 16, "seed": 7}


@pytest.fixture(scope="module")
def llama_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with llama_server(tmp_path_factory.mktemp("llama")) as url:
        yield url


def mini_conversation(steps: int) -> list[dict[str, Any]]:
    messages = task("llama")
    for i in range(steps):
        messages.append(
            {"role": "assistant", "content": f"THOUGHT: read part {i}\n\n```bash\ncat part_{i}.py\n```"}
        )
        body = "\n".join(f"def part_{i}_{j}(): return {j}" for j in range(12))
        messages.append(
            {"role": "user", "content": f"<returncode>0</returncode>\n<output>\n{body}\n</output>"}
        )
    return messages


def test_the_real_model_answers_the_woven_messages(llama_url: str, tmp_path: Path) -> None:
    messages = mini_conversation(8)
    per_step = WeaverConfig(mode="per_step")  # weaves with no budget, so the model sees placeholders
    woven = expected_upstream_messages(messages, per_step)
    assert any(PLACEHOLDER[:20] in m["content"] for m in woven if m["role"] == "user")
    direct = openai.OpenAI(base_url=llama_url, api_key="none", max_retries=0)
    expected = direct.chat.completions.create(model="smollm2", messages=woven, **SAMPLING)  # type: ignore[arg-type]
    with running_proxy(SQLiteStore(tmp_path / "s.db"), llama_url, per_step) as (url, manager):
        client = openai.OpenAI(base_url=url, api_key="none", max_retries=0)
        answer = client.chat.completions.create(model="smollm2", messages=messages, **SAMPLING)  # type: ignore[arg-type]
        assert answer.choices[0].message.content == expected.choices[0].message.content
        assert answer.usage is not None and expected.usage is not None
        assert answer.usage.prompt_tokens == expected.usage.prompt_tokens  # the same (woven) prompt
        stream = client.chat.completions.create(model="smollm2", messages=messages, stream=True, **SAMPLING)  # type: ignore[arg-type]
        chunks = list(stream)
        assert (
            "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            == expected.choices[0].message.content
        )
        assert chunks[-1].choices[0].finish_reason is not None
        assert [s.steps for s in manager.store.sessions()] == [8]
        models = client.models.list()
        assert [m.id for m in models] == [m.id for m in direct.models.list()]
