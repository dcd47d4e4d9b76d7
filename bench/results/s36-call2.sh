#!/bin/sh
# Session 36's second device call: is the small models' run_ms (faceres-deep's median was
# 0.683 ms in every build and round of the first call) the NVIDIA driver's way of waiting
# for the GPU? Its __GL_YIELD picks it: unset (the default), NOTHING (spin), USLEEP (sleep).
# The same .gpubuild/s36 as s36-call.sh; carry [".gl", ".gpubuild/s36"].
S=.gpubuild/s36
mkdir -p /tmp/s36 && tar xzf $S/models.tgz -C /tmp/s36 && tar xzf $S/refs.tgz -C /tmp/s36
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
timeout 100 python3 bench/stream_h200.py --models-dir /tmp/s36/models --refs /tmp/s36/refs --out $OUT/y --runs 200 \
  --rounds 2 --factors '' --models faceres-deep,posenet,selfie \
  dflt=$S/b1 spin=$S/b1@__GL_YIELD=NOTHING sleep=$S/b1@__GL_YIELD=USLEEP > $OUT/y.log 2>&1; cat $OUT/y/stream.md
