#!/bin/sh
# Issue 17's ratio table by medians, in one call: each build's no-budget run_ms as the median
# of --runs runs a process (bench/stream_h200.py: the builds interleaved per model, the least
# median of ROUNDS rounds), then torchref's CUDA-graph medians of the same runs
# (PEERS_DIR/torchref/bench.py), then the ratios (bench/ratio_table.py). bench/speed_h200.sh's
# compare_gpu.py keeps each process's last run alone (the least of three processes), which
# moved a row by 2x between two builds of the same kernels (speed-h200.md, session 41).
#   bench/speed_medians.sh PEERS_DIR MODELS_DIR REFS_DIR OUT_DIR LABEL=BIN[@VAR=VALUE...] [...] -- MODEL...
# (RUNS=200 ROUNDS=2 by default; TORCH_PROFILE=1: torchref also sums its kernels' GPU time by
# category, torch.profiler over its uncaptured runs, into torchref.json's "profile".)
# Writes OUT_DIR/st/stream.json, OUT_DIR/torchref.json and OUT_DIR/ratios.md; prints the table.
set -u
PEERS=$1 MODELS=$2 REFS=$3 OUT=$4
shift 4
builds=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do builds="$builds $1"; shift; done
[ $# -gt 0 ] && shift
names=$(printf '%s,' "$@")
names=${names%,}
here=$(dirname "$0")
mkdir -p "$OUT"
# shellcheck disable=SC2086
python3 "$here/stream_h200.py" --models-dir "$MODELS" --refs "$REFS" --out "$OUT/st" --runs "${RUNS:-200}" \
    --rounds "${ROUNDS:-2}" --factors '' --models "$names" $builds >"$OUT/st.log" 2>&1 ||
    echo "speed_medians: stream_h200.py failed (see $OUT/st.log)"
python3 "$PEERS/torchref/bench.py" --models "$names" --model-dirs "$MODELS" --refs "$REFS" --runs "${RUNS:-200}" \
    ${TORCH_PROFILE:+--profile} --out "$OUT/torchref.json" >"$OUT/torchref.log" 2>&1 ||
    echo "speed_medians: torchref failed (see $OUT/torchref.log)"
python3 "$here/ratio_table.py" "$OUT/st/stream.json" "$OUT/torchref.json" | tee "$OUT/ratios.md"
