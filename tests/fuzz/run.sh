#!/bin/sh
# Runs every fuzz target for SECONDS from fresh seeds (make_seeds.sh) and the
# corpus it kept from earlier runs; fails on any crash, leak, timeout (10 s an
# input) or OOM (2 GB). A finding is written to BUILD/crashes/TARGET-*.
#   tests/fuzz/run.sh BUILD CACHE SECONDS [TARGET...]
set -u
B=$1
CACHE=$2
SECONDS_EACH=$3
shift 3
TARGETS=${*:-"model_json model npy image"}
HERE=$(cd "$(dirname "$0")" && pwd)
"$HERE/make_seeds.sh" "$B/fuzz/make_seeds" "$CACHE" "$B/seeds" || exit 1
mkdir -p "$B/crashes"
# the targets write each input to a file: in memory where there is a tmpfs
[ -n "${TMPDIR:-}" ] || { [ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm; }
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
# llvm-14 names its symbolizer with the version; stacks need it for file:line
[ -n "${ASAN_SYMBOLIZER_PATH:-}" ] || ! command -v llvm-symbolizer-14 >/dev/null ||
    export ASAN_SYMBOLIZER_PATH=$(command -v llvm-symbolizer-14)
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# fuzz_one TARGET: its lines, and "failed" in $B/fuzz-TARGET.failed on a finding
fuzz_one() {
    t=$1
    rm -f "$B/fuzz-$t.failed"
    corpus=$B/corpus/$t
    mkdir -p "$corpus"
    dict=""
    case $t in model_json|model) dict=-dict=$HERE/model_json.dict ;; esac
    # every finding kept in tests/fuzz/crashes (TARGET-*) runs first: a fixed
    # defect that comes back fails here whatever the fuzzer finds this time
    repro=$(ls "$HERE/crashes/$t-"* 2>/dev/null)
    if [ -n "$repro" ]; then
        # shellcheck disable=SC2086
        if ! "$B/fuzz/fuzz_$t" -timeout=10 -rss_limit_mb=2048 $repro > "$B/repro-$t.log" 2>&1; then
            tail -n 40 "$B/repro-$t.log"
            echo "fuzz $t: a kept reproducer fails again (log $B/repro-$t.log)"
            : >"$B/fuzz-$t.failed"
            return
        fi
        echo "=== fuzz $t: $(echo "$repro" | wc -l) kept reproducers pass"
    fi
    echo "=== fuzz $t for ${SECONDS_EACH}s"
    if "$B/fuzz/fuzz_$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$B/crashes/$t-" $dict "$corpus" "$B/seeds/$t" \
        > "$B/fuzz-$t.log" 2>&1; then
        grep -E "^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)" "$B/fuzz-$t.log" | tr '\n' ' '
        echo
    else
        tail -n 60 "$B/fuzz-$t.log"
        echo "fuzz $t: FAILED (log $B/fuzz-$t.log, reproducer in $B/crashes)"
        : >"$B/fuzz-$t.failed"
    fi
}
# two targets at a time, each one process (-jobs 1): the machines have two cores;
# each target's lines are printed together, in the order given
set -- $TARGETS
while [ $# -gt 0 ]; do
    a=$1 b=${2:-}
    fuzz_one "$a" >"$B/fuzz-$a.out" 2>&1 &
    pa=$!
    [ -z "$b" ] || fuzz_one "$b" >"$B/fuzz-$b.out" 2>&1
    wait $pa
    cat "$B/fuzz-$a.out"
    [ -z "$b" ] || cat "$B/fuzz-$b.out"
    shift
    [ $# -eq 0 ] || shift
done
failed=""
for t in $TARGETS; do [ ! -f "$B/fuzz-$t.failed" ] || failed="$failed $t"; done
[ -z "$failed" ] || { echo "fuzz failed:$failed"; exit 1; }
echo "fuzz: every target ran ${SECONDS_EACH}s with no finding"
