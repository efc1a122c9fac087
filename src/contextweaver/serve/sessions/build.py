"""Build the proxy's parts from settings: the store, one shared memory model, the session manager."""

from __future__ import annotations

from contextweaver.annotate import needs_model
from contextweaver.config import WeaverConfig
from contextweaver.models import memory_model
from contextweaver.protocols import Model
from contextweaver.serve.sessions.routing import SessionManager
from contextweaver.serve.sessions.session_bytes import DEFAULT_BOUND
from contextweaver.store import Store, open_store


def shared_cache(config: WeaverConfig, store: Store) -> WeaverConfig:
    """Keep the memory model's response cache in the store's SQLite file unless told otherwise."""
    path = getattr(store, "path", None)
    if path is None or config.memory_model.cache_path is not None or not needs_model(config):
        return config
    memory = config.memory_model.model_copy(update={"cache_path": str(path)})
    return config.model_copy(update={"memory_model": memory})


def build_manager(
    store_location: str, config: WeaverConfig, *, budget: int | None = None, cache_bytes: int = DEFAULT_BOUND
) -> SessionManager:
    store = open_store(store_location)
    config = shared_cache(config, store)
    model: Model | None = memory_model(config.memory_model) if needs_model(config) else None
    return SessionManager(store, config, model=model, budget=budget, cache_bytes=cache_bytes)
