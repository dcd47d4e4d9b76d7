#!/bin/sh
# Device limits are inputs of the plan (DESIGN, invariant 3; issue 13): a real
# model with the GPU's limit on one buffer lowered (--max-buffer) gives
# bitwise the no-limit answer with no budget and under a budget, binding no
# buffer over the limit; acceptance over a ladder of budgets is monotone (a
# larger budget never refused where a smaller one is accepted); refusals name
# the limit that bound them.
#   tests/limits_test.sh STREAMINFER MODEL_DIR MAX_BUFFER BUDGET
set -u
SI=$1
M=$2
MB=$3
BUD=$4
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
fails=0
fail() { echo "  FAIL $*"; fails=$((fails + 1)); }
mb=$(numfmt --from=iec "$MB")
"$SI" -q --output "$T/full" --stats "$T/full.json" "$M" || { echo "  FAIL no-limit run"; exit 1; }
[ "$(key largest_buffer_bytes "$T/full.json")" -gt "$mb" ] ||
    fail "the no-limit run binds no buffer over $MB: the limit tests nothing"
for b in none "$BUD"; do
    vr=""; [ "$b" = none ] || vr="--vram $b"
    out=$T/$b
    # shellcheck disable=SC2086
    if ! "$SI" -q $vr --max-buffer "$MB" --output "$out" --stats "$out.json" "$M" 2>"$T/err"; then
        fail "at $b with --max-buffer $MB: $(cat "$T/err")"; continue
    fi
    big=$(key largest_buffer_bytes "$out.json")
    [ "$(key max_buffer_bytes "$out.json")" -eq "$mb" ] || fail "at $b: max_buffer_bytes is not $mb"
    [ "$big" -le "$mb" ] || fail "at $b: a buffer of $big bytes over the $mb-byte limit"
    [ "$(key steps_split "$out.json")" -gt 0 ] || fail "at $b: no step was split"
    if [ "$b" != none ]; then
        [ "$(key peak_vram_bytes "$out.json")" -le "$(numfmt --from=iec "$b")" ] || fail "at $b: peak over budget"
    fi
    for f in "$T/full"/*.npy; do
        cmp -s "$f" "$out/$(basename "$f")" || fail "at $b with --max-buffer $MB: $(basename "$f") differs from the no-limit run"
    done
    echo "  ok   $(basename "$M") at $b with --max-buffer $MB: bitwise the no-limit run," \
         "$(key steps_split "$out.json") steps split, largest buffer $big, peak $(key peak_vram_bytes "$out.json")"
done
# monotone acceptance over a ladder of budgets, with the limit and without
for lim in "$MB" none; do
    ml=""; [ "$lim" = none ] || ml="--max-buffer $lim"
    accepted=""; line=""
    for b in 2M 3M 4M 8M 16M 24M 64M 1G none; do
        vr=""; [ "$b" = none ] || vr="--vram $b"
        # shellcheck disable=SC2086
        if "$SI" plan $vr $ml "$M" >/dev/null 2>"$T/err"; then
            accepted=$b; line="$line $b:yes"
        else
            line="$line $b:no"
            [ -z "$accepted" ] || fail "limit $lim: $b refused after $accepted was accepted: $(cat "$T/err")"
            grep -q "the limit that bound it: the budget" "$T/err" &&
                grep -q "the smallest budget that could work is" "$T/err" ||
                fail "limit $lim: the refusal at $b names no limit or smallest budget: $(cat "$T/err")"
        fi
    done
    [ -n "$accepted" ] || fail "limit $lim: no budget of the ladder accepted"
    echo "  ok   limit $lim, monotone:$line"
done
# a limit below the model's input (3 MiB for effdet-d0): the steps that read it read
# windows of it, inputs of their own filled from the caller's data (before 27f3a64,
# copies from the whole input, bound whole: refused)
if "$SI" -q --max-buffer 1M --output "$T/mb1" --stats "$T/mb1.json" "$M" 2>"$T/err"; then
    big=$(key largest_buffer_bytes "$T/mb1.json")
    [ "$big" -le 1048576 ] || fail "--max-buffer 1M: a buffer of $big bytes"
    for f in "$T/full"/*.npy; do
        cmp -s "$f" "$T/mb1/$(basename "$f")" || fail "--max-buffer 1M: $(basename "$f") differs from the no-limit run"
    done
    echo "  ok   --max-buffer 1M, below the input's size: bitwise the no-limit run, largest buffer $big"
else
    fail "--max-buffer 1M, below the input's size: $(cat "$T/err")"
fi
# a limit below a tensor no split can cut (a weight of effdet-d0 at 256K): refused
# naming the device's limit, the tensor and its node in full (the names last: the
# message is cut at 512 bytes)
if "$SI" plan --max-buffer 256K "$M" >/dev/null 2>"$T/err"; then
    fail "--max-buffer 256K: a plan was made"
elif grep -q "max_buffer_bytes" "$T/err" && grep -q "no budget can work" "$T/err" && grep -q "node '[^']*'$" "$T/err"; then
    echo "  ok   --max-buffer 256K refused, naming the device's limit"
else
    fail "--max-buffer 256K: the refusal does not name the device's limit, or is cut: $(cat "$T/err")"
fi
[ "$fails" -eq 0 ]
