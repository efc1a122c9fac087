"""Edit detection and edit-support evidence on actions written the way agents write them."""

from __future__ import annotations

from contextweaver.eval.edits import Edit, edit_evidence, find_copies, find_deletions, find_edits
from contextweaver.formats.base import Trajectory
from contextweaver.records import Step


def test_sed_substitution_gives_target_and_unescaped_old_text() -> None:
    edits = find_edits(
        "sed -i 's/if mark not in seen:/if id(mark) not in seen:/' src/_pytest/mark/structures.py"
    )
    assert edits == [Edit("src/_pytest/mark/structures.py", ("if mark not in seen:",))]
    escaped = find_edits(r"sed -i 's|a\.b(\[0\])|c|g' pkg/mod.py && python -m pytest")
    assert escaped == [Edit("pkg/mod.py", ("a.b([0])",))]


def test_sed_line_commands_need_their_line_numbers() -> None:
    assert find_edits("sed -i '315d' django/db/models/constraints.py") == [
        Edit("django/db/models/constraints.py", ("315",))
    ]


def test_sed_without_in_place_flag_is_a_read() -> None:
    assert find_edits("nl -ba a.py | sed -n '10,20p'") == []
    assert find_edits("sed -n 's/x/y/p' a.py") == []


def test_heredoc_and_redirects_are_writes_without_old_text() -> None:
    action = "cat <<'EOF' > reproduce.py\nprint(1)\nEOF\npython reproduce.py > out.txt 2>&1"
    assert find_edits(action) == [Edit("reproduce.py"), Edit("out.txt")]
    assert find_edits("python x.py 2>/dev/null") == []


def test_a_greater_than_in_quoted_code_or_an_edit_body_is_no_redirect() -> None:
    script = """sed -i "s/if v > extension.version:/if parse(v) > parse(extension.version):/" sphinx/ext.py"""
    assert [e.path for e in find_edits(script)] == ["sphinx/ext.py"]
    assert find_edits("edit 12:14\n    def f(self) -> t.Optional:\n        return x\nend_of_edit") == []
    assert find_edits("echo 'x' > 'out.txt'") == [Edit("out.txt")]
    script = "cat <<'EOF' > setup.sh\nmkdir app\ncat <<'PY' > app/settings.py\nX = 1\nPY\nEOF"
    assert find_edits(script) == [Edit("setup.sh")]  # the script's own heredoc runs only when it does


def test_deletions_are_the_paths_rm_and_git_rm_name() -> None:
    action = "cd /testbed && rm -f reproduce.py check.py 2>/dev/null; git rm -q --cached src/old.py && ls"
    assert find_deletions(action) == ["reproduce.py", "check.py", "src/old.py"]
    assert find_deletions("rm -f *.pyc $TMP; find . -name x -exec rm {} \\;") == []
    assert find_deletions("cat <<'EOF' > notes.txt\nrm nothing.py\nEOF") == []  # a heredoc body
    assert find_deletions("python -m pytest --rm-cache") == []


def test_copies_moves_and_touches_write_their_targets() -> None:
    action = "mv Repro.java src/test/ && cp a.py 'a.py.bak'; cp -r pkg pkg2\ntouch app/__init__.py app/m.py"
    assert find_copies(action) == ["src/test/Repro.java", "a.py.bak", "app/__init__.py", "app/m.py"]
    assert find_copies("cat <<'EOF' > notes.txt\ncp a b\nEOF") == []  # a heredoc body


def test_editor_tools_in_text_and_json_form() -> None:
    text = "str_replace_editor str_replace /repo/a.py --old_str 'x = 1' --new_str 'x = 2'"
    assert find_edits(text) == [Edit("/repo/a.py", ("x = 1",))]
    as_json = 'str_replace_editor {"command": "str_replace", "path": "/repo/b.py", "old_str": "y = 1", "new_str": "y"}'
    assert find_edits(as_json) == [Edit("/repo/b.py", ("y = 1",))]
    viewing = 'str_replace_editor {"command": "view", "path": "/repo/b.py"}'
    assert find_edits(viewing) == []


def test_edit_evidence_keeps_only_what_an_earlier_output_supplied(bugfix: Trajectory) -> None:
    (evidence,) = edit_evidence(bugfix)
    assert evidence.index == 7
    # old text seen only in `cat shop/discount.py` output; the helper only in `cat shop/helpers_v2.py` output
    assert "math.floor(price * RATE_TABLE[0])" in evidence.items
    assert "round_half_up" in evidence.items
    assert "shop/discount.py" not in evidence.items  # said in an earlier action: always in context


def test_edit_evidence_drops_text_the_task_already_holds() -> None:
    steps = [
        Step("look", "cat a.py", "value = compute_total()\nother = 1"),
        Step("list", "ls", "a.py b.py"),
        Step("status", "git status", "clean"),
        Step("fix", "sed -i 's/compute_total()/compute_sum()/' a.py", ""),
    ]
    task_holds = Trajectory([{"role": "user", "content": "compute_total() is wrong"}], steps)
    assert edit_evidence(task_holds)[0].items == frozenset()  # the task is in every context
    task_silent = Trajectory([{"role": "user", "content": "the total is wrong"}], steps)
    assert "compute_total()" in edit_evidence(task_silent)[0].items
    crowded = Trajectory(task_silent.root, [steps[0], steps[0], steps[2], steps[3]])
    assert "compute_total()" not in edit_evidence(crowded)[0].items  # in over half of the outputs: too common
