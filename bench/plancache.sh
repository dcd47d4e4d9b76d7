#!/bin/sh
# Start-up with the plan cache (issue 18): for each MODEL:BUDGET, a cold start
# (an empty cache: the model's bytes digested, planned, the plan stored) and a
# warm one (the plan taken from the cache), open_ms and its parts from --stats
# (plan_ms: open_plan_ms plus run_plan_ms, the first run's planning where the
# input's size is known only then), and whether the outputs of the two are
# bitwise the same.
#   bench/plancache.sh STREAMINFER MODEL_PATH:BUDGET[:INPUT_FILE]...   (BUDGET none = no limit;
#   INPUT_FILE: an .npy for the model's one input, for a model whose input size is free)
# Prints a Markdown table.
set -u
SI=$1
shift
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
key() { sed -n "s/.*\"$1\": *\([0-9.]*\).*/\1/p" "$2"; }
plan_ms() { awk -v a="$(key open_plan_ms "$1")" -v b="$(key run_plan_ms "$1")" 'BEGIN { printf "%.1f", a + b }'; }
echo "| model | budget | cold open_ms | cold plan_ms | warm open_ms | warm plan_ms | from cache | outputs |"
echo "|---|---|---:|---:|---:|---:|---|---|"
for spec in "$@"; do
    m=${spec%%:*}
    b=${spec#*:}
    in=""
    case $b in *:*) in="--input ${b#*:}"; b=${b%%:*} ;; esac
    vr=""
    [ "$b" = none ] || vr="--vram $b"
    rm -rf "$T/pc" "$T/o1" "$T/o2"
    # shellcheck disable=SC2086
    "$SI" -q $vr $in --plan-cache "$T/pc" --stats "$T/cold.json" --output "$T/o1" "$m" &&
        "$SI" -q $vr $in --plan-cache "$T/pc" --stats "$T/warm.json" --output "$T/o2" "$m" || {
        echo "| $(basename "$m") | $b | failed | | | | | |"
        continue
    }
    same=bitwise
    for f in "$T"/o1/*.npy; do cmp -s "$f" "$T/o2/$(basename "$f")" || same=DIFFER; done
    echo "| $(basename "$m" .json) | $b | $(key open_ms "$T/cold.json") | $(plan_ms "$T/cold.json") |" \
        "$(key open_ms "$T/warm.json") | $(plan_ms "$T/warm.json") | $(key plan_from_cache "$T/warm.json") | $same |"
done
