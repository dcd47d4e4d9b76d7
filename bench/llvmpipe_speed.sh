#!/bin/sh
# Issue 17's llvmpipe check: steady-state run_ms of builds side by side, on this
# machine's llvmpipe (no budget, the same random inputs), each model run by each
# build in turn, ROUNDS times (the order alternates, so a slower stretch of the
# machine falls on both); prints the median of each build's run_ms and the ratio
# of each build to the first.
#   bench/llvmpipe_speed.sh MODELS_DIR ROUNDS LABEL=BIN [LABEL=BIN...] -- MODEL...
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
M=$1 R=$2
shift 2
builds=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do builds="$builds $1"; shift; done
[ $# -gt 0 ] && shift
printf '| model |'
for b in $builds; do printf ' %s run_ms |' "${b%%=*}"; done
printf ' ratios to %s, each build |\n|---|' "$(echo $builds | cut -d= -f1)"
for b in $builds; do printf -- '---:|'; done
printf -- '---|\n'
for m in "$@"; do
    for r in $(seq 1 "$R"); do
        for b in $builds; do
            l=${b%%=*} bin=${b#*=}
            "$bin" -q --no-plan-cache --seed 1 --runs 3 --stats "$T/$l-$r.json" "$M/$m.json" >/dev/null 2>&1 ||
                echo "$m: $l failed" >&2
        done
    done
    printf '| %s |' "$m"
    first=""
    ratios=""
    for b in $builds; do
        l=${b%%=*}
        med=$(for r in $(seq 1 "$R"); do key run_ms "$T/$l-$r.json"; done | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
        printf ' %.1f |' "$med"
        [ -z "$first" ] && first=$med
        ratios="$ratios $(awk -v a="$med" -v b="$first" 'BEGIN { printf "%.2f", a / b }')"
    done
    printf '%s |\n' "$ratios"
done
