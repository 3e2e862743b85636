#!/usr/bin/env bash
# Build zarrox and run every test: the Rust checks (fmt, clippy, unit tests) once, then the
# Python suite (pytest tests/ and zarr-python's own suite with zarrox as its codec pipeline,
# tests/zarr_suite) on each Python of the matrix, with the zarr-python release it installs:
#
#   Python 3.11  zarr-python 3.1.x  (.venv)
#   Python 3.12  zarr-python 3.4.x  (.venv-py3.12)
#   Python 3.13  zarr-python 3.4.x  (.venv-py3.13)
#
# The extension is abi3 (Python >= 3.11): one wheel is built and installed into every venv.
# Interpreters are found in pyenv ($PYENV_ROOT/versions/X.Y*) or on PATH (pythonX.Y);
# ZARROX_PYTHON_3_12=/path/to/python (and _3_11, _3_13) names one explicitly. A missing
# interpreter fails the run, loudly, unless ZARROX_SKIP_PYTHONS lists its version
# (e.g. ZARROX_SKIP_PYTHONS="3.13"). Needs cargo and the interpreters; everything else
# (maturin, the test extra, zarr-python) is installed here.
#
# A failure on one Python does not stop the others: every cell of the matrix runs, and the run
# fails at the end, naming the cells that failed. ZARR_SUITE_RECORD=1 also rewrites each
# version's tests/zarr_suite/RESULTS-zarr<version>-py<version>.md.
#
#   bash tests/run.sh [pytest args...]     # args go to every pytest run of tests/
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
START=$SECONDS

MATRIX=(3.11 3.12 3.13)
SKIP=" ${ZARROX_SKIP_PYTHONS:-} "

# find_python X.Y: the path of a working Python X.Y interpreter, or nothing.
find_python() {
    local v=$1 var="ZARROX_PYTHON_${1/./_}" candidate
    if [ -n "${!var:-}" ]; then
        echo "${!var}"
        return
    fi
    local candidates=()
    if [ "$v" = 3.11 ] && [ -n "${PYTHON:-}" ]; then
        candidates+=("$PYTHON")
    fi
    local root=${PYENV_ROOT:-$HOME/.pyenv}
    for candidate in "$root"/versions/"$v".*/bin/python; do
        [ -x "$candidate" ] && candidates+=("$candidate")
    done
    candidates+=("python$v" python3)
    for candidate in "${candidates[@]}"; do
        if "$candidate" -c "import sys; sys.exit(sys.version_info[:2] != tuple(map(int, '$v'.split('.'))))" \
            >/dev/null 2>&1; then
            command -v "$candidate"
            return
        fi
    done
}

venv_of() {  # the virtualenv directory of Python X.Y
    if [ "$1" = 3.11 ]; then echo .venv; else echo ".venv-py$1"; fi
}

PYTHONS=()
MISSING=()
for v in "${MATRIX[@]}"; do
    py=$(find_python "$v")
    if [ -n "$py" ]; then
        PYTHONS+=("$v=$py")
    elif [[ $SKIP == *" $v "* ]]; then
        echo "== Python $v not found; skipped as ZARROX_SKIP_PYTHONS asks"
    else
        MISSING+=("$v")
    fi
done
if [ ${#MISSING[@]} -gt 0 ]; then
    for v in "${MISSING[@]}"; do
        echo "ERROR: Python $v is not installed (looked in ${PYENV_ROOT:-$HOME/.pyenv}/versions and" \
            "for python$v on PATH). The test matrix needs it; install it (e.g. pyenv install $v)," \
            "name it with ZARROX_PYTHON_${v/./_}=/path/to/python, or skip it explicitly with" \
            "ZARROX_SKIP_PYTHONS=\"$v\"." >&2
    done
    exit 1
fi

echo "== building the zarrox wheel once (abi3, Python >= 3.11)"
BASE_PY=${PYTHONS[0]#*=}
BASE_VENV=$(venv_of "${PYTHONS[0]%%=*}")
[ -x "$BASE_VENV/bin/python" ] || "$BASE_PY" -m venv "$BASE_VENV"
"$BASE_VENV/bin/python" -m pip install -q --upgrade pip "maturin>=1.9,<2"
rm -rf target/wheels
"$BASE_VENV/bin/maturin" build -q --release --out target/wheels
WHEEL=$(ls target/wheels/zarrox-*.whl)

for entry in "${PYTHONS[@]}"; do
    v=${entry%%=*}
    py=${entry#*=}
    venv=$(venv_of "$v")
    echo "== Python $v ($py): installing the wheel and its test extra into $venv"
    [ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --upgrade pip
    "$venv/bin/python" -m pip install -q --force-reinstall --no-deps "$WHEEL"
    "$venv/bin/python" -m pip install -q "$WHEEL[test]"
done

# zarr-python 2.18 in a virtualenv of its own: the v2 interop tests write and read through
# it (tests/zarr2_worker.py).
[ -x .venv-zarr2/bin/python ] || "$BASE_PY" -m venv .venv-zarr2
.venv-zarr2/bin/python -m pip install -q "zarr==2.18.*" numcodecs

echo "== setup done in $((SECONDS - START)) s; rust: fmt, clippy, unit tests"
cargo fmt --check
cargo clippy -q --all-targets -- -D warnings
cargo clippy -q --all-targets --features python -- -D warnings
# the crate without its default features (no object stores), as the fuzz targets link it
cargo clippy -q --lib --no-default-features -- -D warnings
cargo test -q --lib

echo "== rust checks done at $((SECONDS - START)) s; python: ruff"
"$BASE_VENV/bin/ruff" check python tests benches fuzz
"$BASE_VENV/bin/ruff" format --check python tests benches fuzz

echo "== types and the API reference, once (Python ${PYTHONS[0]%%=*}): mypy, mkdocs build --strict"
checks_start=$SECONDS
# mypy on the package and README's Python, as users' type checkers see them (py.typed, _core.pyi)
"$BASE_VENV/bin/python" tests/typecheck.py
# docs/ from the docstrings; warnings are errors; offline (mkdocs.yml)
docs_site=$(mktemp -d)
"$BASE_VENV/bin/mkdocs" build --strict --quiet --site-dir "$docs_site"
rm -rf "$docs_site"
echo "   took $((SECONDS - checks_start)) s"

echo "== fuzzing: each cargo-fuzz target for 20 s from its seeds, fixed seed (RELIABILITY.md)"
fuzz_start=$SECONDS
cargo fmt --check --manifest-path fuzz/Cargo.toml
cargo clippy -q --manifest-path fuzz/Cargo.toml --all-targets -- -D warnings
bash fuzz/run.sh -t 20
echo "   fuzzing took $((SECONDS - fuzz_start)) s (builds included)"

SUMMARY=()
FAILED=()
SUITE_ARGS=()
if [ "${ZARR_SUITE_RECORD:-}" = 1 ]; then
    SUITE_ARGS+=(--record)
fi
for entry in "${PYTHONS[@]}"; do
    v=${entry%%=*}
    venv=$(venv_of "$v")
    zarr_version=$("$venv/bin/python" -c "import zarr; print(zarr.__version__)")
    echo "== Python $v, zarr-python $zarr_version: pytest tests/"
    t0=$SECONDS
    pytest_status=ok
    "$venv/bin/python" -m pytest -q -p no:cacheprovider tests "$@" || pytest_status=FAILED
    t1=$SECONDS
    echo "== Python $v, zarr-python $zarr_version: zarr-python's own test suite with zarrox as" \
        "its codec pipeline (tests/zarr_suite)"
    suite_status=ok
    PYTHON=$ROOT/$venv/bin/python bash tests/zarr_suite/run.sh "${SUITE_ARGS[@]}" ||
        suite_status=FAILED
    SUMMARY+=("Python $v, zarr-python $zarr_version: pytest $pytest_status ($((t1 - t0)) s), zarr suite $suite_status ($((SECONDS - t1)) s)")
    [ "$pytest_status" = ok ] || FAILED+=("pytest on Python $v")
    [ "$suite_status" = ok ] || FAILED+=("zarr suite on Python $v")
done

echo "== test matrix done in $((SECONDS - START)) s"
for line in "${SUMMARY[@]}"; do
    echo "   $line"
done
if [ ${#FAILED[@]} -gt 0 ]; then
    echo "FAILED: ${FAILED[*]}" >&2
    exit 1
fi
