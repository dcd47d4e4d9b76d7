#!/bin/sh
# Command-line parsing and exit codes (issue 23): getopt_long forms, strict
# numbers, --stats -, plan's refusals, output paths made or checked before any
# work, one exit code per kind of failure as --help and the man page say.
#   tests/cli_args_test.sh STREAMINFER CACHE_DIR
set -u
SI=$1
CACHE=$2
M=$CACHE/human-models/models/emotion.json
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "  ok   $1"; }
bad() { echo "  FAIL $1"; fails=$((fails + 1)); }
code() { # description, expected exit code, expected text on stderr, args...
    d=$1; want=$2; text=$3; shift 3
    "$SI" "$@" >"$T/out" 2>"$T/err"
    rc=$?
    if [ "$rc" -ne "$want" ]; then bad "$d: exit $rc, expected $want ($(head -c 300 "$T/err"))"; return; fi
    if [ -n "$text" ] && ! grep -q -- "$text" "$T/err"; then bad "$d: stderr lacks '$text': $(cat "$T/err")"; return; fi
    if [ "$want" -ne 0 ] && [ "$(wc -l <"$T/err")" -ne 1 ]; then bad "$d: not one line on stderr"; return; fi
    ok "$d"
}
code "--vram=SIZE form" 0 "" -q --vram=64M "$M"
code "-- ends the options" 0 "" -q -- "$M"
code "options after MODEL" 0 "" "$M" -q --runs 2
code "combined short flags (-qV)" 0 "" -qV
grep -q '^streaminfer [0-9]*\.[0-9]*\.[0-9]*$' "$T/out" && ok "-qV prints the version" || bad "-qV output: $(cat "$T/out")"
code "--runs 3x refused" 2 "--runs" --runs 3x "$M"
code "--runs 0 refused" 2 "--runs" --runs 0 "$M"
code "--host-mem 0 refused" 2 "--host-mem" --host-mem 0 "$M"
code "--spill-dir missing folder refused" 2 "--spill-dir" --spill-dir /nonexistent "$M"
code "a host budget no plan fits: exit 4" 4 "smallest host budget" -q --host-mem 1K "$M"
code "--host-mem=SIZE with --spill-dir=DIR" 0 "" -q --host-mem=64M --spill-dir=/tmp "$M"
code "--seed -5 refused" 2 "--seed" --seed -5 "$M"
code "--seed 4294967296 refused" 2 "--seed" --seed 4294967296 "$M"
code "unknown option: usage" 2 "--frob" --frob "$M"
code "missing value: usage" 2 "--vram" "$M" --vram
code "plan of two models: usage (a run of several is a pipeline)" 2 "one MODEL" plan "$M" "$M"
code "plan refuses --stats" 2 "--stats" plan --stats "$T/p.json" "$M"
code "plan refuses --output" 2 "--output" plan --output "$T/po" "$M"
code "missing model: model error" 3 "/nonexistent" /nonexistent/model.json
code "budget infeasible" 4 "budget" --vram 1000 "$M"
__EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent.json code "no GPU: GPU error" 5 "EGL" --backend gpu "$M"
code "unwritable --stats, before any work" 1 "--stats" --stats /nonexistent/dir/s.json "$M"
[ ! -e "$T/never" ] || bad "unexpected"
code "--output made like mkdir -p" 0 "" -q --output "$T/a/b/c" "$M"
[ -f "$T/a/b/c/Identity.npy" ] && ok "--output nested folder holds the output" || bad "--output a/b/c"
code "--output over a file" 1 "--output" --output "$M" "$M"
"$SI" -q --stats - "$M" > "$T/s.json" 2>"$T/err" &&
    node -e 'const s = JSON.parse(require("fs").readFileSync(process.argv[1]));
             if (!(s.peak_vram_bytes > 0)) process.exit(1)' "$T/s.json" &&
    ok "--stats - writes JSON to stdout" || bad "--stats -: $(head -c 200 "$T/s.json")"
# inputs (issue 23): .npy of other dtypes converted as tf.cast does, images of
# 1, 3 or 4 channels, --resize and how an image was fitted
node -e '
const fs = require("fs");
function npy(file, descr, shape, bytes) {
    let h = `{"descr": "${descr}", "fortran_order": False, "shape": (${shape.join(", ")},), }`.replace(/"/g, "\x27");
    h += " ".repeat(63 - (10 + h.length) % 64) + "\n";
    const pre = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, h.length & 255, h.length >> 8]);
    fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(h), bytes]));
}
const n = 64 * 64, f32 = new Float32Array(n), f64 = new Float64Array(n), u8 = new Uint8Array(n);
for (let i = 0; i < n; i++) { u8[i] = (i * 37) % 256; f32[i] = u8[i] / 7; f64[i] = u8[i] / 7; }
const d = process.argv[1];
npy(d + "/f64.npy", "<f8", [1, 64, 64, 1], Buffer.from(f64.buffer));
npy(d + "/f32.npy", "<f4", [1, 64, 64, 1], Buffer.from(Float32Array.from(f64).buffer));
npy(d + "/u8.npy", "|u1", [1, 64, 64, 1], Buffer.from(u8.buffer));
npy(d + "/u8f.npy", "<f4", [1, 64, 64, 1], Buffer.from(Float32Array.from(u8).buffer));
// a 48x32 gray (PGM) and RGB (PPM) picture with R = G = B
let pgm = Buffer.alloc(48 * 32), ppm = Buffer.alloc(48 * 32 * 3);
for (let i = 0; i < 48 * 32; i++) { pgm[i] = (i * 11) % 251; ppm.fill(pgm[i], 3 * i, 3 * i + 3); }
fs.writeFileSync(d + "/g.pgm", Buffer.concat([Buffer.from("P5\n48 32\n255\n"), pgm]));
fs.writeFileSync(d + "/c.ppm", Buffer.concat([Buffer.from("P6\n48 32\n255\n"), ppm]));
' "$T"
"$SI" -q --output "$T/f64" --input "$T/f64.npy" "$M" && "$SI" -q --output "$T/f32" --input "$T/f32.npy" "$M" &&
    cmp -s "$T/f64/Identity.npy" "$T/f32/Identity.npy" && ok "a float64 .npy is the float32 one, rounded as tf.cast" ||
    bad "float64 .npy input"
"$SI" -q --output "$T/u8" --input "$T/u8.npy" "$M" && "$SI" -q --output "$T/u8f" --input "$T/u8f.npy" "$M" &&
    cmp -s "$T/u8/Identity.npy" "$T/u8f/Identity.npy" && ok "a uint8 .npy into a float input: its values" ||
    bad "uint8 .npy input"
"$SI" --output "$T/g" --input "$T/g.pgm" "$M" >"$T/g.txt" 2>&1 && grep -q "gray" "$T/g.txt" &&
    ok "a gray image into emotion's 1-channel input, fitting said on stdout" || bad "gray image: $(head -c 300 "$T/g.txt")"
"$SI" --output "$T/c" --input "$T/c.ppm" "$M" >"$T/c.txt" 2>&1 && grep -q "RGB" "$T/c.txt" &&
    ok "an RGB image into a 1-channel input is converted" || bad "RGB image into gray: $(head -c 300 "$T/c.txt")"
for r in fit crop; do
    "$SI" --resize "$r" --output "$T/$r" --input "$T/g.pgm" "$M" >"$T/$r.txt" 2>&1 && grep -q "$r" "$T/$r.txt" &&
        ! cmp -s "$T/g/Identity.npy" "$T/$r/Identity.npy" && ok "--resize $r: said, and not the stretched answer" ||
        bad "--resize $r: $(head -c 300 "$T/$r.txt")"
done
code "--resize wobble refused" 2 "--resize" --resize wobble "$M"
# the debug options that si_options holds as fields: parsed and checked (issue 23)
code "--no-stages --driver-reserve --plan-prefetch --plan-debug accepted" 0 "" -q --no-stages \
    --driver-reserve --plan-prefetch --plan-debug "$M"
code "--check-steps 1e-3 accepted" 0 "" -q --check-steps 1e-3 "$M"
code "--plan-prefetch=3 accepted" 0 "" -q --plan-prefetch=3 "$M"
code "--plan-prefetch=x refused" 2 "--plan-prefetch" --plan-prefetch=x "$M"
code "--plan-prefetch=65 refused" 2 "--plan-prefetch" --plan-prefetch=65 "$M"
code "--plan-prefetch 3 (no '=') refused, not taken for a model" 2 "--plan-prefetch=3" --plan-prefetch 3 "$M"
code "--check-steps abc refused" 2 "--check-steps" --check-steps abc "$M"
code "--check-steps 0 refused" 2 "--check-steps" --check-steps 0 "$M"
code "--check-steps -1 refused" 2 "--check-steps" --check-steps -1 "$M"
code "--no-stages takes no value" 2 "--no-stages" --no-stages=1 "$M"
# --runs N: a warm-up, then min / median / p90 / max on stdout and in --stats
code "--runs 3" 0 "" --runs 3 --stats "$T/r.json" "$M"
grep -q '^runs     2 timed after 1 warm-up run: min [0-9.]* ms, median [0-9.]* ms, p90 [0-9.]* ms, max [0-9.]* ms$' "$T/out" &&
    ok "--runs 3 prints the run times of 2 timed runs" || bad "--runs 3 stdout: $(cat "$T/out")"
node -e 'const s = JSON.parse(require("fs").readFileSync(process.argv[1]));
         if (!(s.runs === 3 && s.timed_runs === 2 && s.run_ms_min > 0 && s.run_ms_min <= s.run_ms_median &&
               s.run_ms_median <= s.run_ms_p90 && s.run_ms_p90 <= s.run_ms_max)) process.exit(1)' "$T/r.json" &&
    ok "--stats has runs, timed_runs and run_ms_min <= median <= p90 <= max" || bad "--runs stats: $(cat "$T/r.json")"
# first_run_ms: the first run's time (the warm-up's with --runs 3, the run's with one)
code "--runs 1 --stats" 0 "" --stats "$T/r1.json" "$M"
node -e 'const [a, b] = process.argv.slice(1).map((f) => JSON.parse(require("fs").readFileSync(f)));
         if (!(a.first_run_ms > 0 && b.runs === 1 && b.first_run_ms === b.run_ms)) process.exit(1)' "$T/r.json" "$T/r1.json" &&
    ok "--stats has first_run_ms (= run_ms with one run)" || bad "first_run_ms: $(grep first_run "$T/r.json" "$T/r1.json")"
# --stats keeps the "key": number lines that tests/ and bench/ read with sed
for k in peak_vram_bytes lower_bound_bytes wall_ms run_ms max_dispatch_elements; do
    grep -q "^  \"$k\": [0-9.]*,$" "$T/r.json" || bad "--stats: no '\"$k\": number' line"
done
# --trace is JSON (cJSON) a viewer can read
code "--trace" 0 "" -q --trace "$T/t.json" "$M"
node -e 'const t = JSON.parse(require("fs").readFileSync(process.argv[1])).traceEvents;
         if (!t.some(e => e.ph === "X" && e.tid === 1 && e.dur >= 0) || !t.some(e => e.ph === "C")) process.exit(1)' \
    "$T/t.json" && ok "--trace writes Chrome trace JSON" || bad "--trace: $(head -c 300 "$T/t.json")"
# where the GPU has timer queries (llvmpipe has: there the tracks must be
# there), each step's dispatch is on the "GPU kernels" track in GPU time, in
# order, each conv with its flops; a traced run (which then waits for nothing)
# gives the untraced run's bits
gpu_tracks=0
node -e 'const t = JSON.parse(require("fs").readFileSync(process.argv[1])).traceEvents;
        process.exit(t.some(e => e.ph === "M" && e.args.name === "GPU kernels") ? 0 : 1)' "$T/t.json" && gpu_tracks=1
if [ "$gpu_tracks" = 0 ] && "$SI" info "$M" 2>/dev/null | grep -q "^gpu .*llvmpipe"; then
    bad "--trace on llvmpipe: no GPU tracks"
fi
if [ "$gpu_tracks" = 1 ]; then
    code "--trace --output" 0 "" -q --trace "$T/t2.json" --output "$T/traced" "$M"
    code "--output" 0 "" -q --output "$T/untraced" "$M"
    node -e 'const t = JSON.parse(require("fs").readFileSync(process.argv[1])).traceEvents;
        const x = (tid) => t.filter(e => e.ph === "X" && e.tid === tid);
        const k = x(4), c = x(1), copies = x(5);
        const fail = (m) => { console.error(m); process.exit(1); };
        if (k.length !== c.length) fail("kernels " + k.length + " steps " + c.length);
        k.forEach((e, i) => { if (e.name !== c[i].name) fail("kernel " + i + " " + e.name + " step " + c[i].name);
            if (!(e.dur >= 0) || (i && e.ts < k[i - 1].ts)) fail("kernel " + i + " at " + e.ts + " for " + e.dur); });
        if (!k.some(e => e.name === "conv2d" && e.args.flops > 0)) fail("no conv2d with flops");
        if (!copies.some(e => e.name === "upload") || !copies.every(e => e.dur >= 0)) fail("copies");' "$T/t2.json" &&
        diff -r "$T/traced" "$T/untraced" >/dev/null &&
        ok "--trace: GPU kernels and copies in GPU time, one a step, the same bits" ||
        bad "--trace GPU tracks: $(head -c 300 "$T/t2.json")"
fi
# --backend host prints no GPU figures; sizes read MiB with the bytes beside them
code "--backend host" 0 "" --backend host "$M"
! grep -q "peak GPU\|limits \|paging \|GPU steps" "$T/out" && grep -q "[KMG]iB ([0-9]* bytes)" "$T/out" &&
    ok "--backend host: no GPU figures, sizes in MiB (bytes)" || bad "--backend host output: $(cat "$T/out")"
code "--backend gpu prints GPU figures" 0 "" "$M"
grep -q "peak GPU [0-9.]* MiB ([0-9]* bytes)" "$T/out" && ok "GPU figures in MiB (bytes)" || bad "gpu output: $(cat "$T/out")"
# info: the model described; JSON; a bad model exits 3 with one line
code "info" 0 "" info "$M"
grep -q "^input     input_1 float32 \[-1,64,64,1\]$" "$T/out" && grep -q "^output    Identity float32 \[1,7\]$" "$T/out" &&
    grep -q "^ops       45 nodes, .*_FusedConv2D 9" "$T/out" && grep -q "^weights   23 tensors, .*820516 bytes" "$T/out" &&
    grep -q "^control   loops no, switch no" "$T/out" && grep -q "^gpu  " "$T/out" &&
    ok "info: inputs, outputs, ops, weights, control flow, GPU" || bad "info output: $(cat "$T/out")"
code "info --json" 0 "" info --json "$M"
need=$(node -e 'const s = JSON.parse(require("fs").readFileSync(process.argv[1]));
    if (s.inputs[0].shape[0] !== -1 || s.ops._FusedConv2D !== 9 || s.weights.count !== 23 ||
        s.weights.stored_dtypes.float32 !== 22 || s.control_flow.loops !== false || !(s.lower_bound_bytes > 0) ||
        !(s.smallest_budget_bytes > 0 && s.smallest_budget_bytes <= s.lower_bound_bytes) ||
        !(s.gpu.max_buffer_bytes > 0) || !s.gpu.renderer) process.exit(1);
    console.log(s.smallest_budget_bytes)' "$T/out") && ok "info --json has the same figures" ||
    bad "info --json: $(head -c 400 "$T/out")"
[ -n "$need" ] && code "the smallest budget info names runs" 0 "" -q --vram "$need" "$M"
L=$CACHE/human-models/models/faceboxes.json
if [ -f "$L" ]; then
    code "info of a model with loops" 0 "" info --json "$L"
    node -e 'const s = JSON.parse(require("fs").readFileSync(process.argv[1]));
             if (s.control_flow.loops !== true) process.exit(1)' "$T/out" && ok "info names loops" ||
        bad "info on a looping model: $(head -c 300 "$T/out")"
fi
code "info of a missing model: model error" 3 "/nonexistent" info /nonexistent/model.json
code "info refuses --stats" 2 "--stats" info --stats "$T/i.json" "$M"
code "--json is info's" 2 "--json" --json "$M"
# progress: on a terminal a line redrawn with \r; not a word when stderr is not one
code "no progress when stderr is not a terminal" 0 "" --runs 4 "$M"
[ ! -s "$T/err" ] && ok "stderr empty off a terminal" || bad "progress off a terminal: $(cat -v "$T/err")"
if command -v script >/dev/null 2>&1; then
    # progress shows once the work has lasted a second: enough runs to last three,
    # from what one run takes here (a fixed count went under a second as kernels
    # got faster)
    "$SI" -q --runs 2 --stats "$T/pace.json" "$M" >/dev/null 2>&1
    ms=$(sed -n 's/.*"run_ms_median": \([0-9]*\).*/\1/p' "$T/pace.json")
    runs=$((3000 / (${ms:-0} + 1) + 4))
    script -qec "'$SI' --runs $runs '$M' >/dev/null" "$T/tty" >/dev/null 2>&1
    grep -q "streaminfer: run [0-9]* of $runs: step [0-9]* of [0-9]*" "$T/tty" && ok "progress on a terminal ($runs runs)" ||
        bad "no progress on a terminal: $(cat -v "$T/tty" | head -c 300)"
    script -qec "'$SI' -q --runs 4 '$M'" "$T/tty" >/dev/null 2>&1
    ! grep -q "step" "$T/tty" && ok "-q: no progress on a terminal" || bad "-q shows progress"
fi
"$SI" --help > "$T/help"
for w in "Exit status" "2 bad usage" "3 the model" "4 no plan fits" "5 the GPU" "streaminfer plan" \
         "streaminfer info" --no-stages --driver-reserve "--check-steps TOL" --plan-prefetch --plan-debug \
         run_ms_median --json "--resize MODE"; do
    grep -q -- "$w" "$T/help" || bad "--help does not document '$w'"
done
[ "$fails" -eq 0 ]
