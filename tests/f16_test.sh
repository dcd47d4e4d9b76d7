#!/bin/sh
# --precision f16 on package models (issue 20): each within 1e-2 * max(1, |ref|) of
# TensorFlow.js (tfjs-backend-cpu) on every output, halves stored (f16_tensors > 0)
# and a lower bound below f32's, and at f16's lower bound and 1.25x it the outputs
# bitwise f16's with no budget.
#   tests/f16_test.sh BUILD_DIR CACHE_DIR MODEL...
set -u
B=$1
C=$2
shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
M=$C/human-models/models
for m in "$@"; do
    ins=$(ref_inputs "$C/refs/$m")
    SI_PRECISION=f16 "$B/tests/test_models" "$C" "$m" >"$T/$m.log" 2>&1
    err=$(sed -n 's/.*(rel \([^)]*\)).*/\1/p' "$T/$m.log" | sort -g | tail -1)
    if [ -n "$err" ] && awk -v e="$err" 'BEGIN { exit !(e <= 0.01) }'; then
        ok "$m at f16: within $err of TensorFlow.js"
    else
        bad "$m at f16: error '${err:-none}' vs TensorFlow.js: $(grep -m1 ERROR "$T/$m.log")"
    fi
    for p in f32 f16; do
        # shellcheck disable=SC2086
        "$B/streaminfer" -q --precision $p $ins --output "$T/$m-$p" --stats "$T/$m-$p.json" "$M/$m.json" ||
            bad "$m: the run at $p failed"
    done
    lb32=$(key lower_bound_bytes "$T/$m-f32.json")
    lb=$(key lower_bound_bytes "$T/$m-f16.json")
    halves=$(key f16_tensors "$T/$m-f16.json")
    if [ "${halves:-0}" -gt 0 ] && [ "${lb:-0}" -gt 0 ] && [ "$lb" -lt "$lb32" ] && [ "$(key f16_tensors "$T/$m-f32.json")" = 0 ]; then
        ok "$m: $halves tensors as halves, lower bound $lb bytes at f16 against $lb32 at f32"
    else
        bad "$m: f16_tensors '$halves', lower bound f16 '$lb' f32 '$lb32'"
    fi
    for v in "$lb" $((lb * 5 / 4)); do
        # shellcheck disable=SC2086
        if "$B/streaminfer" -q --precision f16 $ins --vram "$v" --output "$T/$m-$v" "$M/$m.json" 2>"$T/err" &&
            same "$T/$m-f16" "$T/$m-$v"; then
            ok "$m at f16 in $v bytes: bitwise f16 with no budget"
        else
            bad "$m at f16 in $v bytes: $(cat "$T/err")"
        fi
    done
done
# --check-steps reads half tensors back as floats: every step within one half's
# rounding of the host reference on the same inputs
m=$1
# shellcheck disable=SC2086
if "$B/streaminfer" -q --precision f16 $(ref_inputs "$C/refs/$m") --check-steps 0.002 "$M/$m.json" 2>"$T/check" &&
    ! grep -q "check:" "$T/check"; then
    ok "$m at f16 --check-steps 0.002: every GPU step within it of the host reference"
else
    bad "$m at f16 --check-steps: $(head -3 "$T/check")"
fi
# unfused (the epilogues as steps of their own), f16 gives the fused bits: the
# epilogues' intermediates stay float32, so each result rounds once either way
# shellcheck disable=SC2086
if SI_NO_FUSE=1 "$B/streaminfer" -q --precision f16 $(ref_inputs "$C/refs/$m") --output "$T/$m-unfused" "$M/$m.json" &&
    same "$T/$m-f16" "$T/$m-unfused"; then
    ok "$m at f16 unfused: bitwise fused"
else
    bad "$m at f16 unfused: not bitwise the fused outputs"
fi
echo "$pass of $((pass + fail)) cases pass"
[ "$fail" -eq 0 ]
