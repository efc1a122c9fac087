"""Token counting stays linear and exact-enough on outputs that make the tokenizer's regex backtrack."""

from __future__ import annotations

from contextweaver.nodes.render import trim_text
from contextweaver.tokens import PIECE_CHARS, count_text, encode, get_encoding


def test_a_megabyte_of_spaces_is_counted_and_trimmed() -> None:
    spaces = " " * 1_000_000  # whole, this overflows the tokenizer's regex stack
    assert count_text(spaces) > 0
    trimmed = trim_text("head\n" + spaces + "\ntail", 200)
    assert trimmed.startswith("head") and trimmed.rstrip().endswith("tail") and count_text(trimmed) <= 200


def test_long_text_in_pieces_decodes_exactly_and_counts_within_a_few_tokens() -> None:
    line = "def _arithmetic_mask(self, other): return NDArithmeticMixin.mask  # line 42\n"
    text = line * (4 * PIECE_CHARS // len(line))
    ids = encode(text)
    assert get_encoding().decode(ids) == text
    whole = len(get_encoding().encode(text, disallowed_special=()))
    assert abs(len(ids) - whole) <= 8
    assert encode("short text") == get_encoding().encode("short text")
