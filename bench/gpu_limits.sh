#!/bin/sh
# Issue 13's big-model table on the GPU machine with llvmpipe's limit on one
# buffer (--max-buffer 128M, GL_MAX_SHADER_STORAGE_BLOCK_SIZE on llvmpipe and
# the Mesa drivers of Intel/AMD integrated GPUs): the same plans as on llvmpipe,
# run on a GPU, since on the 2-core CPU machine a run of effdet-d7 takes hours.
# Generates the models there (bench/gpu_gen.sh), then bench/limits_big.sh.
#   bench/gpu_limits.sh BUILD_DIR OUT_DIR [MODEL[@SIZE]...]   (BIG: /tmp/big)
set -u
B=$1; OUT=$2; shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
BIG=${BIG:-/tmp/big}
mkdir -p "$OUT"
models=""
for s in "$@"; do models="$models ${s%@*}"; done
# shellcheck disable=SC2086
"$HERE/gpu_gen.sh" "$BIG" "$OUT" $models || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$OUT/device.txt" 2>&1
SI_ARGS=${SI_ARGS:---max-buffer 128M} "$HERE/limits_big.sh" "$B" "$BIG" "$OUT/limits.md" "$@"
