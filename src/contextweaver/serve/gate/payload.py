"""A request body as strict JSON, normalised before any of it is stored or forwarded.

Python's json module accepts what upstreams and databases refuse: `NaN`/`Infinity`, `1e999` (read
as infinity), integers of thousands of digits, nesting deep enough to overflow the stack, lone
surrogates (`"\\ud800"`) that cannot be encoded, and NUL characters that PostgreSQL cannot store.
Numbers and nesting are refused with a 400 naming the problem; lone surrogates and NULs in strings
are replaced by U+FFFD, the same way on every request, so a resent history still matches.
A key repeated in one object is refused with a 400 naming it: the proxy would read the last value
while the body it forwards byte for byte may be read by the upstream with the first (issue 44).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from contextweaver.errors import ContextWeaverError

MAX_DEPTH = 64
MAX_INT_DIGITS = 40
REPLACEMENT = "\ufffd"
_UNSAFE = re.compile("[\x00\ud800-\udfff]")
_ESCAPED_UNSAFE = re.compile(rb"\\u(?:0000|[dD][89abcdefABCDEF])")
"""The only way such a character gets into parsed strings: strict JSON refuses a raw NUL, and strict
UTF-8 decoding a raw surrogate. A body without these escapes parses to clean strings."""


class BadPayload(ContextWeaverError, ValueError):
    """The body cannot be accepted; the message says why, `code` names the rule."""

    def __init__(self, message: str, code: str = "invalid_json") -> None:
        super().__init__(message)
        self.code = code


def _constant(name: str) -> Any:
    raise BadPayload(
        f"request body holds {name}, which is not JSON: send a finite number or null", "invalid_number"
    )


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadPayload(f"number {text[:40]} is too large for a double", "invalid_number")
    return value


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise BadPayload(
            f"an integer of {len(text)} digits: at most {MAX_INT_DIGITS} are accepted", "invalid_number"
        )
    return int(text)


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        repeated = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
        raise BadPayload(f"request body repeats the key {repeated[:80]!r} in one object: JSON readers "
                         "disagree on which value counts, so send it once", "duplicate_key")  # fmt: skip
    return value


def parse_body(body: bytes) -> Any:
    """The body as JSON, with strict numbers, bounded nesting and clean strings."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise BadPayload("request body is not UTF-8") from None
    try:
        value = json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=_int,
                           object_pairs_hook=_object)  # fmt: skip
    except json.JSONDecodeError as exc:
        raise BadPayload(
            f"request body is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise BadPayload(
            f"request body is nested too deeply: at most {MAX_DEPTH} levels", "too_deep"
        ) from None
    return normalise(value) if is_escaped_unsafe(body) else check_depth(value)


def is_escaped_unsafe(body: bytes) -> bool:
    """Whether the body may hold a NUL or a lone surrogate once parsed (False: its strings are clean)."""
    return _ESCAPED_UNSAFE.search(body) is not None


def check_depth(value: Any) -> Any:
    """`value` unchanged; BadPayload when nested over MAX_DEPTH."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise BadPayload(f"request body is nested too deeply: at most {MAX_DEPTH} levels", "too_deep")
        for item in node.values() if isinstance(node, dict) else node if isinstance(node, list) else ():
            if isinstance(item, (dict, list)):
                stack.append((item, depth + 1))
    return value


def clean_text(text: str) -> str:
    """The string with lone surrogates and NULs replaced (well-formed text comes back as is)."""
    return _UNSAFE.sub(REPLACEMENT, text) if _UNSAFE.search(text) else text


def normalise(value: Any) -> Any:
    """`value` with every string (keys included) cleaned; BadPayload when nested over MAX_DEPTH."""
    if isinstance(value, str):
        return clean_text(value)
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise BadPayload(f"request body is nested too deeply: at most {MAX_DEPTH} levels", "too_deep")
        if isinstance(node, dict):
            for key in list(node):
                item = node[key]
                if isinstance(key, str) and _UNSAFE.search(key):
                    del node[key]
                    key = clean_text(key)
                if isinstance(item, str):
                    node[key] = clean_text(item)
                else:
                    node[key] = item
                    if isinstance(item, (dict, list)):
                        stack.append((item, depth + 1))
        elif isinstance(node, list):
            for position, item in enumerate(node):
                if isinstance(item, str):
                    node[position] = clean_text(item)
                elif isinstance(item, (dict, list)):
                    stack.append((item, depth + 1))
    return value
