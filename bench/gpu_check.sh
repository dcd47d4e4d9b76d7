#!/bin/sh
# Everything checked on the NVIDIA machine in one go (see README "GPU"):
# kernel tests, models vs TensorFlow.js references, same answer at every budget,
# and real memory use against the pager's count. Writes logs to OUT (default .).
#   bench/gpu_check.sh BUILD_DIR CACHE_DIR [OUT]
set -u
B=$1; C=$2; OUT=${3:-.}
M="emotion gender age liveness antispoof posenet blazeface facemesh iris mobilefacenet selfie movenet-lightning handlandmark-full blazepose-lite"
{
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
    "$B/bench/hold_context" 0
} > "$OUT/device.txt" 2>&1
for t in "$B"/tests/test_kernels_*; do "$t"; done > "$OUT/kernels.txt" 2>&1
"$B/tests/test_models" "$C" $M > "$OUT/models.txt" 2>&1
SI_IO=uring "$B/tests/test_models" "$C" emotion selfie >> "$OUT/models.txt" 2>&1
"$(dirname "$0")/../tests/budget_test.sh" "$B/streaminfer" "$C/human-models/models" $M > "$OUT/budgets.txt" 2>&1
"$(dirname "$0")/gpu_memory.sh" "$B" "$C/human-models/models" 200 \
    posenet:none posenet:26M posenet:16M posenet:13M \
    efficientpose:none efficientpose:60M efficientpose:30M \
    handlandmark-full:none handlandmark-full:16M handlandmark-full:8M \
    blazepose-lite:none blazepose-lite:12M blazepose-lite:8M \
    faceres-deep:none faceres-deep:6M selfie:none selfie:4M centernet:none > "$OUT/memory.txt" 2>&1
tail -n 3 "$OUT"/kernels.txt "$OUT"/models.txt "$OUT"/budgets.txt
cat "$OUT/memory.txt"
grep -q "OVER\|over the" "$OUT/memory.txt" && echo "gpu_check: the card's memory went past the budget or the pager's count (memory.txt)"
