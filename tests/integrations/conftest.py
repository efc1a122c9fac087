"""mini-swe-agent prints a start-up banner on import unless told to be quiet."""

from __future__ import annotations

import os

os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
