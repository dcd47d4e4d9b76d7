#!/bin/sh
# make test-asan: every unit test, and the command line on package models with
# the host and the GPU (llvmpipe) backends, built with ASan+UBSan (build-asan).
# Any sanitizer report fails the run: UBSan halts on the first error, LSan
# reports leaks at exit. No leak is suppressed. Mesa's DRI driver is preloaded:
# Mesa dlcloses it at exit, and LSan, no longer scanning its globals, then
# reports what they still point to as leaked from an "<unknown module>"
# (128 bytes a process on Debian 12's Mesa); kept loaded, nothing leaks.
#   tests/asan_run.sh BUILD_DIR CACHE_DIR
set -u
B=$1
CACHE=$2
HERE=$(cd "$(dirname "$0")" && pwd)
MODELS_DIR=$CACHE/human-models/models
# the four whose lowering read freed memory (issue 12) first
MODELS=${SI_ASAN_MODELS:-"blazeface blazeface-back faceres-deep handlandmark-sparse emotion gender age
liveness antispoof selfie iris mobilefacenet"}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}
for dri in /usr/lib/*/dri/swrast_dri.so /usr/lib/dri/swrast_dri.so; do
    [ -f "$dri" ] && export LD_PRELOAD="$dri${LD_PRELOAD:+:$LD_PRELOAD}" && break
done
# llvm-14 names its symbolizer with the version; stacks need it for file:line
[ -n "${ASAN_SYMBOLIZER_PATH:-}" ] || ! command -v llvm-symbolizer-14 >/dev/null ||
    export ASAN_SYMBOLIZER_PATH=$(command -v llvm-symbolizer-14)
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
passed=0
failed=0
failures=""

check() { # name, command...
    label=$1
    shift
    echo "=== asan: $label"
    g0=$(date +%s)
    "$@"
    rc=$?
    echo "$(($(date +%s) - g0)) $label" >>"$XDG_CACHE_HOME/.times"
    if [ $rc -eq 0 ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        failures="$failures '$label'"
    fi
}

# the command line keeps plans under $XDG_CACHE_HOME (--plan-cache's default):
# a folder of this run's own, so no run takes a plan another run left
XDG_CACHE_HOME=$(mktemp -d)
export XDG_CACHE_HOME
trap 'rm -rf "$XDG_CACHE_HOME"' EXIT
# unit tests (test_context) open real models: fetch them first
"$HERE/fetch_models.sh" "$CACHE" || { echo "asan: cannot fetch the models"; exit 1; }
# test_ops, the longest (about 40% of the whole), runs beside the rest: its output
# is printed and counted when the rest are done (the machines have two cores)
OPS_LOG=$XDG_CACHE_HOME/.test_ops.log
(
    check "test_ops (single-op models vs TensorFlow.js)" sh -c \
        "node '$HERE/ops/gen.js' '$B/ops-cases' > /dev/null && '$B/tests/test_ops' '$B/ops-cases'"
    echo "$failed" >"$OPS_LOG.failed"
) >"$OPS_LOG" 2>&1 &
ops_pid=$!
for t in "$B"/tests/test_*; do
    case $t in
    *test_models) [ -d "$CACHE/refs" ] && check "$(basename "$t") emotion selfie" "$t" "$CACHE" emotion selfie ;;
    *test_ops) ;; # beside the rest, above
    *) check "$(basename "$t")" "$t" "$CACHE" ;;
    esac
done

for name in $MODELS; do
    for backend in host gpu; do
        check "streaminfer --backend $backend $name" "$B/streaminfer" -q --backend "$backend" "$MODELS_DIR/$name.json"
    done
done
check "streaminfer --vram 1M emotion (paging)" "$B/streaminfer" -q --vram 1M "$MODELS_DIR/emotion.json"
check "streaminfer --io uring selfie" "$B/streaminfer" -q --io uring "$MODELS_DIR/selfie.json"
# the host tiers: weights read again from the shards through the pool's staging
# slots, spills to the spill file, the output handed back from the pool
check "streaminfer --vram 1M --host-mem 760K emotion (host tiers)" "$B/streaminfer" -q --vram 1M \
    --host-mem 760K "$MODELS_DIR/emotion.json"
# a detector's NMS loop (the interpreter's views, the grid NMS) with its transpose
# and split of the scores as GPU node programs (--loop-nodes on); make test made
# the model. ASan's quarantine kept small: llvmpipe's big buffers otherwise hold GBs
if [ -f "$CACHE/big/effdet-d0-od/model.json" ]; then
    check "streaminfer --loop-nodes on effdet-d0-od (NMS loop, node programs)" \
        env ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=64" "$B/streaminfer" -q --loop-nodes on \
        --runs 2 "$CACHE/big/effdet-d0-od"
fi
# frcnn-mini-od (bench/gen, generated here): the TF1 map_fn loops over
# TensorArrays, CropAndResize, the second stage at the proposals' batch, split
# along it at 700K
FM=$(mktemp -d)
if node "$HERE/../bench/gen/gen.js" frcnn-mini "$FM/b" >/dev/null &&
    node "$HERE/../bench/gen/gen.js" frcnn-mini-od "$FM/m" --weights-from "$FM/b" >/dev/null; then
    check "streaminfer frcnn-mini-od (proposal and detection loops, CropAndResize) with no budget and at 700K" \
        sh -c '"$1" -q --runs 2 "$2" && "$1" -q --vram 700K --runs 2 "$2"' _ "$B/streaminfer" "$FM/m"
else
    check "generate frcnn-mini-od" false
fi
rm -rf "$FM"
# plans and compiled programs read back from the cache folder, damaged entries included
check "plancache_test.sh (entries cut short or edited)" "$HERE/plancache_test.sh" "$B/streaminfer" "$CACHE"

wait $ops_pid
cat "$OPS_LOG"
if [ "$(cat "$OPS_LOG.failed" 2>/dev/null)" = 0 ]; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
    failures="$failures 'test_ops (single-op models vs TensorFlow.js)'"
fi
echo "asan: seconds per run, slowest first"
sort -rn "$XDG_CACHE_HOME/.times" | head -n 15 | awk '{ printf "  %5d s  %s\n", $1, substr($0, index($0, " ") + 1) }'
[ -z "$failures" ] || echo "asan failed:$failures"
echo "asan: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
