#!/bin/sh
# The plan cache from the command line (issue 18): a first run plans and
# stores an entry, the next takes it (plan_from_cache in --stats) and gives
# bitwise the outputs of a run that planned; an entry cut short or with a
# byte flipped is planned again and replaced; another budget or a changed
# model is another key; a cache folder that cannot be written costs nothing
# but the saving; `plan` stores what a later run takes. Forged entries with a
# right checksum are refused by pg_plan_read (tests/test_planner.c).
# Compiled GPU programs are kept in the same folder (KEY.prog, the driver's
# glProgramBinary): a second start takes every one from there and compiles
# none; an entry cut short or with a byte flipped is compiled again and
# replaced; outputs bitwise the same throughout. plan --smallest's tens of
# probes store nothing.
#   tests/plancache_test.sh STREAMINFER CACHE_DIR
set -u
SI=$1
C=$2
M=$C/human-models/models/emotion.json
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { echo "  ok   $*"; pass=$((pass + 1)); }
bad() { echo "  FAIL $*"; fail=$((fail + 1)); }
hit() { sed -n 's/.*"plan_from_cache": *\([0-9]*\).*/\1/p' "$T/$1.json"; }
run() { # NAME [options...]: emotion at 600K, outputs into $T/NAME, stats into $T/NAME.json
    n=$1
    shift
    "$SI" -q --vram 600K --output "$T/$n" --stats "$T/$n.json" "$@" "${MODEL:-$M}"
}
same() { # NAME: every output bitwise the reference's
    for f in "$T"/ref/*.npy; do cmp -s "$f" "$T/$1/$(basename "$f")" || return 1; done
}
entries() { ls "$1" 2>/dev/null | grep -c '\.plan$'; }

run ref --no-plan-cache || bad "the reference run failed"
run first --plan-cache "$T/pc" && [ "$(hit first)" = 0 ] && [ "$(entries "$T/pc")" = 1 ] &&
    ok "a first run plans and stores one entry" || bad "first run: hit $(hit first), $(entries "$T/pc") entries"
run second --plan-cache "$T/pc" && [ "$(hit second)" = 1 ] && same second &&
    ok "the next run takes the plan from the cache, outputs bitwise a planned run's" ||
    bad "second run: hit $(hit second)"
E=$(ls "$T"/pc/*.plan)
size=$(wc -c <"$E")
head -c $((size / 2)) "$E" >"$T/half" && cp "$T/half" "$E"
run cut --plan-cache "$T/pc" && [ "$(hit cut)" = 0 ] && same cut &&
    run cut2 --plan-cache "$T/pc" && [ "$(hit cut2)" = 1 ] &&
    ok "an entry cut short is planned again and replaced" || bad "cut entry: hit $(hit cut), then $(hit cut2)"
printf '\377' | dd of="$E" bs=1 seek=$((size - 9)) conv=notrunc 2>/dev/null
run flip --plan-cache "$T/pc" && [ "$(hit flip)" = 0 ] && same flip &&
    run flip2 --plan-cache "$T/pc" && [ "$(hit flip2)" = 1 ] &&
    ok "an entry with a byte changed is planned again and replaced" || bad "flipped entry: hit $(hit flip), then $(hit flip2)"
"$SI" -q --vram 700K --plan-cache "$T/pc" --stats "$T/other.json" "$M" && [ "$(hit other)" = 0 ] &&
    [ "$(entries "$T/pc")" = 2 ] && ok "another budget is another key" || bad "another budget: hit $(hit other)"
mkdir -p "$T/m" && cp "$M" "${M%.json}.bin" "$T/m/"
bin=$T/m/$(basename "${M%.json}.bin")
printf '\001' | dd of="$bin" bs=1 seek=$(($(wc -c <"$bin") - 3)) conv=notrunc 2>/dev/null
MODEL=$T/m/$(basename "$M") run changed --plan-cache "$T/pc" && [ "$(hit changed)" = 0 ] &&
    ok "a model whose shard changed is another key" || bad "changed model: hit $(hit changed)"
: >"$T/afile"
run nowrite --plan-cache "$T/afile/pc" && [ "$(hit nowrite)" = 0 ] && same nowrite &&
    ok "a cache folder that cannot be made: the run plans and succeeds" || bad "unwritable cache folder"
"$SI" plan -q --vram 600K --plan-cache "$T/image" "$M" >/dev/null && [ "$(entries "$T/image")" = 1 ] &&
    run fromplan --plan-cache "$T/image" && [ "$(hit fromplan)" = 1 ] && same fromplan &&
    ok "plan stores the plan a later run takes" || bad "plan then run: hit $(hit fromplan)"
"$SI" plan --smallest --plan-cache "$T/probes" "$M" >"$T/smallest" && grep -q '^bytes [0-9]' "$T/smallest" &&
    [ "$(ls "$T/probes" 2>/dev/null | wc -l)" = 0 ] &&
    ok "plan --smallest stores nothing (its probes are budgets nobody asked for)" ||
    bad "plan --smallest left $(ls "$T/probes" 2>/dev/null | wc -l) entries"
stat() { sed -n "s/.*\"$2\": *\([0-9]*\).*/\1/p" "$T/$1.json"; }
progs() { ls "$1" 2>/dev/null | grep -c '\.prog$'; }
run p1 --plan-cache "$T/pp" && np=$(stat p1 programs_compiled) && [ "$np" -gt 0 ] &&
    tot=$((np + $(stat p1 programs_from_cache))) && [ "$(progs "$T/pp")" = "$np" ] &&
    run p2 --plan-cache "$T/pp" && [ "$(stat p2 programs_from_cache)" = "$tot" ] &&
    [ "$(stat p2 programs_compiled)" = 0 ] && same p2 &&
    ok "compiled programs stored (one entry a program compiled, $np) and all $tot taken by the next start, none compiled, outputs bitwise" ||
    bad "programs: compiled ${np:-?}, $(progs "$T/pp") entries, then from cache $(stat p2 programs_from_cache), compiled $(stat p2 programs_compiled)"
set -- "$T"/pp/*.prog
if [ $# -ge 2 ]; then
    head -c 100 "$1" >"$T/cutp" && cp "$T/cutp" "$1"
    sz=$(wc -c <"$2")
    printf '\125' | dd of="$2" bs=1 seek=$((sz / 2)) conv=notrunc 2>/dev/null
    run p3 --plan-cache "$T/pp" && [ "$(stat p3 programs_compiled)" = 2 ] &&
        [ "$(stat p3 programs_from_cache)" = $((tot - 2)) ] && same p3 &&
        run p4 --plan-cache "$T/pp" && [ "$(stat p4 programs_from_cache)" = "$tot" ] &&
        ok "a program entry cut short and one with a byte changed: compiled again and replaced, outputs bitwise" ||
        bad "damaged programs: compiled $(stat p3 programs_compiled) from cache $(stat p3 programs_from_cache), then $(stat p4 programs_from_cache)"
else
    bad "fewer than two programs stored"
fi
# A plan whose steps were split within limits of their own per node (some nodes'
# steps finer than the rest): the entry keeps the limits, the next start takes it and
# runs bitwise; a byte of the limits changed is planned again. The budget: the first of
# a few just above facemesh-detection-full's smallest where the plan has such limits
# (174,819 bytes in session 43; blazeface at its smallest had them until a model
# input's windows became inputs of their own, 27f3a64: its input's steps no longer bind).
BF=$C/human-models/models/facemesh-detection-full.json
S=$("$SI" plan --smallest --no-plan-cache "$BF" 2>/dev/null | sed -n 's/^bytes //p')
B=""
for f in 100 101 102 103 104 106 108 110 115 120; do
    [ -n "$S" ] || break
    v=$((S * f / 100))
    if "$SI" plan --no-plan-cache --plan-debug --vram "$v" "$BF" 2>&1 >/dev/null |
        grep -q 'coarser where the budget allows.*fits'; then
        B=$v
        break
    fi
done
same_dirs() { # A B: every output in A bitwise the same in B
    for f in "$1"/*.npy; do cmp -s "$f" "$2/$(basename "$f")" || return 1; done
}
bf() { # NAME [options...]: the model at $B
    n=$1
    shift
    "$SI" -q --vram "${B:-1}" --output "$T/$n" --stats "$T/$n.json" "$@" "$BF"
}
if [ -n "$B" ] && bf bref --no-plan-cache --plan-debug 2>"$T/bf.err" && grep -q 'coarser where the budget allows.*fits' "$T/bf.err"; then
    "$SI" -q --no-plan-cache --output "$T/bnone" "$BF" && same_dirs "$T/bnone" "$T/bref" &&
        ok "$(basename "$BF" .json) at $B bytes (limits per node): bitwise its no-budget run" ||
        bad "$(basename "$BF" .json) at $B bytes: not its no-budget run's bits"
    bf b1 --plan-cache "$T/pb" && [ "$(hit b1)" = 0 ] && bf b2 --plan-cache "$T/pb" && [ "$(hit b2)" = 1 ] &&
        same_dirs "$T/bref" "$T/b2" &&
        [ "$(stat bref tile_limit_max_bytes)" -gt "$(stat bref tile_limit_bytes)" ] &&
        ok "a plan with limits per node ($B bytes: parts of $(stat bref tile_limit_bytes) bytes where the budget binds, up to $(stat bref tile_limit_max_bytes) elsewhere) stored and taken, outputs bitwise a planned run's" ||
        bad "limits per node: hit $(hit b1), then $(hit b2)"
    E=$(ls "$T"/pb/*.plan)
    printf '\002' | dd of="$E" bs=1 seek=$(($(wc -c <"$E") - 3)) conv=notrunc 2>/dev/null
    bf b3 --plan-cache "$T/pb" && [ "$(hit b3)" = 0 ] && bf b4 --plan-cache "$T/pb" && [ "$(hit b4)" = 1 ] &&
        ok "an entry whose limits per node changed is planned again and replaced" ||
        bad "changed limits per node: hit $(hit b3), then $(hit b4)"
else
    bad "$(basename "$BF" .json) at no budget up to 1.2x its smallest ($S) is planned with limits per node"
fi
run p5 --no-plan-cache && [ "$(stat p5 programs_from_cache)" = 0 ] && [ "$(stat p5 programs_compiled)" -gt 0 ] &&
    ok "--no-plan-cache: every program compiled" || bad "--no-plan-cache took $(stat p5 programs_from_cache) programs"
# The NVIDIA driver's own shader cache pointed at DIR/gl by a run (cli/main.c
# keep_driver_programs; llvmpipe ignores the variables, so what is checked here
# is the folder made for it, and when it is not): a run makes it; `plan`, a
# set __GL_SHADER_DISK_CACHE_PATH or __GL_SHADER_DISK_CACHE, --backend host
# and --no-plan-cache do not; and a file where DIR/gl would be costs nothing but it.
run g1 --plan-cache "$T/gl1" && [ -d "$T/gl1/gl" ] && ok "a run makes DIR/gl for the driver's shader cache" ||
    bad "a run with --plan-cache made no DIR/gl"
"$SI" plan -q --vram 600K --plan-cache "$T/gl2" "$M" >/dev/null && [ ! -e "$T/gl2/gl" ] &&
    ok "plan makes no DIR/gl (it runs nothing)" || bad "plan made DIR/gl, or failed"
__GL_SHADER_DISK_CACHE_PATH=$T run g3 --plan-cache "$T/gl3" && [ ! -e "$T/gl3/gl" ] &&
    __GL_SHADER_DISK_CACHE=0 run g4 --plan-cache "$T/gl4" && [ ! -e "$T/gl4/gl" ] &&
    ok "the user's __GL_SHADER_DISK_CACHE(_PATH) is left to the driver" || bad "DIR/gl made where the user set the driver's variables"
run g6 --backend host --plan-cache "$T/gl6" && [ ! -e "$T/gl6/gl" ] &&
    ok "--backend host makes no DIR/gl (no GL context opens)" || bad "--backend host made DIR/gl, or failed"
mkdir -p "$T/gl5" && : >"$T/gl5/gl" && run g5 --plan-cache "$T/gl5" && [ -f "$T/gl5/gl" ] && same g5 &&
    ok "a file where DIR/gl would be: the run goes on, bitwise the same" || bad "a file at DIR/gl broke the run"
echo "plancache_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
