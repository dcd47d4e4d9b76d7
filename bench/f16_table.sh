#!/bin/sh
# --precision f16 against f32 on the rows of tests/MODELS.md (issue 20): each
# precision's error against TensorFlow.js (tfjs-backend-cpu, the same seeded
# input), lower bound, and how many float activations are stored as halves and
# how many stay float32; and whether f16's outputs at 1.25x its lower bound are
# bitwise f16's with no budget (tests/f16_test.sh runs five at the lower bound
# itself, where some models' plans are very slow on llvmpipe). Needs the fetched models and the references
# (make test makes them).
# Also: the error at f16 with the inputs kept float32 (--f32-ops Placeholder);
# each precision's smallest accepted budget (plan --smallest --within 2, cut
# off after SMALLEST_TIMEOUT seconds, default 600; NO_SMALLEST=1 leaves it
# out); and TensorFlow.js's WebGL backend's error with f16 textures, from
# WEBGL_JSON (default bench/webgl/f16_errors.json, made by
# bench/webgl/f16_error.js; "-" where it has no row).
#   sh bench/f16_table.sh BUILD_DIR CACHE_DIR [SPEC...] > table.md
set -u
B=$1
C=$2
shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../tests/lib.sh"
M=$C/human-models/models
SPECS=${*:-$(table_specs "$M")}
mib() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1048576 }'; }
WEBGL_JSON=${WEBGL_JSON:-$HERE/webgl/f16_errors.json}
# webgl_err SPEC: tfjs-webgl's f16 error of that row ("-" where none; the failure where it failed)
webgl_err() {
    [ -f "$WEBGL_JSON" ] || { echo -; return; }
    node -e '
    const j = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const r = (j.results || []).find(x => x.spec === process.argv[2]);
    const f = r && r.runs && r.runs.f16;
    console.log(!f ? "-" : f.ok ? (isFinite(f.maxError) ? Number(f.maxError).toPrecision(3) : String(f.maxError)) : "failed");' \
        "$WEBGL_JSON" "$1"
}
# smallest PRECISION INPUT_ARGS... MODEL: plan --smallest's bytes, "-" where none
smallest() {
    p=$1; shift
    [ -z "${NO_SMALLEST:-}" ] || { echo -; return; }
    # shellcheck disable=SC2068
    n=$(timeout "${SMALLEST_TIMEOUT:-600}" "$B/streaminfer" plan --smallest --within 2 --no-plan-cache -q \
        --precision "$p" "$@" 2>/dev/null | sed -n 's/^bytes \([0-9][0-9]*\)$/\1/p')
    echo "${n:--}"
}
# row INDEX SPEC: the table's line into $T/rows/INDEX
row() {
    i=$1 spec=$2
    name=${spec%%@*}
    R=$T/$i
    mkdir -p "$R" "$T/rows"
    if [ ! -f "$C/refs/$spec/manifest.json" ]; then
        echo "| $spec | no reference | | | | | | |" >"$T/rows/$i"
        return
    fi
    ins=$(ref_inputs "$C/refs/$spec")
    for p in f32 f16; do
        SI_PRECISION=$p "$B/tests/test_models" "$C" "$spec" >"$R/t$p.log" 2>&1
        eval "err_$p=\$(sed -n 's/.*(rel \([^)]*\)).*/\1/p' \"\$R/t$p.log\" | sort -g | tail -1)"
        # shellcheck disable=SC2086
        "$B/streaminfer" -q --precision $p $ins --output "$R/$p" --stats "$R/$p.json" "$M/$name.json" 2>"$R/e$p"
        eval "lb_$p=\$(key lower_bound_bytes \"\$R/$p.json\")"
        # shellcheck disable=SC2086
        eval "sm_$p=\$(smallest $p $ins \"\$M/\$name.json\")"
    done
    # shellcheck disable=SC2086
    "$B/streaminfer" -q --precision f16 --f32-ops Placeholder $ins --output "$R/in32" "$M/$name.json" 2>"$R/ein32"
    err_in=$(python3 "$HERE/ref_error.py" "$R/in32" "$C/refs/$spec" 2>/dev/null)
    werr=$(webgl_err "$spec")
    # shellcheck disable=SC2154
    if [ "${lb_f16:-0}" = 0 ]; then
        echo "| $spec | ${err_f32:-?} | ${err_f16:-?} | ${err_in:-?} | $werr | - | - | | - | - | | host interpreter | |" >"$T/rows/$i"
        return
    fi
    same=same
    for v in $((lb_f16 * 5 / 4)); do
        # shellcheck disable=SC2086
        "$B/streaminfer" -q --precision f16 $ins --vram "$v" --output "$R/b$v" "$M/$name.json" 2>>"$R/e" &&
            same "$R/f16" "$R/b$v" || same=DIFFERENT
    done
    # shellcheck disable=SC2154
    # shellcheck disable=SC2154
    sm_ratio=$([ "$sm_f32" = - ] || [ "$sm_f16" = - ] && echo - ||
        awk -v a="$sm_f16" -v b="$sm_f32" 'BEGIN { printf "%.2f", a / b }')
    # shellcheck disable=SC2154
    echo "| $spec | ${err_f32:-?} | ${err_f16:-?} | ${err_in:-?} | $werr | $(mib "$lb_f32") | $(mib "$lb_f16") |" \
        "$(awk -v a="$lb_f16" -v b="$lb_f32" 'BEGIN { printf "%.2f", a / b }') |" \
        "$([ "$sm_f32" = - ] && echo - || mib "$sm_f32") | $([ "$sm_f16" = - ] && echo - || mib "$sm_f16") | $sm_ratio |" \
        "$(key f16_tensors "$R/f16.json") / $(key f32_tensors "$R/f16.json") | $same |" >"$T/rows/$i"
    rm -rf "$R"
}
# shellcheck disable=SC2086
in_lanes row $SPECS
echo "Made by \`sh bench/f16_table.sh BUILD CACHE\` ($(date -u +%Y-%m-%d), $("$B/bench/hold_context" 0 2>/dev/null | head -1))."
echo "Error: max |out - ref| / max(1, max |ref|) over all outputs, against TensorFlow.js"
echo "(tfjs-backend-cpu) on the same seeded input; f16, inputs f32: with --f32-ops Placeholder;"
echo "tfjs-webgl f16: TensorFlow.js's WebGL backend with WEBGL_FORCE_F16_TEXTURES, the same"
echo "inputs and measure (bench/webgl/f16_error.js; Infinity: an output held inf or NaN)."
echo "Smallest: plan --smallest --within 2 (MiB). Halves / float32: the float activations"
echo "stored as halves and those kept float32 at f16. Bitwise: f16's outputs at 1.25x its"
echo "lower bound, against f16 with no budget."
echo
echo "| model | error f32 | error f16 | f16, inputs f32 | tfjs-webgl f16 | lower bound f32 MiB | f16 MiB | f16 / f32 | smallest f32 | f16 | f16 / f32 | halves / float32 | f16 bitwise at 1.25x LB |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
n=$(echo $SPECS | wc -w)
i=0
while [ $i -lt "$n" ]; do
    cat "$T/rows/$i"
    i=$((i + 1))
done
