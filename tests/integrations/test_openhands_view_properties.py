"""The condenser's views keep every OpenHands SDK view property (the SDK's own `ALL_PROPERTIES`), on recorded
runs stored as the SDK stores Claude without interleaved thinking (thinking on the first response after
each user message only, so tool loops span many steps), with a person's messages, an earlier Condensation's
summary and a crash recovery's late duplicate observation. Runs where the SDK is installed (.venv-openhands)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.shared_data import SHARED_DATA, absent

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
pytest.importorskip("openhands.sdk")

from openhands.sdk.context.view import View  # noqa: E402
from openhands.sdk.event import (  # noqa: E402
    ActionEvent,
    Condensation,
    CondensationRequest,
    CondensationSummaryEvent,
    MessageEvent,
    ObservationBaseEvent,
)

from contextweaver.integrations.openhands import ContextWeaverCondenser  # noqa: E402
from contextweaver.integrations.openhands.condenser import LOOP_AS_TEXT  # noqa: E402
from contextweaver.integrations.openhands.loop_note import NOTE_ID  # noqa: E402
from contextweaver.weaving.budget import BudgetError  # noqa: E402
from tests.integrations.openhands_streams import (  # noqa: E402
    broken_properties,
    call_points,
    sdk_view,
    sent_tokens,
    single_turn,
    stream,
)

RUNS = SHARED_DATA / "trajectories" / "mini-swe-agent"
BUDGET = 9000


def runs(count: int) -> list[Path]:
    if not RUNS.exists():
        pytest.skip(absent(RUNS))
    return sorted(RUNS.glob("*.traj.json"))[:count]


@pytest.mark.parametrize("run", runs(3), ids=lambda p: p.name.split(".")[0])
def test_every_condensed_view_keeps_the_sdks_properties(run: Path) -> None:
    events = stream(run)
    condenser = ContextWeaverCondenser(contextweaver={"budget": BUDGET})
    cut = 0
    for point in call_points(events):
        view = sdk_view(events[:point])
        out = condenser.condense(view)
        assert isinstance(out, View)
        assert broken_properties(out.events, events[:point]) == {}, point
        ids = [e.id for e in out.events]
        assert len(ids) == len(set(ids)), point  # each event its own id (TEST STATUS, the note)
        assert len(view.events) < 2 or out.events[1] is view.events[1]  # the task, never dropped
        summaries = {e.id for e in view.events if isinstance(e, CondensationSummaryEvent)}
        assert summaries <= set(ids), point
        cut += len(out.events) < len(view.events)
    assert cut > 10  # the budget made it cut: the properties held through real cuts


def test_the_task_is_never_a_step_before_it_arrives() -> None:
    events = stream(runs(1)[0])
    condenser = ContextWeaverCondenser(contextweaver={"budget": BUDGET})
    system_only = sdk_view(events[:1])
    assert condenser.condense(system_only) is system_only  # nothing to weave yet
    points = list(call_points(events))
    out = condenser.condense(sdk_view(events[: points[-1]]))
    assert isinstance(out.events[1], MessageEvent) and out.events[1] is events[1]


def test_a_condensation_request_is_answered_and_the_next_context_is_smaller() -> None:
    events = stream(runs(1)[0])
    condenser = ContextWeaverCondenser(contextweaver={"budget": 40_000})
    assert condenser.handles_condensation_requests()
    view = sdk_view(events[: list(call_points(events))[30]])
    condenser.condense(view)
    tokens = condenser.last_context.tokens
    view.unhandled_condensation_request = True
    condensation = condenser.condense(view)
    assert (
        isinstance(condensation, Condensation) and not condensation.forgotten_event_ids
    )  # the log keeps all
    view.append_event(condensation)
    assert not view.unhandled_condensation_request
    condenser.condense(view)
    assert condenser.last_context.tokens < tokens
    assert condenser.contextweaver.budget == 40_000  # the request shrank that view, not the budget


@pytest.mark.parametrize("run", runs(2), ids=lambda p: p.name.split(".")[0])
def test_every_refusal_names_a_budget_that_works(run: Path) -> None:
    """A run condensed step by step under a budget too small for some steps: each refusal's named value,
    given to a new condenser, condenses the refused view. It failed when the value left out a person's
    messages (the root alone did not fit), the working-state note's room, or the newest step's least trim
    when its call is long. (At 4000 every view is answered since a tool loop too long to fit whole is shown
    as text: 2500 leaves some with no room for the system prompt, task and newest step.)"""
    events = stream(run)
    condenser = ContextWeaverCondenser(contextweaver={"budget": 2500})
    refused = 0
    for point in call_points(events):
        view = sdk_view(events[:point])
        try:
            condenser.condense(view)
        except BudgetError as exc:
            assert exc.budget is not None and exc.need is not None
            least = exc.budget.least(exc.need)
            assert f"at least {least} tokens" in str(exc)
            assert isinstance(ContextWeaverCondenser(contextweaver={"budget": least}).condense(view), View), (
                point
            )
            refused += 1
    assert refused >= 3


def test_a_tool_loop_too_long_to_fit_whole_is_shown_as_text_not_refused() -> None:
    """At 3000 the newest step's tool loop does not fit whole, even as placeholders: its events leave the view
    and its steps come back as text in one user message, within the budget. It was refused, naming 4000."""
    events = stream(runs(1)[0])
    point = list(call_points(events))[8]
    view = sdk_view(events[:point])
    condenser = ContextWeaverCondenser(contextweaver={"budget": 3000})
    out = condenser.condense(view)
    assert isinstance(out, View) and broken_properties(out.events, events[:point]) == {}
    assert sent_tokens(out.events) <= 3000
    loop = {e.id for e in events[2:point] if isinstance(e, ActionEvent | ObservationBaseEvent)}
    assert not loop & {e.id for e in out.events}  # the loop, none of it
    (note,) = [e for e in out.events if e.id == NOTE_ID]
    text = note.llm_message.content[0].text
    newest = condenser._strategy.nodes[-1]
    assert f"#{newest.index}\n" in text and newest.step.action in text
    assert {d.reason for d in condenser.last_context.decisions if d.index == newest.index} == {LOOP_AS_TEXT}


@pytest.mark.parametrize("run", runs(3), ids=lambda p: p.name.split(".")[0])
def test_a_single_turn_run_is_condensed_within_the_budget_at_every_view(run: Path) -> None:
    """With thinking on the first response only and no person's message, the whole run is one tool loop. At
    8000 each view is answered within the budget, keeping every SDK view property; 24 of these 94 views were
    refused (the loop's placeholders did not fit), and 17 were sent past 8000 (a thought the context had cut
    to a marker was sent whole)."""
    events = single_turn(run)
    condenser = ContextWeaverCondenser(contextweaver={"budget": 8000})
    for point in call_points(events):
        out = condenser.condense(sdk_view(events[:point]))
        assert isinstance(out, View) and broken_properties(out.events, events[:point]) == {}, point
        assert sent_tokens(out.events) <= 8000, point


def test_one_condensation_request_shrinks_that_one_view_not_the_budget() -> None:
    """A recorded 30-response run, condensed view by view at 8000 as the agent condenses it, with one request
    at the tenth view: the view is woven again smaller, every later view is woven to the budget, and none is
    refused. The budget dropped to TIGHTEN of that view's tokens for good (6,279) and 7 later views were
    refused, each telling the user to raise the budget above values below 8000."""
    (run,) = [r for r in runs(3) if r.name.startswith("astropy__astropy-7671")]
    events = stream(run)
    points = list(call_points(events))
    condenser = ContextWeaverCondenser(contextweaver={"budget": 8000})
    later: list[int] = []
    for number, point in enumerate(points):
        view = sdk_view(events[:point])
        out = condenser.condense(view)
        assert isinstance(out, View), number
        if number > 10:
            later.append(condenser.last_context.tokens)
        if number != 10:
            continue
        refused = condenser.last_context.tokens
        view.append_event(CondensationRequest())
        condensation = condenser.condense(view)
        assert isinstance(condensation, Condensation) and not condensation.forgotten_event_ids
        view.append_event(condensation)
        again = condenser.condense(view)
        shrunk = condenser.last_context.tokens
        assert isinstance(again, View) and shrunk < refused
        assert broken_properties(again.events, events[:point]) == {}
    assert condenser.contextweaver.budget == 8000
    assert max(later) > refused > shrunk  # the later views had the whole budget again
