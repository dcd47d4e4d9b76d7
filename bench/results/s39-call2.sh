#!/bin/sh
# Session 39's second device call: constant clip scalars in P (core_fold_clip_scalars)
# against main (419365a), interleaved, at 1.25x and 1x the lower bound (and the change
# with loads 8 steps ahead, SI_PLAN_PREFETCH=8); where the
# 1.25x run's GPU time goes (gpu_trace.py), both builds; the card's memory with the
# change (gpu_memory.sh); and the side-by-side table
# against cuDNN (speed_h200.sh) with the new build. Payload .gpubuild/s39/p2 (m.tgz:
# the models and their references; new/: the change's build and bench/hold_context; main/: 419365a's);
# carry [".gl", ".gpubuild/s39/p2", ".peers"] (.peers: a copy of ../shared/peers).
S=.gpubuild/s39/p2
mkdir -p /tmp/s39 && tar xzf $S/m.tgz -C /tmp/s39
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
M=/tmp/s39/models R=/tmp/s39/refs
timeout 200 python3 bench/stream_h200.py --models-dir $M --refs $R --out $OUT/st --runs 200 --rounds 3 \
    --factors 1.25,1.0 --models faceres-deep,posenet main=$S/main/streaminfer new=$S/new/streaminfer \
    new8=$S/new/streaminfer@SI_PLAN_PREFETCH=8 > $OUT/st.log 2>&1
cat $OUT/st/stream.md
for b in main new; do
  timeout 60 python3 bench/gpu_trace.py --models-dir $M --refs $R --out $OUT/tr-$b --models faceres-deep \
      --runs 20 --factors 1.25 --top 3 $S/$b/streaminfer > $OUT/tr-$b.log 2>&1
done
tail -n 40 $OUT/tr-main.log $OUT/tr-new.log
timeout 60 sh bench/gpu_memory.sh $S/new $M 30 faceres-deep:6M faceres-deep:none > $OUT/mem.txt 2>&1; cat $OUT/mem.txt
timeout 240 sh bench/speed_h200.sh .peers $M $R $OUT/sp new=$S/new/streaminfer -- \
    centernet posenet faceres-deep handlandmark-full selfie > $OUT/sp.log 2>&1
cat $OUT/sp/new/compare.md
(cd $OUT && tar czf st.tgz st tr-main tr-new sp && rm -rf st tr-main tr-new sp)
