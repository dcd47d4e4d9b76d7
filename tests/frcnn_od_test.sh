#!/bin/sh
# frcnn-mini-od (bench/gen: frcnn-irv2-od's graph, every part of it, thin and at
# 160x160) end to end against TensorFlow.js: the proposals (anchor decoding,
# NonMaxSuppressionV3 in a TF1 map_fn over TensorArrayV3), CropAndResize of the
# proposals, the second stage at the proposals' batch, the per-class NMS of the
# detections in another map_fn, TopKV2 and Pad. Checks:
# - with no budget every output within tolerance of TensorFlow.js
#   (tests/oracle, tfjs-backend-cpu), and every NMS at work (check.js nms: some
#   kept, some suppressed, in each class);
# - `plan --smallest` finds its smallest budget N through a run (the later GPU
#   stages are planned only as the model runs), and a run at N is accepted;
# - at N and at BUDGET (each below the later stages' largest step: the second
#   stage and the crops split along the batch) the outputs are bitwise the
#   no-budget ones and the peak is within the budget.
#   tests/frcnn_od_test.sh STREAMINFER BUDGET
set -u
SI=$1 BUDGET=$2
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
G=$HERE/../bench/gen
node "$G/gen.js" frcnn-mini "$T/frcnn-mini" >"$T/gen.log" 2>&1 &&
    node "$G/gen.js" frcnn-mini-od "$T/m" --weights-from "$T/frcnn-mini" >>"$T/gen.log" 2>&1 ||
    { echo "  FAIL generating frcnn-mini-od: $(cat "$T/gen.log")"; exit 1; }
node "$HERE/oracle/reference.js" "$T/m" "$T/ref" --seed 1 >"$T/ref.log" 2>&1 ||
    { echo "  FAIL TensorFlow.js reference: $(tail -5 "$T/ref.log")"; exit 1; }
IN=input_tensor=$T/ref/input_input_tensor.npy
M=$T/m
"$SI" -q --input "$IN" --output "$T/full" --stats "$T/full.json" "$M" 2>"$T/err" ||
    { echo "  FAIL no-budget run: $(cat "$T/err")"; exit 1; }
if node "$G/check.js" compare "$T/ref" "$T/full" >"$T/cmp"; then
    ok "frcnn-mini-od with no budget matches TensorFlow.js on its $(grep -c PASS "$T/cmp") outputs"
else
    bad "frcnn-mini-od with no budget against TensorFlow.js:"; sed 's/^/    /' "$T/cmp"
fi
if node "$G/check.js" nms "$T/full" "$M" >"$T/nms" &&
    [ "$(grep -c "classes where nothing was suppressed or nothing kept: 0" "$T/nms")" -eq 2 ]; then
    ok "every NMS worked: $(tr '\n' ' ' <"$T/nms")"
else
    bad "some NMS had nothing to do: $(cat "$T/nms")"
fi
lb=$(key lower_bound_bytes "$T/full.json")
[ "$(key dynamic_part "$T/full.json")" = 1 ] && ok "--stats dynamic_part 1" ||
    bad "--stats dynamic_part $(key dynamic_part "$T/full.json"), want 1"
if "$SI" plan --smallest --input "$IN" "$M" >"$T/sm" 2>"$T/err" && grep -q "runs on these inputs" "$T/sm"; then
    n=$(sed -n 's/^bytes \([0-9]*\)$/\1/p' "$T/sm")
    ok "plan --smallest: $n bytes, by runs"
else
    bad "plan --smallest: $(cat "$T/sm" "$T/err")"
    n=
fi
for b in $n $BUDGET; do
    bytes=$(numfmt --from=iec "$b")
    [ "$bytes" -lt "$lb" ] || { bad "$b is not below the largest step $lb"; continue; }
    if ! "$SI" -q --vram "$b" --input "$IN" --output "$T/at$b" --stats "$T/at$b.json" "$M" 2>"$T/err"; then
        bad "at $b: $(cat "$T/err")"; continue
    fi
    peak=$(key peak_vram_bytes "$T/at$b.json")
    lbb=$(key lower_bound_bytes "$T/at$b.json")
    if [ "$peak" -le "$bytes" ] && [ "$lbb" -le "$bytes" ] && same "$T/full" "$T/at$b"; then
        ok "at $b: bitwise the no-budget outputs, peak $peak, largest step $lbb (no budget: $lb)"
    else
        bad "at $b: peak $peak, largest step $lbb, outputs the same: $(same "$T/full" "$T/at$b" && echo yes || echo no)"
    fi
done
echo "frcnn_od_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
