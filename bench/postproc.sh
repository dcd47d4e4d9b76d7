#!/bin/sh
# The host interpreter's part of a run (loops, NMS, list ops) before and after
# a change: two builds on the same models, no budget, in one call. For each
# model and build: run_ms (the least of RUNS runs after the first), host_ms
# (the interpreter's share of it; a run's last) and the outputs, which must be
# bitwise the same from both builds.
#   bench/postproc.sh BUILD_A BUILD_B BIG_DIR OUT_DIR [MODEL...]   (RUNS, default 4)
# BUILD_A, BUILD_B: a build folder, optionally with @VAR=VALUE after it, set in
# the environment of that side's runs (one build two ways: DIR DIR@SI_LOOP_NODES=1).
# Default models: effdet-d0-od effdet-d7-od frcnn-irv2-od. Writes OUT_DIR/postproc.md.
set -u
A=$1; B=$2; BIG=$3; OUT=$4; shift 4
[ $# -gt 0 ] || set -- effdet-d0-od effdet-d7-od frcnn-irv2-od
RUNS=${RUNS:-4}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
mkdir -p "$OUT"
md=$OUT/postproc.md
{
    echo "| model | A: run ms | A: host ms | B: run ms | B: host ms | B/A run | bitwise | loop nodes on the GPU, A / B |"
    echo "|---|---:|---:|---:|---:|---:|---|---|"
} >"$md"
for m in "$@"; do
    for s in A B; do
        eval "d=\$$s"
        e=
        case $d in *@*=*) e=${d#*@}; d=${d%%@*} ;; esac
        env $e "$d/streaminfer" -q --seed 1 --runs "$RUNS" --output "$T/$s" --stats "$T/$s.json" \
            "$BIG/$m" >"$OUT/$m-$s.log" 2>&1 || echo "$m: build $s failed (rc $?)" >>"$OUT/errors.txt"
    done
    same=yes
    for f in "$T"/A/*.npy; do
        cmp -s "$f" "$T/B/$(basename "$f")" || same=no
    done
    ra=$(key run_ms_min "$T/A.json"); rb=$(key run_ms_min "$T/B.json")
    echo "| $m | $ra | $(key host_ms "$T/A.json") | $rb | $(key host_ms "$T/B.json") |" \
        "$(awk -v a="$ra" -v b="$rb" 'BEGIN { printf "%.2f", b / a }') | $same |" \
        "$(key gpu_host_nodes "$T/A.json") / $(key gpu_host_nodes "$T/B.json") |" >>"$md"
    rm -rf "$T/A" "$T/B"
done
cat "$md"
