#!/usr/bin/env bash
# Build zarrox and run every test: Rust unit tests and lints, then the Python
# suite (interop with zarr-python and tensorstore included). Creates .venv if
# needed; needs only python3 (>= 3.11) and cargo.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
# shellcheck disable=SC1091
. .venv/bin/activate
python -m pip install -q --upgrade pip
echo "== building and installing zarrox with its test extra"
python -m pip install -q ".[test]"

# zarr-python 2.18 in a virtualenv of its own: the v2 interop tests write and
# read through it (tests/zarr2_worker.py).
[ -x .venv-zarr2/bin/python ] || "$PYTHON" -m venv .venv-zarr2
.venv-zarr2/bin/python -m pip install -q "zarr==2.18.*" numcodecs

echo "== rust: fmt, clippy, unit tests"
cargo fmt --check
cargo clippy -q --all-targets -- -D warnings
cargo clippy -q --all-targets --features python -- -D warnings
cargo test -q --lib

echo "== python: ruff, pytest"
ruff check python tests benches fuzz
ruff format --check python tests benches fuzz
python -m pytest -q -p no:cacheprovider tests "$@"

echo "== fuzzing: each cargo-fuzz target for 20 s from its seeds, fixed seed (RELIABILITY.md)"
fuzz_start=$SECONDS
cargo fmt --check --manifest-path fuzz/Cargo.toml
cargo clippy -q --manifest-path fuzz/Cargo.toml --all-targets -- -D warnings
bash fuzz/run.sh -t 20
echo "   fuzzing took $((SECONDS - fuzz_start)) s (builds included)"

echo "== zarr-python's own test suite, with zarrox as its codec pipeline (tests/zarr_suite)"
bash tests/zarr_suite/run.sh
