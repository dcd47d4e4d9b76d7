#!/bin/sh
# Makes TensorFlow.js reference outputs for the fetched models:
#   tests/make_refs.sh CACHE_DIR MODEL...
# runs tests/oracle/reference.js on CACHE_DIR/human-models/models/MODEL.json
# into CACHE_DIR/refs/MODEL/.  A folder whose manifest.json is newer than
# reference.js and has the same seed is kept.  SEED (default 1) sets the seed.
set -eu

die() { echo "make_refs.sh: error: $*" >&2; exit 1; }

[ $# -ge 2 ] || die "usage: tests/make_refs.sh CACHE_DIR MODEL..."
HERE=$(cd "$(dirname "$0")" && pwd)
REF=$HERE/oracle/reference.js
CACHE=$1
shift
SEED=${SEED:-1}
case $SEED in ''|*[!0-9]*) die "SEED must be a non-negative integer, got '$SEED'" ;; esac

"$HERE/oracle/setup.sh" || die "the TensorFlow.js oracle is not set up"
MODELS=$CACHE/human-models/models
[ -d "$MODELS" ] || die "no $MODELS; run tests/fetch_models.sh $CACHE first"

# one SPEC: its reference; prints its lines; returns 1 when it failed
one() {
    spec=$1
    # NAME or NAME@INPUT=d0,d1,...[@INPUT=...] for models with free dimensions
    name=${spec%%@*}
    shapes=""
    rest=${spec#"$name"}
    while [ -n "$rest" ]; do
        rest=${rest#@}
        part=${rest%%@*}
        shapes="$shapes --shape $part"
        rest=${rest#"$part"}
    done
    json=$MODELS/$name.json
    out=$CACHE/refs/$spec
    if [ ! -f "$json" ]; then
        echo "make_refs.sh: $name: no $json" >&2
        return 1
    fi
    if [ -f "$out/manifest.json" ] && [ -n "$(find "$out/manifest.json" -newer "$REF")" ] &&
       [ "$(node -p "JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8')).seed" "$out/manifest.json" 2>/dev/null)" = "$SEED" ]; then
        echo "make_refs.sh: $name: up to date"
        return 0
    fi
    echo "make_refs.sh: $name: running reference.js"
    rm -rf "$out"
    # shellcheck disable=SC2086
    if ! node "$REF" "$json" "$out" --seed "$SEED" $shapes; then
        echo "make_refs.sh: $name: reference.js failed" >&2
        return 1
    fi
}

# two at a time (SI_TEST_JOBS, tests/lib.sh): each is one single-threaded node
# process, and the machines have two cores; their lines printed in order
. "$HERE/lib.sh"
one_at() { one "$2" >"$T/$1" 2>&1 || echo "$2" >"$T/$1.failed"; } # INDEX SPEC
in_lanes one_at "$@"
failed=""
i=0
for spec in "$@"; do
    cat "$T/$i" 2>/dev/null
    [ -f "$T/$i" ] || failed="$failed ${spec%%@*}"
    [ ! -f "$T/$i.failed" ] || failed="$failed ${spec%%@*}"
    i=$((i + 1))
done
[ -z "$failed" ] || die "failed:$failed"
