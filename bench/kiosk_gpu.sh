#!/bin/sh
# The kiosk pipeline (issue 21) on an NVIDIA GPU: bench/kiosk_pipeline twice,
#  1. FRAMES frames, every model also run alone on every frame (outputs bitwise?),
#  2. FRAMES frames of the context alone (--no-alone), while nvidia-smi's
#     memory.used is sampled every 20 ms: the card's peak less an empty
#     streaminfer context (bench/hold_context), against the budget.
#   bench/kiosk_gpu.sh BUILD_DIR MODELS_DIR FRAMES
set -eu
B=$1; DIR=$2; FRAMES=$3
T=$(mktemp -d)
. "$(dirname "$0")/smi.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
ctx_baseline "$B"
echo "== $FRAMES frames, each model also alone on every frame"
"$B/bench/kiosk_pipeline" "$DIR" "$FRAMES"
echo "== $FRAMES frames of the context alone, card memory sampled"
echo 0 >"$T/max"
sampler "$T/max" & spid=$!
ok=0; "$B/bench/kiosk_pipeline" --no-alone "$DIR" "$FRAMES" | tee "$T/out" || ok=$?
kill "$spid"; wait "$spid" 2>/dev/null || true
peak=$(cat "$T/max")
budget=$(sed -n 's/^| [0-9]* | [0-9]* | \([0-9]*\) |.*/\1/p' "$T/out")
awk -v p="$peak" -v c="$ctx" -v b="$budget" 'BEGIN {
    printf "card memory: peak %d MiB, less the empty context %d MiB = %d MiB; budget %.2f MiB: %s\n",
           p, c, p - c, b / 1048576, (p - c) * 1048576 <= b ? "within" : "OVER" }'
rm -rf "$T"
exit "$ok"
