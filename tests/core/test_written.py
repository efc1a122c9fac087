"""What the agent wrote, as it now stands: writes read from actions, replayed per file, and given in a
cut's note for the files the newest steps name and those the agent changed in place, where the cut
dropped the steps that wrote them."""

from __future__ import annotations

import json

from contextweaver import ContextWeaver, Step, WeaverConfig
from contextweaver.nodes.extract import make_node
from contextweaver.nodes.writes import Write, find_writes
from contextweaver.records import WovenContext
from contextweaver.weaving.written import WrittenFiles

SCRIPT = "\n".join(f"print('case {n}', check({n}))" for n in range(100))


def editor(command: str, path: str, **args: str) -> str:
    """An action as SWE-agent 1.x renders it: every argument single-quoted, `'` as `'"'"'`."""
    quoted = " ".join(f"--{k} '" + v.replace("'", "'\"'\"'") + "'" for k, v in args.items())
    return f"str_replace_editor {command} {path} {quoted}"


def test_writes_are_read_from_editor_calls_tool_calls_and_heredocs() -> None:
    assert find_writes(editor("create", "/testbed/r.py", file_text="print('a')\n")) == [
        Write("/testbed/r.py", "print('a')\n")
    ]
    assert find_writes(editor("str_replace", "/testbed/r.py", old_str="'a'", new_str="'b'")) == [
        Write("/testbed/r.py", "'b'", "'a'")
    ]
    assert find_writes(editor("insert", "r.py", insert_line="3", new_str="x = 1")) == [
        Write("r.py", "x = 1", append=True)
    ]
    claude = json.dumps({"file_path": "/w/a.py", "old_string": "x = 1", "new_string": "x = 2"})
    assert find_writes(f"Edit {claude}") == [Write("/w/a.py", "x = 2", "x = 1")]
    assert find_writes(f"Write {json.dumps({'file_path': '/w/b.py', 'content': 'y = 3'})}") == [
        Write("/w/b.py", "y = 3")
    ]
    heredocs = "cat <<'EOF' > a.py\nx = 1\nEOF\ncat >> a.py << EOF\ny = 2\nEOF\npython a.py"
    assert find_writes(heredocs) == [Write("a.py", "x = 1\n"), Write("a.py", "y = 2\n", append=True)]
    assert find_writes("cat > b.py <<-END\n\tz = 3\n\tEND") == [Write("b.py", "z = 3\n")]
    chained = "cd /testbed && cat <<'EOF' > c.py && python c.py\nw = 4\nEOF"  # the body is still the file's
    assert find_writes(chained) == [Write("c.py", "w = 4\n")]
    assert find_writes("cat <<'EOF' | python -\nv = 5\nEOF") == []  # piped, not written
    assert find_writes("sed -i 's/x = 1/x = 2/' a.py") == []  # its result needs the file


def replayed(actions: list[str]) -> WrittenFiles:
    written = WrittenFiles()
    for index, action in enumerate(actions, start=1):
        written.record(make_node(index, Step("", action, "")))
    return written


def test_a_replace_is_applied_to_the_text_it_was_written_in() -> None:
    written = replayed([
        editor("create", "/testbed/r.py", file_text=SCRIPT),
        "cat src/other.py",
        editor("str_replace", "/testbed/r.py", old_str="check(7)", new_str="check(70)"),
        editor("str_replace", "/testbed/src/calc.py", old_str="a - b", new_str="a + b"),
    ])  # fmt: skip
    (script,), _ = written.blocks({"r.py"}, shown=(), tokens=10_000)
    assert script.startswith("- /testbed/r.py as written by steps 1, 3:")
    assert "print('case 7', check(70))" in script and "check(7))" not in script
    (calc,), _ = written.blocks({"calc.py"}, shown=(), tokens=10_000)
    assert calc.startswith("- parts of /testbed/src/calc.py as written by step 4:") and "a + b" in calc
    assert written.blocks({"r.py"}, shown=(1, 3), tokens=10_000) == ([], 0)  # kept steps show it already
    assert written.blocks({"r.py"}, shown=(), tokens=20) == ([], 0)  # whole or not at all
    assert written.edited_in_place() == {"calc.py"}  # the script was written whole, calc.py changed in place


def test_a_change_no_action_shows_is_said_and_a_deleted_file_forgotten() -> None:
    written = replayed([
        "cat <<'EOF' > check.py\nlimit = 1\nEOF",
        "cat <<'EOF' > other.py\nz = 0\nEOF",
        "sed -i 's/limit = 1/limit = 2/' check.py",
        "rm other.py",
    ])  # fmt: skip
    (check,), _ = written.blocks({"check.py", "other.py"}, shown=(), tokens=1000)
    assert "as written by step 1 (step 3 changed it since, not shown here)" in check
    rewritten = replayed(["cat <<'EOF' > check.py\nlimit = 1\nEOF", "sed -i 's/1/2/' check.py",
                          "cat <<'EOF' > check.py\nlimit = 3\nEOF"])  # fmt: skip
    assert "changed it" not in rewritten.blocks({"check.py"}, shown=(), tokens=1000)[0][0]


def test_a_reverted_file_is_forgotten_its_text_is_the_repositorys_again() -> None:
    written = replayed([
        "str_replace_editor str_replace /testbed/pkg/mod.py --old_str 'x = 1' --new_str 'x = 2'",
        "git checkout pkg/mod.py",
    ])  # fmt: skip
    assert written.blocks({"mod.py"}, shown=(), tokens=1000) == ([], 0)


def test_one_file_under_two_spellings_is_one_text() -> None:
    written = replayed([
        "cat <<'EOF' > repro.py\nlimit = 1\nEOF",
        "sed -i 's/limit/bound/' repro.py",
        editor("str_replace", "/testbed/repro.py", old_str="limit = 1", new_str="limit = 2"),
    ])  # fmt: skip
    assert list(written.files) == ["/testbed/repro.py"]
    (text,), _ = written.blocks({"repro.py"}, shown=(), tokens=1000)
    assert "limit = 2" in text  # the replay cannot know what the sed made of it, and says so:
    assert text.startswith(
        "- /testbed/repro.py as written by steps 1, 3 (step 2 changed it too, not shown here)"
    )


def session(
    last_action: str, first: str = editor("create", "/testbed/repro.py", file_text=SCRIPT)
) -> WovenContext:
    """Step 1 (its action `first`) creates a script, step 2 edits it, views fill a 4k budget, and the
    newest step (its action `last_action`) brings a cut."""
    weaver = ContextWeaver(WeaverConfig())
    weaver.begin([{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": "Fix calc."}])
    weaver.add_step(Step("write a reproduction", first, "ok"))
    weaver.add_step(
        Step(
            "widen it",
            editor("str_replace", "/testbed/repro.py", old_str="check(7)", new_str="check(70)"),
            "ok",
        )
    )
    for n in range(3, 8):
        weaver.add_step(Step(f"look {n}", f"cat src/mod_{n}.py", f"value_{n} = {n}\n" * 60))
        assert weaver.context(4000).tokens == weaver.context().tokens  # no cut yet
    weaver.add_step(Step("run it", last_action, "".join(f"case {n} True\n" for n in range(100))))
    context = weaver.context(4000)
    assert context.tokens <= 4000
    return context


def test_a_cut_gives_the_script_the_newest_step_runs_as_it_now_stands() -> None:
    context = session("python /testbed/repro.py")
    modes = {d.index: d.mode for d in context.decisions}
    assert modes[1] == "dropped"  # the create is cut ...
    text = context.text()
    assert "/testbed/repro.py as written by steps 1, 2:" in text  # ... its text, as edited, is not
    assert "print('case 99', check(99))" in text and "check(70)" in text and "check(7))" not in text


def test_a_file_the_newest_steps_do_not_name_gets_no_text() -> None:
    text = session("cat src/mod_3.py").text()
    assert "as written by" not in text and "print('case 99', check(99))" not in text


def test_a_file_changed_in_place_gets_its_text_though_the_newest_steps_do_not_name_it() -> None:
    fix = editor("str_replace", "/testbed/repro.py", old_str="check(1)", new_str=SCRIPT)  # a repository file
    context = session("cat src/mod_3.py", first=fix)
    assert {d.index: d.mode for d in context.decisions}[1] == "dropped"
    text = context.text()
    assert "parts of /testbed/repro.py as written by steps 1, 2:" in text and "check(70)" in text
