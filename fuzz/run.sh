#!/usr/bin/env bash
# Build zarrox's fuzz targets (libFuzzer, through libfuzzer-sys) and run each for a fixed
# time with a fixed seed, on its corpus (fuzz/corpus/<target>, grown by the runs, not
# committed), the committed seeds (fuzz/seeds/<target>, fuzz/make_corpus.py writes them) and
# the inputs of past findings (fuzz/regressions/<target>), which every run replays first.
# Needs only stable cargo and a C++ compiler: the coverage instrumentation is what
# `cargo fuzz build --sanitizer none` passes to rustc; --asan adds AddressSanitizer, which
# needs an unstable rustc flag (RUSTC_BOOTSTRAP=1 is set for it). Any crash, panic,
# sanitizer report, or allocation the targets' allocator refuses that zarrox does not turn
# into an error stops the run: the input is in fuzz/artifacts/<target>/, and the status is 1.
#
#   bash fuzz/run.sh                         # CI: every target, 20 s each (tests/run.sh)
#   bash fuzz/run.sh -t 3600 -j 2            # an hour per target, 2 jobs each
#   bash fuzz/run.sh -t 0 --asan decode_v3   # until stopped, with AddressSanitizer
#   bash fuzz/run.sh --replay fuzz/artifacts/decode_v3/crash-...   # rerun one input
set -euo pipefail
cd "$(dirname "$0")"

seconds=20
jobs=1
asan=0
replay=""
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        -t | --seconds) seconds=$2; shift 2 ;;
        -j | --jobs) jobs=$2; shift 2 ;;
        --asan) asan=1; shift ;;
        --replay) replay=$2; shift 2 ;;
        -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
        -*) echo "unknown option $1" >&2; exit 2 ;;
        *) targets+=("$1"); shift ;;
    esac
done
all=(decode_v3 decode_numcodecs decode_vlen shard_index metadata)
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

triple=$(rustc -vV | sed -n 's/^host: //p')
flags="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4"
flags+=" -Cllvm-args=-sanitizer-coverage-inline-8bit-counters"
flags+=" -Cllvm-args=-sanitizer-coverage-pc-table"
flags+=" -Cllvm-args=-sanitizer-coverage-trace-compares"
flags+=" -Cllvm-args=-sanitizer-coverage-stack-depth"
flags+=" -Cllvm-args=-simplifycfg-branch-fold-threshold=0"
# debug_assert!s and overflow checks in every crate.
flags+=" --cfg fuzzing -Cdebug-assertions -Ccodegen-units=16"
target_dir=target/run
if [ $asan = 1 ]; then
    flags+=" -Zsanitizer=address"
    export RUSTC_BOOTSTRAP=1
    target_dir=target/run-asan
fi
echo "== building the fuzz targets ($target_dir)"
# --target keeps these flags away from build scripts and proc macros.
RUSTFLAGS="$flags" cargo build -q --release --target "$triple" --target-dir "$target_dir" \
    --config 'profile.release.debug="line-tables-only"' $(printf -- '--bin %s ' "${targets[@]}")
bin="$target_dir/$triple/release"

if [ -n "$replay" ]; then
    exec "$bin/${targets[0]}" "$replay"
fi

status=0
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "artifacts/$t"
    options=(-seed=1 -max_len=4096 -timeout=20 -rss_limit_mb=3072 -print_final_stats=1
        -artifact_prefix="artifacts/$t/")
    [ $asan = 1 ] && options+=(-malloc_limit_mb=1024)
    [ -f "$t.dict" ] && options+=(-dict="$t.dict")
    [ "$seconds" != 0 ] && options+=(-max_total_time="$seconds")
    [ "$jobs" -gt 1 ] && options+=(-fork="$jobs")
    echo "== $t: ${seconds}s"
    log="artifacts/$t/last-run.log"
    dirs=("corpus/$t" "seeds/$t")
    [ -d "regressions/$t" ] && dirs+=("regressions/$t")
    if "$bin/$t" "${options[@]}" "${dirs[@]}" >"$log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
        size=$(find "corpus/$t" -type f | wc -l)
        echo "   ok: ${runs:-?} inputs run, corpus of $size"
    else
        status=1
        echo "   FAILED: the input and the report are in fuzz/artifacts/$t/"
        grep -E "panicked|ERROR|SUMMARY|Test unit written|failed" "$log" | head -10 | sed 's/^/   /'
    fi
done
exit $status
