"""File views: the file a read-only step printed, path matching by tail, and a view's outline."""

from __future__ import annotations

from contextweaver.facts import extract_facts
from contextweaver.types import Step
from contextweaver.views import file_key, outline, same_file, viewed_file, viewed_paths


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
    step = Step("read it", "nl -ba src/shop/cart.py | sed -n '10,40p'\ncat -n b.py\ngrep -n total c.py", "x")
    assert extract_facts(step).viewed_files == {"src/shop/cart.py", "b.py", "c.py"}
    assert extract_facts(step).viewed_files == viewed_paths(step.action)
