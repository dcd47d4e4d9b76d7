#!/bin/sh
# Issue 15's two models, from the per-op cases (tests/ops/gen.js): a TF2-style
# model (cases_control.js TF2_gpu_model: Conv2D, then a StatelessWhile and a
# StatelessIf from the function library, then Conv2D) and an Einsum attention
# block (cases_einsum.js Einsum_attention_block: q/k/v projections, scores,
# softmax, values, output projection). Each runs with the GPU backend at no
# budget and at 1.25x the smallest budget that could work (found through the
# refusals): GPU steps in both, the peak within the budget, outputs bitwise
# the same, and matching TensorFlow.js.
#   tests/ctl_budget_test.sh STREAMINFER
set -u
SI=$1
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
fail() { echo "ctl_budget_test: $*"; exit 1; }

node "$HERE/ops/gen.js" "$T/cases" --only StatelessIf,Einsum > /dev/null || fail "gen.js failed"
# CASE INPUT: run one case's model at no budget and at 1.25x its smallest
one() {
    M=$T/cases/$1
    I="$2=$M/input_$2.npy"
    rm -rf "$T/o1" "$T/o2"
    "$SI" -q --input "$I" --output "$T/o1" --stats "$T/s1.json" "$M" || fail "run at no budget failed"
    # the smallest budget: each refusal names the smallest budget of the stage
    # that did not fit (a later GPU stage may need more than the first)
    low=1
    for _ in 1 2 3 4 5; do
        "$SI" -q --vram "$low" --input "$I" "$M" > /dev/null 2> "$T/err" && break
        next=$(sed -n 's/.*the smallest budget that could work is [0-9.]* [KMG]*i*B (\([0-9]*\) bytes).*/\1/p' "$T/err")
        if [ -z "$next" ] || [ "$next" -le "$low" ]; then
            fail "refusal at $low names no larger budget: $(cat "$T/err")"
        fi
        low=$next
    done
    [ "$low" -gt 1 ] || fail "a budget of 1 byte accepted"
    bud=$((low * 5 / 4))
    "$SI" -q --vram "$bud" --input "$I" --output "$T/o2" --stats "$T/s2.json" "$M" ||
        fail "run at $bud bytes (1.25 x $low) failed"
    cmp "$T/o1/result.npy" "$T/o2/result.npy" || fail "outputs differ between no budget and $bud bytes"
    node -e '
    const fs = require("fs");
    const [s1, s2, bud, out, ref] = process.argv.slice(1);
    for (const f of [s1, s2]) {
      const s = JSON.parse(fs.readFileSync(f));
      if (!(s.gpu_steps > 0)) throw new Error(f + ": no GPU steps: " + s.gpu_steps);
    }
    const p = JSON.parse(fs.readFileSync(s2)).peak_vram_bytes;
    if (!(p > 0 && p <= +bud)) throw new Error("peak " + p + " outside budget " + bud);
    const npy = (f) => { const b = fs.readFileSync(f); const h = b.readUInt16LE(8);
      const d = b.subarray(10 + h); return new Float32Array(d.buffer.slice(d.byteOffset, d.byteOffset + d.length)); };
    const a = npy(out), r = npy(ref);
    if (a.length !== r.length) throw new Error("output has " + a.length + " values, TensorFlow.js " + r.length);
    for (let i = 0; i < a.length; i++)
      if (!(Math.abs(a[i] - r[i]) <= 1e-3 * Math.max(1, Math.abs(r[i]))))
        throw new Error("value " + i + ": " + a[i] + " vs TensorFlow.js " + r[i]);
    ' "$T/s1.json" "$T/s2.json" "$bud" "$T/o1/result.npy" "$M/ref_0.npy" || fail "check failed"
    echo "ctl_budget_test: $1 ran on the GPU at no budget and at $bud bytes (1.25 x $low), bitwise the same, matching TensorFlow.js"
}
one TF2_gpu_model image
one Einsum_attention_block x
