#!/bin/sh
# Session 39's first device call: the big models of `make models` generated on the
# machine (bench/gen, checked against SHA256SUMS) and run by bench/big_models.sh at no
# limit, 1G, 256M and 64M, for the card's measured memory against the budget after
# session 38's fix (faf1de0) of the shaders' local memory. The build of 419365a
# (.gpubuild/s39/c); the machine has no node, so this machine's /usr/bin/node travels
# xz-compressed (.gpubuild/s39/node.xz); carry [".gl", ".gpubuild/s39/c", ".gpubuild/s39/node.xz"].
S=.gpubuild/s39/c
mkdir -p /tmp/nb && xz -dc .gpubuild/s39/node.xz > /tmp/nb/node && chmod +x /tmp/nb/node && export PATH=/tmp/nb:$PATH
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
node --version
start=$(date +%s)
NODE=node BIG=/tmp/big NO_SMALLEST=1 BUDGETS="1G 256M 64M" timeout 560 \
    sh bench/gpu_big.sh $S $OUT/big effdet-d0 frcnn-irv2@600 effdet-d4 effdet-d7 > $OUT/big.out 2>&1
echo "rc=$? $(( $(date +%s) - start )) s"
cat $OUT/big.out $OUT/big/big.log
