"""Recall through the proxy: the agent's own shell reads an omitted step back with one `curl`.

Each session's note carries `curl -s http://HOST:PORT/contextweaver/recall/CAP/N`, where CAP is
an HMAC of the session id under a secret kept in the store, stored with the session and found by its index:
it names one session and reveals nothing of the others, needs no token (the agent's shell has none), and still answers after a restart, since
the secret, the session's steps and the note (frozen with the cut, its hint stored with the session's
settings) all live in the store. A page is sized from the room the session's next context has for steps:
the budget less the tool definitions its requests send (Claude Code's take ~15k tokens) and the root.
By words instead (`/contextweaver/recall/CAP/?q=words&budget=N`, what `contextweaver mcp --url` asks), the
route ranks what the session's saved cut left out or shortened (`nodes/recall_query.py`).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import threading
from collections import OrderedDict
from collections.abc import Callable

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from contextweaver.config import WeaverConfig
from contextweaver.nodes.recall import BadHandle, page_tokens, parse_handle, recall_of, step_text
from contextweaver.nodes.recall_query import (
    ACTIONS,
    MAX_QUERY_CHARS,
    QUERY_BUDGET,
    BadQuery,
    QueryIndex,
    recall_query,
)
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
MIN_BUDGET, MAX_BUDGET = 200, 16_000
"""The o200k tokens a query's answer may take (`?budget=`): what `contextweaver mcp`'s `recall` allows."""
QUERY_HEADER = "x-contextweaver-recall"
"""Marks an answer of the query form, so `contextweaver mcp --url` knows this proxy ranks queries itself."""
INDEXES = 16
"""Sessions whose query index the route keeps (the most recently asked), each grown by its new steps."""
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
        self._indexes: OrderedDict[str, QueryIndex] = OrderedDict()  # a query's, by session: `_index`
        self._indexes_lock = threading.Lock()

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

    async def query_endpoint(self, request: Request) -> Response:
        """GET /contextweaver/recall/{cap}/?q=words&budget=N: what the session's last context does not hold
        whole that best answers the words (`nodes/recall_query.py`), records as the agent saw them."""
        cap, params = request.path_params["cap"], request.query_params
        query, budget = params.get("q"), params.get("budget", str(QUERY_BUDGET))
        status, text = await anyio.to_thread.run_sync(self.answer_query, cap, query, budget)
        body = text + ("" if text.endswith("\n") else "\n")
        return PlainTextResponse(body, status_code=status, headers={QUERY_HEADER: "query"})

    def answer_query(self, cap: str, query: str | None, budget: str) -> tuple[int, str]:
        info = self._session(cap)
        if info is None or not info.config.get("recall", True):
            return 404, "contextweaver recall: no such handle (it names no session of this proxy)"
        if query is None:
            return (
                400,
                "contextweaver recall: ask by step (…/recall/CAP/12) or by words (…/recall/CAP/?q=words)",
            )
        if len(query) > MAX_QUERY_CHARS:
            return (
                400,
                f"contextweaver recall: a query holds at most {MAX_QUERY_CHARS} characters, not {len(query)}",
            )
        if not NUMBER.fullmatch(budget) or not MIN_BUDGET <= int(budget) <= MAX_BUDGET:
            return (
                400,
                f"contextweaver recall: budget must be a number from {MIN_BUDGET} to {MAX_BUDGET}, not {budget[:20]!r}",
            )
        index, last = self._index(info.id)
        whole = held_whole(self.store, info.id, last)
        candidates = [step for step in range(1, last + 1) if step not in whole]
        try:
            return 200, recall_query(index, query, int(budget), candidates, self._record(info.id)).text
        except BadQuery as exc:
            return 400, f"contextweaver recall: {exc}"

    def _index(self, session_id: str) -> tuple[QueryIndex, int]:
        """The session's query index, grown by the steps stored since it was last asked, and its last step."""
        with self._indexes_lock:
            index = self._indexes.pop(session_id, None) or QueryIndex()
            for item in self.store.steps(session_id, len(index) + 1):
                index.add(item.index, step_text(_node(item)))
            self._indexes[session_id] = index
            while len(self._indexes) > INDEXES:
                self._indexes.popitem(last=False)
            return index, len(index)

    def _record(self, session_id: str) -> Callable[[int], str]:
        """A step's record as a query's answer shows it (its outputs under the label naming the command)."""
        return lambda step: step_text(_node(self.store.steps(session_id, step, 1)[0]), ACTIONS)


def held_whole(store: Store, session_id: str, last: int) -> set[int]:
    """The steps the session's last context holds whole: those its saved cut kept in full and every step
    after it. A session never cut (or woven per step, which saves no cut) holds none for certain: every
    step is searched."""
    saved = store.cut(session_id)
    if saved is None:
        return set()
    _, state = saved
    upto = int(state.get("upto", 0))
    full = {int(d[0]) for d in state.get("decisions", []) if d[1] == "full"}
    return full | set(range(upto + 1, last + 1))


def _shown(text: str) -> str:
    """A caller's text quoted in an answer, at most 40 characters of it."""
    return repr(text[:40]) + (f" ({len(text)} characters)" if len(text) > 40 else "")


def _node(item: StoredStep) -> Node:
    """What a recall says of a stored step: its raw messages and the status the memory gave it."""
    status = item.annotation.validation_status if item.annotation is not None else "unknown"
    return Node(index=item.index, step=item.step, validation_status=ValidationStatus(status))
