"""A response cache in SQLite around any Model: a replay run twice costs nothing the second time.

The table `llm_cache` is self-contained (created IF NOT EXISTS), so it can share a file with other tables.
Keys hash the whole request (model name, messages, temperature, max_tokens, schema, and the seed when
one is set: replays with different seeds must not share replies); no key material from the client is
part of it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from contextweaver.models.wrapper import ModelWrapper
from contextweaver.protocols import Completion, Model
from contextweaver.records import Message

SCHEMA = """
CREATE TABLE IF NOT EXISTS llm_cache (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created_at REAL NOT NULL
)
"""


def request_key(
    model: str,
    messages: Sequence[Message],
    temperature: float | None,
    max_tokens: int | None,
    json_schema: dict[str, Any] | None,
    seed: int | None = None,
) -> str:
    payload: dict[str, Any] = {
        "model": model,
        "messages": list(messages),
        "temperature": temperature,
        "max_tokens": max_tokens,
        "schema": json_schema,
    }
    if seed is not None:  # unseeded keys stay as they were, so existing caches still hit
        payload["seed"] = seed
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class CachedModel(ModelWrapper):
    """Wraps `inner`; hits return the stored reply without a call. `usage` is the inner model's (real calls)."""

    def __init__(self, inner: Model, path: str | Path) -> None:
        super().__init__(inner)
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30.0)
        with self._db:
            self._db.execute(SCHEMA)

    def complete(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_schema: dict[str, Any] | None = None,
    ) -> Completion:
        key = request_key(self.name, messages, temperature, max_tokens, json_schema, self.seed)
        with self._lock:
            row = self._db.execute(
                "SELECT response, prompt_tokens, completion_tokens, model FROM llm_cache WHERE key = ?",
                (key,),
            ).fetchone()
        if row is not None:
            self.hits += 1
            return Completion(text=row[0], prompt_tokens=row[1], completion_tokens=row[2], model=row[3])
        self.misses += 1
        completion = self.forward(messages, temperature, max_tokens, json_schema)
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO llm_cache VALUES (?, ?, ?, ?, ?, ?)",
                (
                    key,
                    completion.model or self.name,
                    completion.text,
                    completion.prompt_tokens,
                    completion.completion_tokens,
                    time.time(),
                ),
            )
        return completion

    def close(self) -> None:
        with self._lock:
            self._db.close()
