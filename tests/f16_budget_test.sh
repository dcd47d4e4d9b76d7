#!/bin/sh
# --precision f16 on a model split into parts under a budget (issue 20): its
# weights stored as halves (read from the shards as float32, rounded once: into
# the pool, or in the staging slot where a host budget reads them again), the
# outputs at VRAM and at VRAM with --host-mem HOST bitwise f16's with no budget,
# and f16's peak with no budget below f32's.
#   tests/f16_budget_test.sh STREAMINFER MODEL_DIR VRAM HOST
set -u
SI=$1
M=$2
V=$3
H=$4
. "$(dirname "$0")/lib.sh"
"$SI" -q --precision f32 --stats "$T/f32.json" "$M" || bad "f32 with no budget"
"$SI" -q --precision f16 --output "$T/none" --stats "$T/f16.json" "$M" || bad "f16 with no budget"
p32=$(key peak_vram_bytes "$T/f32.json")
p16=$(key peak_vram_bytes "$T/f16.json")
if [ -n "$p16" ] && [ -n "$p32" ] && [ $((p16 * 10)) -lt $((p32 * 6)) ]; then
    ok "peak with no budget: $p16 bytes at f16, $p32 at f32"
else
    bad "peak with no budget: '$p16' bytes at f16 against '$p32' at f32 (want under 0.6x)"
fi
for args in "--vram $V" "--vram $V --host-mem $H"; do
    d=$T/$(echo "$args" | tr -c 'a-zA-Z0-9\n' _)
    # shellcheck disable=SC2086
    if "$SI" -q --precision f16 $args --output "$d" --stats "$d.json" "$M" 2>"$T/err" && same "$T/none" "$d"; then
        ok "f16 $args: bitwise f16 with no budget ($(key steps_split "$d.json") steps split, $(key file_bytes_read "$d.json") bytes read from the shards)"
    else
        bad "f16 $args: $(cat "$T/err")"
    fi
done
echo "$pass of $((pass + fail)) cases pass"
[ "$fail" -eq 0 ]
