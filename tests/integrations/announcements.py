"""What the integrations say at start: each test begins with nothing said yet, and reads the warnings."""

from __future__ import annotations

import logging

import pytest

from contextweaver.integrations import settings as settings_module

LOGGER = "contextweaver.integrations"


@pytest.fixture(autouse=True)
def fresh_announcements(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each message is said once per process: a test starts with none said."""
    monkeypatch.setattr(settings_module, "_said", set())


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno == logging.WARNING]
