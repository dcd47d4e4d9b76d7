#!/bin/sh
# Session 41's third device call, on the machine calls 1 and 2 left warm: the eight models
# of issue 17 side by side with cuDNN in one call (bench/speed_h200.sh), main (the build of
# s40-call1.sh, 5dce42d's code) and geo (main + bench/results/conv-geometry.patch). The
# models are the ones calls 1 and 2 unpacked under /tmp/s40 (models/, refs/): their two
# payloads do not fit one carry. Carry [".gl", ".peers", ".gpubuild/s40/p1/main",
# ".gpubuild/s40/p1/geo"].
S=.gpubuild/s40/p1
M=/tmp/s40/models R=/tmp/s40/refs
MODELS="efficientpose centernet posenet faceres-deep handlandmark-full selfie movenet-thunder blazepose-heavy"
for m in $MODELS; do [ -f $M/$m.json ] && [ -d $R/$m ] || { echo "missing $m: not the warm machine"; exit 3; }; done
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
timeout 520 sh bench/speed_h200.sh .peers $M $R $OUT/sp main=$S/main/streaminfer geo=$S/geo/streaminfer -- $MODELS > $OUT/sp.log 2>&1
cat $OUT/sp/main/compare.md $OUT/sp/geo/compare.md $OUT/sp/same-bits.txt
for b in main geo; do cp $OUT/sp/$b/compare.md $OUT/compare-$b.md; cp $OUT/sp/$b/kinds.md $OUT/kinds-$b.md; done
(cd $OUT && tar czf sp.tgz sp && rm -rf sp)
