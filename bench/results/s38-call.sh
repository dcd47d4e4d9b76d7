#!/bin/sh
# Session 38's first device call: weights copied by a second context on its own
# thread (SI_COPY_KERNELS=2, glk_side_copy) against the transfer kernels, with and
# without loads planned up to 8 steps ahead; the card's memory with the second
# context; the glkernels test of the side copies on the GPU. .gpubuild/s38: b/ (the
# build: streaminfer, bench/hold_context, tests/test_kernels_shape), models.tgz,
# refs.tgz (faceres-deep, posenet, efficientpose, handlandmark-full and their references, movenet-thunder's)
# and zero-models.tgz as session 37's; carry [".gl", ".gpubuild/s38"].
S=.gpubuild/s38
mkdir -p /tmp/s38 && tar xzf $S/models.tgz -C /tmp/s38 && tar xzf $S/refs.tgz -C /tmp/s38
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
timeout 60 $S/b/tests/test_kernels_shape > $OUT/kshape.txt 2>&1; tail -3 $OUT/kshape.txt
mkdir -p /tmp/zm && tar xzf $S/zero-models.tgz -C /tmp/zm
mkdir -p /tmp/m8; for f in /tmp/s38/models/* /tmp/zm/models/movenet-thunder.*; do cp -L $f /tmp/m8/; done
B=$S/b/streaminfer
timeout 330 python3 bench/stream_h200.py --models-dir /tmp/m8 --refs /tmp/s38/refs --out $OUT/st --runs 100 \
  --rounds 2 --factors 1.25,1.0 --models faceres-deep,posenet,movenet-thunder,efficientpose \
  cur=$B cur8=$B@SI_PLAN_PREFETCH=8 side=$B@SI_COPY_KERNELS=2 side8=$B@SI_COPY_KERNELS=2@SI_PLAN_PREFETCH=8 \
  > $OUT/st.log 2>&1
cat $OUT/st/stream.md
# the card's memory with and without the second context (faceres-deep at 6 MiB)
(sh bench/gpu_memory.sh $S/b /tmp/m8 50 faceres-deep:6M faceres-deep:none
 SI_COPY_KERNELS=2 SI_PLAN_PREFETCH=8 sh bench/gpu_memory.sh $S/b /tmp/m8 50 faceres-deep:6M faceres-deep:none) > $OUT/mem.txt 2>&1
cat $OUT/mem.txt
# GPU time: the second context's copies on their own track, how much of them hid beside kernels
for c in "@SI_COPY_KERNELS=2@SI_PLAN_PREFETCH=8:side8" "@SI_PLAN_PREFETCH=8:cur8"; do
  timeout 60 python3 bench/gpu_trace.py --models-dir /tmp/m8 --refs /tmp/s38/refs --out $OUT/gt-${c##*:} \
    --models faceres-deep,posenet --runs 20 --factors 1.25,1.0 --top 3 "$B${c%:*}" > $OUT/gt-${c##*:}.log 2>&1
  grep -i "^#\|span\|second\|^## " $OUT/gt-${c##*:}/gpu_trace.md
done
(cd $OUT && tar czf all.tgz st gt-* 2>/dev/null; rm -rf st gt-side8 gt-cur8)
