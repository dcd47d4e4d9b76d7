#!/bin/sh
# A budget that a later GPU stage of a staged model cannot meet is refused,
# naming the stage and the smallest budget that works; at that budget the
# stages run on the GPU within it (issue 12, defect 8: handtrack at 1M used to
# run everything on the host interpreter and exit 0).
#   tests/stage_budget_test.sh STREAMINFER CACHE
set -u
SI=$1
C=$2
M=$C/human-models/models/handtrack.json
I="input_tensor=$C/refs/handtrack@input_tensor=1,320,320,3/input_input_tensor.npy"
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
fail() { echo "stage_budget_test: $*"; exit 1; }

"$SI" -q --vram 1M --input "$I" "$M" 2> "$T/err" && fail "1M accepted"
grep -q "GPU stage 2" "$T/err" || fail "refusal does not name the stage: $(cat "$T/err")"
need=$(sed -n 's/.*the smallest budget that could work is [0-9.]* [KMG]iB (\([0-9]*\) bytes).*/\1/p' "$T/err")
[ -n "$need" ] || fail "refusal names no smallest budget: $(cat "$T/err")"
"$SI" -q --vram "$need" --input "$I" --stats "$T/s.json" "$M" || fail "the named budget $need is refused"
node -e '
const s = require(process.argv[1]), need = +process.argv[2];
if (!(s.gpu_steps > 0)) throw new Error("no GPU steps: " + s.gpu_steps);
if (!(s.peak_vram_bytes > 0 && s.peak_vram_bytes <= need))
  throw new Error("peak " + s.peak_vram_bytes + " outside budget " + need);
' "$T/s.json" "$need" || fail "run at $need"
"$SI" plan --vram 1M --input "$I" "$M" > "$T/plan" || fail "plan failed"
grep -q "cannot be planned here" "$T/plan" || fail "plan does not say which stages it cannot plan"
# plan --smallest of a staged model: stage 1 alone takes any budget here, so
# the answer comes from runs (it printed "1 byte" when only plans were made):
# a run at the number it prints is accepted, one a byte below it refused
# (on a terminal where `script` makes one: its search shows progress, over 1 s here)
if command -v script >/dev/null 2>&1; then
    script -qec "'$SI' plan --smallest --input '$I' '$M' > '$T/sm'" "$T/tty" >/dev/null 2>&1 ||
        fail "plan --smallest: $(cat -v "$T/tty" | tail -c 300)"
    grep -q "streaminfer: plan --smallest: [0-9]* plans, [0-9]* runs" "$T/tty" ||
        fail "plan --smallest shows no progress on a terminal: $(cat -v "$T/tty" | head -c 300)"
else
    "$SI" plan --smallest --input "$I" "$M" > "$T/sm" 2> "$T/err" || fail "plan --smallest: $(cat "$T/err")"
fi
n=$(sed -n 's/^bytes \([0-9]*\)$/\1/p' "$T/sm")
[ -n "$n" ] && grep -q "runs on these inputs" "$T/sm" || fail "plan --smallest prints: $(cat "$T/sm")"
"$SI" -q --vram "$n" --input "$I" "$M" || fail "plan --smallest's $n bytes refused by a run"
"$SI" -q --vram $((n - 1)) --input "$I" "$M" 2> "$T/err" && fail "a run at $((n - 1)) bytes accepted"
grep -q "GPU stage" "$T/err" || fail "at $((n - 1)) bytes: $(cat "$T/err")"
echo "stage_budget_test: 1M refused naming stage 2; ran on the GPU at $need bytes; plan --smallest $n bytes (by runs)"
