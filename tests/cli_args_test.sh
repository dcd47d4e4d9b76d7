#!/bin/sh
# Command-line parsing and exit codes (issue 23): getopt_long forms, strict
# numbers, --stats -, plan's refusals, output paths made or checked before any
# work, one exit code per kind of failure as --help and the man page say.
#   tests/cli_args_test.sh STREAMINFER CACHE_DIR
set -u
SI=$1
M=$2/human-models/models/emotion.json
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
code "--seed -5 refused" 2 "--seed" --seed -5 "$M"
code "--seed 4294967296 refused" 2 "--seed" --seed 4294967296 "$M"
code "unknown option: usage" 2 "--frob" --frob "$M"
code "missing value: usage" 2 "--vram" "$M" --vram
code "two models: usage" 2 "one MODEL" "$M" "$M"
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
"$SI" --help > "$T/help"
for w in "Exit status" "2 bad usage" "3 the model" "4 no plan fits" "5 the GPU"; do
    grep -q -- "$w" "$T/help" || bad "--help does not document '$w'"
done
[ "$fails" -eq 0 ]
