"""Any OpenAI-compatible client through the proxy, offline: `contextweaver serve` in front of the package's
fake upstream, and a client that sends the growing chat history (tool calls and their results) of the
shipped 33-step run, as an agent on the OpenAI chat API does. Prints what reached the upstream.

    pip install 'contextweaver-agents[serve]'
    python -m contextweaver.examples.proxy_openai
"""

import json

from contextweaver.examples import require

require("proxy_openai")  # before the imports it needs: a missing one is one line, exit 2

import httpx

from contextweaver.examples.proxy_upstream import RUN, proxy_in_front_of_fake_upstream, report, show_note

with proxy_in_front_of_fake_upstream(budget=3_000) as (base, upstream):
    # --8<-- [start:client]
    messages = [{"role": "system", "content": RUN.system}, {"role": "user", "content": RUN.task}]
    for number, step in enumerate(RUN.steps, start=1):
        call = {
            "id": f"call_{number}",
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": step.action})},
        }
        messages.append({"role": "assistant", "content": step.thought, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"call_{number}", "content": step.observation})
        answer = httpx.post(
            f"{base}/v1/chat/completions",
            timeout=60,  # your client's base_url: {base}/v1
            headers={"Authorization": "Bearer your-upstream-key"},
            json={"model": "any", "messages": messages},
        )
        answer.raise_for_status()
        # --8<-- [end:client]
        report(number, messages, upstream.requests[-1].body["messages"])
    show_note(upstream.requests[-1].body["messages"])
