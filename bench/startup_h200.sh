#!/bin/bash
# Cold start and plan time on the GPU machine (issue 18), two builds in one call:
#   bench/startup_h200.sh BEFORE_CLI AFTER_CLI BIG_DIR
# BIG_DIR: where frcnn-irv2 and effdet-d7 are (made there with bench/gen/gen.js
# when missing; NODE: the node binary, default node). Prints, for each build,
# bench/coldstart.sh's rows (frcnn-irv2@600 at none, 256M, 64M, 40M, 24M;
# effdet-d7 at 256M and 128M), then `streaminfer plan` of frcnn-irv2@600 at
# each budget timed by both builds (wall s, exit status) and whether their
# plans are the same, byte for byte. The GPU machine has no /usr/bin/time:
# wall time from date.
set -u
BEFORE=$1; AFTER=$2; BIG=$3
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
NODE=${NODE:-node}
for m in frcnn-irv2 effdet-d7; do
    [ -f "$BIG/$m/model.json" ] || "$NODE" "$HERE/gen/gen.js" "$m" "$BIG/$m" >/dev/null || exit 1
done
for cli in "$BEFORE" "$AFTER"; do
    echo "== $cli"
    BIG=$BIG sh "$HERE/coldstart.sh" "$cli" frcnn-irv2@600 -- none 256M 64M 40M 24M
    BIG=$BIG sh "$HERE/coldstart.sh" "$cli" effdet-d7 -- 256M 128M | tail -2
done
make_input 600 "$T/in600.npy"
echo
echo "| frcnn-irv2@600 plan | before: wall s | after: wall s | same plan |"
echo "|---|---:|---:|---|"
for b in none 256M 64M 40M 24M; do
    v="--vram $b"; [ "$b" = none ] && v=""
    row="| $b |"
    for k in 0 1; do
        cli=$BEFORE; [ $k = 1 ] && cli=$AFTER
        s=$(date +%s.%N)
        # shellcheck disable=SC2086
        XDG_CACHE_HOME=/dev/null/no-plan-cache timeout 300 "$cli" plan $v --input "$T/in600.npy" \
            "$BIG/frcnn-irv2" >"$T/plan$k" 2>&1
        rc=$?
        e=$(date +%s.%N)
        row="$row $(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.2f", e - s }')$([ $rc = 0 ] || echo " (exit $rc)") |"
    done
    cmp -s "$T/plan0" "$T/plan1" && row="$row yes |" || row="$row no |"
    echo "$row"
done
