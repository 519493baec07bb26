#!/usr/bin/env bash
# Development entry point: creates/refreshes the virtual environment, then runs
# one job.  Usage:
#   bash dev.sh demo    # the main job (see README)
#   bash dev.sh test    # the whole test suite
#   bash dev.sh env     # only create/refresh .venv
#   bash dev.sh data    # only fetch the time-series datasets (see fetch_wheels)
# Torch is pinned by constraints.txt (torch==2.13.0): a CPU build where pip's
# index serves one, the CUDA build on a stock PyPI index (the README shows how
# to install the CPU build first); nothing else needs to be installed by hand.
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-python3}
VENV=${SKLMN_VENV:-.venv}
DATA_HOME=${SKLMN_DATA:-$HOME/.cache/sklmn}

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
        echo "[dev] installing sklmn and its dependencies (torch pinned)"
        "$VENV/bin/python" -m pip install --quiet --upgrade pip
        "$VENV/bin/python" -m pip install --quiet -c constraints.txt -e ".[test]"
        echo "$want" > "$stamp"
    fi
}

# The .ts files of the time-series suite (python -m sklmn.benchmarks --suite
# timeseries; sklmn.datasets.load_timeseries_dataset) ship inside the aeon and
# sktime wheels. They are downloaded once, like any install-time dependency,
# into $DATA_HOME/wheels (never installed: sklmn reads the files straight from
# the zip archives, offline). Skipped when both wheels are already there.
fetch_wheels() {
    local dir="$DATA_HOME/wheels"
    if compgen -G "$dir/aeon-1.6.0-*.whl" >/dev/null \
        && compgen -G "$dir/sktime-1.2.0-*.whl" >/dev/null; then
        return 0
    fi
    echo "[dev] downloading the aeon/sktime wheels (time-series datasets) into $dir"
    mkdir -p "$dir"
    "$VENV/bin/python" -m pip download --quiet --no-deps aeon==1.6.0 sktime==1.2.0 \
        -d "$dir"
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
    data)
        refresh_env
        fetch_wheels
        ;;
    demo)
        refresh_env
        # the papers' experiments do not need the wheels: a failed download
        # (no network) only disables --suite timeseries
        fetch_wheels || echo "[dev] warning: could not fetch the aeon/sktime" \
            "wheels; --suite timeseries will not find its datasets" >&2
        export MPLBACKEND=Agg
        exec "$VENV/bin/python" -m sklmn.benchmarks "$@"
        ;;
    *)
        echo "usage: bash dev.sh {demo|test|env|data} [args...]" >&2
        exit 2
        ;;
esac
