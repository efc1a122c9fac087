"""Run the real Claude Code and Codex CLIs (installed from package.json) non-interactively, isolated.

Each run gets its own HOME (so the user's settings, sessions and keys are never read or written),
telemetry, updaters and error reporting off, and every other host it might call pointed at a closed
loopback port. `claude -p` and `codex exec` then talk only to the base URL they are given.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = HERE / "node_modules" / ".bin"
CLOSED = "http://127.0.0.1:9"
"""A loopback port nothing listens on: where any traffic but the model's goes."""
TASK = "test_add in test_calc.py fails: add(2, 3) should be 5. Fix calc.py."
CONTEXTWEAVER = Path(sys.executable).with_name("contextweaver")
MCP_TOOLS = {"claude": "mcp__contextweaver__recall", "codex": "mcp__contextweaver__recall"}
"""How each CLI names the `recall` tool of an MCP server configured as `contextweaver`, to the model."""


def mcp_available() -> bool:
    """The `mcp` extra (the official SDK) is installed beside contextweaver."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        return False
    return CONTEXTWEAVER.exists()


def mcp_env() -> dict[str, str]:
    """What the server's process needs of this one's environment: the contextweaver under test."""
    return {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}


def mcp_json(args: list[str]) -> str:
    """Claude Code's MCP configuration (`.mcp.json`, `--mcp-config`): `contextweaver mcp ARGS` over stdio."""
    server = {"command": str(CONTEXTWEAVER), "args": ["mcp", *args], "env": mcp_env()}
    return json.dumps({"mcpServers": {"contextweaver": server}})


def mcp_toml(args: list[str]) -> str:
    """Codex's MCP table in config.toml: `contextweaver mcp ARGS` over stdio."""
    env = ", ".join(f"{key} = {json.dumps(value)}" for key, value in mcp_env().items())
    return (
        f"[mcp_servers.contextweaver]\ncommand = {json.dumps(str(CONTEXTWEAVER))}\n"
        f"args = {json.dumps(['mcp', *args])}\nenv = {{ {env} }}\n"
    )


def installed(name: str) -> bool:
    return (BIN / name).exists()


def install_hint() -> str:
    return f"the agent CLIs are not installed: run `npm ci --prefix {HERE}` (needs the npm registry)"


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    home: Path


def _base_env(home: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TERM", "TMPDIR")}
    return {
        **keep,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "NO_PROXY": "127.0.0.1,localhost",
        "HTTPS_PROXY": CLOSED,
        "HTTP_PROXY": CLOSED,
        "DO_NOT_TRACK": "1",
    }


def run_claude(
    base_url: str, repo: Path, home: Path, timeout: float = 240, mcp: list[str] | None = None
) -> Run:
    """`claude -p TASK` with the tools the session uses allowed; ANTHROPIC_BASE_URL is `base_url`; `mcp`: the
    arguments of a `contextweaver mcp` server given with `--mcp-config`, its `recall` tool allowed."""
    env = {
        **_base_env(home),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_BUG_COMMAND": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
    }
    allowed = "Bash,Read,Edit" + ("" if mcp is None else f",{MCP_TOOLS['claude']}")
    command = [str(BIN / "claude"), "-p", TASK, "--allowedTools", allowed, "--output-format", "json"]
    if mcp is not None:
        home.mkdir(parents=True, exist_ok=True)
        (home / "mcp.json").write_text(mcp_json(mcp))
        command += ["--mcp-config", str(home / "mcp.json"), "--strict-mcp-config"]
    return _run(command, repo, env, home, timeout)


REMOTE_COMPACTION = '[model_providers.contextweaver.capabilities]\nremote_compaction = "v2"\n'
"""The provider capability with which Codex compacts on the upstream (a `compaction_trigger` input item on the
ordinary /responses stream) instead of by a summarizing turn of its own."""


def run_codex(
    base_url: str, repo: Path, home: Path, timeout: float = 240, config: str = "", tables: str = ""
) -> Run:
    """`codex exec TASK` with its default model, configured as the README says (a Responses provider);
    `config`: top-level lines added to its config.toml, `tables`: tables added at its end."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        config + 'model_provider = "contextweaver"\n'
        "check_for_update_on_startup = false\n"
        "[analytics]\nenabled = false\n"
        '[otel]\nexporter = "none"\n'
        "[model_providers.contextweaver]\n"
        f'name = "ContextWeaver"\nbase_url = "{base_url}"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n'
        + tables
    )
    env = {**_base_env(home), "CODEX_HOME": str(codex_home), "OPENAI_API_KEY": "sk-test"}
    command = [str(BIN / "codex"), "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
               TASK]  # fmt: skip
    return _run(command, repo, env, home, timeout)


def _run(command: list[str], repo: Path, env: dict[str, str], home: Path, timeout: float) -> Run:
    home.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)  # fmt: skip
    return Run(done.returncode, done.stdout, done.stderr, home)


def transcripts(home: Path, pattern: str) -> list[Path]:
    """The session files a CLI wrote under its HOME (Claude Code: *.jsonl; Codex: rollout-*.jsonl)."""
    return sorted(p for p in home.rglob(pattern) if p.is_file())


def node_available() -> bool:
    return shutil.which("node") is not None
