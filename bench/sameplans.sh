#!/bin/sh
# Whether two builds make the same plans, byte for byte, on every model of a
# folder at several budgets (a planner change that should only make planning
# faster).
#   bench/sameplans.sh BEFORE_CLI AFTER_CLI MODEL_DIR
# MODEL_DIR: graph-model .json files or folders holding model.json (the
# package's models: .cache/human-models/models). BUDGETS (default
# "none 600K 1500K 3M 6M 12M"); a plan over PLAN_TIMEOUT seconds (default 60)
# with either build is not compared. Prints a line per plan that differs or
# timed out and, last, "N compared, D differ, T timed out"; exit 1 if any differ.
set -u
BEFORE=$1; AFTER=$2; DIR=$3
BUDGETS=${BUDGETS:-"none 600K 1500K 3M 6M 12M"}
PT=${PLAN_TIMEOUT:-60}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
export XDG_CACHE_HOME=/dev/null/no-plan-cache # nothing stored or found
n=0; d=0; to=0
for m in "$DIR"/*.json "$DIR"/*/model.json; do
    [ -f "$m" ] || continue
    for b in $BUDGETS; do
        v="--vram $b"; [ "$b" = none ] && v=""
        # shellcheck disable=SC2086
        timeout "$PT" "$BEFORE" plan $v "$m" >"$T/a" 2>&1; r1=$?
        # shellcheck disable=SC2086
        timeout "$PT" "$AFTER" plan $v "$m" >"$T/b" 2>&1; r2=$?
        if [ $r1 = 124 ] || [ $r2 = 124 ]; then
            to=$((to + 1)); echo "timed out: $m at $b"; continue
        fi
        n=$((n + 1))
        cmp -s "$T/a" "$T/b" || { d=$((d + 1)); echo "differ: $m at $b"; }
    done
done
echo "$n compared, $d differ, $to timed out"
[ $d -eq 0 ]
