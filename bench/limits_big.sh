#!/bin/sh
# The big models of `make models` within the GPU's per-buffer limit (issue 13),
# on whatever GPU runs it (llvmpipe: 128 MiB for one storage buffer): for each
# model, with no budget, at 1G and at 256M, the plan (accepted or the refusal,
# steps split, the largest buffer a step binds against max_buffer_bytes, the
# pager's peak, planning time), then a run at each budget whose outputs must be
# bitwise those of the no-limit run. Rows are written as they finish, so a long
# table that is stopped keeps what it has.
#   bench/limits_big.sh BUILD_DIR BIG_DIR OUT_FILE [MODEL[@SIZE]...]
# Default models: effdet-d0 ... effdet-d7 at native size, frcnn-irv2@600 and @1024.
# PLAN_ONLY=1: plans only. RUN_TIMEOUT: seconds one run may take (default 7200;
# a run stopped by it is a row "timed out", not a pass). SI_ARGS: more options
# for every plan and run, e.g. SI_ARGS="--max-buffer 128M" on a GPU whose own
# limit is larger, to make llvmpipe's plans there.
set -u
B=$1; BIG=$2; OUT=$3; shift 3
[ $# -gt 0 ] || set -- effdet-d0 effdet-d1 effdet-d2 effdet-d3 effdet-d4 effdet-d5 effdet-d6 \
    effdet-d7 frcnn-irv2@600 frcnn-irv2@1024
SI=$B/streaminfer
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

[ -f "$OUT" ] || {
    echo "on $("$SI" plan "$BIG/effdet-d0" 2>/dev/null | head -1 | sed 's/^for //')${SI_ARGS:+, with $SI_ARGS}"
    echo
    echo "| model | input | budget | plan | steps split | largest buffer / max_buffer_bytes | peak counted | plan time | run wall time | bitwise vs no limit |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
} >"$OUT"
fails=0
for spec in "$@"; do
    spec_parts "$spec"
    m=$BIG/$name
    set --
    if [ -n "$size" ]; then
        make_input "$size" "$T/in.npy"
        set -- --input "$T/in.npy"
    fi
    for b in none 1G 256M; do
        vr=""; [ "$b" = none ] || vr="--vram $b"
        row="| $name | ${size:-native} | $b"
        t0=$(now)
        # shellcheck disable=SC2086
        if ! "$SI" plan $vr ${SI_ARGS:-} "$@" "$m" >"$T/plan" 2>"$T/err"; then
            echo "$row | refused: $(head -c 300 "$T/err") | | | | $(secs "$t0" "$(now)") s | | |" >>"$OUT"
            fails=$((fails + 1)); continue
        fi
        pt=$(secs "$t0" "$(now)")
        split=$(sed -n 's/^tiling: \([0-9]*\) steps split.*/\1/p' "$T/plan")
        lim=$(sed -n 's/^limits: max_buffer_bytes \([0-9]*\).*largest buffer \([0-9]*\)$/\2 \1/p' "$T/plan")
        big=${lim% *}; max=${lim#* }
        arena=$(sed -n 's/.*arena (peak GPU bytes) \([0-9.]*\) MiB.*/\1/p' "$T/plan")
        [ "$big" -le "$max" ] || fails=$((fails + 1))
        row="$row | accepted | ${split:-0} | $(mib "$big") / $(mib "$max") MiB | $arena MiB | $pt s"
        if [ -n "${PLAN_ONLY:-}" ]; then
            echo "$row | not run | |" >>"$OUT"; continue
        fi
        t0=$(now)
        # shellcheck disable=SC2086
        timeout "${RUN_TIMEOUT:-7200}" "$SI" -q $vr ${SI_ARGS:-} "$@" --output "$T/$b" --stats "$T/$b.json" "$m" 2>"$T/err"
        rc=$?
        wall=$(secs "$t0" "$(now)")
        if [ "$rc" -eq 124 ]; then
            echo "$row | timed out after $wall s | |" >>"$OUT"; fails=$((fails + 1)); continue
        elif [ "$rc" -ne 0 ]; then
            echo "$row | failed: $(head -c 300 "$T/err") | |" >>"$OUT"; fails=$((fails + 1)); continue
        fi
        same=reference
        if [ "$b" != none ]; then
            same=yes
            if [ -d "$T/none" ]; then
                for f in "$T/none"/*.npy; do cmp -s "$f" "$T/$b/$(basename "$f")" || same=NO; done
            else
                same="no reference"
            fi
            [ "$same" = yes ] || fails=$((fails + 1))
        fi
        echo "$row | $wall s | $same |" >>"$OUT"
    done
    rm -rf "${T:?}"/none "${T:?}"/1G "${T:?}"/256M
done
cat "$OUT"
[ "$fails" -eq 0 ]
