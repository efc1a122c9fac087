"""A settings error said in one line: the key, what is wrong with it and, for a key that does not exist,
the valid keys, nearest first (pydantic's own text spends four lines on its internals and names none)."""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import BaseModel, ValidationError


def described(exc: ValidationError, model: type[BaseModel]) -> str:
    """Each problem of `exc` (raised validating `model`) as `key: problem`, joined by '; '."""
    return "; ".join(_problem(error, model) for error in exc.errors())


def _problem(error: Any, model: type[BaseModel]) -> str:
    path = [str(part) for part in error["loc"]]
    key = ".".join(path)
    if error["type"] == "extra_forbidden":
        owner = _model_at(model, path[:-1])
        prefix = "".join(f"{part}." for part in path[:-1])
        valid = nearest_first(path[-1], list(owner.model_fields)) if owner else []
        return f"unknown setting {key!r}; valid: {', '.join(prefix + name for name in valid)}"
    message = str(error["msg"]).removeprefix("Value error, ")
    if not key:
        return message
    said = repr(error.get("input"))
    return (
        f"{key}: {message}" if "input" not in error or said in message else f"{key}: {message} (got {said})"
    )


def nearest_first(name: str, valid: list[str]) -> list[str]:
    """`valid` with the names close to `name` first (closest first), the others in their own order."""
    close = difflib.get_close_matches(name, valid, n=3, cutoff=0.5)
    return [*close, *(v for v in valid if v not in close)]


def _model_at(model: type[BaseModel], path: list[str]) -> type[BaseModel] | None:
    """The settings model a nested key belongs to (`lazy` -> LazySettings), None past a plain value."""
    for part in path:
        field = model.model_fields.get(part)
        annotation = field.annotation if field else None
        candidates = [annotation, *getattr(annotation, "__args__", ())]
        nested = [c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)]
        if not nested:
            return None
        model = nested[0]
    return model
