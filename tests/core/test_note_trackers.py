"""The note's incremental records (changed files, written texts, the files line's costs) against a
recomputation over the whole run, as the note made them before it kept them per step."""

from __future__ import annotations

from dataclasses import replace
from random import Random

from hypothesis import example, given, settings
from hypothesis import strategies as st

from contextweaver.nodes.extract import make_node
from contextweaver.nodes.views import SpellingIndex, file_key, same_file
from contextweaver.records import Node, Step
from contextweaver.tokens import PIECE_CHARS, count_text
from contextweaver.weaving.changed import ChangedFiles, Fenwick, item_tokens
from contextweaver.weaving.working_state import FILES, FileForms, _shortened, _tokens
from contextweaver.weaving.written import WrittenFiles

SPELLINGS = ["a.py", "./a.py", "src/a.py", "/testbed/src/a.py", "lib/a.py", "b.py", "/testbed/b.py",
             "pkg/", "/pkg/", "pkg", "/", "./", "", "x//", "c.py"]  # fmt: skip
"""One file under several spellings, two files of one name, folders, and paths that name no file."""
paths = st.sampled_from(SPELLINGS)
few = st.frozensets(paths, max_size=3)


def node(index: int, edited: frozenset[str], deleted: frozenset[str], reverted: frozenset[str]) -> Node:
    made = make_node(index, Step("", "ls", ""))
    made.facts = replace(made.facts, edited_files=edited, deleted_files=deleted, reverted_files=reverted)
    return made


def changed_by_scan(nodes: list[Node]) -> list[tuple[str, int, str]]:
    """The note's former recomputation at every weave: every step's changes, in order."""
    last: dict[str, tuple[int, str]] = {}
    for n in nodes:
        facts = n.facts
        for how, found in (("", facts.edited_files), ("deleted", facts.deleted_files)):
            last.update(dict.fromkeys(found, (n.index, how)))
        for path in facts.reverted_files:
            known = next((p for p in last if same_file(p, path)), path)
            last[known] = (n.index, "reverted")
    return sorted(((p, s, how) for p, (s, how) in last.items()), key=lambda item: (-item[1], item[0]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(few, few, few), max_size=25))
def test_the_changed_files_kept_per_step_are_those_a_scan_of_the_run_finds(
    steps: list[tuple[frozenset[str], frozenset[str], frozenset[str]]],
) -> None:
    changed = ChangedFiles()
    nodes = []
    for index, facts in enumerate(steps, start=1):
        nodes.append(node(index, *facts))
        changed.record(nodes[-1])
        expected = changed_by_scan(nodes)
        assert [(c.path, c.step, c.how) for c in changed.newest()] == expected
        for n in range(len(expected) + 1):  # the costs of the n most recent, as summed one by one
            assert changed.bare_tokens(n) == sum(item_tokens(c.bare) for c in list(changed.newest())[:n])
        if expected:  # what each form costs is what its line, written out, counts to
            assert FileForms(changed).costs == forms_costs(changed)


def forms_costs(changed: ChangedFiles) -> list[int]:
    """The tokens of the files line's forms, written out (`_tokens`: the line's count and its break)."""
    forms = FileForms(changed)
    return [_tokens(*forms.lines(k)) for k in range(len(forms.costs))]


def test_the_files_line_is_written_as_the_note_wrote_it() -> None:
    rng = Random(7)
    nodes = [node(i, frozenset(rng.sample(SPELLINGS, 2)), frozenset(), frozenset()) for i in range(1, 40)]
    changed = ChangedFiles.of(nodes)
    entries = changed_by_scan(nodes)
    dated = [f"{p} ({how + ', ' if how else ''}step {s})" for p, s, how in entries[:FILES]]
    bare = [p + (f" ({how})" if how else "") for p, _, how in entries]
    written = [[f"- files changed so far: {', '.join(dated + bare[FILES:])}"],
               *_shortened("- files changed: ", bare, "older")]  # fmt: skip
    forms = FileForms(changed)
    assert [forms.lines(k) for k in range(len(forms.costs))] == written


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 30), st.integers(-5, 5)), max_size=60))
def test_the_fenwick_sums_are_the_lists(ops: list[tuple[bool, int, int]]) -> None:
    tree, values = Fenwick(), []
    for append, value, delta in ops:
        if append or not values:
            tree.append(value)
            values.append(value)
        else:
            position = value % len(values)
            delta = max(delta, -values[position])  # values stay >= 0, as counts and tokens do
            tree.add(position, delta)
            values[position] += delta
        assert [tree.prefix(n) for n in range(len(values) + 1)] == [
            sum(values[:n]) for n in range(len(values) + 1)
        ]
        for target in range(sum(values) + 1):
            assert tree.last_at_most(target) == max(
                n for n in range(len(values) + 1) if sum(values[:n]) <= target
            )


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.booleans(), paths), max_size=20), paths)
def test_the_index_finds_every_spelling_a_scan_finds(ops: list[tuple[bool, str]], query: str) -> None:
    index, known = SpellingIndex(), {}
    for add, path in ops:
        if add:
            index.add(path)
            known.setdefault(path, None)
        else:
            index.discard(path)
            known.pop(path, None)
    assert index.spellings(query) == [p for p in known if same_file(p, query)]


def test_one_file_is_one_name_for_any_spelling_that_names_a_file() -> None:
    for a in SPELLINGS:
        for b in SPELLINGS:
            if same_file(a, b) and a.removeprefix("./").rstrip("/") and b.removeprefix("./").rstrip("/"):
                assert file_key(a) == file_key(b), (a, b)


class WrittenByScan(WrittenFiles):
    """The former WrittenFiles: a scan over every file per lookup and per weave."""

    def record(self, node: Node) -> None:
        from contextweaver.nodes.writes import find_writes

        facts = node.facts
        writes = find_writes(node.step.action) if facts.edited_files or "<<" in node.step.action else []
        for write in writes:
            self._apply_by_scan(node.index, write)
        written = {w.path for w in writes}
        gone = (facts.deleted_files | facts.reverted_files) - written
        changed = facts.edited_files - written
        for path in list(self.files):
            if any(same_file(path, g) for g in gone):
                del self.files[path]
            elif any(same_file(path, c) for c in changed):
                self.changed_since[path] = node.index

    def _apply_by_scan(self, index: int, write) -> None:  # type: ignore[no-untyped-def]
        from contextweaver.weaving.written import PARTS, Part

        known = next((p for p in self.files if same_file(p, write.path)), write.path)
        parts = self.files.pop(known, [])
        if known in self.changed_since:
            self.changed_since[write.path] = self.changed_since.pop(known)
        if write.old is None and not write.append:
            parts = [Part(write.new, [index], True)]
            self.changed_since.pop(write.path, None)
        elif write.append and parts and parts[-1].whole:
            parts[-1] = Part(parts[-1].text + write.new, [*parts[-1].steps, index], True)
        else:
            target = next((p for p in reversed(parts) if write.old and write.old in p.text), None)
            if target is not None and write.old is not None:
                target.text = target.text.replace(write.old, write.new, 1)
                target.steps.append(index)
            elif write.new.strip():
                parts = [p for p in parts if not p.whole][-(PARTS - 1) :] + [Part(write.new, [index], False)]
        if parts:
            self.files[write.path] = parts

    def edited_in_place(self) -> set[str]:
        return {file_key(path) for path, parts in self.files.items() if not parts[0].whole}

    def blocks(self, named, shown, tokens):  # type: ignore[no-untyped-def]
        from contextweaver.weaving.written import _block

        out, taken, kept = [], 0, set(shown)
        for path, parts in reversed(self.files.items()):
            steps = sorted({s for p in parts for s in p.steps})
            if file_key(path) not in named or kept.issuperset(steps):
                continue
            block = _block(path, parts, steps, self.changed_since.get(path))
            cost = count_text(block) + 1
            if taken + cost <= tokens:
                out.append(block)
                taken += cost
        return out, taken


FILE_PATHS = ["r.py", "/testbed/r.py", "src/r.py", "lib/r.py", "s.py", "./s.py", "t.py"]


def write_action(kind: int, path: str, n: int) -> tuple[str, frozenset[str], frozenset[str], frozenset[str]]:
    """An action of one kind on `path` (the step's action and its edited / deleted / reverted files)."""
    one = frozenset({path})
    if kind == 0:
        return f"cat <<'EOF' > {path}\nv = {n}\nw = {n}\nEOF", one, frozenset(), frozenset()
    if kind == 1:
        return f"cat <<'EOF' >> {path}\nu = {n}\nEOF", one, frozenset(), frozenset()
    if kind == 2:
        old = f"v = {n % 4}"
        return (f"str_replace_editor str_replace {path} --old_str '{old}' --new_str 'v = {n}'",
                one, frozenset(), frozenset())  # fmt: skip
    if kind == 3:
        return (
            f"str_replace_editor str_replace {path} --old_str 'q' --new_str 'p{n}'",
            one,
            frozenset(),
            frozenset(),
        )
    if kind == 4:
        return f"sed -i 's/v/w/' {path}", one, frozenset(), frozenset()
    if kind == 5:
        return f"rm {path}", frozenset(), one, frozenset()
    return f"git checkout {path}", frozenset(), frozenset(), one


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 6), st.sampled_from(FILE_PATHS)), max_size=25),
    st.lists(
        st.tuples(
            st.frozensets(st.sampled_from(["r.py", "s.py", "t.py", "u.py"])),
            st.frozensets(st.integers(1, 25)),
            st.integers(0, 400),
        ),
        max_size=4,
    ),  # fmt: skip
)
@example(  # a write under a spelling both of two files match: the first is taken, the other keeps its place
    [(0, "src/r.py"), (0, "lib/r.py"), (2, "r.py"), (0, "s.py"), (0, "r.py")],
    [(frozenset({"r.py"}), frozenset(), 400)],
)
def test_the_written_files_indexed_by_name_are_those_a_scan_keeps(
    actions: list[tuple[int, str]], weaves: list[tuple[frozenset[str], frozenset[int], int]]
) -> None:
    indexed, scanned = WrittenFiles(), WrittenByScan()
    for index, (kind, path) in enumerate(actions, start=1):
        action, edited, deleted, reverted = write_action(kind, path, index)
        step = make_node(index, Step("", action, ""))
        step.facts = replace(step.facts, edited_files=edited, deleted_files=deleted, reverted_files=reverted)
        indexed.record(step)
        scanned.record(step)
        assert indexed.files == scanned.files and list(indexed.files) == list(scanned.files)
        assert indexed.changed_since == scanned.changed_since
        assert indexed.edited_in_place() == scanned.edited_in_place()
        for named, shown, tokens in weaves:
            assert indexed.blocks(named, shown, tokens) == scanned.blocks(named, shown, tokens)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.frozensets(st.text(st.sampled_from("aZ9_-./ ()'sü,+:"), max_size=10), max_size=3), max_size=40
    )
)
def test_what_a_form_of_the_files_line_costs_is_what_its_line_counts_to(edits: list[frozenset[str]]) -> None:
    changed = ChangedFiles.of(node(i, paths, frozenset(), frozenset()) for i, paths in enumerate(edits, 1))
    if len(changed):
        assert FileForms(changed).costs == forms_costs(changed)


def test_a_files_line_too_long_to_encode_whole_is_counted_as_written() -> None:
    changed = ChangedFiles.of(
        node(i, frozenset({f"src/pkg_{i}/module_{i}.py"}), frozenset(), frozenset()) for i in range(1, 900)
    )
    forms = FileForms(changed)
    assert len(forms.lines(1)[0]) > PIECE_CHARS and forms.tokens(1) == _tokens(*forms.lines(1))
