"""Which optional extra brings which modules, and which commands need it: the one table the messages
read when something optional is missing, with the install command that works for this copy.

The distribution is not on PyPI yet, so the command names where this copy was installed from (a clone or
a wheel, as pip recorded it) and says what it will be once published.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

DISTRIBUTION = "contextweaver-agents"
PUBLISHED = False
"""True once `pip install contextweaver-agents` finds the package on PyPI (the release workflow publishes it)."""


@dataclass(frozen=True)
class Extra:
    modules: tuple[str, ...]
    """Top-level modules it installs that the package imports."""
    purpose: str
    commands: tuple[str, ...] = ()
    """CLI commands that cannot run without it."""


EXTRAS = {
    "eval": Extra(("matplotlib", "bm25s"), "the eval report's figures and the bm25 baseline", ("eval",)),
    "serve": Extra(("starlette", "uvicorn", "httpx"), "the proxy", ("serve", "demo")),
    "mcp": Extra(("mcp",), "the MCP server for agent CLIs", ("mcp",)),
    "llm": Extra(("openai", "httpx"), "OpenAI-compatible memory models"),
    "anthropic": Extra(("anthropic",), "Anthropic memory models"),
    "postgres": Extra(("psycopg", "psycopg_pool"), "PostgreSQL session stores"),
    "minisweagent": Extra(("minisweagent",), "the mini-swe-agent integration"),
    "langgraph": Extra(("langgraph", "langchain"), "the LangGraph integration"),
    "openhands": Extra(("openhands",), "the OpenHands integration (Python 3.12+)"),
}


def missing(extra: str) -> list[str]:
    """The extra's modules this Python cannot import."""
    return [m for m in EXTRAS[extra].modules if importlib.util.find_spec(m) is None]


def command_needs(command: str) -> str | None:
    """The extra a CLI command needs and does not have, else None."""
    return next((name for name, e in EXTRAS.items() if command in e.commands and missing(name)), None)


def extra_of(module: str | None) -> str | None:
    """The extra that installs `module` (a dotted name is read by its top level)."""
    top = (module or "").split(".")[0]
    return next((name for name, e in EXTRAS.items() if top in e.modules), None)


def source() -> tuple[str, bool]:
    """Where this copy was installed from, as pip recorded it (a folder or a wheel file), and whether
    editable; a copy run from a clone's `src/` names the clone; otherwise `./contextweaver`, a clone."""
    try:
        record = importlib.metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        record = None
    if record:
        data = json.loads(record)
        url = str(data.get("url", ""))
        if url.startswith("file://"):
            return url.removeprefix("file://"), bool(data.get("dir_info", {}).get("editable"))
    clone = Path(__file__).resolve().parents[2]
    if (clone / "pyproject.toml").exists():
        return str(clone), False
    return "./contextweaver", False


def install_command(extra: str | None = None) -> str:
    """The pip command that installs this package (with `extra`) today, and the one after publication."""
    suffix = f"[{extra}]" if extra else ""
    if PUBLISHED:
        return f"pip install '{DISTRIBUTION}{suffix}'"
    where, editable = source()
    today = f"pip install {'-e ' if editable else ''}'{where}{suffix}'"
    return f"{today} (once published on PyPI: pip install '{DISTRIBUTION}{suffix}')"


def needs_message(what: str, extra: str) -> str:
    """One line: what needs which extra, which of its modules are missing, and how to install it."""
    absent = missing(extra) or list(EXTRAS[extra].modules)
    return (
        f"{what} needs the '{extra}' extra ({EXTRAS[extra].purpose}; {', '.join(absent)} not installed): "
        f"{install_command(extra)}"
    )
