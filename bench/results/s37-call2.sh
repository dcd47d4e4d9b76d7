#!/bin/sh
# Session 37's second device call. .gpubuild/s37 as s37-call.sh, and b2 (b1 with only rows
# of 8,192 and more split) and dispatch_cost (bench/dispatch_cost.c); carry [".gl", ".gpubuild/s37"].
S=.gpubuild/s37
mkdir -p /tmp/s37 && tar xzf $S/models.tgz -C /tmp/s37 && tar xzf $S/refs.tgz -C /tmp/s37
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
# 1. what each part of a step costs: a tiny kernel (4 groups) and a bigger one (256)
(for g in 4 256; do $S/dispatch_cost 2000 5 $g; done) > $OUT/dc.txt 2>&1; cat $OUT/dc.txt
# 2. b0 against b2, three rounds (handlandmark-full: no reduction changed, the control)
timeout 150 python3 bench/stream_h200.py --models-dir /tmp/s37/models --refs /tmp/s37/refs --out $OUT/st --runs 200 \
  --rounds 3 --factors '' --models selfie,centernet,handlandmark-full b0=$S/b0 b2=$S/b2 > $OUT/st.log 2>&1
cat $OUT/st/stream.md
(cd $OUT && tar czf all.tgz st 2>/dev/null; rm -rf st)
