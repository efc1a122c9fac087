"""Metric 9, evidence delivered by query: what a cut left out, asked for by the next step's own words."""

from __future__ import annotations

from tests.core.helpers import ROOT

from contextweaver.eval.query_recall import Transcript, query_recall, without
from contextweaver.formats.base import Trajectory
from contextweaver.records import Step

CONSTANT = "PAGE_OFFSET_7731"


def run(steps: int = 60) -> Trajectory:
    """Step 2 prints a constant once; many big steps later the agent edits with it (its source is cut)."""
    out = [Step(thought="List the pager files.", action="ls src/pager", observation="pager.py\nutil.py")]
    out.append(
        Step(
            thought="Read the pager settings.",
            action="cat src/pager/settings.py",
            observation=f"# pager settings\nDEFAULT_SIZE = 20\noffset_name = {CONSTANT}\n",
        )
    )
    for i in range(3, steps):
        body = "\n".join(
            f"src/pager/mod_{i}.py:{j}: def helper_{i}_{j}(items): return items" for j in range(60)
        )
        out.append(
            Step(thought=f"Search part {i}.", action=f"grep -rn helper_{i} src/pager", observation=body)
        )
    out.append(
        Step(
            thought="Use the offset name from the pager settings.",
            action=f"python tools/rename.py --to {CONSTANT} src/pager/pager.py",
            observation="",
        )
    )
    return Trajectory(root=list(ROOT), steps=out)


def test_the_query_brings_back_what_the_cut_left_out_where_the_baselines_do_not() -> None:
    records = query_recall(run())
    last = next(r for r in records if r["step"] == 60)
    assert last["items"] == 1  # the constant: its only source, step 2, is not whole in the context
    assert last["query@2000"] == 1
    assert last["newest@2000"] == 0  # recent outputs fill the newest 2,000 tokens
    assert all(r[f"{m}@{b}"] <= r["items"] for r in records for m in ("query", "grep", "newest", "bm25")
               for b in (1000, 2000, 4000))  # fmt: skip


def test_the_query_holds_none_of_the_items_it_asks_for() -> None:
    assert without("use PAGE_OFFSET_7731 and PAGE_OFFSET", ["PAGE_OFFSET", "PAGE_OFFSET_7731"]) == "use and "


def test_the_baselines_read_the_transcript_as_the_agent_saw_it() -> None:
    transcript = Transcript()
    transcript.add(
        [
            {"role": "user", "content": "alpha common\nbeta common\ngamma rare_word common"},
            {"role": "assistant", "content": "common"},
        ]
    )
    assert transcript.grep("rare_word gamma", 1000) == "gamma rare_word common"
    assert transcript.newest(4).endswith("common") and "alpha" not in transcript.newest(4)
    assert transcript.bm25("rare_word", 1000).startswith("alpha common")  # the message holding it, whole
