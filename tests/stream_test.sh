#!/bin/sh
# Loads as transfer kernels (issue 19; si_options.copy_kernels, the default on a
# GPU, forced here with SI_COPY_KERNELS=1 since llvmpipe uses
# glCopyBufferSubData), with and without loads planned a step early
# (SI_PLAN_PREFETCH=1, held back in the run so they are queued beside the step
# before the one that reads them): at the lower bound and 1.25x it, outputs
# bitwise those of the run with no budget and glCopyBufferSubData; and the
# budget runs did load bytes, and some spilled (spills of what the host never
# reads are transfer kernels too). And quantized weights dequantized by their
# load from a host budget's staging slot (below).
#   tests/stream_test.sh STREAMINFER CACHE_DIR
set -u
SI=$1
M=$2/human-models/models
. "$(dirname "$0")/lib.sh"
spilled=0
for m in faceres-deep handlandmark-full selfie; do
    SI_COPY_KERNELS=-1 "$SI" -q --no-plan-cache --output "$T/$m" --stats "$T/$m.json" "$M/$m.json" >/dev/null ||
        { bad "$m: the run with no budget failed"; continue; }
    lb=$(key lower_bound_bytes "$T/$m.json")
    for f in 4 5; do
        b=$((lb * f / 4))
        for pf in "" 1; do
            d="$T/$m-$f-$pf"
            if ! env SI_COPY_KERNELS=1 ${pf:+SI_PLAN_PREFETCH=1} "$SI" -q --no-plan-cache --runs 2 \
                --vram "$b" --output "$d" --stats "$d.json" "$M/$m.json" >/dev/null 2>"$d.err"; then
                bad "$m at $b bytes${pf:+, prefetch}: $(tail -n 1 "$d.err")"
                continue
            fi
            up=$(key bytes_uploaded "$d.json") sp=$(key bytes_spilled "$d.json")
            spilled=$((spilled + ${sp:-0}))
            if same "$T/$m" "$d" && [ "${up:-0}" -gt 0 ]; then
                ok "$m at $b bytes${pf:+, prefetch}: $up bytes loaded, $sp spilled a run by transfer kernels, outputs bitwise"
            else
                bad "$m at $b bytes${pf:+, prefetch}: outputs differ from no budget's, or nothing loaded ($up)"
            fi
        done
    done
done
[ "$spilled" -gt 0 ] && ok "spills were made ($spilled bytes in all)" || bad "no run spilled: the spill kernels were not tried"
# Quantized weights (handlandmark-full's are float16 in the shards) are
# dequantized by their load: read again from the shards into a staging slot
# under a host budget, their stored bytes dequantized from there; at f32 and
# f16, bitwise the same precision's run with no budget, and the weights were
# read again (more than their stored bytes read from files)
m=handlandmark-full
for cfg in f32:5M:2M f16:3M:1500K; do
    prec=${cfg%%:*} v=${cfg#*:} h=${v#*:} v=${v%:*}
    d="$T/$m-q-$prec"
    if "$SI" -q --no-plan-cache --precision $prec --output "$d-none" "$M/$m.json" >/dev/null 2>"$d.err" &&
        "$SI" -q --no-plan-cache --precision $prec --vram $v --host-mem $h --output "$d" --stats "$d.json" \
            "$M/$m.json" >/dev/null 2>>"$d.err"; then
        rd=$(key file_bytes_read "$d.json") w=$(key weights_bytes "$d.json")
        if same "$d-none" "$d" && [ "${rd:-0}" -gt "${w:-0}" ]; then
            ok "$m (quantized weights) at $prec, $v, --host-mem $h: $rd bytes read from the shards (weights $w), outputs bitwise"
        else
            bad "$m at $prec, $v, --host-mem $h: outputs differ from no budget's, or weights not read again ($rd of $w)"
        fi
    else
        bad "$m at $prec: a run failed: $(tail -1 "$d.err")"
    fi
done
echo "stream_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
