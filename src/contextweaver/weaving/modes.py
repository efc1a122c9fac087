"""When and how a strategy's plan becomes a context: the one place a weaving mode is chosen.

- Without a budget, per-step: every planned step rendered, the last context updated for the steps the
  plan changes (`Reweave`).
- Per-step under a budget: the plan woven anew at every call (`weave`), the working-state note last.
- Lazy (any budget, or none, which never cuts): the history appended unchanged until the budget's
  high-water mark, then cut once and frozen (`LazyContext`, one per budget, saved and restored with a
  session). A cut is the plan woven under the low-water mark with room held for older steps' calls,
  then the newest outputs it left compressed brought back while they fit.

The weaver and the baselines hand in a plan function (and, for the LLM summary, their own weaving); they
never switch modes themselves. A new mode is a new branch of `Weaving.context` and nothing else. The mode
questions asked elsewhere are answered here too: which selector a lazy cut plans with (`cut_selector`), and
whether a strategy passes the history through whole (`WeaveSettings.cuts_nothing`, an integration's warning).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from contextweaver.config import LazySettings, WeaverConfig
from contextweaver.records import Node, WovenContext
from contextweaver.weaving.budget import Budget, BudgetError
from contextweaver.weaving.kept_prefix import Before, kept_prefix
from contextweaver.weaving.lazy import LazyContext, upgraded_plan
from contextweaver.weaving.plan import Plan
from contextweaver.weaving.reweave import Reweave
from contextweaver.weaving.run_index import AfterRoot
from contextweaver.weaving.weave import weave
from contextweaver.weaving.working_state import WorkingState

Limit = float | None
"""A budget in the caller's tokens; None: unbounded."""
WeavingMode = Literal["lazy", "per_step"]
Planner = Callable[[Limit, bool], Plan]
"""A strategy's plan for the budget in force (in the caller's tokens; None: unbounded) and whether it
is for a lazy cut (a strategy may cut with another selector than it weaves with)."""


_LAZY = LazySettings.model_fields
_CONFIG = WeaverConfig.model_fields


@dataclass(frozen=True)
class WeaveSettings:
    """How one strategy's plans are woven; the baselines keep the defaults (`WeaverConfig`'s, read here, not
    restated), the weaver passes its config's (`of`)."""

    mode: WeavingMode = "per_step"
    high_water: float = _LAZY["high_water"].default
    low_water: float = _LAZY["low_water"].default
    small_room_gap: float = _LAZY["small_room_gap"].default
    safety_factor: float = _CONFIG["token_safety_factor"].default
    """Budgets are divided by it (for models whose tokenizer counts more than o200k)."""
    min_trim_tokens: int = _CONFIG["min_trim_tokens"].default
    cut_calls_share: float = 0.0
    """At a lazy cut, the share of the room held for older steps' calls before planned outputs (a baseline
    holds none: its plan has no recency floor)."""
    keep_all: str | None = None
    """The reason of a strategy whose plan keeps every step in full: without a budget its context only
    grows, so new steps are appended and nothing is planned (O(new steps) per call)."""

    @classmethod
    def of(cls, config: WeaverConfig) -> WeaveSettings:
        """The settings a ContextWeaver config weaves with."""
        return cls(
            mode=config.mode,
            high_water=config.lazy.high_water,
            low_water=config.lazy.low_water,
            small_room_gap=config.lazy.small_room_gap,
            safety_factor=config.token_safety_factor,
            min_trim_tokens=config.min_trim_tokens,
            cut_calls_share=config.lazy.calls_share,
        )

    def cuts_nothing(self, budget: Limit) -> bool:
        """Every context is the history whole: without a budget the lazy mode never reaches a cut (nor adds a
        TEST STATUS line) and a plan keeping every step only grows. Per-step weaving without a budget still
        compresses what its plan leaves out."""
        return budget is None and (self.mode == "lazy" or self.keep_all is not None)


def cut_selector(config: WeaverConfig) -> str | None:
    """The selector a lazy cut plans with when it is not the per-step one (`lazy.selector`), else None."""
    cut = config.lazy.selector
    return cut if config.mode == "lazy" and cut is not None and cut != config.selector else None


class Weaving:
    """One strategy's contexts: `context(budget)` in the configured mode, `lazy(budget)` for a session's
    saved cut. `nodes()` is the strategy's whole history with the root at 0; `state()` the note a
    cutting context carries (None: no note); `woven(budget)`, when given, replaces plan weaving for a
    strategy that builds its own contexts (a lazy cut then calls `before_cut` and weaves at the target)."""

    def __init__(
        self,
        strategy: str,
        settings: WeaveSettings,
        plan: Planner,
        nodes: Callable[[], Sequence[Node]],
        *,
        state: Callable[[], WorkingState | None] = lambda: None,
        woven: Callable[[int | None], WovenContext] | None = None,
        before_cut: Callable[[], None] = lambda: None,
    ) -> None:
        self.strategy = strategy
        self.settings = settings
        self._plan, self._nodes, self._state = plan, nodes, state
        self._woven, self._before_cut = woven, before_cut
        self._lazy: dict[Limit, LazyContext] = {}
        """Lazy mode: one growing context per budget asked for (replays may ask for several)."""
        self._reweave = Reweave()
        """Per-step mode without a budget: the last context, updated for the steps the plan changes."""

    def context(self, budget: Limit, status_line: str | None = None) -> WovenContext:
        """The context for the next call; its messages are shared with later contexts (readers only). A
        refusal names the budget as given (a cut's target is a share of it, in o200k tokens)."""
        try:
            return self._context(budget, status_line)
        except BudgetError as exc:
            assert budget is not None  # no budget is never refused
            raise exc.restated(Budget(budget, self.settings.safety_factor)) from None

    def _context(self, budget: Limit, status_line: str | None) -> WovenContext:
        nodes = self._nodes()
        if self.settings.mode == "lazy":
            return self.lazy(budget).context(nodes, self._cut, status_line, self.strategy)
        if self._woven is not None:
            return self._woven(None if budget is None else int(budget))
        if self.settings.keep_all is not None and self.settings.cuts_nothing(budget):
            return self._reweave.append(nodes[0], nodes[1:], self.settings.keep_all, self.strategy)
        if budget is None:
            return self._reweave.weave(
                nodes[0], nodes[1:], self._plan(None, False), self.strategy, status_line
            )
        plan = self._plan(budget, False)
        return self._weave(plan, budget, status_line, self.settings.safety_factor)

    def lazy(self, budget: Limit) -> LazyContext:
        """Lazy mode's growing context for `budget` (made on first use)."""
        lazy = self._lazy.get(budget)
        if lazy is None:
            limit = None if budget is None else Budget(budget, self.settings.safety_factor).messages
            settings = self.settings
            lazy = LazyContext(
                self._nodes()[0], limit, settings.high_water, settings.low_water, settings.small_room_gap
            )
            self._lazy[budget] = lazy
        return lazy

    def forget_cuts(self) -> None:
        """Drop every lazy context (a session reopened without a saved cut rebuilds them)."""
        self._lazy.clear()

    def _weave(self, plan: Plan, budget: float, status_line: str | None, safety: float) -> WovenContext:
        nodes = self._nodes()
        return weave(
            nodes[0],
            AfterRoot(nodes),
            plan,
            strategy=self.strategy,
            budget=budget,
            status_line=status_line,
            min_trim_tokens=self.settings.min_trim_tokens,
            safety_factor=safety,
            state=self._state(),
        )

    def _cut(self, target: float, hold_calls: bool, before: Before | None) -> WovenContext:
        """A lazy cut under `target`: the plan woven, then recent outputs in the room left, then as much of
        the last cut (`before`) kept as may be."""
        self._before_cut()
        if self._woven is not None:
            return self._woven(int(target))
        plan = self._plan(target * self.settings.safety_factor, True)
        plan.calls_share = self.settings.cut_calls_share if hold_calls else 0.0
        plan.short_calls = True
        base = self._weave(plan, target, None, 1.0)
        upgraded = upgraded_plan(plan, base, self._nodes(), target)
        cut, woven_plan = (
            (base, plan) if upgraded is None else (self._weave(upgraded, target, None, 1.0), upgraded)
        )
        if before is None:
            return cut

        def renote(omits: frozenset[int]) -> WovenContext:
            return self._weave(replace(woven_plan, note_omits=omits), target, None, 1.0)

        return kept_prefix(before, cut, target, renote)
