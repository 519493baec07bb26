#!/usr/bin/env bash
# Development entry point: creates/refreshes the virtual environment, then runs
# one job.  Usage:
#   bash dev.sh demo    # the main job: the papers' experiments, quick preset
#                       # (args go to python -m sklmn.benchmarks; see README)
#   bash dev.sh test    # ruff check (the lint), then the whole test suite
#   bash dev.sh env     # only create/refresh .venv
#   bash dev.sh data    # only fetch the time-series datasets (see fetch_wheels)
#   bash dev.sh docs    # build the documentation site (docs/_build/html) and
#                       # check it in headless Chromium (see build_docs)
#   bash dev.sh test-oldest  # the tests against the oldest supported releases
#                            # (constraints-oldest.txt), in .venv-oldest
# Torch is pinned by constraints.txt (torch==2.13.0): a CPU build where pip's
# index serves one, the CUDA build on a stock PyPI index (the README shows how
# to install the CPU build first); nothing else needs to be installed by hand.
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-python3}
VENV=${SKLMN_VENV:-.venv}
OLDEST_VENV=${SKLMN_OLDEST_VENV:-.venv-oldest}
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
        || ! "$VENV/bin/python" -c "import sklmn, torch, skorch, pytest" 2>/dev/null \
        || [ ! -x "$VENV/bin/ruff" ]; then
        echo "[dev] installing sklmn and its dependencies (torch pinned)"
        "$VENV/bin/python" -m pip install --quiet --upgrade pip
        "$VENV/bin/python" -m pip install --quiet -c constraints.txt -e ".[test]"
        echo "$want" > "$stamp"
    fi
}

# A second environment with the lower bounds of pyproject.toml pinned
# (constraints-oldest.txt); the test extra resolves to releases compatible
# with them. On a stock PyPI index the oldest torch (constraints-oldest.txt)
# is the CUDA build (large).
refresh_oldest_env() {
    if [ ! -x "$OLDEST_VENV/bin/python" ]; then
        echo "[dev] creating virtual environment in $OLDEST_VENV"
        "$PYTHON" -m venv "$OLDEST_VENV"
    fi
    local stamp="$OLDEST_VENV/.sklmn-stamp"
    local want
    want=$(cat pyproject.toml constraints-oldest.txt | sha256sum | cut -d' ' -f1)
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
        echo "[dev] installing sklmn with the oldest supported dependencies"
        "$OLDEST_VENV/bin/python" -m pip install --quiet --upgrade pip
        "$OLDEST_VENV/bin/python" -m pip install --quiet \
            -c constraints-oldest.txt -e ".[test]"
        echo "$want" > "$stamp"
    fi
    "$OLDEST_VENV/bin/python" -c "import numpy, scipy, sklearn, torch, skorch
print('[dev] oldest:', *(f'{m.__name__} {m.__version__}'
      for m in (numpy, scipy, sklearn, torch, skorch)))"
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

# The documentation site: Sphinx (numpydoc, sphinx-gallery running examples/
# in quick mode, MyST for the Markdown pages), offline (no intersphinx),
# warnings as errors; then docs/check_site.py checks every internal link and
# the HTML-repr links, and opens pages in headless Chromium (screenshots in
# docs/_build/screenshots/). Chromium is Debian's package: installed with
# apt-get when missing and running as root, else the browser check is
# skipped with a message (SKLMN_DOCS_BROWSER=0 skips it, =1 requires it).
build_docs() {
    local stamp="$VENV/.sklmn-docs-stamp"
    local want
    want=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] \
        || ! "$VENV/bin/python" -c "import sphinx, numpydoc, sphinx_gallery, myst_parser, pydata_sphinx_theme" 2>/dev/null; then
        echo "[dev] installing the documentation requirements (extra 'docs')"
        "$VENV/bin/python" -m pip install --quiet -c constraints.txt -e ".[test,docs]"
        echo "$want" > "$stamp"
    fi
    local browser_flag=""
    case "${SKLMN_DOCS_BROWSER:-auto}" in
        0) ;;
        1) browser_flag="--require-browser" ;;
        *)
            if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null \
                && ! command -v google-chrome >/dev/null && [ "$(id -u)" = 0 ] \
                && command -v apt-get >/dev/null; then
                echo "[dev] installing Debian's chromium for the rendering check"
                DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null \
                    || { apt-get update -qq >/dev/null \
                         && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
                    || echo "[dev] warning: could not install chromium" >&2
            fi
            ;;
    esac
    # a clean build every time: the generated pages follow the code
    rm -rf docs/_build docs/api docs/auto_examples docs/design_notes.rst \
        docs/sg_execution_times.rst
    local start=$SECONDS
    export MPLBACKEND=Agg
    "$VENV/bin/python" -m sphinx -b html -W --keep-going -j 1 \
        -w docs/_build/warnings.log docs docs/_build/html "$@"
    echo "[dev] docs built in $((SECONDS - start)) s, $(grep -c . docs/_build/warnings.log || true)" \
        "warning(s); open docs/_build/html/index.html"
    if [ "${SKLMN_DOCS_BROWSER:-auto}" = 0 ]; then
        "$VENV/bin/python" docs/check_site.py docs/_build/html --no-browser
    else
        "$VENV/bin/python" docs/check_site.py docs/_build/html $browser_flag
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
        # the lint first (ruff pinned by the test extra); a finding ends the job
        "$VENV/bin/ruff" check .
        exec "$VENV/bin/python" -m pytest "$@"
        ;;
    test-oldest)
        refresh_oldest_env
        exec "$OLDEST_VENV/bin/python" -m pytest "$@"
        ;;
    data)
        refresh_env
        fetch_wheels
        ;;
    docs)
        refresh_env
        build_docs "$@"
        ;;
    demo)
        refresh_env
        # only the time-series suite needs the wheels (the papers'
        # experiments run on bundled data): fetched for it alone, and a
        # failed download (no network) leaves its datasets missing
        case " $* " in
            *" timeseries "* | *"--suite=timeseries"*)
                fetch_wheels || echo "[dev] warning: could not fetch the" \
                    "aeon/sktime wheels; --suite timeseries will not find its" \
                    "datasets" >&2
                ;;
        esac
        export MPLBACKEND=Agg
        # every benchmark has this one entry point: the papers' experiments
        # (default), --suite timeseries, and 'bench NAME' measurements
        exec "$VENV/bin/python" -m sklmn.benchmarks "$@"
        ;;
    *)
        echo "usage: bash dev.sh {demo|test|test-oldest|env|data|docs} [args...]" >&2
        exit 2
        ;;
esac
