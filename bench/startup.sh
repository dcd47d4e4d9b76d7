#!/bin/sh
# Planner cost and plan quality, before and after a change (issue 18).
#   bench/startup.sh BEFORE_CLI AFTER_CLI CACHE_DIR BIG_DIR
# BEFORE_CLI, AFTER_CLI: two builds of streaminfer (e.g. main's and a branch's).
# CACHE_DIR: .cache (human-models, refs: the 45 rows of tests/MODELS.md with their
# inputs); BIG_DIR: folders of `make models` (effdet-d0 ... , frcnn-irv2).
# Prints two Markdown tables:
# 1. plan time against steps: `streaminfer plan` at each budget of BUDGETS
#    (default "none 256M 96M 64M 40M") for each of BIG_MODELS (default
#    "effdet-d0 effdet-d2 effdet-d4 frcnn-irv2@600"; @S: a seeded SxS input), wall
#    and CPU (user+sys) seconds of each build, the steps of the plan made (after
#    splitting), and whether the two builds print the same plan, byte for byte;
#    a plan over PLAN_TIMEOUT seconds (default 300) is cut off (">").
# 2. the smallest accepted budget of each row and of SMALLEST_BIG (default
#    "effdet-d0"), by bisection with `streaminfer plan` between the lower bound
#    and a budget accepted, to 1/256 of it, with each build.
set -u
BEFORE=$1; AFTER=$2; CACHE=$3; BIG=$4
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
# Plans are timed as planned, not taken from a plan cache: builds that have one
# (--plan-cache, default under $XDG_CACHE_HOME) find it in a folder that cannot
# be made, so nothing is stored or found (bench/plancache.sh times the cache)
export XDG_CACHE_HOME=/dev/null/no-plan-cache
BUDGETS=${BUDGETS:-"none 256M 96M 64M 40M"}
BIG_MODELS=${BIG_MODELS:-"effdet-d0 effdet-d2 effdet-d4 frcnn-irv2@600"}
SMALLEST_BIG=${SMALLEST_BIG-"effdet-d0"}
PT=${PLAN_TIMEOUT:-300}

# args of a big model spec: the folder, and --input for a free size
big_args() { # SPEC -> sets dir, ins
    spec_parts "$1"
    dir=$BIG/$name
    ins=""
    if [ -n "$size" ]; then
        [ -f "$T/in$size.npy" ] || make_input "$size" "$T/in$size.npy"
        ins="--input $T/in$size.npy"
    fi
}

# one timed plan: prints "wall cpu rc"; the plan in $T/plan, stderr in $T/err
timed_plan() { # CLI OUT ARGS...
    cli=$1; out=$2; shift 2
    /usr/bin/time -f "%e %U %S" -o "$T/time" timeout "$PT" "$cli" plan "$@" >"$out" 2>"$T/err"
    rc=$?
    awk -v rc=$rc '{ printf "%s %.2f %d\n", $1, $2 + $3, rc }' "$T/time" | tail -1
}

cell() { # wall cpu rc
    if [ "$3" -eq 124 ]; then echo "> $PT s"; return; fi
    echo "$1 s ($2 s CPU)$( [ "$3" -eq 0 ] || echo ", refused")"
}

echo "## Plan time against steps (\`streaminfer plan\`, $(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores)"
echo
echo "| model | budget | steps | before: wall (CPU) | after: wall (CPU) | same plan |"
echo "|---|---|---:|---:|---:|---|"
for spec in $BIG_MODELS; do
    big_args "$spec"
    [ -f "$dir/model.json" ] || { echo "| $spec | missing: $dir | | | | |"; continue; }
    for b in $BUDGETS; do
        vr=""; [ "$b" = none ] || vr="--vram $b"
        # shellcheck disable=SC2086
        set -- $(timed_plan "$AFTER" "$T/after" $vr $ins --plan-debug "$dir")
        after="$1 $2 $3"
        steps=$(sed -n 's/^plan attempt [0-9]*: .*, \([0-9]*\) steps: .*/\1/p' "$T/err" | tail -1)
        # shellcheck disable=SC2086
        set -- $(timed_plan "$BEFORE" "$T/before" $vr $ins "$dir")
        before="$1 $2 $3"
        same=no; cmp -s "$T/before" "$T/after" && same=yes
        # shellcheck disable=SC2086
        echo "| $spec | $b | ${steps:--} | $(cell $before) | $(cell $after) | $same |"
    done
done

# smallest accepted budget by bisection; prints bytes or "-"
smallest() { # CLI ARGS... (the model last)
    cli=$1; shift
    "$cli" plan --vram 1 "$@" >/dev/null 2>"$T/err1"
    lo=$(sed -n 's/.*the smallest budget that could work is [^(]*(\([0-9]*\) bytes).*/\1/p' "$T/err1" | head -1)
    [ -n "$lo" ] || { echo "-"; return; }
    hi=$lo
    lo=$((lo - 1))
    # the named budget is the search's start, not a floor: where the budget below
    # it is accepted too, down by halves until one is refused
    n=0
    while [ "$lo" -gt 1 ] && timeout "$PT" "$cli" plan --vram "$lo" "$@" >/dev/null 2>&1; do
        hi=$lo; lo=$((lo / 2)); n=$((n + 1))
        [ $n -lt 12 ] || { echo "-"; return; }
    done
    n=0
    until timeout "$PT" "$cli" plan --vram "$hi" "$@" >/dev/null 2>&1; do
        lo=$hi; hi=$((hi * 2)); n=$((n + 1))
        [ $n -lt 12 ] || { echo "-"; return; }
    done
    while [ $((hi - lo)) -gt $((hi / 256)) ]; do
        mid=$(((lo + hi) / 2))
        if timeout "$PT" "$cli" plan --vram "$mid" "$@" >/dev/null 2>&1; then hi=$mid; else lo=$mid; fi
    done
    echo "$hi"
}

echo
echo "## Smallest accepted budget, before and after (bisection to 1/256)"
echo
echo "| row | before | after | |"
echo "|---|---:|---:|---|"
worse=0
row() { # label ARGS...
    label=$1; shift
    a=$(smallest "$BEFORE" "$@"); b=$(smallest "$AFTER" "$@")
    verdict=same
    if [ "$a" != "$b" ]; then
        verdict=lower
        { [ "$a" = - ] || { [ "$b" != - ] && [ "$b" -gt "$a" ]; }; } && verdict=HIGHER && worse=$((worse + 1))
        [ "$b" = - ] && verdict=HIGHER
    fi
    echo "| $label | $a | $b | $verdict |"
}
for d in "$CACHE"/refs/*/; do
    spec=$(basename "$d")
    name=${spec%%@*}
    [ -f "$d/manifest.json" ] || continue
    ins=$(node -e '
        const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
        console.log(m.inputs.map(i => `--input ${i.name}=${process.argv[2]}/${i.file}`).join(" "))' \
        "$d/manifest.json" "${d%/}")
    # shellcheck disable=SC2086
    row "$spec" $ins "$CACHE/human-models/models/$name.json"
done
for spec in $SMALLEST_BIG; do
    big_args "$spec"
    # shellcheck disable=SC2086
    row "$spec" $ins "$dir"
done
echo
echo "rows where the smallest budget got higher: $worse"
