"""The package's rooms import only downward: no import runs back up the layers, so no circle crosses a
room, and the top package stays a handful of modules (ARCHITECTURE.md draws the same order)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "contextweaver"
LAYERS = (
    "errors",
    "extras",
    "registry",
    "records",
    "tokens",
    "config",
    "formats",
    "validation",
    "nodes",
    "weaving",
    "protocols",
    "models",
    "prompts",
    "summaries",
    "analyzers",
    "annotate",
    "selectors",
    "boundary",
    "weaver",
    "baselines",
    "strategies",
    "prompt_cache",
    "store",
    "testing",
    "examples",
    "export",
    "eval",
    "integrations",
    "serve",
    "cli",
    "__main__",
)
"""Lowest first: a room may import itself and the rooms before it. The package root re-exports the API."""
TOP_MODULES = 12


def room(module: str) -> str:
    """`contextweaver.nodes.graph` -> `nodes` (a top module or subpackage)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> list[tuple[int, str]]:
    """Every contextweaver module `path` imports, anywhere in it (function bodies and TYPE_CHECKING too)."""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            name = ".".join([*base, node.module] if node.module else base)
            if name == "contextweaver":  # `from contextweaver import boundary`: the modules named
                names = [
                    alias.name for alias in node.names if alias.name != "__version__"
                ]  # metadata, not a room
                out += [(node.lineno, f"{name}.{alias}") for alias in names]
            else:
                out.append((node.lineno, name))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
    return [(line, name) for line, name in out if name.split(".")[0] == "contextweaver"]


def is_example_script(path: Path) -> bool:
    """An example script the package ships (`python -m contextweaver.examples.NAME`): user code, which
    imports the package as a user does (its root, the integrations), so outside the layers."""
    return path.parent == SRC / "examples" and path.name != "__init__.py"


def upward_imports() -> list[str]:
    rank = {name: i for i, name in enumerate(LAYERS)}
    found = []
    for path in sorted(SRC.rglob("*.py")):
        here = room(module_name(path))
        if not here or is_example_script(path):
            continue
        for line, name in imported(path):
            there = room(name)
            if (
                there
                and there not in rank
                and (SRC / f"{there}.py").exists() is False
                and not (SRC / there).is_dir()
            ):
                there = ""  # `from contextweaver import Step`: a name the root re-exports
            if not there:
                found.append(f"{path.relative_to(SRC)}:{line} imports the package root")
            elif there != here and rank[there] > rank[here]:
                found.append(
                    f"{path.relative_to(SRC)}:{line} ({here}) imports {name} ({there}, a higher room)"
                )
    return found


def test_every_room_has_a_layer() -> None:
    rooms = {
        p.stem if p.is_file() else p.name
        for p in SRC.iterdir()
        if p.suffix == ".py" or (p / "__init__.py").exists()
    }
    assert rooms - {"__init__"} == set(LAYERS)


def test_no_import_runs_back_up_the_layers() -> None:
    assert upward_imports() == []


def test_the_checker_sees_an_upward_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check itself can fail: an import of the weaver from the records is reported."""
    fake = tmp_path / "contextweaver"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "records.py").write_text("def f():\n    from contextweaver.weaver import ContextWeaver\n")
    (fake / "weaver.py").write_text("from contextweaver import records\nfrom contextweaver import Step\n")
    monkeypatch.setattr(__import__(__name__, fromlist=["SRC"]), "SRC", fake)
    assert upward_imports() == [
        "records.py:2 (records) imports contextweaver.weaver (weaver, a higher room)",
        "weaver.py:2 imports the package root",
    ]


def test_the_top_package_is_a_handful_of_modules() -> None:
    modules = sorted(p.name for p in SRC.glob("*.py") if p.name != "__init__.py")
    assert len(modules) <= TOP_MODULES, modules
