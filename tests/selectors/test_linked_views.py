"""Many old views of the file the work is on: of those no recent word names, the selection keeps the one
a recent step depends on (its parent) and otherwise the newest, never an old view over a newer one."""

from __future__ import annotations

from contextweaver.config import WeaverConfig
from contextweaver.records import Step
from contextweaver.weaver import ContextWeaver


def test_of_many_unnamed_views_the_parent_and_the_newest_are_excerpted() -> None:
    weaver = ContextWeaver(WeaverConfig(selector="select", mode="per_step"))
    weaver.begin([{"role": "system", "content": "sys"}, {"role": "user", "content": "fix it"}])
    views = []
    for i in range(40):  # views of one file, none holding a word the last steps say; each opens a definition
        lines = [f"   1\tdef view_{i}():", *(f"{n:>4}\tx{i}{n} = {n * i}" for n in range(2, 25))]
        views.append(
            weaver.add_step(Step(f"look {i}: marker_{i}", "nl -ba pkg/mod.py", "\n".join(lines))).index
        )
        weaver.add_step(Step("list", f"ls d{i}", f"f{i}.txt"))
    for _ in range(5):
        weaver.add_step(Step("patch", "sed -i 's/a/b/' pkg/mod.py", ""))
    newest = weaver.add_step(Step("back to marker_12", "ls", ""))  # the view of marker_12 becomes a parent
    parent = views[12]
    assert parent in weaver.graph.node(newest.index).parent_ids

    context = weaver.context()

    excerpted = {d.index for d in context.decisions if d.mode == "trimmed" and d.index in views}
    left_out = set(views) - excerpted
    assert parent in excerpted and views[-1] in excerpted
    assert min(excerpted - {parent}) > max(left_out - {parent}), "an old view was kept over a newer one"
    assert len(left_out) > len(views) // 2, "every view was kept: the candidates are not bounded"
