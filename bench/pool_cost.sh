#!/bin/sh
# What the GPU driver keeps in VRAM for a host pool (the persistently mapped
# host buffer streaminfer copies weights and spills through): nvidia-smi's
# memory.used while bench/hold_context holds an empty context and a pool of
# each size, less the empty context. runtime/session.c's driver_reserve is
# built on this (1/256 of the pool on the H200).
#   bench/pool_cost.sh BUILD_DIR [MIB...]        (default 0 256 1024 4096 8192)
set -u
B=$1; shift
[ $# -gt 0 ] || set -- 0 256 1024 4096 8192
command -v nvidia-smi >/dev/null 2>&1 || { echo "pool_cost: needs nvidia-smi"; exit 1; }
. "$(dirname "$0")/smi.sh"
echo "| host pool | VRAM in use (less an empty context) | ratio |"
echo "|---|---|---|"
base=""
for mb in "$@"; do
    "$B/bench/hold_context" 6 "$mb" >/dev/null & pid=$!
    sleep 4.5
    u=$(used)
    wait "$pid"
    [ -n "$base" ] || { [ "$mb" = 0 ] && base=$u; }
    [ -n "$base" ] || { echo "pool_cost: the first size must be 0 (the empty context)"; exit 1; }
    d=$((u - base))
    echo "| $mb MiB | $d MiB | $(awk -v d="$d" -v m="$mb" 'BEGIN { print m ? sprintf("1/%.0f", m / (d ? d : 1)) : "-" }') |"
done
