#!/bin/sh
# Session 39's fourth device call: conv2d, depthwise conv2d and matmul programs
# compiled for their step's epilogue (glk_set_epi) against main (419365a), side by
# side with cuDNN (speed_h200.sh, both builds in one call), and the card's memory with
# the change (gpu_memory.sh). Payload .gpubuild/s39/p3 (m.tgz as s39-call2.sh's; new/:
# the change's build and bench/hold_context; main/: 419365a's); carry [".gl",
# ".gpubuild/s39/p3", ".peers"].
S=.gpubuild/s39/p3
mkdir -p /tmp/s39 && tar xzf $S/m.tgz -C /tmp/s39
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
M=/tmp/s39/models R=/tmp/s39/refs
timeout 400 sh bench/speed_h200.sh .peers $M $R $OUT/sp main=$S/main/streaminfer epi=$S/new/streaminfer -- \
    selfie faceres-deep centernet posenet handlandmark-full > $OUT/sp.log 2>&1
for b in main epi; do echo "== $b"; sed -n '/^| model | streaminfer/,$p' $OUT/sp/$b/compare.md; done
cat $OUT/sp/same-bits.txt
for b in main epi; do echo "== $b"; grep "traced\|GPU kernels | \(conv2d\|dwconv2d\|matmul\)" $OUT/sp/$b/kinds.md; done
timeout 100 sh bench/gpu_memory.sh $S/new $M 30 faceres-deep:6M selfie:4M centernet:none > $OUT/mem.txt 2>&1; cat $OUT/mem.txt
(cd $OUT && tar czf sp.tgz sp && rm -rf sp)
