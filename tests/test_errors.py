"""Every entry point fed bad input raises a ContextWeaverError subclass whose message names the setting
(or the call) and what to do; the CLI turns the same input into a message and a non-zero exit."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from contextweaver import ContextWeaver, WeaverConfig, build_strategy, load_config
from contextweaver.baselines.recent import ObservationMasking
from contextweaver.cli import main
from contextweaver.errors import CallOrder, ConfigError, ContextWeaverError, UnknownName
from contextweaver.examples import example_path
from contextweaver.records import Step
from contextweaver.registry import SELECTORS
from contextweaver.strategies import spec, weaver_config


@pytest.mark.parametrize(
    ("call", "error", "said"),
    [
        (
            lambda: load_config(overrides=["analyzer=bogus"]),
            ConfigError,
            "analyzer: unknown analyzer 'bogus'",
        ),
        (lambda: load_config(overrides=["selector=ancestr"]), ConfigError, "valid: ancestry, frontier"),
        (lambda: load_config(overrides=["window"]), ConfigError, "must look like key=value"),
        (lambda: load_config(overrides=["lazy.low_water=2"]), ConfigError, "lazy.low_water"),
        (lambda: spec("cw-bogus"), UnknownName, "unknown strategy 'cw-bogus'"),
        (lambda: weaver_config("masking"), ConfigError, "is a baseline"),
        (lambda: build_strategy("cw", {"summarizer": "abstractive"}), ConfigError, "summarizer"),
        (lambda: build_strategy("masking", {"selector": "select"}), ConfigError, "takes only `window`"),
        (lambda: SELECTORS.get("bogus"), UnknownName, "unknown selector 'bogus'"),
        (lambda: ContextWeaver().add_step(Step("t", "a", "o")), CallOrder, "call begin"),
        (lambda: ContextWeaver().context(), CallOrder, "call begin"),
        (lambda: ObservationMasking().context(), CallOrder, "call begin"),
    ],
)
def test_bad_input_raises_the_package_error(call, error: type[Exception], said: str) -> None:  # noqa: ANN001
    with pytest.raises(error, match=said) as caught:
        call()
    assert isinstance(caught.value, ContextWeaverError)


def test_begin_twice_is_a_call_order_error() -> None:
    weaver = ContextWeaver()
    weaver.begin([{"role": "user", "content": "task"}])
    with pytest.raises(CallOrder, match="already"):
        weaver.begin([{"role": "user", "content": "task"}])


def test_a_config_file_that_does_not_parse_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "cw.yaml"
    path.write_text("window: 5\nselector: [adaptive\n")
    with pytest.raises(ConfigError, match=r"cw.yaml is not valid YAML \(line 3"):
        load_config(path)
    with pytest.raises(ConfigError, match="cannot read the settings file"):
        load_config(tmp_path / "missing.yaml")


def test_a_config_object_checks_component_names() -> None:
    with pytest.raises(ValueError, match="unknown analyzer 'bogus'; valid: heuristic, llm, hybrid"):
        WeaverConfig(analyzer="bogus")


@pytest.mark.parametrize(
    "command", [["replay"], ["graph", str(example_path())], ["eval", str(example_path())]]
)
def test_the_cli_names_a_bad_component_at_load(command: list[str]) -> None:
    result = CliRunner().invoke(main, [*command, "-c", "analyzer=bogus"])
    assert result.exit_code != 0
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "unknown analyzer 'bogus'" in result.output and "Traceback" not in result.output
