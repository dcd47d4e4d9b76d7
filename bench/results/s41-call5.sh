#!/bin/sh
# Session 41: issue 17's eight models by medians, in two calls (their models do not fit
# one carry): PART a (centernet, posenet, faceres-deep, handlandmark-full, selfie; payload
# .gpubuild/s41/a) and PART b (efficientpose, movenet-thunder, blazepose-heavy;
# .gpubuild/s41/b), each m.tgz (models/, refs/) and main/streaminfer.xz (5dce42d's build:
# HEAD's GPU code, the program table's room and reduce.comp's dead store aside).
# bench/speed_medians.sh: no budget, the median of 200 runs a process, the same build twice
# under two labels (main, again: what the command's spread is), interleaved, the least of 2
# rounds; then torchref's CUDA-graph medians of 200 in the same call; the ratios.
#   run with: sh bench/results/s41-call5.sh a|b; carry [".gl", ".peers", ".gpubuild/s41/PART"]
P=$1
S=.gpubuild/s41/$P
case $P in
a) MODELS="centernet posenet faceres-deep handlandmark-full selfie" ;;
b) MODELS="efficientpose movenet-thunder blazepose-heavy" ;;
*) echo "PART a or b"; exit 2 ;;
esac
mkdir -p /tmp/s41 && tar xzf $S/m.tgz -C /tmp/s41
xz -dc $S/main/streaminfer.xz > /tmp/s41/streaminfer && chmod +x /tmp/s41/streaminfer
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
M=/tmp/s41/models R=/tmp/s41/refs
timeout 540 sh bench/speed_medians.sh .peers $M $R $OUT main=/tmp/s41/streaminfer again=/tmp/s41/streaminfer@SI_UNUSED=1 -- $MODELS
