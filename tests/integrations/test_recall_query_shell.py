"""The query form of the shell command: `contextweaver recall "words"` searches what the cut left out."""

from __future__ import annotations

import pytest

from contextweaver.config import WeaverConfig
from contextweaver.integrations.recall import TOOL_HINT, RecallShell, shell_answer
from tests.core.test_recall_query import ERROR, weaver_with_cut


@pytest.fixture(scope="module")
def weaver():
    return weaver_with_cut()


@pytest.mark.parametrize(
    "command",
    [
        'contextweaver recall "assertion error of the pytest run"',
        "contextweaver recall 'assertion error of the pytest run'",
        "contextweaver recall assertion error of the pytest run",
    ],
)
def test_the_query_form_returns_the_matching_record(weaver, command: str) -> None:
    answer = shell_answer(weaver, command)
    assert answer is not None and ERROR in answer
    assert answer.startswith('[recall "assertion error of the pytest run"')


def test_a_handle_is_still_a_handle_and_a_compound_command_goes_to_the_shell(weaver) -> None:
    assert str(shell_answer(weaver, "contextweaver recall 5")).startswith("[step 5: `python -m pytest")
    assert shell_answer(weaver, "contextweaver recall error | head") is None
    assert shell_answer(weaver, "contextweaver recall x; rm -rf build") is None
    assert shell_answer(weaver, "ls -la") is None
    assert "words to search by" in str(shell_answer(weaver, 'contextweaver recall "..."'))


def test_the_shell_wrapper_answers_a_query_without_reaching_the_environment(weaver) -> None:
    class Refusing:
        def execute(self, action: dict, *args: object, **kwargs: object) -> dict:
            raise AssertionError(f"the environment got {action}")

    out = RecallShell(Refusing(), lambda: weaver).execute({"command": 'contextweaver recall "pytest error"'})
    assert ERROR in out["output"] and out["returncode"] == 0


def test_the_note_says_in_one_line_how_to_search() -> None:
    hint = WeaverConfig().recall_hint
    assert "contextweaver recall N" in hint and "contextweaver recall 'words'" in hint and "\n" not in hint
    assert 'query="words"' in TOOL_HINT
    weaver = weaver_with_cut()
    note = next(m["content"] for m in weaver.context().messages if "working state" in str(m["content"]))
    line = next(ln for ln in str(note).splitlines() if ln.startswith("- reread step #N"))
    assert "search what was cut" in line
