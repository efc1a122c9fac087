"""Shared helpers for reader tests: the shared data folder (skipped when absent) and a file writer."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.shared_data import absent

SHARED_DATA = (Path(__file__).resolve().parents[2] / ".." / "shared" / "data").resolve()
TRAJECTORIES = SHARED_DATA / "trajectories"


@pytest.fixture
def shared() -> Callable[..., Path]:
    """A path under ../shared/data/trajectories, or a clean skip when a user's clone has none."""

    def _shared(*parts: str) -> Path:
        path = TRAJECTORIES.joinpath(*parts)
        if not path.exists():
            pytest.skip(absent(path))
        return path

    return _shared


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, Any], Path]:
    """Write a file in tmp_path: str/bytes verbatim, anything else as JSON."""

    def _write(name: str, content: Any) -> Path:
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_text(json.dumps(content), encoding="utf-8")
        return path

    return _write
