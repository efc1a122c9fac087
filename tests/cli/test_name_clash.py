"""PyPI's other `contextweaver` in the same Python is named at start, with what to do; our own old name is not."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from contextweaver import __version__
from contextweaver.cli import main
from contextweaver.cli.name_clash import OUR_SUMMARY, clash_message, other_project


def write_dist(site: Path, name: str, version: str, summary: str) -> None:
    """A distribution's metadata as pip leaves it in site-packages (all importlib.metadata reads)."""
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: {summary}\n"
    )


@pytest.fixture
def other_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    write_dist(
        site, "contextweaver", "0.18.2", "Context firewall + tool router for MCP and tool-heavy AI agents"
    )
    monkeypatch.syspath_prepend(str(site))
    return site


def test_the_other_project_is_named_with_what_to_do(other_site: Path) -> None:
    assert (
        other_project()
        == "contextweaver 0.18.2 (Context firewall + tool router for MCP and tool-heavy AI agents)"
    )
    message = clash_message()
    assert message is not None
    assert "pip uninstall -y contextweaver contextweaver-agents`, then pip install " in message
    assert "once published on PyPI: pip install 'contextweaver-agents[minisweagent]'" in message


def test_the_command_warns_at_start_and_still_runs(other_site: Path) -> None:
    result = CliRunner().invoke(main, ["tests", "-"], input="1 passed in 0.1s\n")
    assert result.exit_code == 0, result.output
    assert "PyPI's contextweaver 0.18.2" in result.stderr
    assert "passed" in result.stdout


def test_an_install_of_this_project_under_its_old_name_is_not_a_clash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    write_dist(site, "contextweaver", "0.2.0", OUR_SUMMARY)
    monkeypatch.syspath_prepend(str(site))
    assert other_project() is None
    assert "warning" not in CliRunner().invoke(main, ["tests", "-"], input="1 passed in 0.1s\n").stderr


def test_version_and_the_alias_name_this_distribution() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and __version__ in result.output
    pyproject = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    assert 'name = "contextweaver-agents"' in pyproject
    assert 'contextweaver-agents = "contextweaver.cli:main"' in pyproject


def test_summary_constant_is_the_one_pyproject_ships() -> None:
    """The guard tells our old install from the other project by this summary: it must stay pyproject's."""
    pyproject = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    assert f'description = "{OUR_SUMMARY}"' in pyproject
