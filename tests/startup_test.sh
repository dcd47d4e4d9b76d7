#!/bin/sh
# Time to first inference (issue 18): --stats splits open_ms into its phases.
#   tests/startup_test.sh STREAMINFER CACHE_DIR
set -u
SI=$1
CACHE=$2
M=$CACHE/human-models/models
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "  ok   $1"; }
bad() { echo "  FAIL $1"; fails=$((fails + 1)); }
key() { sed -n "s/^  \"$1\": \([-0-9.e]*\),*$/\1/p" "$2"; } # a --stats figure

# open_ms = read + gpu + plan + tile + compile (+ bookkeeping); each phase that
# happened is timed, and one that did not is 0
phases() { # stats file, which must be > 0 (a list), which must be 0 (a list)
    f=$1
    awk -v o="$(key open_ms "$f")" -v r="$(key open_read_ms "$f")" -v g="$(key open_gpu_ms "$f")" \
        -v p="$(key open_plan_ms "$f")" -v t="$(key open_tile_ms "$f")" -v c="$(key open_compile_ms "$f")" \
        -v pos="$2" -v zero="$3" 'BEGIN {
        v["read"] = r; v["gpu"] = g; v["plan"] = p; v["tile"] = t; v["compile"] = c
        for (k in v) if (v[k] == "" || v[k] < 0) { print "bad " k ": " v[k]; exit 1 }
        if (r + g + p + t + c > o + 0.005) { print "phases " r + g + p + t + c " > open_ms " o; exit 1 }
        n = split(pos, a, " "); for (i = 1; i <= n; i++) if (!(v[a[i]] > 0)) { print a[i] " not > 0"; exit 1 }
        n = split(zero, a, " "); for (i = 1; i <= n; i++) if (v[a[i]] != 0) { print a[i] " not 0"; exit 1 }
    }'
}
if "$SI" -q --stats "$T/g.json" "$M/emotion.json" && msg=$(phases "$T/g.json" "read gpu plan compile" "tile"); then
    ok "--stats: open_ms split into read, gpu, plan, compile (no tiling: tile 0), within open_ms"
else
    bad "--stats phases on the GPU: ${msg:-run failed}"
fi
# 300K is below emotion's largest step (906 KiB): steps are split at open
if "$SI" -q --stats "$T/t.json" --vram 300K "$M/emotion.json" && msg=$(phases "$T/t.json" "read gpu plan tile compile" "") &&
   [ "$(key steps_split "$T/t.json")" -gt 0 ]; then
    ok "--stats: a budget that splits steps times the splitting (open_tile_ms > 0)"
else
    bad "--stats phases with tiling: ${msg:-run failed}"
fi
if "$SI" -q --backend host --stats "$T/h.json" "$M/emotion.json" && msg=$(phases "$T/h.json" "read plan" "gpu compile"); then
    ok "--stats: the host backend opens no GPU and compiles nothing (open_gpu_ms, open_compile_ms 0)"
else
    bad "--stats phases on the host: ${msg:-run failed}"
fi
# a model whose input sizes are free is planned at its first run: --stats says
# so in run_plan_ms / run_tile_ms / run_compile_ms (within run_ms), and the
# open_ phases are 0; a later run with the same sizes plans nothing (all 0)
R="$CACHE/refs/faceboxes@image_tensor=1,240,320,3/input_image_tensor.npy"
if "$SI" -q --stats "$T/f.json" --input "image_tensor=$R" "$M/faceboxes.json" &&
   msg=$(awk -v p="$(key run_plan_ms "$T/f.json")" -v t="$(key run_tile_ms "$T/f.json")" \
       -v c="$(key run_compile_ms "$T/f.json")" -v r="$(key run_ms "$T/f.json")" \
       -v op="$(key open_plan_ms "$T/f.json")" 'BEGIN {
       if (!(p > 0) || !(c > 0) || t != 0) { print "run_plan_ms " p ", run_tile_ms " t ", run_compile_ms " c; exit 1 }
       if (p + t + c > r + 0.005) { print "run phases " p + t + c " > run_ms " r; exit 1 }
       if (op != 0) { print "open_plan_ms " op " for a free input size"; exit 1 } }') &&
   "$SI" -q --runs 2 --stats "$T/f2.json" --input "image_tensor=$R" "$M/faceboxes.json" &&
   [ "$(key run_plan_ms "$T/f2.json")" = 0 ] && [ "$(key run_compile_ms "$T/f2.json")" = 0 ] &&
   [ "$(key run_plan_ms "$T/g.json")" = 0 ]; then
    ok "--stats: a free input size planned in the first run (run_plan_ms, run_compile_ms > 0, within run_ms); the next run and a static model: 0"
else
    bad "--stats run phases: ${msg:-run failed or a later run planned again}"
fi
# A budget below movenet-thunder's 3.66 MiB floor (a batch norm's step no
# split makes smaller; 5.38 MiB, a quantized weight's dequantization, before
# weights were dequantized as they load): the tiling ladder stops once a finer
# limit leaves that step as it was (it went on to 8 KiB parts, 9 limits,
# before), naming the same budget
"$SI" plan --no-plan-cache --plan-debug --vram 3M "$M/movenet-thunder.json" >/dev/null 2>"$T/mt.err"
tried=$(grep -c '^plan attempt [0-9]*: limit [1-9]' "$T/mt.err")
if grep -q 'smallest budget that could work is .*(3837184 bytes)' "$T/mt.err" && [ "$tried" -le 3 ] &&
   grep -q 'no finer limit tried' "$T/mt.err"; then
    ok "tiling ladder: stops where finer parts leave the binding step ($tried limits; named 3837184 bytes)"
else
    bad "tiling ladder: $tried limits tried, or the refusal changed: $(tail -1 "$T/mt.err" | cut -c1-200)"
fi
[ "$fails" -eq 0 ]
