#!/bin/sh
# conv2d's variants side by side (issue 17): SI_CONV=plain (an invocation an
# output) against "tiled:BM,BN,TM,TN,BK" and "split:DIV,MAX", one build, one call.
#   sh bench/conv_tiles.sh BIN MODELS REFS OUT RUNS MODEL,MODEL,... CONFIG...
# First each model once per config with --output, its outputs compared byte for
# byte with the first config's and, where REFS has the model, its largest error
# against the reference (bench/ref_error.py; OUT/same-bits.txt); then bench/stream_h200.py
# with no budget (--factors ''), medians of RUNS runs, two rounds interleaved
# (OUT/stream.md). CONFIG: an SI_CONV value (glkernels/glk_program.c glk_conv_setup).
set -eu
BIN=$1 MODELS=$2 REFS=$3 OUT=$4 RUNS=$5 LIST=$6
shift 6
mkdir -p "$OUT"
here=$(dirname "$0")
: >"$OUT/same-bits.txt"
for m in $(echo "$LIST" | tr ',' ' '); do
    args=$(python3 -c "import sys; sys.path.insert(0, '$here'); import stream_h200 as s; print(' '.join(s.inputs('$REFS', '$m')))")
    first=
    for c in "$@"; do
        d="$OUT/o/$m/$c"
        rm -rf "$d"
        mkdir -p "$d"
        SI_CONV=$c "$BIN" -q --no-plan-cache --runs 1 --output "$d" $args "$MODELS/$m.json"
        if [ -f "$REFS/$m/manifest.json" ]; then
            echo "$m $c: error against the reference $(python3 "$here/ref_error.py" "$d" "$REFS/$m")" >>"$OUT/same-bits.txt"
        fi
        if [ -z "$first" ]; then
            first=$d
            continue
        fi
        if diff -r -q "$first" "$d" >/dev/null; then
            echo "$m $c: outputs bitwise the same as $(basename "$first")'s" >>"$OUT/same-bits.txt"
        else
            echo "$m $c: outputs DIFFER from $(basename "$first")'s" >>"$OUT/same-bits.txt"
        fi
    done
done
rm -rf "$OUT/o"
cat "$OUT/same-bits.txt"
cfgs=
for c in "$@"; do cfgs="$cfgs $c=$BIN@SI_CONV=$c"; done
python3 "$here/stream_h200.py" --models-dir "$MODELS" --refs "$REFS" --out "$OUT" --runs "$RUNS" \
    --rounds 2 --factors '' --models "$LIST" $cfgs | tail -n +1 | grep '^|'
