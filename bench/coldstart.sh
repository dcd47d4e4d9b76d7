#!/bin/sh
# Cold start (issue 18): opening a model and its first run, with no plan cache,
# at each budget; one streaminfer process per row, `--stats` read back.
#   bench/coldstart.sh CLI MODEL[@SIZE]... -- BUDGET...       (BIG: the models' folder)
# MODEL: a folder under $BIG (`make models`); @SIZE: a seeded SIZExSIZE input (free
# sizes, frcnn-irv2); BUDGET: a --vram size, or "none".
# Prints a Markdown row per model and budget: wall (open + first run, what a kiosk
# waits for), open_ms split into read, plan, tile and compile, run_ms of the
# first run and, of it, the planning, splitting and compiling done in that run
# (a free input size is planned there: run_plan_ms, run_tile_ms, run_compile_ms;
# "-" where the build has no such figures); "refused" with the exit status when
# no plan fits; last, the GPU programs taken from the cache / compiled.
# PLAN_CACHE=DIR: with that plan cache (plans and compiled programs) instead of
# none: run twice, the second start shows what the cache saves.
set -u
CLI=$1
shift
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
BIG=${BIG:-/tmp/big}
specs=""
while [ $# -gt 0 ] && [ "$1" != -- ]; do specs="$specs $1"; shift; done
[ $# -gt 0 ] && shift
echo "| model | budget | wall ms | open ms | read | plan | tile | compile | first run ms | in it: plan | tile | compile | programs cached/compiled |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
for spec in $specs; do
    spec_parts "$spec"
    ins=""
    if [ -n "$size" ]; then
        [ -f "$T/in$size.npy" ] || make_input "$size" "$T/in$size.npy"
        ins="--input $T/in$size.npy"
    fi
    for b in "$@"; do
        vr=""; [ "$b" = none ] || vr="--vram $b"
        rm -f "$T/s.json"
        pc="--no-plan-cache"; [ -n "${PLAN_CACHE:-}" ] && pc="--plan-cache $PLAN_CACHE"
        # shellcheck disable=SC2086
        "$CLI" -q $pc $vr $ins --stats "$T/s.json" "$BIG/$name" >/dev/null 2>"$T/err"
        rc=$?
        if [ $rc -ne 0 ]; then
            echo "| $spec | $b | refused (exit $rc): $(head -c 80 "$T/err" | tr '\n|' ' /') | | | | | | | | | | |"
            continue
        fi
        echo "| $spec | $b | $(key wall_ms "$T/s.json") | $(key open_ms "$T/s.json") |" \
            "$(key open_read_ms "$T/s.json") | $(key open_plan_ms "$T/s.json") |" \
            "$(key open_tile_ms "$T/s.json") | $(key open_compile_ms "$T/s.json") | $(key run_ms "$T/s.json") |" \
            "$(key run_plan_ms "$T/s.json" | grep . || echo -) | $(key run_tile_ms "$T/s.json" | grep . || echo -) |" \
            "$(key run_compile_ms "$T/s.json" | grep . || echo -) |" \
            "$(key programs_from_cache "$T/s.json" | grep . || echo -)/$(key programs_compiled "$T/s.json" | grep . || echo -) |"
    done
done
