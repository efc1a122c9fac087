"""Many old views of the file the work is on: the ones no recent word names rank by parent bonus, then age."""

from __future__ import annotations

import pytest

from contextweaver.config import WeaverConfig
from contextweaver.records import Step
from contextweaver.selectors.select import SelectSelector
from contextweaver.weaver import ContextWeaver


def test_of_many_unnamed_views_the_newest_are_offered(monkeypatch: pytest.MonkeyPatch) -> None:
    weaver = ContextWeaver(WeaverConfig(selector="select", mode="per_step"))
    weaver.begin([{"role": "system", "content": "sys"}, {"role": "user", "content": "fix it"}])
    for i in range(40):  # views of one file, none holding a word the last steps say
        view = "\n".join(f"{n:>4}\tx{i}{n} = {n * i}" for n in range(1, 25))
        weaver.add_step(Step(f"look {i}: marker_{i}", "nl -ba pkg/mod.py", view))
        weaver.add_step(Step("list", f"ls d{i}", f"f{i}.txt"))
    for _ in range(5):
        weaver.add_step(Step("patch", "sed -i 's/a/b/' pkg/mod.py", ""))
    weaver.add_step(Step("back to marker_12", "ls", ""))  # its view becomes a parent: no word names it
    offered: list[int] = []
    original = SelectSelector._offer

    def record(self: SelectSelector, index: int, *args: object) -> object:
        offered.append(index)
        return original(self, index, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(SelectSelector, "_offer", record)
    selector = weaver.selector
    assert isinstance(selector, SelectSelector)
    k = len(weaver.graph) - 1
    parents = {p for i in range(k - selector.lookback + 1, k + 1) for p in weaver.graph.node(i).parent_ids}
    weaver.context()
    views = [i for i in range(1, k + 1) if weaver.graph.node(i).step.action.startswith("nl ")]
    expected = sorted(views, key=lambda i: (i not in parents, -i))[: selector.candidates]
    assert offered == expected and len(views) > 2 * selector.candidates
    assert offered[:3] == [79, 25, 77]  # an old view that is a recent step's parent ranks with the newest
