#!/bin/sh
# How long `streaminfer plan --smallest` takes, and what it finds, with two
# builds side by side (issue 18: the detector's search in <= 30 s).
#   bench/smallest_time.sh BEFORE_CLI AFTER_CLI BIG_DIR SPEC...
# SPEC: MODEL[@SIZE][:f16] (a folder under BIG_DIR; @S: bench/lib.sh's seeded SxS
# input; :f16 adds --precision f16). WITHIN (default 2) is --within's percent;
# a search over TIMEOUT seconds (default 1800) is cut off and shown as "> T s".
# Prints a Markdown table: wall seconds, the budget accepted and the one
# refused below it, and the plans made, for each build. No plan cache.
set -u
BEFORE=$1; AFTER=$2; BIG=$3; shift 3
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
export XDG_CACHE_HOME=/dev/null/no-plan-cache
W=${WITHIN:-2}
TO=${TIMEOUT:-1800}

one() { # CLI ARGS... -> "wall accepted refused plans"
    cli=$1; shift
    s=$(now)
    timeout "$TO" "$cli" plan --smallest --within "$W" --no-plan-cache "$@" >"$T/out" 2>"$T/err"
    rc=$?
    e=$(now)
    if [ $rc -eq 124 ]; then echo "> $TO s | - | - | -"; return; fi
    [ $rc -eq 0 ] || { echo "failed ($rc) | - | - | -"; return; }
    sed -n 's/^smallest accepted budget .*(\([0-9]*\) bytes) (refused at \([0-9]*\) bytes.*; \([0-9]*\) plans made.*/\1 \2 \3/p' "$T/out" |
        awk -v w="$(secs "$s" "$e")" '{ printf "%s s | %s | %s | %s\n", w, $1, $2, $3 }'
}

echo "\`plan --smallest --within $W\`, $(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores"
echo
echo "| model | before: wall | accepted | refused | plans | after: wall | accepted | refused | plans |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for spec in "$@"; do
    prec=""
    case $spec in *:f16) prec="--precision f16"; spec=${spec%:f16} ;; esac
    spec_parts "$spec"
    ins=""
    if [ -n "$size" ]; then
        [ -f "$T/in$size.npy" ] || make_input "$size" "$T/in$size.npy"
        ins="--input $T/in$size.npy"
    fi
    # shellcheck disable=SC2086
    b=$(one "$BEFORE" $prec $ins "$BIG/$name")
    # shellcheck disable=SC2086
    a=$(one "$AFTER" $prec $ins "$BIG/$name")
    echo "| $spec${prec:+ f16} | $b | $a |"
done
