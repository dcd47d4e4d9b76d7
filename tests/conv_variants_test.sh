#!/bin/sh
# conv2d's variants on a real model (glkernels/glk_program.c conv_variant, forced with
# SI_CONV, as --conv-kernel): the device's own choice (tiled on llvmpipe, vec on a
# GPU), vec (x four channels a load) and tiled each bitwise the plain one,
# and the split one (runs of taps added in a tree) bitwise the same with no
# budget and at a budget that splits its convs into row and channel parts: the
# runs hang on the whole op's outputs (ck_conv_p.whole_out), not the part's.
# Its limit of 1M invocations makes the parts of effdet-d0's big convs (not
# the whole ones) short enough to split, so a part that went by its own size
# would sum in another order.
#   tests/conv_variants_test.sh STREAMINFER MODEL_DIR BUDGET
set -u
SI=$1 M=$2 B=$3
. "$(dirname "$0")/lib.sh"
run() { # NAME SI_CONV VRAM
    env ${2:+SI_CONV=$2} "$SI" -q --no-plan-cache ${3:+--vram "$3"} --output "$T/$1" --stats "$T/$1.json" "$M" \
        2>"$T/$1.err" || { bad "$1: $(tail -n 1 "$T/$1.err")"; return 1; }
}
if run plain plain ""; then
    for k in "" vec tiled; do
        run "own$k" "$k" "" &&
            { same "$T/plain" "$T/own$k" && ok "conv2d ${k:-as the device chooses}: bitwise the plain one" ||
                bad "conv2d ${k:-as the device chooses}: differs from the plain one"; }
    done
    run vecb vec "$B" &&
        { same "$T/plain" "$T/vecb" && ok "conv2d vec at $B (parts, bands): bitwise the plain one" ||
            bad "conv2d vec at $B: differs from the plain one"; }
fi
S=split:8,8,1048576
if run split "$S" "" && run split-b "$S" "$B"; then
    n=$(key steps_split "$T/split-b.json")
    [ "${n:-0}" -gt 0 ] || bad "at $B no step was split into parts"
    same "$T/split" "$T/split-b" && ok "split conv2d ($S): bitwise the same with no budget and at $B ($n steps in parts)" ||
        bad "split conv2d ($S): outputs at $B differ from no budget's"
    same "$T/plain" "$T/split" && bad "split conv2d gave the plain one's bits: it did not run"
fi
# a kind that is none of them is refused by name, as option and as variable
if "$SI" -q --conv-kernel tiled:64,64,4,4,16 "$M" 2>"$T/e1" || SI_CONV=tiles "$SI" -q "$M" 2>"$T/e2"; then
    bad "a bad conv2d kind was taken"
elif grep -q "tiled:64,64,4,4,16" "$T/e1" && grep -q '"tiles"' "$T/e2"; then
    ok "a bad conv2d kind is refused by name: $(cat "$T/e1")"
else
    bad "a bad conv2d kind's error does not name it: $(cat "$T/e1" "$T/e2")"
fi
echo "conv_variants_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
