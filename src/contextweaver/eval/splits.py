"""The fixed train / validation split of the training runs, decided before any tuning.

A run's split depends only on its instance id (a stable hash), so every tool, benchmark and person gets
the same split, and adding runs never moves an existing one. A third of each set is validation: tune
on `train` only, report on `validation` and on the dev runs (which are never tuned on).
"""

from __future__ import annotations

import hashlib
from typing import Literal

Split = Literal["train", "validation"]
VALIDATION_SHARE = 3
"""One run in VALIDATION_SHARE is held out for validation."""


def split_of(instance_id: str) -> Split:
    """`train` or `validation` for a run, from the SHA-1 of its instance id (e.g. `django__django-11276`)."""
    digest = hashlib.sha1(instance_id.encode("utf-8")).digest()
    return "validation" if int.from_bytes(digest[:4], "big") % VALIDATION_SHARE == 0 else "train"
