"""BM25 retrieval baseline: keeps the current step plus the earlier steps most similar to it (real bm25s)."""

from __future__ import annotations

from contextweaver.baselines import BASELINES
from contextweaver.baselines.bm25 import BM25Retrieval, terms
from contextweaver.records import Step

ROOT = [{"role": "system", "content": "agent"}, {"role": "user", "content": "Fix the parser."}]


def _noise(i: int) -> Step:
    return Step(f"look around {i}", f"ls dir{i}", f"file{i}.txt other{i}.txt")


def test_terms_keep_whole_paths_and_their_parts() -> None:
    found = terms("cat astropy/io/ascii/html.py and NDArithmeticMixin")
    assert "astropy/io/ascii/html.py" in found and "html" in found and "ndarithmeticmixin" in found


def test_keeps_the_old_step_that_shares_rare_terms_with_the_latest() -> None:
    strategy = BASELINES.get("bm25")(k=2)
    assert isinstance(strategy, BM25Retrieval)
    strategy.begin(ROOT)
    strategy.add_step(
        Step("read", "cat pkg/tokenizer_core.py", "def split_tokens(text): return quirky_regex.findall(text)")
    )
    for i in range(8):
        strategy.add_step(_noise(i))
    strategy.add_step(
        Step("fix split_tokens", "sed -i 's/quirky_regex/clean_regex/' pkg/tokenizer_core.py", "")
    )
    context = strategy.context()
    assert context.kept == [1, 10]  # steps sharing no term with step 10 score 0 and are not retrieved
    assert all(d.mode == "compressed" for d in context.decisions if d.index not in context.kept)
    reason = next(d.reason for d in context.decisions if d.index == 1)
    assert "BM25 match to step 10" in reason


def test_warmup_keeps_everything_and_budget_is_respected() -> None:
    strategy = BM25Retrieval(k=3)
    strategy.begin(ROOT)
    for i in range(4):
        strategy.add_step(_noise(i))
    assert strategy.context().kept == [1, 2, 3, 4]
    for i in range(4, 12):
        strategy.add_step(_noise(i))
    assert strategy.context(max_tokens=120).tokens <= 120


def test_ranking_is_computed_once_per_step_for_all_budgets() -> None:
    strategy = BM25Retrieval(k=2)
    strategy.begin(ROOT)
    for i in range(6):
        strategy.add_step(_noise(i))
    first = strategy.ranked()
    assert strategy.ranked() is first  # cached until the next step arrives
    strategy.add_step(_noise(1))
    assert strategy.ranked() is not first and strategy.ranked()[0][0] == 2  # step 2 holds dir1/file1 too
