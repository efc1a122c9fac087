from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import contextweaver
from contextweaver.errors import ContextWeaverError

PACKAGE = Path(contextweaver.__file__).parent
EXPECTED = {
    "STRATEGIES", "Analyzer", "Annotator", "BudgetError", "ContextWeaver", "ContextWeaverError", "Decision",
    "DependencyGraph", "Model", "ModelConfig", "ModelError", "Node", "Parent", "Plan", "Reader", "Selector",
    "Session", "Step", "Store", "StoreError", "Strategy", "Summarizer", "TestStatus", "Trajectory", "TrajectoryError",
    "ValidationStatus", "WeaverConfig", "WovenContext", "__version__", "build_model", "build_strategy",
    "load_config", "load_trajectory", "open_store", "strategy_names",
}  # fmt: skip


def test_public_names_are_exactly_the_documented_ones_and_resolve() -> None:
    assert set(contextweaver.__all__) == EXPECTED
    assert len(set(contextweaver.__all__)) == len(contextweaver.__all__)
    for name in contextweaver.__all__:
        assert getattr(contextweaver, name) is not None, name
    assert contextweaver.__version__.count(".") == 2


def _raised_classes() -> list[tuple[str, str]]:
    """Every exception class the package defines: (module file, class name)."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                isinstance(b, ast.Name) and (b.id.endswith(("Error", "Exception")) or b.id in ("KeyError",))
                for b in node.bases
            ):
                found.append((str(path.relative_to(PACKAGE)), node.name))
    return found


def test_every_error_the_package_defines_descends_from_the_one_root() -> None:
    import importlib

    classes = _raised_classes()
    assert len(classes) >= 15
    for file, name in classes:
        module = importlib.import_module(
            "contextweaver." + file[:-3].replace("/", ".").removesuffix(".__init__")
        )
        cls = getattr(module, name)
        if inspect.isclass(cls) and issubclass(cls, BaseException):
            assert issubclass(cls, ContextWeaverError), (
                f"{file}: {name} does not derive from ContextWeaverError"
            )


def test_errors_keep_their_builtin_bases() -> None:
    with pytest.raises(ValueError):
        raise contextweaver.TrajectoryError("bad file")
    with pytest.raises(RuntimeError):
        raise contextweaver.ModelError("down")
    with pytest.raises(ContextWeaverError):
        raise contextweaver.BudgetError("too small")


def test_readme_example_runs() -> None:
    from contextweaver import ContextWeaver, Step, WeaverConfig

    weaver = ContextWeaver(WeaverConfig(window=5, max_parents=3))
    weaver.begin([{"role": "system", "content": "agent"}, {"role": "user", "content": "fix pager.py"}])
    for i in range(8):
        weaver.add_step(Step(thought=f"look {i}", action=f"cat f{i}.py", observation=f"x_{i} = {i}\n" * 50))
        context = weaver.context(max_tokens=16_000)
        assert context.tokens <= 16_000
    assert {d.mode for d in context.decisions} == {"full"}  # 16k never reached: the history passes through
    cut = weaver.context(max_tokens=900)
    modes = {d.index: d.mode for d in cut.decisions}
    assert cut.tokens <= 900 and modes[8] == "full"  # the current step stays whole
    assert {modes[i] for i in range(1, 6)} <= {"compressed", "dropped"}  # older outputs go first
