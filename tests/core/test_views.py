"""File views: the file a read-only step printed, path matching by tail, and a view's outline."""

from __future__ import annotations

import json

from contextweaver.formats.toolcalls import action_text
from contextweaver.nodes.facts import extract_facts
from contextweaver.nodes.views import file_key, line_numbers, outline, same_file, viewed_file, viewed_paths
from contextweaver.records import Step


def test_paths_match_by_their_tail() -> None:
    assert same_file("./a/b.py", "/testbed/a/b.py")
    assert same_file("b.py", "a/b.py")
    assert not same_file("a/b.py", "a/xb.py")
    assert not same_file("c/b.py", "a/b.py")
    assert file_key("/testbed/a/b.py") == "b.py"


def test_only_a_read_of_one_file_is_a_view() -> None:
    assert viewed_file({"a/b.py"}, set()) == "a/b.py"
    assert viewed_file({"a/b.py", "c.py"}, set()) is None
    assert viewed_file({"a/b.py"}, {"a/b.py"}) is None
    assert viewed_file(set(), set()) is None


def test_outline_finds_definition_lines_numbered_or_not() -> None:
    lines = [
        "import os",
        "class Cart(Base):",
        "    def add(self, x):",
        "        return x  # def not at the start",
        "   120\tasync def fetch(url):",
        "  7: func Handle(w http.ResponseWriter) {",
        "    public static int count(List<String> items) {",
        "    classification = 3",
    ]
    assert outline(lines) == (1, 2, 4, 5, 6)


def test_views_are_read_with_their_options() -> None:
    assert viewed_paths("nl -ba pkg/mod.py | sed -n '10,40p'") == {"pkg/mod.py"}
    assert viewed_paths("cat -n pkg/mod.py") == {"pkg/mod.py"}
    assert viewed_paths("head -n 50 pkg/mod.py") == {"pkg/mod.py"}
    assert viewed_paths("sed -n '1,50p' pkg/mod.py") == {"pkg/mod.py"}
    assert viewed_paths("open src/App.java 120") == {"src/App.java"}
    assert viewed_paths("ls -la && python run.py") == set()


def test_the_analyzer_sees_the_same_views_as_the_selection() -> None:
    """One reader of "which file a command prints": a numbered view is a view to the graph too."""
    step = Step(
        "read it",
        "nl -ba src/shop/cart.py | sed -n '10,40p'\ncat -n b.py\ngrep -n total c.py\nopen \"d.py\" 12",
        "x",
    )
    assert extract_facts(step).viewed_files == {"src/shop/cart.py", "b.py", "c.py", "d.py"}
    assert extract_facts(step).viewed_files == viewed_paths(step.action)


def test_editor_tool_calls_are_views_and_edits_as_the_readers_render_them() -> None:
    """Tool-call agents (SWE-agent's and OpenHands' editor, Claude Code's Read/Edit) view and edit files
    through JSON arguments, not shell commands: the graph and the selection must see those too."""
    calls = [
        action_text("str_replace_editor", {"command": "view", "path": "/testbed/shop/cart.py"}),
        action_text("file_editor", json.dumps({"command": "str_replace", "path": "/w/a.py", "old_str": "x"})),
        action_text("Read", {"file_path": "/repo/src/b.ts"}),
        action_text("Edit", {"file_path": "/repo/src/c.ts", "old_string": "a", "new_string": "b"}),
        action_text("str_replace_editor", {"command": "view", "path": "/testbed"}),  # a directory: no file
        action_text("str_replace_editor", {"command": "create", "path": "/w/new.py", "file_text": "x = 1"}),
    ]
    facts = extract_facts(Step("work", "\n".join(calls), "done"))
    assert facts.viewed_files == {"/testbed/shop/cart.py", "/repo/src/b.ts"}
    assert facts.edited_files == {"/w/a.py", "/repo/src/c.ts", "/w/new.py"}
    viewed = extract_facts(Step("look", calls[0], "     1\tclass Cart:")).viewed_files
    assert viewed_file(viewed, set()) == "/testbed/shop/cart.py"


def test_appends_escaped_sed_scripts_and_deletions_are_changes() -> None:
    """`>>` appends to a file, a double-quoted sed script may escape quotes, `rm` deletes: all change files;
    code in a heredoc or a SWE-agent edit body is not a command."""
    facts = extract_facts(Step("add", "cat <<'EOF' >> tests/test_a.py\ndef test_x(): rm = 1 > 2\nEOF", ""))
    assert facts.edited_files == {"tests/test_a.py"} and facts.deleted_files == frozenset()
    sed = extract_facts(Step("", """sed -i "5c\\    print(f'D {kw.get(\\"to\\")}')" pkg/related.py""", ""))
    assert sed.edited_files == {"pkg/related.py"}
    gone = extract_facts(Step("clean", "rm -f reproduce.py debug.py 2>/dev/null && git rm -q src/old.py", ""))
    assert gone.deleted_files == {"reproduce.py", "debug.py", "src/old.py"}
    body = extract_facts(
        Step("", "edit 3:4\n    def f(self) -> t.Optional:\n        rm = x\nend_of_edit", "")
    )
    assert body.edited_files == frozenset() and body.deleted_files == frozenset()


def test_copies_moves_touches_scripted_writes_and_reverts_are_changes() -> None:
    """Shell changes agents make besides edits: `cp`/`mv` write their target (a folder: the name in it),
    `mv` takes its source away, `touch` creates, a Python script the step runs writes what it opens for
    writing, `git checkout`/`git restore` of a file undoes the agent's changes (a branch is not a file)."""
    moved = extract_facts(Step("", "mkdir -p src/t && mv Repro.java src/t/ && cp a.py a.py.bak", ""))
    assert moved.edited_files == {"src/t/Repro.java", "a.py.bak"} and moved.deleted_files == {"Repro.java"}
    assert extract_facts(Step("", "cp -r pkg pkg_copy\ntouch app/__init__.py", "")).edited_files == {
        "app/__init__.py"
    }
    script = (
        "python - <<'EOF'\npath = 'django/forms/models.py'\nwith open(path, 'w') as f:\n    f.write(s)\nEOF"
    )
    assert extract_facts(Step("", script, "")).edited_files == {"django/forms/models.py"}
    unrun = "cat <<'EOF' > t.py\nopen('out.txt', 'w').write('x')\nEOF"
    assert extract_facts(Step("", unrun, "")).edited_files == {"t.py"}  # written, not run: no out.txt
    revert = extract_facts(Step("", "git checkout -- src/calc.py setup.cfg && git checkout -b fix", ""))
    assert revert.reverted_files == {"src/calc.py", "setup.cfg"} and revert.edited_files == frozenset()
    assert extract_facts(Step("", "git restore --staged src/calc.py", "")).reverted_files == frozenset()


def test_line_numbers_read_each_view_format_and_the_ends_of_an_elided_range() -> None:
    lines = [
        "<NOTE>This file is too large to display entirely.</NOTE>",
        "     1 import re",
        "    98 ... eliding lines 98-120 ...",
        "   121\tdef f():",
        "122:    return 1",
        "no number here 123",
    ]
    assert line_numbers(lines) == {1: 1, 98: 2, 120: 2, 121: 3, 122: 4}
