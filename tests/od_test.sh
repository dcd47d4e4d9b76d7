#!/bin/sh
# A detector with its post-processing (bench/gen effdet-*-od: box decoding,
# sigmoid, per-class NonMaxSuppressionV5 in a TF1 while loop over TensorLists,
# ConcatV2, TopKV2) end to end: with no budget within tolerance of TensorFlow.js
# on every output; every class's NMS doing work on it (candidates over the score
# threshold, some suppressed, some kept: bench/gen/check.js nms); and at each
# BUDGET below its largest step, steps split, the peak within the budget and
# every output bitwise the no-budget one.
#   tests/od_test.sh STREAMINFER MODEL_DIR REF_DIR BUDGET...
# REF_DIR: tests/oracle/reference.js MODEL_DIR REF_DIR --seed 1 (its input is used)
set -u
SI=$1 M=$2 REF=$3
shift 3
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
fails=0
IN=$REF/input_input_tensor.npy
[ -f "$IN" ] || { echo "  FAIL no reference input $IN"; exit 1; }
"$SI" -q --input "$IN" --output "$T/full" --stats "$T/full.json" "$M" 2>"$T/err" ||
    { echo "  FAIL no-budget run: $(cat "$T/err")"; exit 1; }
if node "$HERE/../bench/gen/check.js" compare "$REF" "$T/full" >"$T/cmp"; then
    echo "  ok   $(basename "$M") with no budget matches TensorFlow.js: $(sed 's/ (at [0-9-]*)//; s/\[[0-9,]*\]: max|out-ref| //; s/ PASS//' "$T/cmp" | tr '\n' ' ')"
else
    echo "  FAIL $(basename "$M") with no budget against TensorFlow.js:"; sed 's/^/    /' "$T/cmp"; fails=$((fails + 1))
fi
if node "$HERE/../bench/gen/check.js" nms "$T/full" "$M" >"$T/nms"; then
    echo "  ok   every NMS worked: $(cat "$T/nms")"
else
    echo "  FAIL some NMS had nothing to do: $(cat "$T/nms")"; fails=$((fails + 1))
fi
lb=$(key lower_bound_bytes "$T/full.json")
for b in "$@"; do
    out=$T/$b
    if ! "$SI" -q --vram "$b" --input "$IN" --output "$out" --stats "$out.json" "$M" 2>"$T/err"; then
        echo "  FAIL at $b: $(cat "$T/err")"; fails=$((fails + 1)); continue
    fi
    bytes=$(numfmt --from=iec "$b")
    peak=$(key peak_vram_bytes "$out.json")
    split=$(key steps_split "$out.json")
    f0=$fails
    [ "$bytes" -lt "$lb" ] || { echo "  FAIL $b is not below the largest step $lb"; fails=$((fails + 1)); }
    [ "$split" -gt 0 ] || { echo "  FAIL at $b: no step was split"; fails=$((fails + 1)); }
    [ "$peak" -le "$bytes" ] || { echo "  FAIL at $b: peak $peak over budget"; fails=$((fails + 1)); }
    n=0
    for f in "$T/full"/*.npy; do
        n=$((n + 1))
        cmp -s "$f" "$out/$(basename "$f")" ||
            { echo "  FAIL at $b: $(basename "$f") differs from the no-budget run"; fails=$((fails + 1)); }
    done
    [ "$n" -ge 6 ] || { echo "  FAIL only $n outputs"; fails=$((fails + 1)); }
    [ "$fails" -gt "$f0" ] ||
        echo "  ok   $(basename "$M") at $b (largest step $lb): $n outputs bitwise the no-budget run's, $split steps split, peak $peak"
done
[ "$fails" -eq 0 ]
