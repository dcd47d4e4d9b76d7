#!/bin/sh
# Session 37's third device call: bench/dispatch_cost.c with its CPU issue times and the
# uniform-buffer variants; .gpubuild/s37b holds the binary; carry [".gl", ".gpubuild/s37b"].
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for g in 4 256; do .gpubuild/s37b/dispatch_cost 2000 5 $g; done
