"""What `contextweaver mcp` answers from: one session's memory, bound when the server starts.

Three kinds, one interface (`recall` by query, `expand` by handle, `status`):
- `StoreMemory`: a session of a store (contextweaver.store) by its id; its saved cut says what the
  context holds whole. `LazyStore`: the store's newest session, taken at the first call.
- `TranscriptMemory`: an agent CLI's own transcript (Claude Code, Codex), read again when it grows; what
  its last compaction left behind is what a query searches (`compaction_step`).
- `ProxyMemory`: a proxy session through its recall capability URL (`/contextweaver/recall/CAP/`), over
  HTTP: handles as the proxy answers them; a query is the proxy's to rank (`?q=words`: it knows its cut),
  or, from a proxy without the query form, ranked here over every step read through the same URL.

A memory reads only the session it was bound to: no tool takes a session, a path or a URL.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from contextweaver.config import WeaverConfig
from contextweaver.errors import ContextWeaverError
from contextweaver.formats import load_trajectory
from contextweaver.nodes.recall import MAX_STEPS, BadHandle, step_text
from contextweaver.nodes.recall_query import QUERY_BUDGET, BadQuery, QueryIndex, node_records, recall_query
from contextweaver.records import Message, Step
from contextweaver.weaver import ContextWeaver

NOTE_CHARS = 1500
"""Most of the note `status` shows (a CLI's compaction summary may be long; the agent holds it already)."""
HTTP_SECONDS = 10.0
QUERY_HEADER = "x-contextweaver-recall"
"""Set to `query` on a proxy's answer to `?q=words` (serve/sessions/recall.py): the proxy ranks queries itself."""
MORE = "`expand` with handle={handle}, page={page}"
COMPACT_SUMMARY = "This session is being continued from a previous conversation"
"""How Claude Code's compaction summary starts (its `isCompactSummary` user entry)."""


class MemoryUnreadable(ContextWeaverError, RuntimeError):
    """The memory a server was bound to cannot be read (gone, or not a run)."""


class Memory(Protocol):
    def recall(self, query: str, budget: int = QUERY_BUDGET) -> str: ...

    def expand(self, handle: str, page: int = 1) -> str: ...

    def status(self) -> str: ...


def answered(ask: Callable[[], str]) -> str:
    """What the agent reads: the answer, or what was wrong with its handle or query."""
    try:
        return ask()
    except (BadHandle, BadQuery) as exc:
        return f"contextweaver: {exc}"


class WeaverMemory:
    """A memory over a ContextWeaver fed the session's steps; `whole()` names the steps the agent's
    context holds whole (a query searches the rest)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.weaver = _weaver()
        self.note = ""

    def whole(self) -> set[int]:
        raise NotImplementedError

    def refresh(self) -> None:
        """Feed the weaver the steps added since the last call."""
        raise NotImplementedError

    def recall(self, query: str, budget: int = QUERY_BUDGET) -> str:
        self.refresh()
        whole = self.whole()
        nodes = self.weaver.nodes
        index = self.weaver.__dict__.setdefault("_queries", QueryIndex())
        for node in nodes[len(index) + 1 :]:
            index.add(node.index, step_text(node))
        candidates, record = node_records(nodes, whole)  # shown as the library shows them (outputs, labelled)
        return answered(
            lambda: (
                recall_query(
                    index, query, budget, candidates, record, parents=lambda s: nodes[s].parent_ids
                ).text
            )
        )

    def expand(self, handle: str, page: int = 1) -> str:
        self.refresh()
        return answered(lambda: self.weaver.recall(handle, page, MORE).text)

    def status(self) -> str:
        self.refresh()
        last = len(self.weaver.nodes) - 1
        cut = sorted(set(range(1, last + 1)) - self.whole())
        failing = self.weaver.tracker.failing()
        lines = [
            f"{self.label}: {last} step(s); not held whole in the context: {_ranges(cut) or 'none'}",
            "- failing now: "
            + (
                ", ".join(f"{test} (step {step})" for test, step in failing[:20]) if failing else "none known"
            ),
        ]
        if self.note:
            note = self.note if len(self.note) <= NOTE_CHARS else self.note[:NOTE_CHARS] + "…"
            lines.append(f"- the note the context carries:\n{note}")
        lines.append('- search them: `recall` with query="words"; read one whole: `expand` with handle="N"')
        return "\n".join(lines)


class StoreMemory(WeaverMemory):
    """One stored session (the proxy's, or any writer's) by its id."""

    def __init__(self, location: str, session_id: str) -> None:
        from contextweaver.store import open_store

        self.store = open_store(location)
        self.session_id = session_id
        info = self.store.session(session_id)
        if info is None:
            raise MemoryUnreadable(
                f"{location}: no session {session_id!r} (`contextweaver sessions` lists them)"
            )
        super().__init__(f"session {session_id}")
        self.weaver.begin(info.root)
        self._root = info.root

    def refresh(self) -> None:
        steps = self.steps()
        if len(steps) < len(self.weaver.nodes) - 1:
            self.weaver = _weaver()
            self.weaver.begin(self._root)
        for step in steps[len(self.weaver.nodes) - 1 :]:
            self.weaver.add_step(step)

    def steps(self) -> list[Step]:
        have = len(self.weaver.nodes) - 1
        new = self.store.steps(self.session_id, have + 1)
        return [n.step for n in self.weaver.nodes[1:]] + [s.step for s in new]

    def whole(self) -> set[int]:
        saved = self.store.cut(self.session_id)
        last = len(self.weaver.nodes) - 1
        if saved is None:
            return set(range(1, last + 1))
        _, state = saved
        decisions = state.get("decisions", [])
        self.note = next(
            (
                str(m.get("content"))
                for m in state.get("messages", [])
                if "ContextWeaver" in str(m.get("content"))
            ),
            "",
        )
        upto = int(state.get("upto", 0))
        return {int(d[0]) for d in decisions if d[1] == "full"} | set(range(upto + 1, last + 1))


class TranscriptMemory(WeaverMemory):
    """An agent CLI's transcript file (Claude Code, Codex), read again whenever it changed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: tuple[float, int] | None = None
        self._steps: list[Step] = []
        self._compaction = 0
        self._root: list[Message] = []
        super().__init__(f"transcript {path.name}")

    def steps(self) -> list[Step]:
        try:
            stat = self.path.stat()
        except OSError as exc:
            raise MemoryUnreadable(f"{self.path}: cannot be read ({exc.strerror})") from exc
        if self._seen != (stat.st_mtime, stat.st_size):
            trajectory = load_trajectory(self.path)
            self._root = list(trajectory.root) or [{"role": "user", "content": "(the task was not recorded)"}]
            self._steps = list(trajectory.steps)
            self._compaction = compaction_step(self.path, self._steps)
            self.note = self._steps[self._compaction - 1].observation if self._compaction else ""
            self._seen = (stat.st_mtime, stat.st_size)
        return self._steps

    def refresh(self) -> None:
        steps = self.steps()
        known = [n.step for n in self.weaver.nodes[1:]]
        if not len(self.weaver.nodes) or steps[: len(known)] != known:  # first read, or a rewritten file
            self.weaver = _weaver()
            self.weaver.begin(self._root)
            known = []
        for step in steps[len(known) :]:
            self.weaver.add_step(step)

    def whole(self) -> set[int]:
        """After a compaction, the steps from its summary on (the CLI's context holds them); before any,
        none: the CLI may have cleared old tool results on its own, and an agent that asks did not find it."""
        if not self._compaction:
            return set()
        return set(range(self._compaction, len(self.weaver.nodes)))


def compaction_step(path: Path, steps: Sequence[Step]) -> int:
    """The step (1-based) holding the last compaction's summary, 0 when the run was never compacted:
    Claude Code's `isCompactSummary` entry, Codex's `compacted` line, matched to the user step they became."""
    summaries: list[str] = []
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if '"isCompactSummary"' not in line and '"compacted"' not in line:
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and entry.get("isCompactSummary"):
                summaries.append(_text(entry.get("message", {}).get("content")))
            elif isinstance(entry, dict) and entry.get("type") == "compacted":
                summaries.append(str((entry.get("payload") or {}).get("message") or ""))
    wanted = [s.strip()[:200] for s in summaries if s.strip()]
    for number in range(len(steps), 0, -1):
        step = steps[number - 1]
        if step.kind == "user" and any(w and w in step.observation for w in wanted[-1:]):
            return number
    if (
        wanted
    ):  # the summary became part of a step the reader shaped otherwise: the last user step with its start
        for number in range(len(steps), 0, -1):
            if steps[number - 1].observation.startswith(COMPACT_SUMMARY):
                return number
    return 0


class ProxyMemory:
    """A proxy session through its recall capability URL (`http://HOST:PORT/contextweaver/recall/CAP/`)."""

    def __init__(self, url: str) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or "/contextweaver/recall/" not in parts.path:
            raise MemoryUnreadable(
                f"{url}: not a recall capability URL (http://HOST:PORT/contextweaver/recall/CAP/)"
            )
        self.base = url.rstrip("/").removesuffix("/N") + "/"
        self._records: dict[int, str] = {}
        self._index = QueryIndex()
        self._asks_proxy: bool | None = None
        """Whether the proxy ranks a query itself (`?q=`), known after the first query."""

    def _get(self, handle: str, page: int = 1) -> tuple[int, str]:
        status, text, _ = self._fetch(f"{self.base}{urllib.parse.quote(handle)}?page={page}")
        return status, text

    def _fetch(self, url: str) -> tuple[int, str, str]:
        """The status, the text and the query-form header (`QUERY_HEADER`) of the proxy's answer."""
        try:
            with urllib.request.urlopen(url, timeout=HTTP_SECONDS) as reply:  # noqa: S310 (http(s) checked above)
                text = reply.read().decode("utf-8", "replace")
                return int(reply.status), text, reply.headers.get(QUERY_HEADER, "")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode("utf-8", "replace"), exc.headers.get(QUERY_HEADER, "")
        except (urllib.error.URLError, OSError) as exc:
            raise MemoryUnreadable(f"{self.base}: the proxy does not answer ({exc})") from exc

    def expand(self, handle: str, page: int = 1) -> str:
        return self._get(handle, page)[1].replace("`curl -s ", "`").rstrip("\n")

    def last_step(self) -> int:
        status, text = self._get("999999999")
        found = re.search(r"the steps so far are 1-(\d+)", text)
        if found is None:
            raise MemoryUnreadable(
                f"{self.base}: the proxy's answer names no step count ({status}: {text[:200]})"
            )
        return int(found.group(1))

    def _read(self, last: int) -> None:
        """The steps not read yet, in handles of at most MAX_STEPS, every page of each."""
        first = max(self._records, default=0) + 1
        for start in range(first, last + 1, MAX_STEPS):
            handle = f"{start}-{min(last, start + MAX_STEPS - 1)}"
            page, pages, body = 1, 1, ""
            while page <= pages:
                _, text = self._get(handle, page)
                head = re.match(r"\[page \d+ of (\d+)[^\]\n]*\]\n", text)
                if head:
                    pages = int(head.group(1))
                    text = text[head.end() :]
                body += text
                page += 1
            for number, record in _records(body):
                if number not in self._records:
                    self._records[number] = record
                    self._index.add(number, record)

    def recall(self, query: str, budget: int = QUERY_BUDGET) -> str:
        if self._asks_proxy is not False:
            ask = urllib.parse.urlencode({"q": query, "budget": budget})
            status, text, form = self._fetch(f"{self.base}?{ask}")
            self._asks_proxy = form == "query"  # else a proxy without the query form: rank its steps here
            if self._asks_proxy:
                answer = (
                    text if status == 200 else "contextweaver: " + text.removeprefix("contextweaver recall: ")
                )
                return answer.rstrip("\n")
        last = self.last_step()
        self._read(last)
        candidates = sorted(s for s in self._records if s <= last)
        return answered(
            lambda: recall_query(self._index, query, budget, candidates, self._records.__getitem__).text
        )

    def status(self) -> str:
        last = self.last_step()
        return (
            f"proxy session at {self.base}: {last} step(s) (the proxy's cut and note are in the context it "
            'sends; a query searches every step)\n- search them: `recall` with query="words"; read one whole: '
            '`expand` with handle="N"'
        )


class BoundOnFirstCall:
    """A memory bound when the agent first asks, then kept (a server never moves to another session); a
    subclass says how it binds (`bound`)."""

    def bound(self) -> WeaverMemory:
        raise NotImplementedError

    def recall(self, query: str, budget: int = QUERY_BUDGET) -> str:
        return self.bound().recall(query, budget)

    def expand(self, handle: str, page: int = 1) -> str:
        return self.bound().expand(handle, page)

    def status(self) -> str:
        return self.bound().status()


class LazyStore(BoundOnFirstCall):
    """A store's newest session, bound on the first call and kept: where the agent CLI goes through a local
    proxy, its session is created by the CLI's first request, after the CLI started its servers."""

    def __init__(self, location: str) -> None:
        self.location = location
        self._memory: StoreMemory | None = None

    def bound(self) -> StoreMemory:
        if self._memory is None:
            from contextweaver.store import open_store

            store = open_store(self.location)
            try:
                newest = max(store.sessions(), key=lambda info: info.updated_at, default=None)
            finally:
                store.close()
            if newest is None:
                raise MemoryUnreadable(
                    f"{self.location}: no session stored yet (ask again once the agent ran)"
                )
            self._memory = StoreMemory(self.location, newest.id)
        return self._memory


class LazyTranscript(BoundOnFirstCall):
    """A transcript memory bound on the first call, not at start: the CLI starts its servers before it
    writes the session's transcript, so the newest one of the project is taken when the agent first asks,
    and kept (a server never moves to another session)."""

    def __init__(self, path: Path | None, project: Path, agent: str = "any") -> None:
        self.path, self.project, self.agent = path, project, agent
        self._memory: TranscriptMemory | None = None

    def bound(self) -> TranscriptMemory:
        if self._memory is None:
            self._memory = TranscriptMemory(self.path or newest_transcript(self.project, self.agent))
        return self._memory


def newest_transcript(project: Path, agent: str = "any") -> Path:
    """The newest Claude Code or Codex transcript of `project` (where the CLI ran)."""
    project = project.resolve()
    found: list[Path] = []
    if agent in ("any", "claude"):
        home = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")
        folder = home / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project))
        found += [p for p in folder.glob("*.jsonl") if p.is_file()]
    if agent in ("any", "codex"):
        home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
        found += [
            p for p in (home / "sessions").glob("*/*/*/rollout-*.jsonl") if _codex_cwd(p) == str(project)
        ]
    if not found:
        raise MemoryUnreadable(
            f"no Claude Code or Codex transcript of {project} (looked in ~/.claude/projects/ and "
            "~/.codex/sessions/): start the server from the project's folder, or give --transcript PATH"
        )
    return max(found, key=lambda p: p.stat().st_mtime)


def _codex_cwd(path: Path) -> str | None:
    try:
        with path.open(encoding="utf-8") as lines:
            first = json.loads(lines.readline() or "{}")
    except (OSError, ValueError):
        return None
    payload = first.get("payload") if isinstance(first, dict) else None
    header = payload if isinstance(payload, dict) else first
    return str(header.get("cwd")) if isinstance(header, dict) and header.get("cwd") else None


def _records(body: str) -> list[tuple[int, str]]:
    """A recall answer cut back into its steps' records."""
    starts = list(re.finditer(r"(?m)^\[step (\d+): ", body))
    return [
        (int(m.group(1)), body[m.start() : starts[i + 1].start() if i + 1 < len(starts) else len(body)])
        for i, m in enumerate(starts)
    ]


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def _ranges(steps: Sequence[int]) -> str:
    out: list[str] = []
    for step in steps:
        if out and step == int(out[-1].rsplit("-", 1)[-1]) + 1:
            out[-1] = f"{out[-1].split('-')[0]}-{step}"
        else:
            out.append(str(step))
    return ", ".join(out)


def _weaver() -> ContextWeaver:
    """The memory's weaver: no budget (it never weaves), the default heuristic analyzer (no model call)."""
    return ContextWeaver(WeaverConfig())
