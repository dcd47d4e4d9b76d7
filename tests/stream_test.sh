#!/bin/sh
# Loads as transfer kernels (issue 19; si_options.copy_kernels, the default on a
# GPU, forced here with SI_COPY_KERNELS=1 since llvmpipe uses
# glCopyBufferSubData), with and without loads planned a step early
# (SI_PLAN_PREFETCH=1, held back in the run so they are queued beside the step
# before the one that reads them) or up to 6 steps early (SI_PLAN_PREFETCH=6,
# as each step's estimated time allows): at the lower bound and 1.25x it, outputs
# bitwise those of the run with no budget and glCopyBufferSubData; and the
# budget runs did load bytes, and some spilled (spills of what the host never
# reads are transfer kernels too). With SI_COPY_KERNELS=1, an output that one
# step writes whole and none reads after is written by that step's kernel
# straight into its home in the mapped pool (--stats bytes_out_in_place), with
# no budget too: bitwise the copied outputs', and more than nothing written so. And
# quantized weights dequantized by their load from a host budget's staging
# slot (below).
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
    ip=$(key bytes_out_in_place "$T/$m.json")
    if SI_COPY_KERNELS=1 "$SI" -q --no-plan-cache --runs 2 --output "$T/$m-ip" --stats "$T/$m-ip.json" \
        "$M/$m.json" >/dev/null 2>"$T/$m-ip.err"; then
        ipk=$(key bytes_out_in_place "$T/$m-ip.json")
        if same "$T/$m" "$T/$m-ip" && [ "${ipk:-0}" -gt 0 ] && [ "${ip:-1}" -eq 0 ]; then
            ok "$m, no budget: $ipk bytes of outputs written in place by their kernels (0 with glCopyBufferSubData), outputs bitwise"
        else
            bad "$m, no budget, outputs written in place: outputs differ from the copied ones', or none written so ($ipk; $ip with glCopyBufferSubData)"
        fi
    else
        bad "$m with transfer kernels, no budget: $(tail -n 1 "$T/$m-ip.err")"
    fi
    for f in 4 5; do
        b=$((lb * f / 4))
        for pf in "" 1 6; do
            d="$T/$m-$f-$pf"
            if ! env SI_COPY_KERNELS=1 ${pf:+SI_PLAN_PREFETCH=$pf} "$SI" -q --no-plan-cache --runs 2 \
                --vram "$b" --output "$d" --stats "$d.json" "$M/$m.json" >/dev/null 2>"$d.err"; then
                bad "$m at $b bytes${pf:+, prefetch $pf}: $(tail -n 1 "$d.err")"
                continue
            fi
            up=$(key bytes_uploaded "$d.json") sp=$(key bytes_spilled "$d.json")
            spilled=$((spilled + ${sp:-0}))
            if same "$T/$m" "$d" && [ "${up:-0}" -gt 0 ]; then
                ok "$m at $b bytes${pf:+, prefetch $pf}: $up bytes loaded, $sp spilled a run by transfer kernels, outputs bitwise"
            else
                bad "$m at $b bytes${pf:+, prefetch $pf}: outputs differ from no budget's, or nothing loaded ($up)"
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
# No mapped host memory (si_options.fail_gpu_no_storage, SI_FAIL_GPU_NO_STORAGE: a
# driver without GL_EXT_buffer_storage): the host pool is plain memory, loads
# are uploads and a quantized weight is dequantized on the host before its
# upload. At each precision, outputs at 1.25x and 1x the lower bound (and with
# a host budget) bitwise the same configuration's with no budget; a float32
# model's and a float16-stored one's bitwise the mapped pool's too (handtrack's
# uint8 weights dequantize on the host in double, the GPU in float32: other
# bits, so only the budget invariant). --stats' host_pool_mapped says which
# pool a run had: 1 with the mapped one, 0 with the fault.
RT="$2/refs/handtrack@input_tensor=1,320,320,3"
for cfg in faceres-deep:f32:mapped handlandmark-full:f16:mapped handtrack:f32:; do
    m=${cfg%%:*} rest=${cfg#*:} prec=${rest%%:*} mapped=${rest#*:}
    in=""
    [ "$m" = handtrack ] && in="--input input_tensor=$RT/input_input_tensor.npy"
    d="$T/ns-$m-$prec"
    # shellcheck disable=SC2086
    if ! SI_FAIL_GPU_NO_STORAGE=1 "$SI" -q --no-plan-cache --precision $prec $in --output "$d-none" \
        --stats "$d.json" "$M/$m.json" >/dev/null 2>"$d.err"; then
        bad "$m at $prec without mapped memory: $(tail -n 1 "$d.err")"
        continue
    fi
    if [ -n "$mapped" ]; then
        # shellcheck disable=SC2086
        "$SI" -q --no-plan-cache --precision $prec $in --output "$d-mapped" --stats "$d-mapped.json" \
            "$M/$m.json" >/dev/null 2>&1 && same "$d-mapped" "$d-none" &&
            [ "$(key host_pool_mapped "$d-mapped.json")" = 1 ] && [ "$(key host_pool_mapped "$d.json")" = 0 ] &&
            ok "$m at $prec without mapped memory: bitwise the mapped pool's" ||
            bad "$m at $prec without mapped memory: outputs differ from the mapped pool's, or the pools were not as asked"
    fi
    lb=$(key lower_bound_bytes "$d.json")
    for v in $((lb * 5 / 4)) "$lb" "$((lb * 5 / 4)) --host-mem $((lb * 2))"; do
        # shellcheck disable=SC2086
        if SI_FAIL_GPU_NO_STORAGE=1 "$SI" -q --no-plan-cache --precision $prec $in --vram $v --output "$d-b" \
            --stats "$d-b.json" "$M/$m.json" >/dev/null 2>"$d.err"; then
            if same "$d-none" "$d-b" && [ "$(key host_pool_mapped "$d-b.json")" = 0 ]; then
                ok "$m at $prec without mapped memory, --vram $v: bitwise its no-budget run"
            else
                bad "$m at $prec without mapped memory, --vram $v: outputs differ from no budget's, or the pool was mapped"
            fi
        else
            bad "$m at $prec without mapped memory, --vram $v: $(tail -n 1 "$d.err")"
        fi
        rm -rf "$d-b"
    done
done
echo "stream_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
