"""Recall through the proxy: the agent's own shell reads an omitted step back with one `curl`.

Each session's note carries `curl -s http://HOST:PORT/contextweaver/recall/CAP/N`, where CAP is
an HMAC of the session id under a secret kept in the store, stored with the session and found by its index:
it names one session and reveals nothing of the others, needs no token (the agent's shell has none), and still answers after a restart, since
the secret, the session's steps and the note (frozen with the cut, its hint stored with the session's
settings) all live in the store. A page is sized from the room the session's next context has for steps:
the budget less the tool definitions its requests send (Claude Code's take ~15k tokens) and the root.
"""

from __future__ import annotations

import hashlib
import hmac
import re

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from contextweaver.config import WeaverConfig
from contextweaver.nodes.recall import BadHandle, page_tokens, parse_handle, recall_of
from contextweaver.records import Node, ValidationStatus
from contextweaver.store.base import SessionInfo, Store, StoredStep
from contextweaver.tokens import count_message
from contextweaver.weaving.budget import Budget

SECRET = "recall-key"
PATH = "/contextweaver/recall/"
CAP = "{cap}"
"""Where the proxy's hint takes a session's capability (filled when the session is created)."""
CAP_CHARS = 24
"""96 bits of the HMAC: not guessable, short in the note."""
NUMBER = re.compile(r"[0-9]{1,9}")
"""A step or page number: ASCII digits (`str.isdigit()` takes `²`, which int() refuses), few enough for int()."""
LONG_NUMBER = re.compile(r"[0-9]{10,}")


def proxy_hint(host: str, port: int) -> str:
    """The hint a proxy on `host:port` gives (a wildcard bind is reached on loopback)."""
    reach = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    reach = f"[{reach}]" if ":" in reach else reach
    return f"`curl -s http://{reach}:{port}{PATH}{CAP}/N`"


def with_proxy_hint(config: WeaverConfig, host: str, port: int) -> WeaverConfig:
    """The proxy's settings: its hint unless the settings chose one."""
    if "recall_hint" in config.model_fields_set:
        return config
    return config.model_copy(update={"recall_hint": proxy_hint(host, port)})


def capability(key: bytes, session_id: str) -> str:
    """The session's capability under the store's recall key (`Store.secret(SECRET)`)."""
    return hmac.new(key, session_id.encode(), hashlib.sha256).hexdigest()[:CAP_CHARS]


def capability_of(store: Store, session_id: str) -> str:
    """A new session's capability, stored with it (`Store.create_session(capability=...)`)."""
    return capability(store.secret(SECRET).encode(), session_id)


def for_session(config: WeaverConfig, cap: str) -> WeaverConfig:
    """The settings a new session is stored with: the hint carrying its capability."""
    if not config.recall or CAP not in config.recall_hint:
        return config
    return config.model_copy(update={"recall_hint": config.recall_hint.replace(CAP, cap)})


class RecallRoute:
    """GET /contextweaver/recall/{cap}/{handle}?page=N: the steps as the agent saw them, as text."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._key = store.secret(SECRET).encode()
        store.fill_capabilities(lambda session_id: capability(self._key, session_id))  # once, at start

    async def endpoint(self, request: Request) -> Response:
        cap, handle = request.path_params["cap"], request.path_params["handle"]
        page = request.query_params.get("page", "1")
        more = f"`curl -s {str(request.base_url).rstrip('/')}{PATH}{cap}/{{handle}}?page={{page}}`"
        status, text = await anyio.to_thread.run_sync(self.answer, cap, handle, page, more)
        return PlainTextResponse(text + ("" if text.endswith("\n") else "\n"), status_code=status)

    def answer(self, cap: str, handle: str, page: str, more: str) -> tuple[int, str]:
        info = self._session(cap)
        if info is None or not info.config.get("recall", True):
            return 404, "contextweaver recall: no such handle (it names no session of this proxy)"
        try:
            if not handle.isascii() or LONG_NUMBER.search(handle):
                raise BadHandle(f"recall takes step numbers as the context names them (12, 3-5, 3-5,9), "
                                f"not {_shown(handle)}")  # fmt: skip
            steps = parse_handle(handle, info.steps)
            if not NUMBER.fullmatch(page):
                raise BadHandle(f"page must be a number, not {_shown(page)}")
            stored = self.store.steps(info.id, min(steps), max(steps) - min(steps) + 1)
            nodes = {item.index: _node(item) for item in stored}
            return 200, recall_of(nodes, steps, int(page), self._page_tokens(info), more).text
        except BadHandle as exc:
            return 400, f"contextweaver recall: {exc}"

    def _page_tokens(self, info: SessionInfo) -> int:
        """A page the session's next context holds whole: out of the budget it is woven under, less the most
        tool definitions any of its requests sent (a request's tools are stored with its row) and its root."""
        tokens = info.meta.get("budget") or info.config.get("budget")
        if tokens is None:
            return page_tokens(None, 0)
        tools = max((int(row["tool_tokens"]) for row in self.store.requests(info.id)), default=0)
        budget = Budget(tokens, float(info.config.get("token_safety_factor", 1.0)), tools)
        return page_tokens(budget.messages, sum(count_message(m) for m in info.root))

    def _session(self, cap: str) -> SessionInfo | None:
        """The session `cap` names, by the store's capability index (a session stored without one got it when
        the route started): an unknown capability reads no session."""
        return self.store.session_with_capability(cap) if len(cap) == CAP_CHARS else None


def _shown(text: str) -> str:
    """A caller's text quoted in an answer, at most 40 characters of it."""
    return repr(text[:40]) + (f" ({len(text)} characters)" if len(text) > 40 else "")


def _node(item: StoredStep) -> Node:
    """What a recall says of a stored step: its raw messages and the status the memory gave it."""
    status = item.annotation.validation_status if item.annotation is not None else "unknown"
    return Node(index=item.index, step=item.step, validation_status=ValidationStatus(status))
