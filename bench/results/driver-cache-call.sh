#!/bin/sh
# Session 35's second device call: the CLI pointing the NVIDIA driver's shader disk cache into
# the plan cache's folder (cli/main.c keep_driver_programs), as root with none of the driver's
# variables set. From the checkout root, with .gpubuild/s35b holding bk (the build) and
# zero-models.tgz (as cold-package-call.sh); carry [".gl", ".gpubuild/s35b"].
S=.gpubuild/s35b
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt; id -u
mkdir -p /tmp/zm && tar xzf $S/zero-models.tgz -C /tmp/zm; Z=/tmp/zm/models
unset __GL_SHADER_DISK_CACHE __GL_SHADER_DISK_CACHE_PATH
rm -rf /tmp/pc2; mkdir -p /tmp/pc2
for r in 1 2 3; do echo "== bk plan cache, start $r"; PLAN_CACHE=/tmp/pc2 timeout 80 sh bench/cold_package.sh $S/bk $Z; done > $OUT/cold.txt 2>&1
du -s /tmp/pc2/gl > $OUT/glcache.txt 2>&1; ls /tmp/pc2/gl >> $OUT/glcache.txt 2>&1; cat $OUT/glcache.txt | head -3
ls -d ~/.nv ~/.cache/nvidia 2>&1 | head -2
