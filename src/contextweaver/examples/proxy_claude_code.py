"""Claude Code's wire (Anthropic Messages) through the proxy, offline: `contextweaver serve` in front of the
package's fake upstream, and a client that sends what Claude Code sends: `system` at the top, `tool_use`
blocks in the assistant's turns and `tool_result` blocks in the user's, the history growing each call.
The real CLI needs a key; point it at the proxy with ANTHROPIC_BASE_URL (see the docs page).

    pip install 'contextweaver-agents[serve]'
    python -m contextweaver.examples.proxy_claude_code
"""

from contextweaver.examples import require

require("proxy_claude_code")  # before the imports it needs: a missing one is one line, exit 2

import httpx

from contextweaver.examples.proxy_upstream import RUN, proxy_in_front_of_fake_upstream, report, show_note

with proxy_in_front_of_fake_upstream(budget=3_000) as (base, upstream):
    # --8<-- [start:client]
    messages = [{"role": "user", "content": RUN.task}]
    for number, step in enumerate(RUN.steps, start=1):
        call = {
            "type": "tool_use",
            "id": f"toolu_{number}",
            "name": "Bash",
            "input": {"command": step.action},
        }
        messages.append({"role": "assistant", "content": [{"type": "text", "text": step.thought}, call]})
        result = {"type": "tool_result", "tool_use_id": f"toolu_{number}", "content": step.observation}
        messages.append({"role": "user", "content": [result]})
        answer = httpx.post(
            f"{base}/v1/messages",
            timeout=60,  # ANTHROPIC_BASE_URL={base}: no /v1
            headers={"x-api-key": "your-anthropic-key", "anthropic-version": "2023-06-01"},
            json={
                "model": "claude-sonnet-4-5",
                "max_tokens": 1024,
                "system": RUN.system,
                "messages": messages,
            },
        )
        answer.raise_for_status()
        # --8<-- [end:client]
        report(number, messages, upstream.requests[-1].body["messages"])
    show_note(upstream.requests[-1].body["messages"])
