from __future__ import annotations

import contextweaver


def test_public_names_resolve_and_are_listed_once() -> None:
    assert len(set(contextweaver.__all__)) == len(contextweaver.__all__)
    for name in contextweaver.__all__:
        assert getattr(contextweaver, name) is not None, name


def test_readme_example_runs() -> None:
    from contextweaver import ContextWeaver, Step, WeaverConfig

    weaver = ContextWeaver(WeaverConfig(window=5, max_parents=3))
    weaver.begin([{"role": "system", "content": "agent"}, {"role": "user", "content": "fix pager.py"}])
    for i in range(8):
        weaver.add_step(Step(thought=f"look {i}", action=f"cat f{i}.py", observation=f"x_{i} = {i}\n" * 50))
        context = weaver.context(max_tokens=16_000)
        assert context.tokens <= 16_000
    assert {d.mode for d in context.decisions} == {"full", "compressed"}
