#!/bin/sh
# Cold start of the package models (issue 18: each <= 0.2 s): bench/coldstart.sh's
# row for each of them at no budget, one streaminfer process each.
#   bench/cold_package.sh CLI MODELS_DIR
# MODELS_DIR: the package's models/ folder (or bench/zero_floats.py's copy of it).
# The models with a free input size get the size of a tests/MODELS.md row
# (faceboxes and handtrack 320x320, movenet-multipose 256x256); rvm (six
# inputs, which coldstart.sh cannot give) is left out. PLAN_CACHE as coldstart.sh.
set -u
CLI=$1; DIR=$2
HERE=$(cd "$(dirname "$0")" && pwd)
specs=""
for j in "$DIR"/*.json; do
    m=$(basename "$j")
    case $m in
    rvm.json) continue ;;
    faceboxes.json | handtrack.json) m=$m@320 ;;
    movenet-multipose.json) m=$m@256 ;;
    esac
    specs="$specs $m"
done
# shellcheck disable=SC2086
BIG=$DIR sh "$HERE/coldstart.sh" "$CLI" $specs -- none
