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
mkdir -p "$OUT"
# the models named (without @SIZE; NAME-od needs NAME), or gpu_gen.sh's default list
gen=""
for spec in "$@"; do
    n=${spec%@*}
    case $n in *-od | *-od-*) gen="$gen ${n%-od*}" ;; esac
    gen="$gen $n"
done
# shellcheck disable=SC2046,SC2086
"$HERE/gpu_gen.sh" "$BIG" "$OUT" $(echo $gen | tr ' ' '\n' | awk '!seen[$0]++') || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$OUT/device.txt" 2>&1
"$HERE/big_models.sh" "$B" "$BIG" "$OUT" "$@"
