"""How one node turns into chat messages: in full, compressed to the placeholder, or trimmed."""

from __future__ import annotations

import json
import re
import threading
from array import array
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from json.decoder import scanstring  # type: ignore[attr-defined]  # public, missing from the stubs

from contextweaver.records import (
    IMAGES_SUFFIX,
    PLACEHOLDER,
    Message,
    Node,
    Step,
    content_text,
)
from contextweaver.tokens import (
    MESSAGE_OVERHEAD,
    count_images,
    count_message,
    count_text,
    encode,
    get_encoding,
)

TRIM_MARKER = "\n... [{omitted} tokens of this output omitted{handle}] ...\n"
"""`handle`: "" or, with recall on, the node's `HANDLE` (the step to read again in full)."""


def is_observation(step: Step, message: Message) -> bool:
    """In an agent step every message but the assistant's is environment output."""
    return step.kind == "agent" and message.get("role") != "assistant"


OUTPUT_FIELDS = frozenset({"output", "output_head", "output_tail"})
"""The string fields that hold a JSON-wrapped tool output's text."""
_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class JsonOutput:
    """A tool output wrapped in a JSON object, as mini-swe-agent 2's `mini.yaml` sends it
    (`{"returncode": 0, "output": "..."}`, `output_head`/`output_tail` when long): placeholders count the
    output's own lines and trims cut inside its strings, so what the agent reads stays valid JSON."""

    frame: tuple[str, ...]
    """The raw text around the output's string literals (one piece more than `values`), kept verbatim."""
    values: tuple[str, ...]
    """The output's strings, decoded, in order."""

    def rebuild(self, values: Sequence[str]) -> str:
        """The object with `values` in place of the output's strings, the rest of its text unchanged."""
        pieces = [self.frame[0]]
        for value, after in zip(values, self.frame[1:], strict=True):
            pieces += [json.dumps(value, ensure_ascii=False), after]
        return "".join(pieces)


def output_lines(text: str) -> list[list[str]]:
    """The lines of an output as the agent reads them: per string of a JSON-wrapped output, else one list."""
    wrapped = json_output(text)
    return [value.split("\n") for value in wrapped.values] if wrapped else [text.split("\n")]


def json_output(text: str) -> JsonOutput | None:
    """The JSON-wrapped tool output `text` holds (an object with a `returncode` and a string output
    field), else None: any other text is never parsed past its first characters, nor kept by the cache."""
    if not text.startswith("{") or '"returncode"' not in text[:64] or not text.rstrip().endswith("}"):
        return None
    return _json_output(text)


JSON_OUTPUTS = 256
JSON_OUTPUT_BYTES = 32 * 1024 * 1024
"""Bytes of JSON-wrapped outputs whose parse is kept, counted as twice the text (the key holds the text
alive, the parse about as much again): 256 outputs of any size were kept (issue 44)."""
_parsed: OrderedDict[str, JsonOutput | None] = OrderedDict()
_parsed_lock = threading.Lock()


def _json_output(text: str) -> JsonOutput | None:
    """Parsed once per recent output (each render reads it again), least recently used dropped first."""
    with _parsed_lock:
        if text in _parsed:
            _parsed.move_to_end(text)
            return _parsed[text]
    try:
        found = _scan_object(text)
    except (ValueError, RecursionError):  # not JSON after all, or nested 100k deep
        found = None
    if 2 * len(text) <= JSON_OUTPUT_BYTES:  # one larger is parsed again, not kept
        with _parsed_lock:
            _parsed[text] = found
            while len(_parsed) > JSON_OUTPUTS or 2 * sum(map(len, _parsed)) > JSON_OUTPUT_BYTES:
                _parsed.popitem(last=False)
    return found


def _skip(text: str, at: int) -> int:
    """The position of the first non-whitespace character from `at` (JSON's whitespace)."""
    match = _SPACE.match(text, at)
    return match.end() if match else at


def _scan_object(text: str) -> JsonOutput | None:
    """One pass over the top-level object, recording where each output string literal sits."""
    frame: list[str] = []
    values: list[str] = []
    keys: set[str] = set()
    cut, at = 0, _skip(text, 1)
    while not text.startswith("}", at):
        if keys and not text.startswith(",", at):
            return None
        at = _skip(text, at + 1 if keys else at)
        if not text.startswith('"', at):
            return None
        key, at = scanstring(text, at + 1)
        at = _skip(text, at)
        if not text.startswith(":", at):
            return None
        at = _skip(text, at + 1)
        if key in OUTPUT_FIELDS and text.startswith('"', at):
            value, end = scanstring(text, at + 1)
            frame.append(text[cut:at])
            values.append(value)
            cut = end
        else:
            end = _DECODER.raw_decode(text, at)[1]
        keys.add(key)
        at = _skip(text, end)
    if text[at + 1 :].strip() or "returncode" not in keys or not values:
        return None
    return JsonOutput((*frame, text[cut:]), tuple(values))


def placeholder(content: object, handle: str = "") -> str:
    """SWE-agent's placeholder for an elided observation, with the image count when there were any; a
    JSON-wrapped output's lines are its own, not the wrapper's. `handle` names the step (recall on)."""
    text = with_handle(PLACEHOLDER.format(lines=_line_count(content_text(content))), handle)
    images = count_images(content)
    return text + (IMAGES_SUFFIX.format(images=images) if images else "")


def with_handle(placeholder_text: str, handle: str) -> str:
    """A placeholder naming its step: `handle` inserted where its line count closes (an extraction that
    failed keeps its `?`; nothing is counted again)."""
    return placeholder_text.replace(" lines omitted)", f" lines omitted{handle})", 1)


def _line_count(text: str) -> int:
    wrapped = json_output(text)
    if wrapped is None:
        return len(text.splitlines())
    return sum(len(value.splitlines()) for value in wrapped.values)


def full_messages(node: Node) -> list[Message]:
    return [dict(m) for m in node.step.chat_messages()]


def compressed_messages(node: Node) -> list[Message]:
    """Thought and action kept, each observation replaced by the placeholder (tool_call_id kept).

    Built once per step (counting an observation's lines is the costly part) and copied per use."""
    if node.compressed is None:  # a node built by hand, not by `make_node`
        node.compressed = tuple(placeholder_messages(node.step))
    return [dict(m) for m in node.compressed]


REASONING_OMITTED = "[{lines} line(s) of reasoning omitted]"


def call_messages(node: Node) -> tuple[list[Message], int]:
    """The placeholder form without the step's reasoning, and its tokens: the call alone, the thought
    replaced by a marker that says how many lines were cut. Built once per node (cuts repeat it)."""
    if node.call_form is None:
        out = compressed_messages(node)
        thought = node.step.thought.strip()
        marker = REASONING_OMITTED.format(lines=len(thought.splitlines()))
        for message in out if thought else ():
            content = message.get("content")
            if message.get("role") == "assistant" and isinstance(content, str) and thought in content:
                message["content"] = content.replace(thought, marker, 1)
        node.call_form = (tuple(out), sum(count_message(m) for m in out))
    messages, tokens = node.call_form
    return [dict(m) for m in messages], tokens


def placeholder_messages(step: Step, handle: str = "") -> tuple[Message, ...]:
    """The step's messages with each observation replaced by its placeholder (what extraction keeps)."""
    return tuple(
        {**m, "content": placeholder(m.get("content"), handle)} if is_observation(step, m) else m
        for m in step.chat_messages()
    )


def placeholders(node: Node) -> list[str]:
    """The placeholder of each observation message of the node, in order (what a store keeps)."""
    compressed_messages(node)
    assert node.compressed is not None
    step = node.step
    return [str(c["content"]) for m, c in zip(step.chat_messages(), node.compressed, strict=True)
            if is_observation(step, m)]  # fmt: skip


def with_placeholders(step: Step, texts: Sequence[str]) -> tuple[Message, ...]:
    """The compressed messages of a step from its stored placeholders, without reading its observations."""
    given = iter(texts)
    return tuple(
        {**m, "content": next(given)} if is_observation(step, m) else m for m in step.chat_messages()
    )


def trimmed_messages(
    node: Node, max_tokens: int, keep_call: bool = False
) -> tuple[list[Message], int] | None:
    """Head/tail-trim the step's text so it fits in `max_tokens`; returns messages and their tokens.

    Observations are trimmed first, the room shared so that a short one stays whole and gives what it leaves
    to the long ones; the assistant's own text only when the call alone does not fit. With `keep_call` (the
    newest step: the agent must see the call it just made as it made it) the call is never trimmed, and None
    says the outputs cannot be trimmed beside it.
    """
    step = node.step
    messages = step.chat_messages()
    sizes = [count_message(m) for m in messages]
    observed = [is_observation(step, m) for m in messages]
    fixed = sum(size for size, seen in zip(sizes, observed, strict=True) if not seen)
    limits = _observation_limits(
        [size for size, seen in zip(sizes, observed, strict=True) if seen], max_tokens - fixed
    )
    trim_all = limits is None
    if trim_all and keep_call:
        return None
    total = max(1, sum(sizes))
    given = iter(limits or ())
    out = []
    for message, size, seen in zip(messages, sizes, observed, strict=True):
        limit = (
            (max_tokens * size // total - MESSAGE_OVERHEAD - 4) if trim_all else next(given) if seen else None
        )
        if limit is not None and message.get("content") is not None:  # a call without text has none to trim
            text = content_text(message.get("content"))
            message = {**message, "content": trim_output(text, max(0, limit), node.handle)}
        out.append(dict(message))
    return out, sum(count_message(m) for m in out)


def _observation_limits(sizes: list[int], room: int) -> list[int | None] | None:
    """Each observation's content limit out of `room` (None: kept whole), shortest first, each taking an even
    share of what the shorter ones left; None when a long one's share is too small to trim to, so the call
    itself must be trimmed."""
    limits: list[int | None] = [None] * len(sizes)
    left = len(sizes)
    for at in sorted(range(len(sizes)), key=sizes.__getitem__):
        share = room // left
        if sizes[at] > share:
            limit = share - MESSAGE_OVERHEAD - 4
            if limit < 16:
                return None
            limits[at] = limit
        room -= min(sizes[at], share)
        left -= 1
    return limits


TOKEN_IDS_BYTES = 64 * 1024 * 1024
"""Bytes of token ids (4 a token, with the texts they key) kept so re-trimming a giant output only decodes."""
_ids: OrderedDict[str, array[int]] = OrderedDict()
_ids_lock = threading.Lock()


def _token_ids(text: str) -> array[int]:
    """Encoded once per distinct giant observation, least recently used dropped beyond TOKEN_IDS_BYTES (a
    tuple of ints cost 40 bytes a token: 16 of them for 25 MB outputs held 3.7 GB)."""
    with _ids_lock:
        ids = _ids.get(text)
        if ids is not None:
            _ids.move_to_end(text)
            return ids
    ids = array("I", encode(text))
    with _ids_lock:
        _ids[text] = ids
        while _ids and sum(len(key) + 4 * len(value) for key, value in _ids.items()) > TOKEN_IDS_BYTES:
            _ids.popitem(last=False)
    return ids


def trim_text(text: str, max_tokens: int, handle: str = "") -> str:
    """Keep the head and the tail of `text` within `max_tokens`, saying how much was cut (and, with
    `handle`, which step to read again for the rest)."""
    ids = _token_ids(text)
    if len(ids) <= max_tokens:
        return text
    decode = get_encoding().decode
    room = max_tokens - count_text(TRIM_MARKER.format(omitted=len(ids), handle=handle)) - 2
    if room < 0:
        return ""
    head_len, tail_len = room - room // 3, room // 3
    while True:
        tail = ids[len(ids) - tail_len :] if tail_len else array("I")
        out = (
            decode(list(ids[:head_len]))
            + TRIM_MARKER.format(omitted=len(ids) - head_len - tail_len, handle=handle)
            + decode(list(tail))
        )
        if count_text(out) <= max_tokens:
            return out
        if head_len + tail_len == 0:
            return ""
        head_len, tail_len = head_len * 9 // 10, tail_len * 9 // 10


MIN_SHARE = 24
"""Tokens under which a trimmed string is little more than its marker."""


def trim_output(text: str, max_tokens: int, handle: str = "") -> str:
    """`trim_text`, except that a JSON-wrapped output is cut inside its strings (each its share of
    the room left by the wrapper), so the trimmed output is still the JSON object it was."""
    wrapped = json_output(text)
    if wrapped is None:
        return trim_text(text, max_tokens, handle)
    if len(_token_ids(text)) <= max_tokens:
        return text
    sizes = [len(_token_ids(value)) for value in wrapped.values]
    room = max_tokens - count_text("".join(wrapped.frame)) - 2 * len(sizes)
    while room > 0:
        shares = [room * size // max(1, sum(sizes)) for size in sizes]
        if min(shares) < MIN_SHARE:  # too little for each string's marker: the last (a run's summary) gets it
            shares = [0] * (len(sizes) - 1) + [room]
        out = wrapped.rebuild(
            [trim_text(v, share, handle) for v, share in zip(wrapped.values, shares, strict=True)]
        )
        if count_text(out) <= max_tokens:
            return out
        room = room * 9 // 10
    empty = wrapped.rebuild([""] * len(sizes))
    return empty if count_text(empty) <= max_tokens else ""
