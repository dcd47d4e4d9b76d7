#!/bin/sh
# The outputs of every row of tests/MODELS.md (the oracle's inputs, no budget
# and 1.25x the lower bound) and of the synthetic effdet-d0 at 512 with no
# budget and at 24M, as sha256 lines "ROW FILE HASH": recorded before a change
# that must not move a bit (issue 14's refactor) and compared after it.
#   bench/output_hashes.sh BUILD_DIR CACHE_DIR OUT_FILE
# Needs the fetched models and references (make test makes them) and
# CACHE_DIR/big/effdet-d0 (made here if absent).
#   diff BEFORE AFTER     # no output: bitwise the same
set -u
B=$1
C=$2
OUT=$3
HERE=$(cd "$(dirname "$0")" && pwd)
M=$C/human-models/models
. "$HERE/lib.sh"
: >"$OUT"
hashes() { # ROW DIR
    for f in "$2"/*.npy; do
        [ -f "$f" ] && echo "$1 $(basename "$f") $(sha256sum <"$f" | cut -c1-64)" >>"$OUT"
    done
    return 0
}
for spec in $(ls "$C/refs"); do
    [ -f "$C/refs/$spec/manifest.json" ] || continue
    name=${spec%%@*}
    [ -f "$M/$name.json" ] || continue
    ins=$(node -e '
        const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
        console.log(m.inputs.map(i => `--input ${i.name}=${process.argv[2]}/${i.file}`).join(" "))' \
        "$C/refs/$spec/manifest.json" "$C/refs/$spec")
    rm -rf "$T/o"
    # shellcheck disable=SC2086
    if ! "$B/streaminfer" -q $ins --output "$T/o" --stats "$T/s.json" "$M/$name.json" 2>"$T/err"; then
        echo "$spec none refused $(head -c 200 "$T/err" | tr '\n' ' ')" >>"$OUT"; continue
    fi
    hashes "$spec@none" "$T/o"
    lb=$(key lower_bound_bytes "$T/s.json")
    [ "${lb:-0}" -gt 0 ] || continue
    rm -rf "$T/o"
    # shellcheck disable=SC2086
    "$B/streaminfer" -q --vram $((lb * 5 / 4)) $ins --output "$T/o" "$M/$name.json" 2>"$T/err" ||
        { echo "$spec 1.25xLB refused $(head -c 200 "$T/err" | tr '\n' ' ')" >>"$OUT"; continue; }
    hashes "$spec@1.25xLB" "$T/o"
done
D0=$C/big/effdet-d0
[ -f "$D0/model.json" ] || node "$HERE/gen/gen.js" effdet-d0 "$D0" >/dev/null
for b in none 24M; do
    vr=""; [ $b = none ] || vr="--vram $b"
    rm -rf "$T/o"
    # shellcheck disable=SC2086
    "$B/streaminfer" -q $vr --output "$T/o" "$D0" 2>"$T/err" ||
        { echo "effdet-d0@$b refused $(head -c 200 "$T/err" | tr '\n' ' ')" >>"$OUT"; continue; }
    hashes "effdet-d0@$b" "$T/o"
done
echo "$(cut -d' ' -f1 "$OUT" | sort -u | wc -l) rows, $(wc -l <"$OUT") outputs: $OUT"
