#!/bin/sh
# Generates the models of `make models` on a machine where only the build
# travels (bench/gen, in parallel; NODE names a node binary if there is none on
# the PATH) and checks them byte for byte against bench/gen/SHA256SUMS (the
# files `make models` writes here).
#   bench/gpu_gen.sh BIG_DIR LOG_DIR [MODEL...]     (MODEL-od: with MODEL's weights)
set -u
BIG=$1; LOG=$2; shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
NODE=${NODE:-node}
[ $# -gt 0 ] || set -- effdet-d0 effdet-d1 effdet-d2 effdet-d3 effdet-d4 effdet-d5 effdet-d6 effdet-d7 frcnn-irv2
mkdir -p "$BIG" "$LOG"
for m in "$@"; do
    case $m in *-od | *-od-*) continue ;; esac
    [ -f "$BIG/$m/model.json" ] || "$NODE" "$HERE/gen/gen.js" "$m" "$BIG/$m" >"$LOG/gen-$m.txt" 2>&1 &
done
wait
# NAME-od after NAME, with its weights (NAME must be generated too, or be there)
for m in "$@"; do
    case $m in *-od | *-od-*) ;; *) continue ;; esac
    [ -f "$BIG/$m/model.json" ] || "$NODE" "$HERE/gen/gen.js" "$m" "$BIG/$m" --weights-from "$BIG/${m%-od*}" \
        >"$LOG/gen-$m.txt" 2>&1 &
done
wait
sums=$LOG/sums.txt
for m in "$@"; do grep " $m/" "$HERE/gen/SHA256SUMS"; done >"$LOG/want.txt"
if ! (cd "$BIG" && sha256sum -c --quiet "$LOG/want.txt") >"$sums" 2>&1; then
    echo "generated models differ from bench/gen/SHA256SUMS:"; head "$sums"; exit 1
fi
