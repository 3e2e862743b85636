#!/usr/bin/env bash
# zarr-python's own test suite on the installed zarr-python with zarrox's codec pipeline
# (ZARR_CODEC_PIPELINE__PATH=zarrox.ZarroxCodecPipeline, strict: no fallback to zarr-python's
# pipeline), then the tests that did not pass there (and the expected differences) again with
# zarr-python's own pipeline. Fails when a test that passes with the default pipeline fails with
# zarrox's, unless expected_differences.txt names it with a reason. --record runs the default
# pipeline over the whole selection too (its counts go into the RESULTS file).
#
#   bash tests/zarr_suite/run.sh [--record] [pytest args...]
#
# The sdist of the installed zarr version is downloaded from PyPI once (its tests/ are not in
# the wheel) into target/zarr-suite/; pytest-asyncio and pytest-xdist, which only these tests
# need, are installed there too (one folder per Python version, not into the project's venv).
# PYTHON names the interpreter whose zarr-python and zarrox are tested (default: .venv's).
# --record rewrites tests/zarr_suite/RESULTS-zarr<version>-py<version>.md. ZARR_SUITE_TESTS
# overrides the test selection; ZARR_SUITE_WORKERS the number of pytest-xdist workers (default:
# the number of cores).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

PY=${PYTHON:-$ROOT/.venv/bin/python}
RECORD=0
if [ "${1:-}" = "--record" ]; then
    RECORD=1
    shift
fi
# Every module that reads or writes chunks (all but the docs, examples, benchmarks and CLI).
TESTS=${ZARR_SUITE_TESTS:-"tests/test_codecs tests/test_indexing.py tests/test_array.py tests/test_v2.py tests/test_properties.py tests/test_api.py tests/test_api tests/test_group.py tests/test_attributes.py tests/test_buffer.py tests/test_chunk_grids.py tests/test_codec_entrypoints.py tests/test_common.py tests/test_config.py tests/test_dtype tests/test_dtype_registry.py tests/test_errors.py tests/test_experimental tests/test_info.py tests/test_metadata tests/test_regression tests/test_store tests/test_sync.py tests/test_tree.py tests/test_zarr.py tests/test_abc"}
WORKERS=${ZARR_SUITE_WORKERS:-$("$PY" -c "import os; print(os.cpu_count() or 1)")}

VERSION=$("$PY" -c "import zarr; print(zarr.__version__)")
PYVER=$("$PY" -c "import sys; print('%d.%d' % sys.version_info[:2])")
BASE=$ROOT/target/zarr-suite
WORK=$BASE/zarr-$VERSION
SITE=$BASE/site-py$PYVER
RUN=$BASE/zarr-$VERSION-py$PYVER
if [ ! -f "$WORK/.extracted" ]; then
    echo "== downloading the zarr $VERSION sdist for its tests"
    rm -rf "$WORK" "$BASE/sdist"
    mkdir -p "$WORK"
    "$PY" -m pip download -q --no-deps --no-binary :all: "zarr==$VERSION" -d "$BASE/sdist"
    tar xzf "$BASE/sdist/zarr-$VERSION.tar.gz" -C "$WORK" --strip-components=1 \
        "zarr-$VERSION/tests" "zarr-$VERSION/pyproject.toml"
    touch "$WORK/.extracted"
fi
if [ ! -f "$SITE/.installed" ]; then
    echo "== installing the suite's own test plugins into $SITE"
    rm -rf "$SITE"
    "$PY" -m pip install -q --no-deps --target "$SITE" "pytest-asyncio>=1" "pytest-xdist>=3" execnet
    touch "$SITE/.installed"
fi

mkdir -p "$RUN"
run() {  # run NAME [env...]: pytest over the selection, results in $RUN/NAME.xml
    local name=$1
    shift
    echo "== zarr-python $VERSION test suite on Python $PYVER, $name codec pipeline ($TESTS)"
    local start=$SECONDS
    # The sdist's pytest configuration (filterwarnings = error, asyncio_mode = auto, ...)
    # applies; its addopts need plugins this run does not use. Hypothesis is seeded so that
    # both runs see the same examples.
    # listed_tests (tests/zarr_suite) keeps only the tests ZARR_SUITE_ONLY lists, when set.
    (cd "$WORK" && env "$@" PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$SITE:$ROOT/tests/zarr_suite" \
        "$PY" -m pytest $TESTS -q -p no:cacheprovider -p listed_tests \
        -o addopts="" -o console_output_style=classic -n "$WORKERS" --hypothesis-seed=0 \
        --junitxml="$RUN/$name.xml" "${PYTEST_ARGS[@]}" >"$RUN/$name.log" 2>&1) || true
    tail -n 1 "$RUN/$name.log"
    echo "   ($((SECONDS - start)) s)"
    DURATIONS+=("$name=$((SECONDS - start))")
}
DURATIONS=()
# tests/test_api/test_synchronous.py only compares the docstrings of zarr-python's sync and
# async functions; it needs numpydoc and its test ids hold memory addresses, which pytest-xdist
# refuses ("Different tests were collected"). Left out, by name, rather than left to error.
PYTEST_ARGS=(--ignore=tests/test_api/test_synchronous.py "$@")
EXPECTED=$ROOT/tests/zarr_suite/expected_differences.txt
DEFAULT=(ZARR_CODEC_PIPELINE__PATH=zarr.core.codec_pipeline.BatchedCodecPipeline)
run zarrox ZARR_CODEC_PIPELINE__PATH=zarrox.ZarroxCodecPipeline ZARR_CODEC_PIPELINE__STRICT=true
ARGS=("$RUN/default.xml" "$RUN/zarrox.xml" --version "$VERSION" --tests "$TESTS"
    --workers "$WORKERS" --expected "$EXPECTED")
if [ "$RECORD" = 1 ]; then
    run default "${DEFAULT[@]}"
    ARGS+=(--record "$ROOT/tests/zarr_suite/RESULTS-zarr$VERSION-py$PYVER.md")
else
    "$PY" "$ROOT/tests/zarr_suite/compare.py" not-passed "$RUN/zarrox.xml" --expected "$EXPECTED" \
        --version "$VERSION" >"$RUN/not-passed.txt"
    echo "   $(wc -l <"$RUN/not-passed.txt") tests to run again with the default pipeline"
    run default "${DEFAULT[@]}" ZARR_SUITE_ONLY="$RUN/not-passed.txt"
    ARGS+=(--subset)
fi
ARGS+=(--durations "${DURATIONS[*]}")
"$PY" "$ROOT/tests/zarr_suite/compare.py" "${ARGS[@]}"
