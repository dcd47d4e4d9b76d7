#!/bin/sh
# A detector with its post-processing (bench/gen effdet-*-od: box decoding,
# sigmoid, per-class NonMaxSuppressionV5 in a TF1 while loop over TensorLists,
# ConcatV2, TopKV2) end to end: with no budget within tolerance of TensorFlow.js
# on every output; every class's NMS doing work on it (candidates over the score
# threshold, some suppressed, some kept: bench/gen/check.js nms); the loop
# body's nodes over big tensors run on the GPU (--stats gpu_host_nodes); and at
# each BUDGET below its largest step, steps split, the peak within the budget
# and every output bitwise the no-budget one (loop nodes whose programs do not
# fit that budget run on the host: they move words, the same bits).
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
# the loop's nodes that move big tensors on the GPU even on llvmpipe (auto keeps them on the host there)
"$SI" -q --loop-nodes on --input "$IN" --output "$T/full" --stats "$T/full.json" "$M" 2>"$T/err" ||
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
# the loop body's transpose and split of the [anchors, 90] scores: node programs on the GPU
gn=$(key gpu_host_nodes "$T/full.json")
"$SI" -q --loop-nodes off --input "$IN" --output "$T/host" --stats "$T/host.json" "$M" 2>"$T/err" ||
    { echo "  FAIL no-budget run, the loop on the host: $(cat "$T/err")"; exit 1; }
same=yes
for f in "$T/full"/*.npy; do cmp -s "$f" "$T/host/$(basename "$f")" || same=no; done
if [ "${gn:-0}" -ge 2 ] && [ "$(key gpu_host_nodes "$T/host.json")" = 0 ] && [ $same = yes ]; then
    echo "  ok   $gn of the loop's nodes over big tensors ran on the GPU, bitwise as on the host"
else
    echo "  FAIL the loop's nodes over big tensors: $gn on the GPU, $(key gpu_host_nodes "$T/host.json") with them off, outputs the same: $same"
    fails=$((fails + 1))
fi
for b in "$@"; do
    out=$T/$b
    if ! "$SI" -q --loop-nodes on --vram "$b" --input "$IN" --output "$out" --stats "$out.json" "$M" 2>"$T/err"; then
        echo "  FAIL at $b: $(cat "$T/err")"; fails=$((fails + 1)); continue
    fi
    bytes=$(numfmt --from=iec "$b")
    peak=$(key peak_vram_bytes "$out.json")
    split=$(key steps_split "$out.json")
    f0=$fails
    [ "$bytes" -lt "$lb" ] || { echo "  FAIL $b is not below the largest step $lb"; fails=$((fails + 1)); }
    [ "$split" -gt 0 ] || { echo "  FAIL at $b: no step was split"; fails=$((fails + 1)); }
    [ "$peak" -le "$bytes" ] || { echo "  FAIL at $b: peak $peak over budget"; fails=$((fails + 1)); }
    # fewer where a node's program does not fit the budget (it moves words: the host's copy is the same bits)
    bn=$(key gpu_host_nodes "$out.json")
    [ "${bn:-0}" -le "${gn:-0}" ] ||
        { echo "  FAIL at $b: $bn nodes on the GPU, $gn with no budget"; fails=$((fails + 1)); }
    n=0
    for f in "$T/full"/*.npy; do
        n=$((n + 1))
        cmp -s "$f" "$out/$(basename "$f")" ||
            { echo "  FAIL at $b: $(basename "$f") differs from the no-budget run"; fails=$((fails + 1)); }
    done
    [ "$n" -ge 6 ] || { echo "  FAIL only $n outputs"; fails=$((fails + 1)); }
    [ "$fails" -gt "$f0" ] ||
        echo "  ok   $(basename "$M") at $b (largest step $lb): $n outputs bitwise the no-budget run's, $split steps split, peak $peak, $bn nodes of the loop on the GPU"
done
[ "$fails" -eq 0 ]
