"""No import circle inside a room: two modules of one room never import each other, directly or round a
ring, wherever the import stands (module level, a function body, `TYPE_CHECKING`). A type both need lives
in the lower module (the layers, test_layers.py, keep circles from crossing rooms)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.architecture import test_layers as layers
from tests.architecture.test_layers import imported, module_name


def owner(name: str, modules: set[str]) -> str | None:
    """The module an imported name lives in: `contextweaver.eval.report.fmt` -> `contextweaver.eval.report`."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imports_by_module() -> dict[str, set[str]]:
    """Each module's imports of modules in its own room (the room's `__init__` included)."""
    paths = {module_name(path): path for path in sorted(layers.SRC.rglob("*.py"))}
    modules = set(paths)
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        room = layers.room(name)
        targets = {owner(target, modules) for _, target in imported(path)}
        graph[name] = {
            target for target in targets if target and target != name and room and layers.room(target) == room
        }
    return graph


def circles() -> list[list[str]]:
    """The import circles, each as the sorted modules of one strongly connected component (Tarjan)."""
    graph = imports_by_module()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph.get(module, ())):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)


def test_no_room_has_an_import_circle() -> None:
    assert circles() == []


def test_the_checker_sees_a_circle_through_a_function_body(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ring of three modules closed by an import in a function body is found; a one-way import is not."""
    fake = tmp_path / "contextweaver"
    (fake / "eval").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "eval" / "__init__.py").write_text("")
    (fake / "eval" / "report.py").write_text("from contextweaver.eval.tables import number\n")
    (fake / "eval" / "tables.py").write_text("from contextweaver.eval import rows\n")
    (fake / "eval" / "rows.py").write_text("def f():\n    from contextweaver.eval.report import fmt\n")
    (fake / "eval" / "plots.py").write_text("from contextweaver.eval.rows import f\n")
    monkeypatch.setattr(layers, "SRC", fake)
    assert circles() == [
        ["contextweaver.eval.report", "contextweaver.eval.rows", "contextweaver.eval.tables"]
    ]
