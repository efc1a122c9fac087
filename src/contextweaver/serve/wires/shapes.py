"""Which error shape a path's clients parse: one shape per wire, the client's own.

Anthropic's SDKs (Claude Code) read `{"type": "error", "error": {"type", "message"}}`; OpenAI's (Codex,
the Agents SDK) read `{"error": {"message", "type", "code"}}`. An answer given before or without routing
(the guard, the in-flight gate, a 404, an unexpected error) takes the shape of the path asked for, so a
client with a doubled `/v1` still shows the proxy's message instead of a generic failure.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.responses import JSONResponse

from contextweaver.serve.gate.http import error as openai_error
from contextweaver.serve.wires.anthropic import error as anthropic_error


def error_for(path: str) -> Callable[..., JSONResponse]:
    """The error function in the shape of the wire a client asking for `path` speaks."""
    anthropic = path.rstrip("/").endswith(("/messages", "/messages/count_tokens", "/messages/batches"))
    return anthropic_error if anthropic else openai_error
