#!/bin/sh
# The big-model table on a GPU machine where only the build travels: generates
# the models there (bench/gen, in parallel; NODE names a node binary if there is
# none on the PATH), checks them byte for byte against bench/gen/SHA256SUMS
# (the files `make models` writes here), then runs bench/big_models.sh.
#   bench/gpu_big.sh BUILD_DIR OUT_DIR [MODEL[@SIZE]...]      (BIG: where models go, /tmp/big)
set -u
B=$1; OUT=$2; shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
BIG=${BIG:-/tmp/big}
NODE=${NODE:-node}
mkdir -p "$OUT" "$BIG"
for m in effdet-d0 effdet-d1 effdet-d2 effdet-d3 effdet-d4 effdet-d5 effdet-d6 effdet-d7 frcnn-irv2; do
    [ -f "$BIG/$m/model.json" ] || "$NODE" "$HERE/gen/gen.js" "$m" "$BIG/$m" >"$OUT/gen-$m.txt" 2>&1 &
done
wait
if ! (cd "$BIG" && sha256sum -c --quiet "$HERE/gen/SHA256SUMS") >"$OUT/sums.txt" 2>&1; then
    echo "generated models differ from bench/gen/SHA256SUMS:"; head "$OUT/sums.txt"; exit 1
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$OUT/device.txt" 2>&1
"$HERE/big_models.sh" "$B" "$BIG" "$OUT" "$@"
