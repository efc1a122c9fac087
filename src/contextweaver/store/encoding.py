"""How a store writes a value as JSON text: canonical (equal values hash equally) or ordered (the bytes
an agent sent are kept)."""

from __future__ import annotations

import json
from typing import Any


def canonical(value: Any) -> str:
    """One JSON text per value (sorted keys, no spaces), so equal messages hash equally."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def ordered(value: Any) -> str:
    """JSON text that keeps key order: stored messages read back render to the bytes they were sent as
    (a provider's prompt cache compares bytes, so a reordered key after a restart would be a miss)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
