#!/bin/sh
# Session 38's fifth device call: the card's memory against the pager's count for every
# package model (weights zeroed: the same programs and buffers), no budget, with the
# build of faf1de0 (.gpubuild/s38g/b); carry [".gl", ".gpubuild/s38g"].
S=.gpubuild/s38g
mkdir -p /tmp/zm && tar xzf $S/zero-models.tgz -C /tmp/zm
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
L=$(cd /tmp/zm/models && ls *.json | sed 's/\.json$/:none/' | tr '\n' ' ')
timeout 240 sh bench/gpu_memory.sh $S/b /tmp/zm/models 5 $L > $OUT/mem.txt 2>&1
cat $OUT/mem.txt
