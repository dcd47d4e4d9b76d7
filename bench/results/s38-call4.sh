#!/bin/sh
# Session 38's fourth device call: s38-call3.sh's memory part again (its awk did not
# parse on the machine's mawk), the change (b/) and main side by side, and the no-budget
# times once more; carry [".gl", ".gpubuild/s38f"].
S=.gpubuild/s38f
mkdir -p /tmp/s38 && tar xzf $S/models.tgz -C /tmp/s38 && tar xzf $S/more.tgz -C /tmp/s38
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
M=/tmp/s38/models
mkdir -p /tmp/mm/bench && cp $S/main /tmp/mm/streaminfer && cp $S/b/bench/hold_context /tmp/mm/bench/
for b in $S/b /tmp/mm; do
  echo "== $b"
  sh bench/gpu_memory.sh $b $M 30 faceres-deep:6M faceres-deep:none handlandmark-full:none selfie:none selfie:4M centernet:none
done > $OUT/mem.txt 2>&1
cat $OUT/mem.txt
timeout 120 python3 bench/stream_h200.py --models-dir $M --out $OUT/st --runs 200 --rounds 3 --factors "" \
  --models faceres-deep,handlandmark-full,selfie main=$S/main new=$S/b/streaminfer > $OUT/st.log 2>&1
cat $OUT/st/stream.md
(cd $OUT && tar czf st.tgz st; rm -rf st)
