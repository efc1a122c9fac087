"""mini-swe-agent trajectories: `.traj.json` ({"messages": [...], "trajectory_format": "mini-swe-agent-1"}),
or the bare message list its test data holds.

The run is one linear chat. Root = every message before the first assistant message (system +
task). Each assistant message and the non-assistant messages after it form one Step: the command
is the single ```bash (v1) or ```mswea_bash_command (v2) block, the thought is the text around it
without the "THOUGHT:" prefix, the observation is the following messages' text verbatim
(`<returncode>/<output>` envelope included). A person's mid-run message cannot be told apart from
an observation in this format, so it stays an observation. Zero or several command blocks is a
format error in mini-swe-agent (nothing ran): the action is then empty and the whole text is the
thought. The per-message `extra` key (raw API response, often larger than the message) is dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from contextweaver.formats.base import Trajectory
from contextweaver.formats.source import Source
from contextweaver.formats.toolcalls import OBSERVATION_SEPARATOR, chat_step, message_list
from contextweaver.records import Message, Step
from contextweaver.tokens import content_text, count_images

ACTION_RE = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL)
"""mini-swe-agent's action regexes (v1 and v2 default configs): exactly one match is an action."""


def clean(message: Message) -> Message:
    """The chat message without mini-swe-agent's bookkeeping `extra` key."""
    return {key: value for key, value in message.items() if key != "extra"}


def observation_text(content: Any) -> str:
    """An observation as the agent read it. mini-swe-agent 2's default tool-calling config renders
    `{"returncode": N, "output": "..."}` (or output_head/output_tail for long output) as JSON; it is
    decoded into the text protocol's envelope, so test output parses as in every other run."""
    text = content_text(content)
    if not text.startswith("{") or '"returncode"' not in text[:64]:
        return text
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if not isinstance(data, dict) or "returncode" not in data:
        return text
    if "output" in data:
        output = str(data["output"])
    else:
        elided = f"\n... [{data.get('elided_chars', '?')} characters elided] ...\n"
        output = f"{data.get('output_head', '')}{elided}{data.get('output_tail', '')}"
    exception = f"<exception>{data['exception_info']}</exception>\n" if data.get("exception_info") else ""
    return f"{exception}<returncode>{data['returncode']}</returncode>\n<output>\n{output}</output>"


def responses_api_item(message: Any) -> bool:
    """An OpenAI Responses API item (mini-swe-agent's *_response model classes), not a chat message."""
    return isinstance(message, dict) and (
        message.get("object") == "response" or ("role" not in message and "type" in message)
    )


RESPONSES_API = (
    "OpenAI Responses API items (a `*_response` model class): ContextWeaver reads and weaves chat "
    "messages only; run the agent with a chat-completions model class (litellm, openrouter, portkey)"
)


def split_thought(text: str) -> tuple[str, str]:
    """(thought, action) of an assistant text; action "" unless exactly one command block."""
    matches = list(ACTION_RE.finditer(text))
    if len(matches) != 1:
        return _strip_label(text), ""
    match = matches[0]
    before, after = text[: match.start()].strip(), text[match.end() :].strip()
    thought = "\n\n".join(part for part in (_strip_label(before), after) if part)
    return thought, match.group(1).strip()


def _strip_label(text: str) -> str:
    text = text.strip()
    return text[len("THOUGHT:") :].strip() if text.startswith("THOUGHT:") else text


class MiniSweAgentReader:
    name = "mini-swe-agent"
    expected = "a mini-swe-agent .traj.json with 'messages' (system, task, assistant/user pairs)"
    keys = frozenset({"messages", "trajectory_format", "info", "instance_id", "role", "content", "extra"})

    def detect(self, source: Source) -> bool:
        document = source.document
        if isinstance(document, dict) and str(document.get("trajectory_format", "")).startswith(
            "mini-swe-agent"
        ):
            return True
        messages = message_list(document)
        if not messages or not all(isinstance(m, dict) and "role" in m for m in messages):
            return False
        if any(m.get("tool_calls") or m.get("role") == "tool" for m in messages):
            return False  # OpenAI tool calling, not mini-swe-agent's text protocol
        assistants = [content_text(m.get("content")) for m in messages if m.get("role") == "assistant"]
        return any(ACTION_RE.search(text) for text in assistants)

    def read(self, source: Source) -> Trajectory:
        document = source.document
        messages = message_list(document)
        if messages is None:
            raise source.error(f"no message list; expected {self.expected}")
        for position, message in enumerate(messages):
            if not isinstance(message, dict):
                raise source.error(
                    f"messages[{position}] is {type(message).__name__}, expected a chat message object"
                )
            if responses_api_item(message):
                raise source.error(f"messages[{position}] is one of the {RESPONSES_API}")
        first = next((i for i, m in enumerate(messages) if m.get("role") == "assistant"), len(messages))
        root = [clean(m) for m in messages[:first]]
        steps = []
        position = first
        while position < len(messages):
            end = position + 1
            while end < len(messages) and messages[end].get("role") != "assistant":
                end += 1
            steps.append(text_step(messages[position], messages[position + 1 : end], position))
            position = end
        meta: dict[str, Any] = {}
        if isinstance(document, dict):
            meta = {
                key: document[key] for key in ("trajectory_format", "instance_id", "info") if key in document
            }
        return Trajectory(root=root, steps=steps, source=str(source.path), format=self.name, meta=meta)


def text_step(assistant: Message, observations: Sequence[Message], position: int) -> Step:
    """One assistant message and the observations after it as a Step (tool calling or the text protocol)."""
    if assistant.get("tool_calls"):  # mini-swe-agent v2 with tool calling: OpenAI's shape
        step = chat_step([clean(assistant), *(clean(m) for m in observations)])
        order = {c.get("id"): i for i, c in enumerate(assistant["tool_calls"]) if isinstance(c, dict)}
        results = sorted(observations, key=lambda m: order.get(m.get("tool_call_id"), len(order)))
        decoded = OBSERVATION_SEPARATOR.join(observation_text(m.get("content")) for m in results)
        return replace(step, observation=decoded, meta={**step.meta, "message_index": position})
    thought, action = split_thought(content_text(assistant.get("content")))
    observation = OBSERVATION_SEPARATOR.join(content_text(m.get("content")) for m in observations)
    meta: dict[str, Any] = {"message_index": position}
    if not action:
        meta["format_error"] = True
    roles = {str(m.get("role")) for m in observations} - {"user"}
    if roles:
        meta["other_roles"] = sorted(roles)
    return Step(
        thought=thought,
        action=action,
        observation=observation,
        messages=(clean(assistant), *(clean(m) for m in observations)),
        images=sum(count_images(m.get("content")) for m in observations),
        meta=meta,
    )


READER = MiniSweAgentReader()
