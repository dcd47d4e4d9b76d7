#!/bin/sh
# Session 4's checks on the NVIDIA machine in one go: the handle/thread tests
# (issue 12), every unit and kernel test, the per-op models against
# TensorFlow.js (issue 15), models vs TensorFlow.js, the same answer at every
# budget, and the device-limit test on effdet-d0 (issue 13). Logs into OUT.
#   bench/gpu_safety.sh BUILD_DIR CACHE_DIR OUT
# CACHE_DIR holds human-models/models, refs, big/effdet-d0 and ops-cases
# (tests/ops/gen.js output), as tests/run_all.sh lays them out.
set -u
B=$1; C=$2; OUT=$3
HERE=$(cd "$(dirname "$0")/.." && pwd)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/device.txt" 2>&1
: > "$OUT/summary.txt"
res() { echo "$1 rc=$2" >> "$OUT/summary.txt"; }
for t in "$B"/tests/test_*; do
    case $t in *test_models|*test_ops) continue ;; esac
    "$t" "$C" > "$OUT/unit-$(basename "$t").txt" 2>&1; res "$(basename "$t")" $?
done
"$B/tests/test_ops" "$C/ops-cases" > "$OUT/ops.txt" 2>&1; res test_ops $?
M="emotion gender age liveness antispoof posenet blazeface facemesh iris selfie movenet-lightning handlandmark-full blazepose-lite blazeface-back"
"$B/tests/test_models" "$C" $M > "$OUT/models.txt" 2>&1; res test_models $?
"$HERE/tests/budget_test.sh" "$B/streaminfer" "$C/human-models/models" posenet selfie blazeface handlandmark-full > "$OUT/budgets.txt" 2>&1; res budget_test $?
"$HERE/tests/limits_test.sh" "$B/streaminfer" "$C/big/effdet-d0" 8M 24M > "$OUT/limits.txt" 2>&1; res limits_test $?
cat "$OUT/summary.txt"
tail -n 2 "$OUT/ops.txt" "$OUT/models.txt" "$OUT/budgets.txt" "$OUT/limits.txt"
