#!/bin/sh
# Session 39's fifth device call: call 4's change again, interleaved (stream_h200.py,
# no budget, 3 rounds of 200 runs): main (419365a), epi (conv2d, depthwise conv2d and
# matmul compiled for their epilogue) and dw (the same but conv2d), since compare_gpu's
# best-of-three figure swings between processes. Payload .gpubuild/s39/p3 (dw/: that
# build); carry [".gl", ".gpubuild/s39/p3"].
S=.gpubuild/s39/p3
mkdir -p /tmp/s39 && tar xzf $S/m.tgz -C /tmp/s39
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
M=/tmp/s39/models R=/tmp/s39/refs
timeout 400 python3 bench/stream_h200.py --models-dir $M --refs $R --out $OUT/st --runs 200 --rounds 3 --factors '' \
    --models selfie,faceres-deep,centernet,posenet,handlandmark-full \
    main=$S/main/streaminfer epi=$S/new/streaminfer dw=$S/dw/streaminfer > $OUT/st.log 2>&1
cat $OUT/st/stream.md
