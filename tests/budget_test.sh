#!/bin/sh
# Same answer at every budget: for each model, runs with no limit, at 2x, 1.5x and
# 1.25x the lower bound and at the smallest budget the planner accepts, and
# checks that every output is bitwise identical and that the pager's peak stays
# within the budget.    tests/budget_test.sh STREAMINFER MODELS_DIR MODEL...
# Models run in SI_TEST_JOBS lanes at once (default 2); output in model order.
set -u
SI=$1 DIR=$2
shift 2
. "$(dirname "$0")/lib.sh"

one() { # name: prints its "ok" or "FAIL" lines
    name=$1
    M=$DIR/$name.json
    fails=0
    if ! "$SI" -q --output "$T/$name-full" --stats "$T/$name-full.json" "$M"; then
        echo "  FAIL $name: no-limit run"; return
    fi
    lb=$(key lower_bound_bytes "$T/$name-full.json")
    # the smallest budget the planner accepts, by bisection between lb and 2 lb
    lo=$lb; hi=$((lb * 2))
    if "$SI" plan --vram "$lo" "$M" >/dev/null 2>&1; then hi=$lo; fi
    while [ $((hi - lo)) -gt 4096 ]; do
        mid=$(((lo + hi) / 2))
        if "$SI" plan --vram "$mid" "$M" >/dev/null 2>&1; then hi=$mid; else lo=$mid; fi
    done
    line="$name: lower bound $lb, smallest accepted $hi;"
    for b in $((lb * 2)) $((lb * 3 / 2)) $((lb * 5 / 4)) "$hi"; do
        out=$T/$name-$b
        if ! "$SI" -q --vram "$b" --output "$out" --stats "$out.json" "$M" 2>"$T/$name-err"; then
            echo "  FAIL $name at $b: $(cat "$T/$name-err")"; fails=$((fails + 1)); continue
        fi
        peak=$(key peak_vram_bytes "$out.json")
        if [ "$peak" -gt "$b" ]; then
            echo "  FAIL $name at $b: peak $peak over budget"; fails=$((fails + 1))
        fi
        for f in "$T/$name-full"/*.npy; do
            if ! cmp -s "$f" "$out/$(basename "$f")"; then
                echo "  FAIL $name at $b: $(basename "$f") differs from the no-limit run"
                fails=$((fails + 1))
            fi
        done
        line="$line $b:peak $peak, up $(key bytes_uploaded "$out.json"), spill $(key bytes_spilled "$out.json");"
    done
    [ "$fails" -ne 0 ] || echo "  ok   $line"
}

one_at() { one "$2" >"$T/out-$1" 2>&1; } # INDEX NAME
in_lanes one_at "$@"
i=0
for name in "$@"; do
    cat "$T/out-$i" 2>/dev/null || echo "  FAIL $name: its run stopped early"
    i=$((i + 1))
done
! cat "$T"/out-* 2>/dev/null | grep -q "^  FAIL" && [ "$(ls "$T"/out-* | wc -l)" -eq $# ]
