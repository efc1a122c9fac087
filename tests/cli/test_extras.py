"""A command whose extra is missing still shows its help; run, it names the extra and the install command
that works for this copy in one line, exit 2. The table in `extras.py` is what decides."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from contextweaver import extras
from contextweaver.cli import main


@pytest.fixture
def serve_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The `serve` extra as if its modules were not installed."""
    monkeypatch.setitem(
        extras.EXTRAS, "serve", extras.Extra(("no_such_module_here",), "the proxy", ("serve",))
    )


def test_help_works_and_running_names_the_extra(serve_missing: None) -> None:
    assert CliRunner().invoke(main, ["serve", "--help"]).exit_code == 0
    result = CliRunner().invoke(main, ["serve", "--upstream", "http://127.0.0.1:9/v1"])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert "contextweaver serve needs the 'serve' extra" in line and "no_such_module_here" in line
    assert "pip install" in line and "[serve]" in line


def test_an_installed_extra_is_not_refused() -> None:
    assert extras.command_needs("serve") is None  # the dev install has every extra
    assert extras.command_needs("replay") is None


def test_a_module_an_option_reaches_is_named_by_its_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A postgresql:// store with psycopg absent: the store's own message, one line, exit 2."""
    monkeypatch.setitem(sys.modules, "psycopg", None)  # `import psycopg` raises ModuleNotFoundError
    result = CliRunner().invoke(main, ["sessions", "list", "--store", "postgresql://127.0.0.1:9/none"])
    assert result.exit_code == 2, result.output
    assert "needs the 'postgres' extra" in result.stderr and "Traceback" not in result.output


def test_the_install_command_names_this_copy_until_published() -> None:
    where, _ = extras.source()
    assert Path(where).exists()  # a clone or a wheel this Python was installed from
    command = extras.install_command("eval")
    assert f"{where}[eval]'" in command
    assert "once published on PyPI: pip install 'contextweaver-agents[eval]'" in command


def test_every_extra_in_the_table_is_one_pyproject_declares() -> None:
    pyproject = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    for name in extras.EXTRAS:
        assert f"\n{name} = [" in pyproject, name


def test_the_bare_command_is_its_help_naming_each_commands_extra() -> None:
    result = CliRunner().invoke(main, [])
    assert result.exit_code == 0 and "Usage:" in result.output
    text = " ".join(result.output.split())
    for name, extra in extras.EXTRAS.items():
        for command in extra.commands:
            assert f"`{command}` the '{name}' extra" in text
