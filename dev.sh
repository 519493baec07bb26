#!/usr/bin/env bash
# Development entry point: creates/refreshes the virtual environment, then runs
# one job.  Usage:
#   bash dev.sh demo    # the main job (see README)
#   bash dev.sh test    # the whole test suite
#   bash dev.sh env     # only create/refresh .venv
# Torch comes as the pinned CPU build (constraints.txt); nothing else needs to
# be installed by hand.
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-python3}
VENV=${SKLMN_VENV:-.venv}

refresh_env() {
    if [ ! -x "$VENV/bin/python" ]; then
        echo "[dev] creating virtual environment in $VENV"
        "$PYTHON" -m venv "$VENV"
    fi
    # reinstall only when the requirements changed
    local stamp="$VENV/.sklmn-stamp"
    local want
    want=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] \
        || ! "$VENV/bin/python" -c "import sklmn, torch, skorch, pytest" 2>/dev/null; then
        echo "[dev] installing sklmn and its dependencies (CPU torch pinned)"
        "$VENV/bin/python" -m pip install --quiet --upgrade pip
        "$VENV/bin/python" -m pip install --quiet -c constraints.txt -e ".[test]"
        echo "$want" > "$stamp"
    fi
}

job=${1:-}
shift || true
case "$job" in
    env)
        refresh_env
        ;;
    test)
        refresh_env
        exec "$VENV/bin/python" -m pytest "$@"
        ;;
    demo)
        refresh_env
        export MPLBACKEND=Agg
        exec "$VENV/bin/python" -m sklmn.benchmarks "$@"
        ;;
    *)
        echo "usage: bash dev.sh {demo|test|env} [args...]" >&2
        exit 2
        ;;
esac
