"""The OpenAI-compatible proxy: any agent gets ContextWeaver by changing its base URL.

contextweaver serve --upstream http://127.0.0.1:8080/v1 --store sessions.db

The names below are imported on first use: reading a store (`contextweaver sessions`, `serve.inspect`)
or the proxy's `--help` needs no web server, so the `serve` extra is not needed for them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contextweaver.serve.app import ProxySettings, create_app
    from contextweaver.serve.conversation import Conversation, read_conversation
    from contextweaver.serve.routing import SessionManager

_HOMES = {
    "ProxySettings": "app",
    "create_app": "app",
    "Conversation": "conversation",
    "read_conversation": "conversation",
    "SessionManager": "routing",
}
__all__ = ["Conversation", "ProxySettings", "SessionManager", "create_app", "read_conversation"]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'contextweaver.serve' has no attribute {name!r}")
    return getattr(importlib.import_module(f"contextweaver.serve.{_HOMES[name]}"), name)
