#!/usr/bin/env bash
# Run the test suite. Starts a throwaway PostgreSQL server for the store's tests when the machine has
# one (otherwise those tests skip); tests needing ../shared/data, Chromium or the local model skip
# cleanly when those are absent. Extra arguments go to pytest.
#   --lint   ruff check, ruff format --check and mypy, then stop (CI runs it before the tests)
#   --fast   the fast lane: no test marked slow or needing the local model, a few examples per property test,
#            on two worker processes (pytest-xdist, the dev extra; FAST_WORKERS=N changes it, 0 runs serially)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
[ -x "$PY" ] || PY=python3
if [ "${1:-}" = "--lint" ]; then
    LINTED=(src tests benchmarks scripts)
    "$PY" -m ruff check "${LINTED[@]}"
    "$PY" -m ruff format --check "${LINTED[@]}"
    "$PY" -m mypy  # the packages and settings are pyproject's [tool.mypy]
    exit 0
fi
if [ "${1:-}" = "--fast" ]; then
    shift
    export HYPOTHESIS_PROFILE=fast
    workers=()
    if [ "${FAST_WORKERS:-2}" != 0 ] && "$PY" -c "import xdist" 2>/dev/null; then
        workers=(-n "${FAST_WORKERS:-2}")
    fi
    exec "$PY" -m pytest -q -m "not slow and not model" "${workers[@]}" "$@"
fi
stop_postgres() {
    local ctl
    ctl="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)/pg_ctl"
    if [ "$(id -u)" = 0 ]; then set -- runuser -u postgres --; else set --; fi
    "$@" "$ctl" -D "$CONTEXTWEAVER_PG_DIR/data" stop -m fast >/dev/null 2>&1 || true
    # the server's folder (~47 MB) is ours when start_postgres.sh made it: remove it, not a folder the caller named
    if [ -n "$made_pg_dir" ]; then rm -rf -- "$CONTEXTWEAVER_PG_DIR"; fi
}
if [ -z "${CONTEXTWEAVER_PG_DSN:-}" ] && ls -d /usr/lib/postgresql/*/bin >/dev/null 2>&1; then
    made_pg_dir=""
    [ -n "${CONTEXTWEAVER_PG_DIR:-}" ] || made_pg_dir=1
    if pg_env="$(bash scripts/start_postgres.sh)"; then
        eval "$pg_env"
        trap stop_postgres EXIT
    else
        echo "could not start PostgreSQL: its tests will skip" >&2
    fi
fi
"$PY" -m pytest -q "$@"
# the OpenHands SDK needs Python 3.12+, so its tests run in their own venv (made by FULL=1 setup.sh)
if [ "$#" -eq 0 ] && [ -x .venv-openhands/bin/python ]; then
    .venv-openhands/bin/python -m pytest -q tests/integrations/test_openhands_condenser.py tests/integrations/test_openhands_view_properties.py tests/integrations/test_openhands_anthropic.py \
        tests/integrations/test_truthful_start_frameworks.py::test_openhands_condenser_takes_the_llms_max_input_tokens
fi
