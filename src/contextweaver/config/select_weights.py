"""The per-step selection's settings (`select`): one frozen record, read from a weights JSON file.

The package ships its defaults as `select_weights.json` (written by `contextweaver fit` on the training
runs); `WeaverConfig.select.weights` points at a file fitted on a user's own runs instead. Each field
declares its default, the range a file may set and the few values the fit tries (`grid`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from contextweaver.errors import ContextWeaverError

FORMAT = "contextweaver.select_weights/1"
SHIPPED = Path(__file__).with_name("select_weights.json")
T = TypeVar("T", int, float, bool)


class SelectWeightsError(ContextWeaverError, ValueError):
    """A selection weights file that cannot be used; the message names the file, the key and the fix."""


def knob(default: T, low: float, high: float, grid: tuple[T, ...] = ()) -> T:
    """A setting with the range a file may give it and the values the fit tries (none: not fitted)."""
    result: T = field(default=default, metadata={"range": (low, high), "grid": grid})
    return result


@dataclass(frozen=True)
class SelectSettings:
    lookback: int = knob(5, 1, 50, (3, 5, 8))
    """Steps whose thoughts and actions say what the work is about now."""
    context_lines: int = knob(2, 0, 20, (1, 2, 4))
    """Lines kept on each side of a hit."""
    crowded: int = knob(20, 1, 1000, (10, 20, 40))
    """A word on more lines than this in one output marks nothing in it."""
    parent_bonus: float = knob(1.0, 0.0, 100.0, (0.0, 1.0, 2.0))
    """An older output the graph makes a parent of a recent step is worth this much more per hit."""
    file_bonus: float = knob(2.0, 0.0, 100.0, (0.0, 2.0, 4.0))
    """An old view of a file recent steps name is worth this much more per hit (the work returns to it)."""
    file_weight: float = knob(3.0, 0.0, 100.0, (1.0, 3.0, 6.0))
    """What naming a viewed file adds to that view's promise as a candidate."""
    outline_weight: float = knob(1.0, 0.0, 100.0, (0.0, 1.0, 2.0))
    """A line of such a view that opens a definition (its outline) scores this much, kept alone."""
    file_lookback: int = knob(8, 1, 100, (5, 8, 12))
    """Steps whose named files count as the files the work is on (a file outlives the words said about it)."""
    candidates: int = knob(16, 1, 1000, (8, 16, 32))
    """Only the outputs with the most (weighted) recent words are cut into offers: a bounded cost."""
    recent_share: float = knob(0.5, 0.05, 1.0, (0.35, 0.5, 0.7))
    """The recency floor: the last W outputs stay whole; one (not the current one) is trimmed only when
    it alone would take more than this share of the room (the budget above the root), and then keeps its
    head, its tail and the lines around what recent steps mention; the current output always stays whole."""
    long_output: int = knob(12000, 100, 1_000_000, (8000, 12000, 24000))
    """The room `recent_share` is a share of when no budget is given (the unbounded selection)."""
    head_lines: int = knob(60, 0, 100_000, (30, 60, 120))
    """Lines a long recent output keeps from its start."""
    tail_lines: int = knob(30, 0, 100_000)
    """Lines a long recent output keeps from its end."""
    trim_passing: bool = knob(True, 0, 1)
    """A recent test run (not the current step) drops its rows of passing tests whatever its length."""
    extra_tokens: int = knob(2400, 0, 1_000_000, (1200, 2400, 3600, 4800))
    """Tokens per context spent on excerpts of outputs older than W (`select.extra_tokens` overrides)."""
    excerpt_tokens: int = knob(900, 16, 1_000_000, (500, 900, 1400))
    """The most tokens one older output's excerpt may take (`select.excerpt_tokens` overrides)."""


NAMES = tuple(f.name for f in fields(SelectSettings))


def grid(name: str) -> tuple[Any, ...]:
    """The values the fit tries for a setting (empty: the fit leaves it alone)."""
    return tuple(next(f for f in fields(SelectSettings) if f.name == name).metadata["grid"])


def weights_document(settings: SelectSettings, **meta: Any) -> dict[str, Any]:
    """The JSON a weights file holds: its format, the settings, then what the fit recorded."""
    return {"format": FORMAT, "settings": asdict(settings), **meta}


def parse_settings(data: Any, where: str) -> SelectSettings:
    """Settings from a weights document; every problem names `where`, the key and what to do."""
    if not isinstance(data, dict):
        raise SelectWeightsError(f"{where}: expected a JSON object, got {type(data).__name__}")
    if data.get("format") != FORMAT:
        raise SelectWeightsError(
            f"{where}: format {data.get('format')!r} is not {FORMAT!r}; "
            "write the file again with `contextweaver fit RUNS... -o FILE`"
        )
    given = data.get("settings")
    if not isinstance(given, dict):
        raise SelectWeightsError(f"{where}: key 'settings' must be an object of selection settings")
    unknown = sorted(set(given) - set(NAMES))
    if unknown:
        raise SelectWeightsError(
            f"{where}: unknown setting(s) {', '.join(unknown)} under 'settings'; valid: {', '.join(NAMES)}"
        )
    values: dict[str, Any] = {}
    for f in fields(SelectSettings):
        if f.name not in given:
            continue
        value, kind = given[f.name], {"int": int, "float": float, "bool": bool}[str(f.type)]
        ok = isinstance(value, bool) if kind is bool else not isinstance(value, bool)
        ok = ok and isinstance(value, (int, float) if kind is float else kind)
        if not ok:
            raise SelectWeightsError(
                f"{where}: settings.{f.name} = {value!r} must be a {kind.__name__} (shipped: {f.default!r})"
            )
        low, high = f.metadata["range"]
        if not low <= value <= high:
            raise SelectWeightsError(
                f"{where}: settings.{f.name} = {value!r} is outside {low}..{high} (shipped: {f.default!r})"
            )
        values[f.name] = kind(value)
    return SelectSettings(**values)


def load_settings(path: str | Path | None = None) -> SelectSettings:
    """The settings of a weights file; None reads the shipped one."""
    return _load(str(path) if path is not None else str(SHIPPED))


def _load(path: str) -> SelectSettings:
    try:
        stamp = Path(path).stat().st_mtime_ns
    except OSError as exc:
        raise SelectWeightsError(
            f"{path}: cannot read the selection weights ({exc.strerror}); "
            "check the `select_weights` setting or write the file with `contextweaver fit`"
        ) from None
    return _read(path, stamp)


@cache
def _read(path: str, stamp: int) -> SelectSettings:
    """Read once per file version per process: every conversation's selector asks."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise SelectWeightsError(
            f"{path}: cannot read the selection weights ({exc.strerror}); "
            "check the `select_weights` setting or write the file with `contextweaver fit`"
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SelectWeightsError(f"{path}: not JSON (line {exc.lineno}: {exc.msg})") from None
    return parse_settings(data, path)
