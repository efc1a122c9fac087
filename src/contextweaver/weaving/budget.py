"""A token budget and every number derived from it: the one place its arithmetic lives.

A user gives a budget in their model's tokens (`--budget`, `WeaverConfig.budget`, an integration's
`budget`). Counts inside are o200k tokens; `safety_factor` converts between the two for a model whose
tokenizer counts more. Tool definitions that a request sends whole beside its messages come off the top.
What is left must hold the root (system prompt and task, always verbatim) and the newest step's least
form, or the budget is refused with the value that holds the request as sent and a suggested one that
leaves room for steps between cuts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from contextweaver.errors import ContextWeaverError

TYPICAL_STEP = 900
"""o200k tokens of a typical step (a call and its output): each training set's median over its train runs of
a run's 75th percentile of step tokens, the median of those (`benchmarks/step_sizes.py`, docs/TUNING.md)."""
GAP_STEPS = 8
"""Mean steps appended between lazy cuts where the room holds KEEP_STEPS more (`weaving/lazy.py`): a cut
rewrites the cached prefix, so in a room of many steps cuts come about every GAP_STEPS steps."""
KEEP_STEPS = 12
"""Mean steps a lazy cut keeps below that gap: the recent outputs a lower mark would drop cost next-step
evidence. Both chosen on the train splits (docs/TUNING.md)."""
ROOM_STEPS = KEEP_STEPS + GAP_STEPS
"""Typical steps a suggested budget holds above the root and the tools: a cut keeps KEEP_STEPS and about
GAP_STEPS are appended unchanged (their prefix cached) before the next; at the least budget every step is a
cut, and with room for one step each rewrites everything after the root (docs/TUNING.md)."""


@dataclass(frozen=True)
class Need:
    """What a context cannot do without, in o200k tokens."""

    root: int
    """The system prompt and the task."""
    newest: int = 0
    """The least form of the newest step (its call with a trimmed output); 0 when not asked."""
    newest_full: int = 0
    kept: int = 0
    """What a context places before the newest step whatever the budget: a person's messages and the TEST
    STATUS line, when they fit (0 when not asked)."""
    loop: int = 0
    """The placeholders of the newest step's earlier calls in its tool loop, which a framework sends whole
    with it (the OpenHands condenser: a thinking block opens a loop that its later calls must follow)."""
    ahead: int = 0
    """Room asked for a step not sent yet, beside the newest step's least form: the proxy asks for a typical
    step's (`ahead_of`) so the value a refusal names holds the requests after this one too."""


def ahead_of(need: Need) -> Need:
    """`need` with room for the next step: a refusal's least value then works on the next run, not only for
    the request refused (at a first request the root alone fits a budget the second request overruns)."""
    return replace(need, ahead=TYPICAL_STEP)


@dataclass(frozen=True)
class Budget:
    """A budget as the user set it, with the tools sent beside the messages and the setting that holds it."""

    tokens: float
    """As given, in the model's tokens."""
    safety_factor: float = 1.0
    tools: int = 0
    """o200k tokens of tool definitions a request sends whole beside its messages."""
    setting: str = ""
    """Where the user sets it (`contextweaver serve --budget`), named in a refusal."""

    @property
    def messages(self) -> float:
        """The o200k tokens the messages may take (never below 0)."""
        return max(0.0, self.tokens / self.safety_factor - self.tools)

    def in_model_tokens(self, o200k: float) -> int:
        """A count of o200k tokens as the user's budget counts it."""
        return math.ceil(o200k * self.safety_factor)

    def with_tools(self, tools: int) -> Budget:
        return replace(self, tools=tools)

    def holds(self, need: Need) -> bool:
        return need.root + need.kept + need.loop + need.newest <= self.messages

    def least(self, need: Need) -> int:
        """The smallest budget, in hundreds, that holds the root, the tools, what is kept before the newest step
        and the newest step's least form (or the room asked ahead, when larger)."""
        return _hundreds(
            self.in_model_tokens(
                need.root + need.kept + need.loop + max(need.newest, need.ahead) + self.tools
            )
        )

    def suggested(self, need: Need) -> int:
        """A budget that holds the request with room for ROOM_STEPS typical steps above the root:
        the least one leaves every step to a cut, which rewrites the cached prefix each time."""
        room = max(need.newest, ROOM_STEPS * TYPICAL_STEP)
        return max(
            self.least(need),
            _hundreds(self.in_model_tokens(need.root + need.kept + need.loop + self.tools + room)),
        )

    def refusal(self, need: Need) -> str:
        """Why this budget cannot hold `need`, and the values that would."""
        parts = [f"the system prompt and task ({need.root:,} tokens)"]
        if self.tools:
            parts.append(f"the tool definitions ({self.tools:,} tokens)")
        if need.kept:
            parts.append(f"a person's messages and the TEST STATUS line ({need.kept:,} tokens)")
        if need.loop:
            parts.append(f"the placeholders of the newest step's tool loop ({need.loop:,} tokens)")
        if need.newest:
            parts.append(f"the newest step (at least {need.newest:,} of its {need.newest_full:,} tokens)")
        held = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
        where = f" ({self.setting})" if self.setting else ""
        ahead = (
            f"with room for a typical next step of {need.ahead:,} tokens; "
            if need.ahead > need.newest
            else ""
        )
        return (
            f"a budget of {int(self.tokens):,} tokens cannot hold {held}, which are always sent: raise the "
            f"budget{where} to at least {self.least(need)} tokens ({ahead}suggested: {self.suggested(need)}, "
            f"room for about {ROOM_STEPS} typical steps: a cut about every {GAP_STEPS})"
        )

    def retried(self, need: Need, first: Need, first_tools: int) -> str:
        """The refusal of a retry that sends more than the conversation's first attempt did (Claude Code
        answers refusals by sending its deferred tools inline, its system prompt changed to match): the
        value that holds the first attempt comes first, since with it the retry never happens; then the one
        that holds this request."""
        more = need.root + self.tools - first.root - first_tools
        return (
            f"{self.with_tools(first_tools).refusal(first)}; that holds this conversation's first attempt: this "
            f"retry sends {more:,} more tokens (the agent added tool definitions after a refusal) and needs at "
            f"least {self.least(need)} (suggested: {self.suggested(need)})"
        )

    def check(self, need: Need) -> None:
        """Raise BudgetError when the budget cannot hold `need`."""
        if not self.holds(need):
            raise BudgetError.of(self, need)


class BudgetError(ContextWeaverError, ValueError):
    """The budget cannot hold the system prompt and task, which are always kept verbatim, with the newest step."""

    def __init__(self, message: str, budget: Budget | None = None, need: Need | None = None) -> None:
        super().__init__(message)
        self.budget = budget
        self.need = need

    @classmethod
    def of(cls, budget: Budget, need: Need) -> BudgetError:
        return cls(budget.refusal(need), budget, need)

    def restated(self, budget: Budget) -> BudgetError:
        """The same refusal as the caller's budget sees it (its tools, its setting's name)."""
        return self if self.need is None else BudgetError.of(budget, self.need)

    def __reduce__(self) -> tuple[type, tuple[str, Budget | None, Need | None]]:  # across a process boundary
        return type(self), (str(self), self.budget, self.need)


def _hundreds(tokens: float) -> int:
    return int(math.ceil(tokens / 100.0) * 100)
