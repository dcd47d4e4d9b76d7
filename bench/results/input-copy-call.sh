#!/bin/sh
# Session 34: the device call for base_copy (the input by threads) and the programs compiled
# together (bench/results/parallel-compile.patch): bn was built with both and an SI_XP_IN switch.
# Only its stream and cold-start parts ran (cut down, see speed-h200.md). From the checkout root, with .gpubuild/s34 holding: bm (main's
# streaminfer), bn (the patched build), transfer_io (the patched bench), peers/ (a copy of
# ../shared/peers), models/ and refs/ of the six models below; carry [".gl", ".gpubuild/s34"].
S=.gpubuild/s34
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
M=efficientpose,centernet,posenet,faceres-deep,handlandmark-full,selfie
timeout 300 python3 bench/stream_h200.py --models-dir $S/models --refs $S/refs --out $OUT/st --runs 200 --rounds 3 --factors '' --models $M \
  bm=$S/bm off=$S/bn@SI_XP_IN=0 in1=$S/bn@SI_XP_IN=1 in2=$S/bn@SI_XP_IN=2 > $OUT/st.log 2>&1
sed -n '/^| model/,$p' $OUT/st.log
for r in 1 2; do for b in bm bn; do echo "== $b round $r"; BIG=$S/models timeout 60 sh bench/coldstart.sh $S/$b centernet.json efficientpose.json posenet.json faceres-deep.json handlandmark-full.json selfie.json -- none; done; done > $OUT/cold.txt 2>&1
cut -d'|' -f2,4,5,9,10,14 $OUT/cold.txt
$S/transfer_io 200 602112,1769472,3145728 262144 > $OUT/tio.txt 2>&1
grep -E "\| (pool\+copy|mt pool\+copy|mt nt pool\+copy|device) \| none " $OUT/tio.txt
timeout 200 sh bench/speed_h200.sh $S/peers $S/models $S/refs $OUT/sp bn=$S/bn -- efficientpose centernet posenet faceres-deep handlandmark-full selfie > $OUT/sp.log 2>&1
grep -A9 '^| model | streaminfer' $OUT/sp.log | head -10
cd $OUT && tar czf sp.tgz sp st 2>/dev/null; rm -rf sp st
