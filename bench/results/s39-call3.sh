#!/bin/sh
# Session 39's third device call: the side-by-side table against cuDNN (speed_h200.sh)
# for main (419365a) and for the clip-scalars change (bench/results/clip-p.patch, not
# kept), to see whether call 2's slower selfie and faceres-deep were the change's.
# Payload as s39-call2.sh's; carry [".gl", ".gpubuild/s39/p2", ".peers"].
S=.gpubuild/s39/p2
mkdir -p /tmp/s39 && tar xzf $S/m.tgz -C /tmp/s39
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
M=/tmp/s39/models R=/tmp/s39/refs
timeout 400 sh bench/speed_h200.sh .peers $M $R $OUT/sp main=$S/main/streaminfer clipp=$S/new/streaminfer -- \
    selfie faceres-deep centernet posenet handlandmark-full > $OUT/sp.log 2>&1
for b in main clipp; do echo "== $b"; cat $OUT/sp/$b/compare.md; done
cat $OUT/sp/same-bits.txt
for b in main clipp; do echo "== $b"; grep -A4 "^selfie\|^faceres-deep" $OUT/sp/$b/kinds.md | grep "GPU kernels | conv2d\|traced"; done
(cd $OUT && tar czf sp.tgz sp && rm -rf sp)
