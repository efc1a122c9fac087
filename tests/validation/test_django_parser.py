"""Django's runner: unittest's lines told apart by Django's banner or the runtests.py command."""

from contextweaver.records import TestStatus
from contextweaver.validation import parse_observation

RUN = """\
Testing against Django installed in '/repo/django' with up to 2 processes
Found 3 test(s).
System check identified no issues (0 silenced).
.F.
======================================================================
FAIL: test_slug_unique (shop.tests.ProductTests.test_slug_unique)
----------------------------------------------------------------------
AssertionError: IntegrityError not raised

----------------------------------------------------------------------
Ran 3 tests in 0.020s

FAILED (failures=1)
Destroying test database for alias 'default'...
"""


def test_django_banner_makes_the_runner_django() -> None:
    report = parse_observation(RUN, "python tests/runtests.py shop")
    assert report is not None and report.runner == "django"
    assert report.tests == {"shop.tests.ProductTests.test_slug_unique": TestStatus.FAILED}
    assert report.totals == {"total": 3, "failed": 1}


def test_command_alone_marks_django_when_the_banner_is_cut() -> None:
    text = "..\n" + "-" * 70 + "\nRan 2 tests in 0.01s\n\nOK\n"
    report = parse_observation(text, "./manage.py test shop")
    assert report is not None and report.runner == "django"
    plain = parse_observation(text, "python -m unittest")
    assert plain is not None and plain.runner == "unittest"
