"""Django's test runner (runtests.py, manage.py test): unittest's format, told apart by Django's own lines."""

from __future__ import annotations

import re

from contextweaver.validation.parsers.base import framed
from contextweaver.validation.parsers.unittest import UnittestParser


class DjangoParser(UnittestParser):
    """Same lines as unittest; detected by Django's banner or test-database lines, reported as "django"."""

    runner = "django"
    command_pattern = re.compile(r"runtests\.py|manage\.py\s+test\b|django-admin\s+test\b")
    _django_marker = re.compile(
        r"\n(?:Testing against Django installed in|Creating test database for alias|"
        r"System check identified (?:no issues|some issues)|Found \d+ test\(s\)\.)"
    )

    def detect(self, text: str, command: str = "") -> bool:
        if not super().detect(text, command):
            return False
        return self.command_matches(command) or bool(self._django_marker.search(framed(text)))
