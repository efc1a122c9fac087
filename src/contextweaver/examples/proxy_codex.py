"""Codex CLI's wire (OpenAI Responses) through the proxy, offline: `contextweaver serve` in front of the
package's fake upstream, and a client that sends what Codex sends: `instructions`, then `input` items
(the task, `function_call` and `function_call_output` items), the history growing each call.
The real CLI needs a key; point it at the proxy in ~/.codex/config.toml (see the docs page).

    pip install 'contextweaver-agents[serve]'
    python -m contextweaver.examples.proxy_codex
"""

import json

from contextweaver.examples import require

require("proxy_codex")  # before the imports it needs: a missing one is one line, exit 2

import httpx

from contextweaver.examples.proxy_upstream import RUN, proxy_in_front_of_fake_upstream, report, show_note

with proxy_in_front_of_fake_upstream(budget=3_000) as (base, upstream):
    # --8<-- [start:client]
    items = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": RUN.task}]}]
    for number, step in enumerate(RUN.steps, start=1):
        items.append(
            {
                "type": "function_call",
                "call_id": f"call_{number}",
                "name": "shell",
                "arguments": json.dumps({"command": ["bash", "-lc", step.action]}),
            }
        )
        items.append(
            {"type": "function_call_output", "call_id": f"call_{number}", "output": step.observation}
        )
        answer = httpx.post(
            f"{base}/v1/responses",
            timeout=60,  # Codex's base_url: {base}/v1
            headers={"Authorization": "Bearer your-openai-key"},
            json={"model": "gpt-5-codex", "instructions": RUN.system, "input": items},
        )
        answer.raise_for_status()
        # --8<-- [end:client]
        report(number, items, upstream.requests[-1].body["input"])
    show_note(upstream.requests[-1].body["input"])
