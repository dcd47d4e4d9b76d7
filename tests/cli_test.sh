#!/bin/sh
# The command-line contract: help, errors, --input forms, --output naming,
# --stats keys and order, --seed.   tests/cli_test.sh STREAMINFER CACHE_DIR
set -u
SI=$1
CACHE=$2
M=$CACHE/human-models/models
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "  ok   $1"; }
bad() { echo "  FAIL $1"; fails=$((fails + 1)); }

"$SI" --help >"$T/help" 2>&1 && grep -q -- "--vram" "$T/help" && grep -q -- "--stats" "$T/help" &&
    ok "--help exits 0 and documents the options" || bad "--help"
"$SI" -h >/dev/null 2>&1 && ok "-h exits 0" || bad "-h"
# the README's command-line block is --help, and the man page has every option of it
TOP=$(cd "$(dirname "$0")/.." && pwd)
sed -n '/^## Command line/,/^## Library/p' "$TOP/README.md" | sed -n '/^```$/,/^```$/p' | sed '1d;$d' >"$T/readme"
cmp -s "$T/help" "$T/readme" && ok "README's command-line block is --help" ||
    bad "README's command-line block differs from --help: $(diff "$T/help" "$T/readme" | head -5)"
sed 's/\\//g' "$TOP/docs/streaminfer.1" >"$T/man"
for o in $(grep '^  -' "$T/help" | grep -o -- '--*[a-zA-Z][a-z-]*') "streaminfer plan" "streaminfer info"; do
    grep -qF -- "$o" "$T/man" || bad "the man page lacks $o"
done

expect_fail() { # description, expected text on stderr, args...
    d=$1; want=$2; shift 2
    if "$SI" "$@" >"$T/out" 2>"$T/err"; then bad "$d: exit 0"; return; fi
    n=$(wc -l <"$T/err")
    if [ "$n" -ne 1 ]; then bad "$d: $n lines on stderr"; cat "$T/err"; return; fi
    grep -q -- "$want" "$T/err" && ok "$d" || { bad "$d: '$(cat "$T/err")' lacks '$want'"; }
}
expect_fail "no model" "no MODEL" 
expect_fail "unknown option" "--frob" --frob "$M/emotion.json"
expect_fail "bad --vram" "--vram" --vram 12X "$M/emotion.json"
expect_fail "missing model" "/nonexistent" /nonexistent/model.json
expect_fail "missing input file" "nope.npy" --input "$T/nope.npy" "$M/emotion.json"
expect_fail "too small a budget" "budget" --vram 1000 "$M/emotion.json"
expect_fail "bad --host-mem" "--host-mem" --host-mem 12X "$M/emotion.json"
expect_fail "bad --loop-nodes" "--loop-nodes" --loop-nodes sometimes "$M/emotion.json"
expect_fail "--spill-dir not a folder" "--spill-dir" --spill-dir "$T/nope" "$M/emotion.json"
expect_fail "too small a host budget" "smallest host budget that works is" --host-mem 1000 "$M/emotion.json"
expect_fail "bad --io" "--io" --io floppy "$M/emotion.json"

# --output names, --stats keys, output order, seeded input = the oracle's input
if "$SI" -q --output "$T/o" --stats "$T/s.json" "$M/blazeface.json"; then
    for f in Identity_3 Identity Identity_1 Identity_2; do
        [ -f "$T/o/$f.npy" ] || bad "--output: $f.npy missing"
    done
    node -e '
      const s = JSON.parse(require("fs").readFileSync(process.argv[1]));
      for (const k of ["budget_bytes","peak_vram_bytes","lower_bound_bytes","weights_bytes",
                       "bytes_uploaded","bytes_downloaded","wall_ms","outputs"])
        if (!(k in s)) { console.error("missing key " + k); process.exit(1); }
      const names = s.outputs.map(o => o.name).join(",");
      if (names !== "Identity_3,Identity,Identity_1,Identity_2") { console.error(names); process.exit(1); }
      for (const o of s.outputs) if (!o.file || !o.shape || !o.dtype) process.exit(1);
      if (!(s.peak_vram_bytes > 0 && s.weights_bytes > 0)) process.exit(1);
    ' "$T/s.json" && ok "--stats has the contract's keys, outputs in model order" || bad "--stats"
    [ "$(ls "$T/o"/*.npy | wc -l)" -eq 4 ] && ok "--output wrote one .npy per output" ||
        bad "--output: not one .npy per output"
else
    bad "blazeface run"
fi
# sanitized names
if "$SI" -q --output "$T/p" "$M/posenet.json"; then
    [ -f "$T/p/MobilenetV1_heatmap_2_BiasAdd.npy" ] && ok "output names sanitized" || bad "sanitized names"
else
    bad "posenet run"
fi
# --input FILE and NAME=FILE give the same as the seeded input (same PRNG as the oracle)
R=$CACHE/refs/emotion
if "$SI" -q --output "$T/a" "$M/emotion.json" &&
   "$SI" -q --output "$T/b" --input "$R/input_input_1.npy" "$M/emotion.json" &&
   "$SI" -q --output "$T/c" --input "input_1=$R/input_input_1.npy" "$M/emotion.json" &&
   cmp -s "$T/a/Identity.npy" "$T/b/Identity.npy" && cmp -s "$T/a/Identity.npy" "$T/c/Identity.npy"; then
    ok "--input FILE, --input NAME=FILE and --seed 1 agree"
else
    bad "--input forms"
fi
"$SI" -q --seed 2 --output "$T/d" "$M/emotion.json" && ! cmp -s "$T/a/Identity.npy" "$T/d/Identity.npy" &&
    ok "--seed changes the input" || bad "--seed"
expect_fail "wrong input name" "nope" --input "nope=$R/input_input_1.npy" "$M/emotion.json"
# an image input, resized to the model's size
node -e '
  // a 5x7 RGB PPM is not supported by stb? it is (stb_image reads PNM). Write one.
  const w = 7, h = 5, px = Buffer.alloc(w * h * 3);
  for (let i = 0; i < px.length; i++) px[i] = (i * 37) & 255;
  require("fs").writeFileSync(process.argv[1], Buffer.concat([Buffer.from(`P6\n${w} ${h}\n255\n`), px]));
' "$T/img.ppm"
"$SI" -q --input "$T/img.ppm" "$M/liveness.json" && ok "image input resized" || bad "image input"
"$SI" -q --io uring --output "$T/u" "$M/emotion.json" && cmp -s "$T/a/Identity.npy" "$T/u/Identity.npy" &&
    ok "--io uring gives the same outputs" || bad "--io uring"
# plan --smallest: the budget N it prints is accepted by plan --vram N and N-1
# is refused (exit 4); with --within 5, iris's search stops early. The budget a
# refusal at 1 byte names (info's smallest budget, the search's first guess) is
# within 5% above N: the tiling ladder from the top, not every step split at
# the floor at once (which named 4.2x emotion's N and 8.6x iris's)
for name in emotion gender iris; do
    if ! "$SI" plan --smallest "$M/$name.json" >"$T/sm" 2>"$T/err"; then
        bad "plan --smallest $name: $(head -c 300 "$T/err")"; continue
    fi
    n=$(sed -n 's/^bytes \([0-9][0-9]*\)$/\1/p' "$T/sm")
    "$SI" plan --vram 1 --no-plan-cache "$M/$name.json" >/dev/null 2>"$T/err1"
    one=$(sed -n 's/.*the smallest budget that could work is [^(]*(\([0-9]*\) bytes).*/\1/p' "$T/err1")
    [ -n "$one" ] && [ -n "$n" ] && [ $((one * 20)) -le $((n * 21)) ] && ok "plan --vram 1 $name names $one bytes (smallest $n)" ||
        bad "plan --vram 1 $name names ${one:-none} bytes, over 5% above the smallest $n"
    [ "$name" = gender ] && ngender=$n
    grep -q "^smallest accepted budget .*($n bytes)" "$T/sm" || { bad "plan --smallest $name prints: $(cat "$T/sm")"; continue; }
    "$SI" plan --vram "$n" "$M/$name.json" >/dev/null 2>&1 && ok "plan --smallest $name: $n bytes accepted" ||
        bad "plan --smallest $name: --vram $n refused"
    "$SI" plan --vram $((n - 1)) "$M/$name.json" >/dev/null 2>&1
    [ $? -eq 4 ] && ok "plan --smallest $name: $((n - 1)) bytes refused" || bad "plan --smallest $name: --vram $((n - 1)) not refused"
    # --within 5: it prints an accepted budget W and a refused R, at most 5% of W apart, W
    # not below the exact N, and more than 1 byte apart (it stopped early: iris bisects)
    [ "$name" = iris ] || continue
    if ! "$SI" plan --smallest --within 5 "$M/$name.json" >"$T/sw" 2>"$T/err"; then
        bad "plan --smallest --within 5 $name: $(head -c 300 "$T/err")"; continue
    fi
    w=$(sed -n 's/^bytes \([0-9][0-9]*\)$/\1/p' "$T/sw")
    r=$(sed -n 's/^smallest accepted budget .*(refused at \([0-9]*\) bytes, within 5%;.*/\1/p' "$T/sw")
    "$SI" plan --vram "$r" "$M/$name.json" >/dev/null 2>&1
    rr=$?
    if [ -n "$w" ] && [ -n "$r" ] && [ "$w" -ge "$n" ] && [ $((w - r)) -gt 1 ] && [ $(((w - r) * 100)) -le $((w * 5)) ] &&
        "$SI" plan --vram "$w" "$M/$name.json" >/dev/null 2>&1 && [ "$rr" -eq 4 ]; then
        ok "plan --smallest --within 5 $name: $w accepted, $r refused (exact: $n)"
    else
        bad "plan --smallest --within 5 $name: $(cat "$T/sw") (exact: $n)"
    fi
done
# rvm at 288x512: two nodes of one size bind the ladder's 4 and 2 MiB parts in turn,
# and a finer limit's 2,380,800-byte step is accepted: the budget the refusal at
# 1 byte names (N) stays within 5% of an accepted budget W that --within 2 finds
# (the ladder that stopped where the largest step kept its size named 11.5% above)
R=$CACHE/refs/rvm@src=1,288,512,3@r1i=@r2i=@r3i=@r4i=@downsample_ratio=
if [ -f "$R/input_src.npy" ]; then
    set -- --input "src=$R/input_src.npy" --input "r1i=$R/input_r1i.npy" --input "r2i=$R/input_r2i.npy" \
        --input "r3i=$R/input_r3i.npy" --input "r4i=$R/input_r4i.npy" \
        --input "downsample_ratio=$R/input_downsample_ratio.npy" "$M/rvm.json"
    "$SI" plan --vram 1 --no-plan-cache "$@" >/dev/null 2>"$T/err1"
    one=$(sed -n 's/.*the smallest budget that could work is [^(]*(\([0-9]*\) bytes).*/\1/p' "$T/err1")
    "$SI" plan --smallest --within 2 --no-plan-cache "$@" >"$T/sw" 2>"$T/err"
    w=$(sed -n 's/^bytes \([0-9][0-9]*\)$/\1/p' "$T/sw")
    [ -n "$one" ] && [ -n "$w" ] && [ $((one * 20)) -le $((w * 21)) ] && ok "plan --vram 1 rvm@288x512 names $one bytes ($w accepted)" ||
        bad "plan --vram 1 rvm@288x512 names ${one:-none} bytes, over 5% above an accepted ${w:-none}: $(cat "$T/err")"
fi
# --within where the budget a refusal names is the answer (gender's exact one above): one
# plan just as far below it as a refusal ends the search, so three plans in all (1 byte,
# the named budget, the one below), where bisecting from 1 byte took eight
if "$SI" plan --smallest --within 2 "$M/gender.json" >"$T/sw" 2>"$T/err" &&
    grep -q "^smallest accepted budget .*(${ngender:-none} bytes) (refused at [0-9]* bytes, within 2%; 3 plans made" "$T/sw"; then
    ok "plan --smallest --within 2 gender: the named budget, 3 plans"
else
    bad "plan --smallest --within 2 gender: $(cat "$T/sw" "$T/err")"
fi
expect_fail "--within outside plan --smallest" "--within is for plan --smallest" plan --within 5 "$M/emotion.json"
expect_fail "--within 100" "not a percentage" plan --smallest --within 100 "$M/emotion.json"
expect_fail "--smallest outside plan" "--smallest is for plan" --smallest "$M/emotion.json"
expect_fail "plan --smallest with --vram" "takes no --vram" plan --smallest --vram 1M "$M/emotion.json"
[ "$fails" -eq 0 ]
