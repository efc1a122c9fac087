"""Long single-turn OpenHands runs: every view the SDK's agent hands its condenser when thinking comes on the
first response only, so the whole run is one tool loop the SDK keeps whole or not at all. For ContextWeaver's
condenser: how many views are refused, answered with the loop as text, sent past the budget, or break an SDK
view property. For the SDK's own LLMSummarizingCondenser (default sizes) asked to condense the same views: how
many leave it nothing it may forget but everything after the system prompt (its hard context reset: an LLM
summary in place of the task and every call).

    .venv-openhands/bin/python benchmarks/openhands_tool_loops.py               # budget 8000, all dev runs
    .venv-openhands/bin/python benchmarks/openhands_tool_loops.py --budget 16000 --runs 5

The views are built with the SDK's own event types from the recorded dev runs (tests/integrations/
openhands_streams.py); needs the SDK (Python 3.12+) and the data beside the clone.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

import data_absent

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")

from openhands.sdk import LLM  # noqa: E402
from openhands.sdk.context.condenser.llm_summarizing_condenser import default_condenser  # noqa: E402
from pydantic import SecretStr  # noqa: E402
from tests.integrations.openhands_streams import (  # noqa: E402
    broken_properties,
    call_points,
    sdk_view,
    sent_tokens,
    single_turn,
)

from contextweaver.integrations.openhands import ContextWeaverCondenser  # noqa: E402
from contextweaver.integrations.openhands.loop_note import NOTE_ID  # noqa: E402
from contextweaver.weaving.budget import BudgetError  # noqa: E402

RUNS = data_absent.DATA / "trajectories" / "mini-swe-agent"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--runs", type=int, default=None, help="the first N runs (default: all)")
    args = parser.parse_args()
    if not RUNS.exists():
        return data_absent.report([RUNS])
    logging.getLogger("contextweaver").setLevel(logging.WARNING)  # each condenser announces its settings
    sdk = default_condenser(LLM(model="openai/never-called", api_key=SecretStr("x"), usage_id="summary"))
    counts = dict.fromkeys(("views", "refused", "as text", "over budget", "broken", "sdk resets"), 0)
    for run in sorted(RUNS.glob("*.traj.json"))[: args.runs]:
        events = single_turn(run)
        condenser = ContextWeaverCondenser(contextweaver={"budget": args.budget})
        for point in call_points(events):
            view = sdk_view(events[:point])
            counts["views"] += 1
            try:
                out = condenser.condense(view)
            except BudgetError:
                counts["refused"] += 1
                continue
            counts["broken"] += bool(broken_properties(out.events, events[:point]))
            counts["over budget"] += sent_tokens(out.events) > args.budget
            if any(e.id == NOTE_ID for e in out.events):
                counts["as text"] += 1
                asked = view.model_copy(update={"unhandled_condensation_request": True})
                forgotten, _ = sdk._get_forgotten_events(asked)
                counts["sdk resets"] += not forgotten
    print(
        f"budget {args.budget:,}: {counts['views']} views; ContextWeaver refused {counts['refused']}, answered "
        f"{counts['as text']} with the loop as text, {counts['over budget']} past the budget, "
        f"{counts['broken']} breaking an SDK view property; of the views answered as text, the SDK's "
        f"LLMSummarizingCondenser finds nothing to forget but the whole history in {counts['sdk resets']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
