"""Condensation requests in the SDK's own agent loop: the LLM refuses a request as too long (a context-window
error over real HTTP), the agent asks the condenser to condense. A refusal the condenser cannot answer ends
the run once, as the SDK's own condensers end it (`NoCondensationAvailableException`), instead of the agent
resending it until its iteration limit; an answered request shrinks that one view, not the budget for good
(on a recorded run as `openhands_streams.py` stores it: the SDK's own events, views and condensations)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integrations.toyrepo import TASK, make_repo
from tests.shared_data import SHARED_DATA, absent

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
pytest.importorskip("openhands.sdk")

from openhands.sdk import LLM, Agent, Conversation, Tool  # noqa: E402
from openhands.sdk.context.condenser.base import NoCondensationAvailableException  # noqa: E402
from openhands.sdk.context.view import View  # noqa: E402
from openhands.sdk.conversation.exceptions import ConversationRunError  # noqa: E402
from openhands.sdk.event import Condensation, CondensationRequest  # noqa: E402
from openhands.sdk.tool import register_tool  # noqa: E402
from pydantic import SecretStr  # noqa: E402

from contextweaver.integrations.openhands import ContextWeaverCondenser  # noqa: E402
from contextweaver.testing.fake_server import FakeLLMServer, Reply, Request  # noqa: E402
from tests.integrations.openhands_streams import broken_properties, call_points, sdk_view, stream  # noqa: E402
from tests.integrations.test_openhands_condenser import ShellTool  # noqa: E402

RUNS = SHARED_DATA / "trajectories" / "mini-swe-agent"
ITERATIONS = 40
TOO_LONG = Reply(
    status=400,
    body={
        "error": {
            "message": "This model's maximum context length is 8192 tokens. Please reduce the length.",
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
        }
    },
)


def run_until_done(
    repo: Path, condenser: ContextWeaverCondenser, reply: Callable[[Request], Reply]
) -> tuple[list[Request], BaseException | None]:
    """The SDK's own agent loop (at most ITERATIONS steps): every request the model received, and what the run
    raised, if anything."""
    register_tool("ToyShell", ShellTool)
    with FakeLLMServer(reply=reply) as server:
        llm = LLM(
            model="openai/fake",
            base_url=server.base_url,
            api_key=SecretStr("x"),
            usage_id="agent",
            num_retries=0,
        )
        agent = Agent(
            llm=llm,
            tools=[Tool(name="ToyShell", params={"cwd": str(repo)})],
            include_default_tools=["FinishTool"],
            condenser=condenser,
        )
        conversation = Conversation(
            agent=agent, workspace=str(repo), visualizer=None, max_iteration_per_run=ITERATIONS
        )
        conversation.send_message(TASK)
        try:
            conversation.run()
        except ConversationRunError as exc:
            return list(server.requests), exc
        return list(server.requests), None


def test_a_refusal_the_condenser_cannot_answer_ends_the_run_once(tmp_path: Path) -> None:
    """The first request (the root alone, which no condensation can shrink) is refused as too long: it was
    resent until the iteration limit (20 refusals in 40 iterations, each answered by an empty Condensation)."""
    condenser = ContextWeaverCondenser(contextweaver={"budget": 20_000})
    requests, raised = run_until_done(make_repo(tmp_path / "repo"), condenser, lambda _: TOO_LONG)
    assert len(requests) == 1
    assert raised is not None and isinstance(raised.original_exception, NoCondensationAvailableException)
    message = str(raised.original_exception)
    assert "cannot be condensed further" in message and "max_input_tokens" in message


def test_one_condensation_request_shrinks_that_one_view_not_the_budget() -> None:
    """A recorded 30-response run, condensed view by view at 8000 as the agent condenses it, with one request
    at the tenth view: the view is woven again smaller, every later view is woven to the budget, and none is
    refused. The budget dropped to TIGHTEN of that view's tokens for good (6,279) and 7 later views were
    refused, each telling the user to raise the budget above values below 8000."""
    run = RUNS / "astropy__astropy-7671.traj.json"
    if not run.exists():
        pytest.skip(absent(run))
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
