"""`contextweaver mcp`: a stdio MCP server (the official `mcp` SDK, the `mcp` extra) with three tools over
one session's memory (`recall_memory.py`): `recall` (a query: the records a cut or a compaction left
out that best answer it, verbatim, under a token budget), `expand` (a step handle, paged) and `status`
(what was cut, the note, the failing tests). After an agent CLI's own compaction (Claude Code's
`/compact`, Codex's), the exact records come back without the agent knowing a step number.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio.to_thread

from contextweaver.integrations.recall_memory import Memory, MemoryUnreadable
from contextweaver.nodes.recall_query import MAX_QUERY_CHARS, QUERY_BUDGET

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

NAME = "contextweaver"
MAX_BUDGET = 16_000
"""Most o200k tokens one `recall` answer may take (an answer is read into the agent's own context)."""
INSTRUCTIONS = (
    "The memory of this session's steps, verbatim. After a compaction or a cut, call `recall` with words of "
    "what you look for (an error, a file, a command) to get those records back as they were; `expand` reads "
    "one step whole by the number its label gives; `status` says what was cut and which tests fail."
)


def server(memory: Memory) -> MCPServer:
    """The MCP server over `memory`, its tools registered (run it with `.run("stdio")`)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    app = MCPServer(NAME, instructions=INSTRUCTIONS)
    # unstructured: the answer is text content only (a `{"result": ...}` beside it is what Claude Code shows the
    # model, every line break escaped, where the records must come back as they were)
    read_only = ToolAnnotations(
        readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False
    )

    @app.tool(annotations=read_only, structured_output=False)
    async def recall(query: str, budget: int = QUERY_BUDGET) -> str:
        """Search what the context no longer holds whole by words of what you look for ("the assertion
        error of the last pytest run", "settings.py DATABASES"): the best matching records as you first
        saw them, labelled [step N: command | test status], in the order they happened, within `budget`
        tokens (at most 16000)."""
        if len(query) > MAX_QUERY_CHARS:
            return f"contextweaver: a query holds at most {MAX_QUERY_CHARS} characters; this one has {len(query)}"
        return await _run(memory.recall, query, max(200, min(budget, MAX_BUDGET)))

    @app.tool(annotations=read_only, structured_output=False)
    async def expand(handle: str, page: int = 1) -> str:
        """Read steps whole, as you first saw them, by the numbers their labels give: "12", "3-5" or
        "3-5,9"; `page` for the next page of a long answer."""
        return await _run(memory.expand, handle, max(1, page))

    @app.tool(annotations=read_only, structured_output=False)
    async def status() -> str:
        """What the context no longer holds whole, the note the cut left, and the tests failing now."""
        return await _run(memory.status)

    return app


async def _run(call: Callable[..., str], *args: object) -> str:
    """The memory's answer, read off the event loop; a memory that cannot be read says why, as text."""
    try:
        return await anyio.to_thread.run_sync(call, *args)
    except MemoryUnreadable as exc:
        return f"contextweaver: {exc}"
