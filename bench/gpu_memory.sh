#!/bin/sh
# Measures the card's real memory use (nvidia-smi memory.used, sampled every
# 20 ms) while streaminfer runs a model many times under a budget, less the use
# of an empty context, and holds it against the budget ("OVER the budget") and
# the pager's own count ("over the count": more than its whole MiB plus two;
# session 38 found a shader's local memory, 50 MiB that no count saw).
#   bench/gpu_memory.sh BUILD_DIR MODELS_DIR RUNS MODEL:BUDGET...   (BUDGET "none" = no limit)
# Prints one table row per model and budget (uploaded and run_ms: the last run).
set -eu
B=$1; DIR=$2; RUNS=$3; shift 3
T=$(mktemp -d)
. "$(dirname "$0")/smi.sh"
ctx_baseline "$B"
printf '%-20s %10s %12s %12s %14s %14s %10s %12s  %s\n' model budget_MiB lower_MiB counted_MiB measured_MiB measured-ctx uploaded run_ms check
for mb in "$@"; do
    m=${mb%%:*}; b=${mb#*:}
    vr=""; [ "$b" = none ] || vr="--vram $b"
    echo 0 >"$T/max"
    sampler "$T/max" & spid=$!
    # shellcheck disable=SC2086
    ok=1; "$B/streaminfer" -q $vr --runs "$RUNS" --stats "$T/s.json" "$DIR/$m.json" || ok=0
    kill "$spid"; wait "$spid" 2>/dev/null || true
    [ "$ok" = 1 ] || { echo "$m $b: run failed"; continue; }
    peak=$(cat "$T/max")
    key() { sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" "$T/s.json"; }
    awk -v m="$m" -v b="$b" -v lb="$(key lower_bound_bytes)" -v pk="$(key peak_vram_bytes)" \
        -v meas="$peak" -v ctx="$ctx" -v up="$(key bytes_uploaded)" -v ms="$(key run_ms)" \
        -v bud="$(key budget_bytes)" \
        'BEGIN { use = meas - ctx; # nvidia-smi counts whole MiB
                 chk = "ok"; if (use > int(pk / 1048576) + 2) chk = "over the count";
                 if (bud > 0 && use > int((bud + 1048575) / 1048576)) chk = "OVER the budget";
                 printf "%-20s %10s %12.2f %12.2f %14d %14d %10.2f %12.2f  %s\n", m, b, lb / 1048576,
                 pk / 1048576, meas, use, up / 1048576, ms, chk }' 
done
rm -rf "$T"
