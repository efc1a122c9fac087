"""The OpenAI-compatible proxy: any agent gets ContextWeaver by changing its base URL.

contextweaver serve --upstream http://127.0.0.1:8080/v1 --store sessions.db
"""

from __future__ import annotations

from contextweaver.serve.app import ProxySettings, create_app
from contextweaver.serve.conversation import Conversation, read_conversation
from contextweaver.serve.routing import SessionManager

__all__ = ["Conversation", "ProxySettings", "SessionManager", "create_app", "read_conversation"]
