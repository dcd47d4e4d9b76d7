#!/bin/sh
# Session 38's second device call: where the card's memory beyond the pager's count
# goes (faceres-deep at 6M measured 56 MiB over an empty context, counted 5.75, in
# s38-call.sh). The build is main at 2513fbd with bench/results/ahead-switch.patch (SI_XP_AHEAD
# and SI_XP_QUAD set glk_set_ahead / glk_set_quad at glk_open); carry [".gl", ".gpubuild/s38d"].
S=.gpubuild/s38d
mkdir -p /tmp/s38 && tar xzf $S/models.tgz -C /tmp/s38
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
M=/tmp/s38/models
for c in "" SI_CONV=plain SI_XP_AHEAD=0 SI_XP_QUAD=0 "SI_CONV=plain SI_XP_AHEAD=0 SI_XP_QUAD=0" SI_COPY_KERNELS=-1; do
  echo "== ${c:-default}"
  env $c sh bench/gpu_memory.sh $S/b $M 30 faceres-deep:6M faceres-deep:none handlandmark-full:none posenet:none 2>&1 | grep -v "^idle"
done > $OUT/mem.txt 2>&1
cat $OUT/mem.txt
# when it appears: the card's memory every 20 ms through one process (open, then 300 runs)
. bench/smi.sh
(t0=$(date +%s%N); while :; do echo "$(( ($(date +%s%N) - t0) / 1000000 )) $(used)"; sleep 0.02; done) > $OUT/timeline.txt & sp=$!
sleep 0.5; $S/b/streaminfer -q --runs 300 --vram 6M --stats $OUT/tl.json $M/faceres-deep.json; sleep 0.5
kill $sp; awk '{print $2}' $OUT/timeline.txt | uniq -c | head -20; grep -o '"open_ms": [0-9.]*' $OUT/tl.json
