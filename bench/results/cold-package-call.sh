#!/bin/sh
# Session 35's device call: package models' cold start (issue 18) on a fresh machine, then
# the six models side by side with cuDNN (issue 17). From the checkout root, with
# .gpubuild/s35 holding: bm (main's streaminfer, e8adf64), bn (e8adf64 with the programs
# compiled together: the patch then kept as bench/results/parallel-compile.patch, landed after
# this call), peers/ (../shared/peers), models/ and refs/ of the
# six, bq (main with 42ed328, for part 5), and zero-models.tgz (bench/zero_floats.py's copy of the package's 41 models, which the
# carry limit allows where the real ones do not); carry [".gl", ".gpubuild/s35"].
S=.gpubuild/s35
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
ls -d ~/.cache/nvidia* ~/.nv 2>/dev/null > $OUT/drivercache-before.txt
mkdir -p /tmp/zm && tar xzf $S/zero-models.tgz -C /tmp/zm; Z=/tmp/zm/models
# 1. the driver's disk cache off: every process compiles every program from nothing
export __GL_SHADER_DISK_CACHE=0
for r in 1 2; do for b in bm bn; do echo "== $b round $r, driver cache off"; timeout 80 sh bench/cold_package.sh $S/$b $Z; done; done > $OUT/cold.txt 2>&1
echo "== bm, the six real models, driver cache off" >> $OUT/cold.txt
BIG=$S/models timeout 40 sh bench/coldstart.sh $S/bm centernet.json efficientpose.json posenet.json faceres-deep.json handlandmark-full.json selfie.json -- none >> $OUT/cold.txt 2>&1
# 2. streaminfer's plan cache (plans and programs), driver cache off: the first start stores
rm -rf /tmp/pc; mkdir -p /tmp/pc
for r in 1 2; do echo "== bm plan cache, start $r"; PLAN_CACHE=/tmp/pc timeout 80 sh bench/cold_package.sh $S/bm $Z; done >> $OUT/cold.txt 2>&1
# 3. the driver's disk cache on, in a fresh folder: the first start fills it
unset __GL_SHADER_DISK_CACHE; export __GL_SHADER_DISK_CACHE_PATH=/tmp/glc; mkdir -p /tmp/glc
for r in 1 2; do echo "== bm driver cache on, start $r"; timeout 80 sh bench/cold_package.sh $S/bm $Z; done >> $OUT/cold.txt 2>&1
du -s /tmp/glc > $OUT/drivercache-after.txt; ls -d ~/.cache/nvidia* 2>/dev/null >> $OUT/drivercache-after.txt
grep -c "| none |" $OUT/cold.txt
# 4. the six against cuDNN, side by side
timeout 200 sh bench/speed_h200.sh $S/peers $S/models $S/refs $OUT/sp bm=$S/bm -- efficientpose centernet posenet faceres-deep handlandmark-full selfie > $OUT/sp.log 2>&1
grep -A9 '^| model | streaminfer' $OUT/sp.log | head -10
# 5. frcnn-irv2@600 at its floor (5,553,604 bytes): main (bm) against the placement that
# stops walking up where a node's list already holds a stay (bq: 42ed328); cold start, then plan
which node > $OUT/node.txt 2>&1 && timeout 90 sh bench/gpu_gen.sh /tmp/big $OUT/gen frcnn-irv2 > /dev/null 2>&1
for b in bm bq bm bq; do echo "== $b frcnn floor"; BIG=/tmp/big timeout 40 sh bench/coldstart.sh $S/$b frcnn-irv2@600 -- 5553604 | tail -1; done > $OUT/frcnn.txt 2>&1
cat $OUT/frcnn.txt | cut -c1-200
# (as run in session 35, the tar below came before part 5, whose `cd $OUT` broke it; and the
# GPU machine had no node for bench/gen: part 5 measured nothing)
cd $OUT && tar czf sp.tgz sp 2>/dev/null; rm -rf sp
