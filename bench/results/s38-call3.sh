#!/bin/sh
# Session 38's third device call: the loads ahead of reductions, pools and softmax kept in
# named vec4s instead of float arrays. .gpubuild/s38f: b/ (the build with the change:
# streaminfer, bench/hold_context, tests/test_kernels_pool_reduce), main (the build of
# main at 20e5e2c, before it), models.tgz as s38-call.sh's, more.tgz (selfie, centernet);
# carry [".gl", ".gpubuild/s38f"].
S=.gpubuild/s38f
mkdir -p /tmp/s38 && tar xzf $S/models.tgz -C /tmp/s38 && tar xzf $S/more.tgz -C /tmp/s38
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
timeout 120 $S/b/tests/test_kernels_pool_reduce > $OUT/kpool.txt 2>&1; tail -2 $OUT/kpool.txt
M=/tmp/s38/models
sh bench/gpu_memory.sh $S/b $M 30 faceres-deep:6M faceres-deep:none handlandmark-full:none posenet:none \
  selfie:none centernet:none efficientpose:none > $OUT/mem.txt 2>&1
mkdir -p /tmp/mm/bench && cp $S/main /tmp/mm/streaminfer && cp $S/b/bench/hold_context /tmp/mm/bench/
sh bench/gpu_memory.sh /tmp/mm $M 30 selfie:none centernet:none > $OUT/mem-main.txt 2>&1
cat $OUT/mem.txt $OUT/mem-main.txt
timeout 200 python3 bench/stream_h200.py --models-dir $M --out $OUT/st --runs 200 --rounds 2 --factors "" \
  --models faceres-deep,handlandmark-full,selfie,centernet,efficientpose main=$S/main new=$S/b/streaminfer > $OUT/st.log 2>&1
cat $OUT/st/stream.md
(cd $OUT && tar czf st.tgz st; rm -rf st)
