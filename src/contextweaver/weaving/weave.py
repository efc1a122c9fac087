"""Weaving: turn a plan (which steps to keep in full, by priority) into messages under a token budget."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from contextweaver.config import WeaverConfig
from contextweaver.nodes.render import call_messages, compressed_messages, full_messages, trimmed_messages
from contextweaver.nodes.views import file_key
from contextweaver.records import Decision, Layout, Message, Node, WovenContext
from contextweaver.tokens import count_message
from contextweaver.weaving.aimed_trim import Aim, aimed_excerpt
from contextweaver.weaving.budget import Budget, BudgetError, Need
from contextweaver.weaving.plan import Plan
from contextweaver.weaving.run_index import MinTree, RunIndex, run_index
from contextweaver.weaving.working_state import CAP, SHARE, Omitted, WorkingState

if TYPE_CHECKING:
    from contextweaver.weaving.excerpts import Excerpt


EDIT_SHARE = 0.5
"""Of the room the recency floor leaves, the most the calls of older edits take before the rest of the plan: a
later edit often replaces what one of them wrote (its `new_str`, a file it created). Chosen on the train
splits (docs/TUNING.md)."""
LATEST_EDIT_SHARE = 0.2
"""Of the room the current step leaves, the most the calls of each file's latest change take before the
recency floor: the text a later edit replaces is most often what the last write to that file left, and where
the floor fills the room a cut dropped that call whole. A floor step among them keeps its call (a test run
gets its output back, `_Room.reopen_test_run`). Chosen on the train splits (docs/TUNING.md)."""

LEAST_STEP = 8
"""Tokens within which `least_tokens` finds the least trim: a refusal names a value rounded up to hundreds."""
WRITTEN_SHARE = 0.6
"""Of the room the latest changes' calls leave, the most the note's texts of what the agent wrote take
(`weaving/written.py`): first the files the newest NAMED_BY steps name (the file the next edit changes is most
often one just run or looked at), then the other files the agent changed in place (its fix). Chosen on the
train splits (docs/TUNING.md)."""
NAMED_BY = 4
"""Steps back whose facts name the files the note's texts are given for: the most that kept recall at least
masking's on the train splits (docs/TUNING.md)."""


AIMED = "head, tail and the lines nearest what recent steps mention kept"
SHORT_CALL = "call kept without its reasoning: the placeholder does not fit the budget"


def weave(
    root: Node,
    steps: Sequence[Node],
    plan: Plan,
    *,
    strategy: str,
    budget: float | None = None,
    status_line: str | None = None,
    min_trim_tokens: int = WeaverConfig.model_fields["min_trim_tokens"].default,
    safety_factor: float = 1.0,
    state: WorkingState | None = None,
) -> WovenContext:
    """Messages in chronological order: root, TEST STATUS, then each step full or compressed.

    Without a budget every planned step is full. With one, the total never exceeds it: root first,
    then steps a person wrote, the current step, planned steps by priority (head/tail-trimmed when
    they do not fit whole; with a recency floor, each file's latest change as its call before it and
    older edits' calls after it), then placeholders newest first; whatever is left is dropped and said so.
    With `state`, a context that cuts anything says what it left out, after the steps it keeps.
    """
    status = [{"role": "user", "content": status_line}] if status_line else []
    if budget is None:
        return _unbounded(root, steps, plan, strategy, status)
    return _budgeted(
        root, steps, plan, strategy, status, Budget(budget, safety_factor), min_trim_tokens, state
    )


def _unbounded(
    root: Node,
    steps: Sequence[Node],
    plan: Plan,
    strategy: str,
    status: list[Message],
) -> WovenContext:
    wanted = dict(plan.full)
    messages = [*full_messages(root), *status]
    decisions = []
    tokens = root.full_tokens + sum(count_message(m) for m in status)
    for node in steps:
        step_messages, decision = unbounded_step(node, wanted, plan)
        messages += step_messages
        decisions.append(decision)
        tokens += decision.tokens
    return WovenContext(
        messages=messages,
        decisions=decisions,
        tokens=tokens,
        full_history_tokens=root.full_tokens + sum(n.full_tokens for n in steps),
        strategy=strategy,
        test_status=status[0]["content"] if status else None,
        notes=list(plan.notes),
    )


def unbounded_step(node: Node, wanted: dict[int, str], plan: Plan) -> tuple[list[Message], Decision]:
    """One step without a budget: its excerpt when planned with one, else in full when planned or
    written by a person, else compressed. `wanted` is `dict(plan.full)`."""
    excerpt = plan.excerpts.get(node.index)
    if excerpt is not None and node.index in wanted:
        why = f"{wanted[node.index]}; {excerpt.why}"
        return excerpt.messages, Decision(node.index, "trimmed", why, excerpt.tokens)
    if node.step.kind == "user" or node.index in wanted:
        return full_messages(node), _full(node, wanted.get(node.index, "written by a person: always kept"))
    return compressed_messages(node), _compressed(node, plan.why_compressed(node.index))


class _Room:
    """What is left of the budget, and the steps chosen so far with their messages and decision."""

    def __init__(self, root: Node, budget: Budget, run: RunIndex, min_trim: int) -> None:
        """Refuse a budget that cannot hold the root, naming the root with a person's messages and the newest
        step's least form, so the value asked for holds them all."""
        steps = run.steps
        if not budget.holds(Need(root.full_tokens)):
            need = starved(root, steps[-1], min_trim) if steps else Need(root.full_tokens)
            persons = sum(steps[p].full_tokens for p in run.persons)
            raise BudgetError.of(budget, replace(need, kept=persons))
        self.run = run
        self.budget = budget
        self.limit = budget.messages
        """The o200k tokens the messages may take."""
        self.left = self.limit - root.full_tokens
        self.chosen: dict[int, tuple[list[Message], Decision]] = {}

    def take(self, index: int, messages: list[Message], decision: Decision) -> None:
        self.chosen[index] = (messages, decision)
        self.left -= decision.tokens

    def hold(self, share: float) -> float:
        """Set aside up to `share` of the room for the placeholders of the steps not chosen yet, once the
        recency floor and the older edits' calls are in (held before the floor, it trimmed the newest
        outputs). Chosen on the train splits (docs/TUNING.md)."""
        run = self.run
        chosen = sum(run.steps[run.position[i]].compressed_tokens for i in self.chosen)
        calls = run.compressed_sums[-1] - chosen if share else 0
        held = min(calls, max(0.0, self.left) * share)
        self.left -= held
        return held

    def reopen_test_run(self, node: Node) -> None:
        """Un-choose a floor step kept so far as its call (its file's latest change) when its output is a
        test run (`sed -i ... && pytest`) and fits whole: an editor's echo of the edit adds little to the
        call, a run's output is what the recency floor is for."""
        chosen = self.chosen.get(node.index)
        if chosen is None or chosen[1].mode != "compressed" or not (node.runner or node.test_results):
            return
        if node.full_tokens <= self.left + chosen[1].tokens:
            self.left += self.chosen.pop(node.index)[1].tokens

    def fit_status(self, status: list[Message]) -> list[Message]:
        """The TEST STATUS line when it fits after the root and the person's steps, else nothing."""
        tokens = sum(count_message(m) for m in status)
        if not status or tokens > self.left:
            return []
        self.left -= tokens
        return status


@dataclass
class _Held:
    """Room set aside while the plan is taken, given back at the end: the note's (with the texts of what the
    agent wrote it will show) and the placeholders' (`plan.calls_share`)."""

    note: int = 0
    texts: list[str] = field(default_factory=list)
    calls: float = 0.0


def _budgeted(
    root: Node,
    steps: Sequence[Node],
    plan: Plan,
    strategy: str,
    status: list[Message],
    budget: Budget,
    min_trim: int,
    state: WorkingState | None = None,
) -> WovenContext:
    """The fixed order of cuts, one phase each: person's steps, status, the working-state note's room,
    the plan by priority, short calls, the newest step's check, placeholders; the note is written last."""
    newest = steps[-1] if steps else None
    room = _Room(root, budget, run_index(root, steps), min_trim)
    _take_persons(room)
    status = room.fit_status(status)
    kept = int(room.limit - room.left) - root.full_tokens
    held = _Held(note=_reserve_note(room, state, newest, min_trim))
    _take_plan(room, held, plan, min_trim, state)
    room.left += held.calls
    if plan.short_calls:
        _take_calls(room, plan)
    if newest is not None:
        _check_newest(room, root, newest, min_trim, kept)
    _take_placeholders(room, plan)
    note = _note(state, room, held.note, held.texts, plan.note_omits)
    return _assemble(root, plan, strategy, status, room, note)


def _take_persons(room: _Room) -> None:
    """Steps a person wrote, whole when they fit, before anything else: the agent works for them."""
    for position in room.run.persons:
        node = room.run.steps[position]
        if node.full_tokens <= room.left:
            room.take(node.index, full_messages(node), _full(node, "written by a person: always kept"))


def _reserve_note(room: _Room, state: WorkingState | None, newest: Node | None, min_trim: int) -> int:
    """The working-state note's room, out of what the newest step's least form leaves: a huge newest step
    is trimmed for it, but not below the least a trim leaves it (its call when that is longer than a trim),
    and a newest step that is trimmed anyway leaves the note its least form only."""
    if state is None or newest is None:
        return 0
    if newest.index in room.chosen:
        noted = state.reserve(room.left)
    else:
        noted = state.reserve(max(0.0, room.left - least_estimate(newest, min_trim)))
        if newest.full_tokens > room.left - noted:  # it will be trimmed: leave room for its least trim
            least = least_tokens(newest, min_trim)
            if least <= room.left:
                noted = state.least(room.left - least)
            else:  # not even its least trim fits, so its call is cut too: the note keeps its share
                noted = state.reserve(min(room.left * SHARE, room.left - min_trim))
    room.left -= noted
    return noted


def _take_plan(room: _Room, held: _Held, plan: Plan, min_trim: int, state: WorkingState | None) -> None:
    """Planned steps by priority. With a recency floor (`plan.ahead_of_edits`), once the current step is in,
    each file's latest change as its call and the note's texts; once the floor is in, older edits' calls and
    the placeholders' hold (`_at_marks`). Without a floor the hold comes right after the current step."""
    run = room.run
    steps = run.steps
    current = steps[-1].index if steps else None
    floor = plan.ahead_of_edits
    marks = _floor_marks(plan, current)
    last_mark = max((p for p in (*marks, _last_floor(plan)) if p is not None), default=-1)
    smallest = min(run.smallest, min_trim, *(e.tokens for e in plan.excerpts.values()))
    seen_current = False
    for position, (index, reason) in enumerate(plan.full):
        if seen_current and position > last_mark and room.left < smallest:
            break  # nothing the plan has left fits in any form: a plan of the whole run is not read to its end
        seen_current = seen_current or index == current
        _at_marks(room, held, plan, state, marks, position)
        node = run.get(index)
        if node is None:
            continue
        if index in floor:
            room.reopen_test_run(node)
        if index not in room.chosen:
            _take_planned(
                room, node, reason, index == current, min_trim, plan.excerpts.get(index), plan.aims.get(index)
            )
        if index == current and not floor:
            held.calls = room.hold(plan.calls_share)
    if floor and marks[1] is None:
        _take_edit_calls(room, run.edit_calls(), len(steps))


def _at_marks(
    room: _Room,
    held: _Held,
    plan: Plan,
    state: WorkingState | None,
    marks: tuple[int | None, int | None],
    position: int,
) -> None:
    """The recency floor's extra takes at their places in the plan's order (`_floor_marks`): after the current
    step, each file's latest change as its call (the current step's own is kept whole anyway) and the note's
    texts; after the floor, older edits' calls and the placeholders' hold."""
    after_current, after_floor = marks
    steps = room.run.steps
    if position == after_current:
        _take_edit_calls(room, room.run.latest_edit_calls(), len(steps) - 1, LATEST_EDIT_SHARE)
        if held.note and state is not None:
            held.texts, texts = _hold_texts(room, state, steps, {*plan.ahead_of_edits, *room.chosen})
            held.note += texts
    if position == after_floor:
        _take_edit_calls(room, room.run.edit_calls(), len(steps))
        held.calls = room.hold(plan.calls_share)


def _floor_marks(plan: Plan, current: int | None) -> tuple[int | None, int | None]:
    """Where in the plan's order a recency floor's extra takes go: before its first step that is not the
    current one, and before its first step outside the floor (None: nowhere, or no floor)."""
    floor = plan.ahead_of_edits
    if not floor:
        return None, None
    order = [index for index, _ in plan.full]
    after_current = next((p for p, index in enumerate(order) if index != current), None)
    return after_current, next((p for p, index in enumerate(order) if index not in floor), None)


def _last_floor(plan: Plan) -> int | None:
    """The place in the plan's order of its last step in the recency floor (taking it may reopen room)."""
    floor = plan.ahead_of_edits
    return (
        max((p for p, (index, _) in enumerate(plan.full) if index in floor), default=None) if floor else None
    )


def _check_newest(room: _Room, root: Node, newest: Node, min_trim: int, kept: int) -> None:
    """Refuse a budget that left the newest step out or as its placeholder (`starved`), naming what was
    `kept` before it (a person's messages, the TEST STATUS line), so the value asked for holds them all."""
    chosen = room.chosen.get(newest.index)
    if chosen is None or chosen[1].mode == "compressed":
        raise BudgetError.of(room.budget, replace(starved(root, newest, min_trim), kept=kept))


def _take_placeholders(room: _Room, plan: Plan) -> None:
    """The steps still left out as their placeholders, newest first, while they fit (the room only shrinks,
    so each is the newest one left whose placeholder fits: older steps that cannot fit are not read)."""
    for node in _newest_fitting(room, room.run.placeholders()):
        room.take(node.index, compressed_messages(node), _compressed(node, plan.why_compressed(node.index)))


def _newest_fitting(room: _Room, sizes: MinTree) -> Iterator[Node]:
    """The steps not chosen yet whose size in `sizes` fits the room left when reached, newest first: the
    steps a walk from the newest would take (the room only shrinks), without reading those that cannot fit."""
    steps, before = room.run.steps, len(room.run.steps)
    while (position := sizes.last_at_most(room.left, before)) >= 0:
        before = position
        if steps[position].index not in room.chosen:
            yield steps[position]


def _note(
    state: WorkingState | None,
    room: _Room,
    noted: int,
    texts: Sequence[str] = (),
    omits: frozenset[int] = frozenset(),
) -> list[Message]:
    """The working-state note in the room held for it, when the context cut anything; it lists the steps
    `omits` as left out too (`Plan.note_omits`)."""
    room.left += noted
    if state is None or not noted:  # most strategies write no note: the omitted steps are not read
        return []
    left_out = len(room.run.steps) - len(room.chosen)
    cut = left_out or any(decision.mode != "full" for _, decision in room.chosen.values())
    shown = [index for index in room.chosen if index not in omits] if omits else room.chosen
    written = (
        state.note(Omitted(room.run, shown), min(int(room.left), max(noted, CAP)), texts) if cut else None
    )
    if written is None:
        return []
    room.left -= written[1]
    return [written[0]]


def least_estimate(newest: Node, min_trim: int) -> int:
    """A lower bound of `least_tokens` without trimming: whole, or its placeholder form or `min_trim`."""
    return min(newest.full_tokens, max(min_trim, newest.compressed_tokens))


def least_tokens(newest: Node, min_trim: int) -> int:
    """The fewest tokens the newest step can be kept in: whole, or its call with the shortest trimmed output
    the weave takes. A long call leaves a trim little room below its placeholder form, so the least trim
    is searched for (a few trims, assuming a trim that fits in n tokens fits in more)."""
    low, high = least_estimate(newest, min_trim), newest.full_tokens
    if low >= high or _trim_to_fit(newest, low, newest=True) is not None:
        return low
    while high - low > LEAST_STEP:
        middle = (low + high) // 2
        low, high = (low, middle) if _trim_to_fit(newest, middle, newest=True) is not None else (middle, high)
    return high


def starved(root: Node, newest: Node, min_trim: int) -> Need:
    """What a budget must hold besides the root: without the newest step (the call just made and its
    result) the agent would make the same call again, forever."""
    return Need(root.full_tokens, least_tokens(newest, min_trim), newest.full_tokens)


def _take_planned(
    room: _Room,
    node: Node,
    reason: str,
    current: bool,
    min_trim: int,
    excerpt: Excerpt | None,
    aim: Aim | None,
) -> None:
    """A planned step as its excerpt when it has one that fits, else in full, else trimmed to its head,
    its tail and the lines nearest what recent steps mention (`aim`) or to its head and tail, else as its
    placeholder, else not at all."""
    if excerpt is not None and excerpt.tokens <= room.left:
        why = f"{reason}; {excerpt.why}"
        room.take(node.index, excerpt.messages, Decision(node.index, "trimmed", why, excerpt.tokens))
        return
    if node.full_tokens <= room.left:
        room.take(node.index, full_messages(node), _full(node, reason))
        return
    if room.left >= node.compressed_tokens + min_trim or (current and room.left >= min_trim):
        aimed = None if aim is None else aimed_excerpt(node, aim, int(room.left), AIMED)
        if aimed is not None:
            why = f"{reason}; {AIMED} to fit the budget of {int(room.limit)} tokens"
            room.take(node.index, aimed.messages, Decision(node.index, "trimmed", why, aimed.tokens))
            return
        trimmed = _trim_to_fit(node, int(room.left), newest=current)
        if trimmed is not None:
            why = f"{reason}; output head/tail-trimmed to fit the budget of {int(room.limit)} tokens"
            room.take(node.index, trimmed[0], Decision(node.index, "trimmed", why, trimmed[1]))
            return
    if node.compressed_tokens <= room.left:
        why = f"{reason}; compressed: the full output ({node.full_tokens} tokens) does not fit the budget"
        room.take(node.index, compressed_messages(node), _compressed(node, why))


def _assemble(
    root: Node,
    plan: Plan,
    strategy: str,
    status: list[Message],
    room: _Room,
    note: list[Message],
) -> WovenContext:
    """Chosen steps in chronological order after the root, the working-state note last (`working_state`
    says why); the others are dropped whole and said so (their decisions are shared: `RunIndex.decisions`)."""
    messages = [*full_messages(root), *status]
    taken: list[Decision] = []
    run, chosen = room.run, room.chosen
    positions = sorted(run.position[index] for index in chosen)
    starts: dict[int, int] = {}
    for position in positions:
        step_messages, decision = chosen[run.steps[position].index]
        taken.append(decision)
        starts[decision.index] = len(messages)
        messages += step_messages
    dropped = len(run.steps) - len(taken)
    layout = Layout(starts, len(messages))
    messages += note
    notes = list(plan.notes)
    if dropped:
        notes.append(f"{dropped} step(s) dropped whole (call and output together) to fit the budget")
    return WovenContext(
        messages=messages,
        decisions=run.decisions(positions, taken),
        tokens=int(room.limit - room.left),
        full_history_tokens=root.full_tokens + run.full_sums[-1],
        strategy=strategy,
        budget=int(room.limit),
        test_status=status[0]["content"] if status else None,
        notes=notes,
        taken=taken,
        layout=layout,
    )


def _take_calls(room: _Room, plan: Plan) -> None:
    """Every step not chosen keeps its call without the reasoning, newest first while they fit (a step
    dropped whole loses its call too); then the newest get their reasoning back while it fits."""
    run = room.run
    for node in _newest_fitting(room, run.calls()):
        messages, tokens = call_messages(node)
        room.take(node.index, messages, Decision(node.index, "compressed", SHORT_CALL, tokens))
    for index in sorted(room.chosen, key=run.position.__getitem__, reverse=True):
        node = run.steps[run.position[index]]
        chosen = room.chosen[index]
        if chosen[1].mode != "compressed":
            continue
        short = chosen[1].tokens
        if short < node.compressed_tokens <= room.left + short:
            room.left += short
            why = plan.why_compressed(node.index) if chosen[1].reason == SHORT_CALL else chosen[1].reason
            room.take(node.index, compressed_messages(node), _compressed(node, why))


def _take_edit_calls(room: _Room, edits: MinTree, before: int, share: float = EDIT_SHARE) -> None:
    """The calls of the steps in `edits` (those whose call names a file they changed) before position
    `before`, newest first, in up to `share` of the room left: a later edit often replaces what one of them
    wrote, and the cut would drop them whole."""
    spend = room.left * share
    steps = room.run.steps
    while spend > 0 and (position := edits.last_at_most(min(spend, room.left), before)) >= 0:
        before, node = position, steps[position]
        if node.index in room.chosen:
            continue
        messages, tokens = call_messages(node)
        why = f"the call of a step that changed {', '.join(sorted(node.facts.edited_files))}: a later edit may replace what it wrote"  # fmt: skip
        room.take(node.index, messages, Decision(node.index, "compressed", why, tokens))
        spend -= tokens


def _hold_texts(
    room: _Room, state: WorkingState, steps: Sequence[Node], shown: set[int]
) -> tuple[list[str], int]:
    """The texts the agent wrote, as they now stand, and the tokens held for them in the note, out of up
    to WRITTEN_SHARE of the room left (none a kept step shows): first of the files the newest steps name,
    then of the other files the agent changed in place (its fix, which it comes back to after its scripts)."""
    share = room.left * WRITTEN_SHARE
    named = {file_key(path) for node in steps[-NAMED_BY:] for path in _named(node)}
    texts, held = state.written.blocks(named, shown, share)
    fix, held_fix = state.written.blocks(state.written.edited_in_place() - named, shown, share - held)
    room.left -= held + held_fix
    return texts + fix, held + held_fix


def _named(node: Node) -> frozenset[str]:
    facts = node.facts
    return facts.files | facts.observed | facts.edited_files | facts.viewed_files


def _full(node: Node, reason: str) -> Decision:
    return Decision(node.index, "full", reason, node.full_tokens)


def _compressed(node: Node, reason: str) -> Decision:
    return Decision(node.index, "compressed", reason, node.compressed_tokens)


def _trim_to_fit(node: Node, room: int, newest: bool = False) -> tuple[list[Message], int] | None:
    """Trimming works on token estimates per message; shrink the target until the result fits. The `newest`
    step keeps its call verbatim (only its outputs are trimmed), or does not fit."""
    target = room
    for _ in range(4):
        trimmed = trimmed_messages(node, target, keep_call=newest)
        if trimmed is None:
            return None
        if trimmed[1] <= room:
            return trimmed
        target -= trimmed[1] - room + 8
    return None
