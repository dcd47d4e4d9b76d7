#!/bin/sh
# streaminfer MODEL1 MODEL2 ... (issue 21): three models in one budget too
# small for their arenas together give, output for output, the bytes each
# gives run alone at that budget; the shared peak stays within the budget and
# arenas are given up; inputs by MODELNAME:INPUT=FILE; bad usage refused.
#   tests/kiosk_cli_test.sh STREAMINFER CACHE
set -u
SI=$1
C=$2
M=$C/human-models/models
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
n=0
ok() { echo "  ok   $*"; n=$((n + 1)); }
fail() { echo "  FAIL $*"; exit 1; }
V=2M
IN="$C/refs/emotion/input_input_1.npy"

"$SI" -q --vram $V --runs 3 --output "$T/pipe" --stats "$T/s.json" \
    --input "emotion:input_1=$IN" "$M/emotion.json" "$M/gender.json" "$M/liveness.json" ||
    fail "the pipeline did not run"
for m in emotion gender liveness; do
    extra=""
    [ $m = emotion ] && extra="--input input_1=$IN"
    # shellcheck disable=SC2086
    "$SI" -q --vram $V $extra --output "$T/alone-$m" "$M/$m.json" || fail "$m alone did not run"
    k=0
    for f in "$T/alone-$m"/*.npy; do
        cmp -s "$f" "$T/pipe/$m/$(basename "$f")" || fail "$m: $(basename "$f") differs from $m alone"
        k=$((k + 1))
    done
    [ $k -gt 0 ] || fail "$m wrote no outputs"
done
ok "3 models in one budget of $V: every output bitwise the model's alone"
node -e '
const s = require(process.argv[1]);
const num = (v) => Number(v);
if (!(num(s.peak_vram_bytes) > 0 && num(s.peak_vram_bytes) <= num(s.budget_bytes)))
  throw new Error("peak " + s.peak_vram_bytes + " outside budget " + s.budget_bytes);
if (!(num(s.arenas_released) > 0)) throw new Error("no arena given up: nothing competed");
if (s.models.length !== 3 || s.frames !== 3) throw new Error("models/frames: " + s.models.length + "/" + s.frames);
const sum = s.models.reduce((a, m) => a + num(m.bytes_uploaded), 0);
if (sum !== num(s.bytes_uploaded)) throw new Error("per-model uploads " + sum + " != shared " + s.bytes_uploaded);
' "$T/s.json" || fail "--stats figures"
ok "--stats: shared peak within the budget, arenas given up, per-model uploads add up"
out=$("$SI" --vram $V --runs 2 "$M/gender.json" "$M/liveness.json") || fail "printing run failed"
echo "$out" | grep -q "^output   gender/Identity" || fail "no gender output line: $out"
echo "$out" | grep -q "^model    liveness: lower bound" || fail "no per-model line: $out"
echo "$out" | grep -q "^memory   budget 2.00 MiB" || fail "no shared memory line: $out"
echo "$out" | grep -q "^traffic  uploaded .* a frame after the first" || fail "no traffic line: $out"
ok "prints outputs per model, per-model figures, shared memory and traffic"
"$SI" -q --input "x=$IN" "$M/gender.json" "$M/liveness.json" 2>"$T/err"
[ $? -eq 2 ] && grep -q "MODELNAME:INPUT=FILE" "$T/err" || fail "an --input without its model accepted"
"$SI" plan "$M/gender.json" "$M/liveness.json" 2>"$T/err"
[ $? -eq 2 ] && grep -q "plan takes one MODEL" "$T/err" || fail "plan of two models accepted"
"$SI" -q "$M/gender.json" "$T/none.json" 2>"$T/err"
[ $? -eq 3 ] && grep -q "none.json" "$T/err" || fail "a missing second model: $(cat "$T/err")"
ok "bad usage refused: --input without MODELNAME:, plan of two models, a missing model"
echo "kiosk_cli_test: all $n passed"
