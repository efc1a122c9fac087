"""The OpenAI-compatible proxy: any agent gets ContextWeaver by changing its base URL.

contextweaver serve --upstream http://127.0.0.1:8080/v1 --store sessions.db

Its rooms, in the order a request meets them (each imports only the rooms before it; app and routes,
which join them, sit on top): gate/ (who may talk, how much is in flight, the body parsed), wires/
(the body read into a conversation and written back), sessions/ (the session found, woven in a
weaving process), upstream/ (forwarded, its usage read), ledger/ (metered, logged, and shown).

The names below are imported on first use: reading a store (`contextweaver sessions`, `serve.ledger.inspect`)
or the proxy's `--help` needs no web server, so the `serve` extra is not needed for them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contextweaver.serve.app import ProxySettings, create_app
    from contextweaver.serve.sessions.routing import SessionManager
    from contextweaver.serve.wires.conversation import Conversation, read_conversation

_HOMES = {
    "ProxySettings": "app",
    "create_app": "app",
    "Conversation": "wires.conversation",
    "read_conversation": "wires.conversation",
    "SessionManager": "sessions.routing",
}
__all__ = ["Conversation", "ProxySettings", "SessionManager", "create_app", "read_conversation"]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'contextweaver.serve' has no attribute {name!r}")
    return getattr(importlib.import_module(f"contextweaver.serve.{_HOMES[name]}"), name)
