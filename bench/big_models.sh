#!/bin/sh
# The big-model table (issue 5): for each synthetic model of `make models`, its
# weight bytes and tensors, the largest step untiled, the smallest budget the
# planner accepts (bisection with `streaminfer plan` down to 1/16 of the largest
# step, to 2%), and runs with no limit,
# at 1G and at 256M: outputs bitwise against the no-limit run, the pager's peak,
# the card's measured memory (nvidia-smi memory.used, sampled every 20 ms, less
# an empty context; "-" without nvidia-smi), the host pool (host memory the GPU
# copies through; its page tables take 1/256 of it in VRAM on the H200, inside
# the budget), bytes uploaded per run, and wall
# time of a run relative to the no-limit run (the second of two runs, so
# weights that stay resident are resident, as in a kiosk's steady state), and
# the time to the first answer (open_ms + first_run_ms: a cold start's).
#   bench/big_models.sh BUILD_DIR BIG_DIR OUT_DIR [MODEL[@SIZE]...]
# Default models: effdet-d0 ... effdet-d7 at native size, frcnn-irv2@600 and @1024.
# Writes OUT_DIR/big.md (the table) and OUT_DIR/big.log.
# BUDGETS: the budgets beside no limit (default "1G 256M"), a column group each.
# SMALLEST_ONLY=1: only the bisections. SMALLEST_RUN=1: the bisections, then a
# run at each smallest budget against a no-limit run (OUT_DIR/smallest.md).
# SMALLEST_WITHIN=PCT: the smallest budget from plan --smallest --within PCT.
# RUNS=1: one run a budget, not two (on llvmpipe, where a run of the big models
# takes many minutes): the bits and peaks as before, "time vs none" then of
# first runs, so not a steady state.
set -u
B=$1; BIG=$2; OUT=$3; shift 3
[ $# -gt 0 ] || set -- effdet-d0 effdet-d1 effdet-d2 effdet-d3 effdet-d4 effdet-d5 effdet-d6 \
    effdet-d7 frcnn-irv2@600 frcnn-irv2@1024
SI=$B/streaminfer
mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
LOG=$OUT/big.log
: >"$LOG"
have_smi=0
command -v nvidia-smi >/dev/null 2>&1 && have_smi=1
. "$(dirname "$0")/smi.sh"
ctx=0
if [ "$have_smi" = 1 ]; then
    "$B/bench/hold_context" 3 >/dev/null & pid=$!
    sleep 1.5
    ctx=$(used)
    wait "$pid"
    echo "empty streaminfer context: $ctx MiB ($(nvidia-smi --query-gpu=name --format=csv,noheader))" >>"$LOG"
fi

# One run at a budget ("none": no limit): the stats, the card's peak, the outputs.
run() { # NAME MODEL BUDGET INPUT_ARGS...
    n=$1; m=$2; b=$3; shift 3
    vr=""; [ "$b" = none ] || vr="--vram $b"
    echo 0 >"$T/max"
    spid=""
    if [ "$have_smi" = 1 ]; then sampler "$T/max" & spid=$!; fi
    # shellcheck disable=SC2086
    "$SI" -q $vr --runs "${RUNS:-2}" "$@" --output "$T/$n-$b" --stats "$T/$n-$b.json" "$m" >>"$LOG" 2>&1
    rc=$?
    [ -z "$spid" ] || { kill "$spid"; wait "$spid" 2>/dev/null; }
    cp "$T/max" "$T/$n-$b.max"
    return $rc
}

# time to the first answer: open, then the first run (the warm-up), in ms
first() { awk -v a="$(key open_ms "$1")" -v b="$(key first_run_ms "$1")" 'BEGIN { printf "%.1f", a + b }'; }

# smallest accepted budget, by bisection on plans (1 MiB resolution); with
# SMALLEST_WITHIN=PCT by `streaminfer plan --smallest --within PCT` instead
# (which goes on by runs where a later stage is planned only as the model runs:
# the -od replicas), cut off after SMALLEST_TIMEOUT seconds (default 900)
smallest() { # MODEL INPUT_ARGS...
    m=$1; shift
    [ -z "${NO_SMALLEST:-}" ] || { echo "-"; return; }
    if [ -n "${SMALLEST_WITHIN:-}" ]; then
        n=$(timeout "${SMALLEST_TIMEOUT:-900}" "$SI" plan --smallest --within "$SMALLEST_WITHIN" --no-plan-cache "$@" "$m" 2>/dev/null |
            tee -a "$LOG" | sed -n 's/^bytes \([0-9][0-9]*\)$/\1/p')
        echo "${n:--}"
        return
    fi
    lb=$("$SI" plan "$@" "$m" | sed -n 's/.*lower bound \([0-9.]*\) MiB.*/\1/p' | head -1)
    hi=$(awk -v x="$lb" 'BEGIN { printf "%d", x * 1048576 * 1.02 + 1048576 }')
    lo=$((hi / 16))
    # a plan that takes longer than PLAN_TIMEOUT seconds counts as refused, so the
    # result is an upper bound of the smallest budget (planning near it is slow)
    pt=${PLAN_TIMEOUT:-120}
    timeout "$pt" "$SI" plan --vram "$hi" "$@" "$m" >/dev/null 2>&1 || { echo "-"; return; }
    while [ $((hi - lo)) -gt $((hi / 50)) ]; do
        mid=$(((lo + hi) / 2))
        if timeout "$pt" "$SI" plan --vram "$mid" "$@" "$m" >/dev/null 2>&1; then hi=$mid; else lo=$mid; fi
    done
    echo "$hi"
}

BUDGETS=${BUDGETS:-1G 256M}
{
    printf '| model | input | weight bytes | weight tensors | largest step untiled | smallest budget accepted | no limit: peak, time, first answer |'
    for b in $BUDGETS; do printf ' %s: peak counted / measured | %s: host pool | %s: uploaded/run | %s: time vs none, first answer | %s: bitwise |' "$b" "$b" "$b" "$b" "$b"; done
    printf '\n|---|---|---|---|---|---|---|'
    for b in $BUDGETS; do printf -- '---|---|---|---|---|'; done
    echo
} >"$OUT/big.md"
# the bisections first, all at once in the background (each is many plans, CPU only)
for spec in "$@"; do
    spec_parts "$spec"
    tag=$name${size:+-$size}
    if [ -n "$size" ]; then
        make_input "$size" "$T/in-$size.npy"
        (smallest "$BIG/$name" --input "$T/in-$size.npy" >"$T/small-$tag") &
    else
        (smallest "$BIG/$name" >"$T/small-$tag") &
    fi
done
if [ -n "${SMALLEST_ONLY:-}" ]; then # only the bisections
    wait
    for spec in "$@"; do
        tag=$(echo "$spec" | tr @ -)
        echo "$tag smallest accepted $(cat "$T/small-$tag")"
    done
    exit 0
fi
if [ -n "${SMALLEST_RUN:-}" ]; then # the bisections, then a run at each smallest budget
    wait
    {
        echo "| model | input | smallest budget accepted | peak counted / measured | host pool | driver's share | uploaded/run | time vs none | bitwise |"
        echo "|---|---|---|---|---|---|---|---|---|"
    } >"$OUT/smallest.md"
    fails=0
    for spec in "$@"; do
        spec_parts "$spec"
        tag=$name${size:+-$size}
        sb=$(cat "$T/small-$tag") # (run() sets b)
        set --
        [ -z "$size" ] || set -- --input "$T/in-$size.npy"
        row="| $name | ${size:-native} | $([ "$sb" = - ] && echo - || echo "$(mib "$sb") MiB")"
        if [ "$sb" = - ] || ! run "$tag" "$BIG/$name" none "$@" || ! run "$tag" "$BIG/$name" "$sb" "$@"; then
            echo "$row | failed | | | | | |" >>"$OUT/smallest.md"; fails=$((fails + 1)); continue
        fi
        s=$T/$tag-$sb.json
        same=yes
        for f in "$T/$tag-none"/*.npy; do cmp -s "$f" "$T/$tag-$sb/$(basename "$f")" || same=NO; done
        [ "$same" = yes ] || fails=$((fails + 1))
        meas=-
        [ "$have_smi" = 0 ] || meas="$(($(cat "$T/$tag-$sb.max") - ctx)) MiB"
        ratio=$(awk -v a="$(key run_ms "$s")" -v b="$(key run_ms "$T/$tag-none.json")" 'BEGIN { printf "%.2f", a / b }')
        echo "$row | $(mib "$(key peak_vram_bytes "$s")") / $meas | $(mib "$(key host_pool_bytes "$s")") MiB | $(mib "$(key driver_reserve_bytes "$s")") MiB | $(mib "$(key bytes_uploaded "$s")") MiB | $ratio | $same |" >>"$OUT/smallest.md"
        rm -rf "$T/$tag-"*/
    done
    cat "$OUT/smallest.md"
    exit $((fails > 0))
fi
fails=0
for spec in "$@"; do
    spec_parts "$spec"
    m=$BIG/$name
    set --
    [ -z "$size" ] || set -- --input "$T/in-$size.npy"
    tag=$name${size:+-$size}
    wb=$(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); w=[x for g in j['weightsManifest'] for x in g['weights']]; print(len(w))" "$m/model.json")
    bytes=$(cat "$m"/*.bin | wc -c)
    row="| $name | ${size:-native} | $bytes | $wb"
    if ! run "$tag" "$m" none "$@"; then
        echo "$row | @SMALLEST@ | no-limit run failed |" >>"$T/rows"; fails=$((fails + 1)); continue
    fi
    s0=$T/$tag-none.json
    t0=$(key run_ms "$s0")
    row="$row | $(mib "$(key lower_bound_bytes "$s0")") MiB | @SMALLEST@ | $(mib "$(key peak_vram_bytes "$s0")") MiB, $(printf %.1f "$t0") ms, $(first "$s0") ms"
    for b in $BUDGETS; do
        if ! run "$tag" "$m" "$b" "$@"; then
            row="$row | failed | | | | |"; fails=$((fails + 1)); continue
        fi
        s=$T/$tag-$b.json
        same=yes
        for f in "$T/$tag-none"/*.npy; do
            cmp -s "$f" "$T/$tag-$b/$(basename "$f")" || same=NO
        done
        [ "$same" = yes ] || fails=$((fails + 1))
        meas=-
        [ "$have_smi" = 0 ] || meas="$(($(cat "$T/$tag-$b.max") - ctx)) MiB"
        ratio=$(awk -v a="$(key run_ms "$s")" -v b="$t0" 'BEGIN { printf "%.2f", a / b }')
        row="$row | $(mib "$(key peak_vram_bytes "$s")") / $meas | $(mib "$(key host_pool_bytes "$s")") MiB | $(mib "$(key bytes_uploaded "$s")") MiB | $ratio, $(first "$s") ms | $same"
        echo "   $b: split $(key steps_split "$s") steps at $(key tile_limit_bytes "$s") bytes, spilled $(key bytes_spilled "$s"), host pool $(key host_pool_bytes "$s")" >>"$LOG"
    done
    echo "$row |" >>"$T/rows"
    echo "$row |" >>"$LOG"
    rm -rf "$T/$tag-"*/
done
wait
# the smallest accepted budgets go in last (their bisections ran beside the runs)
while IFS= read -r row; do
    tag=$(echo "$row" | awk -F'|' '{ gsub(/ /, "", $2); gsub(/ /, "", $3); print $2 ($3 == "native" ? "" : "-" $3) }')
    small=$(cat "$T/small-$tag" 2>/dev/null || echo -)
    [ "$small" = - ] || small="$(mib "$small") MiB"
    echo "$row" | sed "s/@SMALLEST@/$small/" >>"$OUT/big.md"
    echo "== $tag: smallest accepted $small" >>"$LOG"
done <"$T/rows"

cat "$OUT/big.md"
[ "$fails" -eq 0 ]
