#!/bin/sh
# Wall time of the last of N runs with and without prefetch (loading the next
# step's buffers a step early when they fit), at budgets that force streaming.
#   bench/prefetch.sh BUILD_DIR MODELS_DIR RUNS MODEL:BUDGET...
set -eu
B=$1; DIR=$2; RUNS=$3; shift 3
T=$(mktemp -d)
key() { sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" "$T/s.json"; }
printf '%-20s %8s %14s %14s %8s\n' model budget no_prefetch_ms prefetch_ms ratio
for mb in "$@"; do
    m=${mb%%:*}; b=${mb#*:}
    "$B/streaminfer" -q --vram "$b" --runs "$RUNS" --stats "$T/s.json" "$DIR/$m.json"
    a=$(key run_ms)
    SI_PLAN_PREFETCH=1 "$B/streaminfer" -q --vram "$b" --runs "$RUNS" --stats "$T/s.json" "$DIR/$m.json"
    p=$(key run_ms)
    awk -v m="$m" -v b="$b" -v a="$a" -v p="$p" 'BEGIN { printf "%-20s %8s %14.2f %14.2f %8.2f\n", m, b, a, p, p / a }'
done
rm -rf "$T"
