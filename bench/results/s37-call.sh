#!/bin/sh
# Session 37's device call. From the checkout root, with .gpubuild/s37 holding b0 (main at
# 8e9da7e), b1 (b0 with long float reductions of few outputs and global average pools
# split in two steps: part sums as pairs, then the pairs), peers/ (../shared/peers),
# models.tgz, refs.tgz and zero-models.tgz as session 36's (bench/results/s36-call.sh);
# carry [".gl", ".gpubuild/s37"]. PARTS= picks the parts (default 1234).
S=.gpubuild/s37
mkdir -p /tmp/s37 && tar xzf $S/models.tgz -C /tmp/s37 && tar xzf $S/refs.tgz -C /tmp/s37
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
mkdir -p /tmp/zm && tar xzf $S/zero-models.tgz -C /tmp/zm; Z=/tmp/zm/models
mkdir -p /tmp/m8; for f in /tmp/s37/models/* $Z/movenet-thunder.* $Z/blazepose-heavy.*; do cp -L $f /tmp/m8/; done
M8="centernet selfie faceres-deep handlandmark-full efficientpose posenet movenet-thunder blazepose-heavy"
P=${PARTS:-1234}
# 1. the two builds interleaved, no budget (medians of 200, least of 2 rounds)
case $P in *1*) timeout 150 python3 bench/stream_h200.py --models-dir /tmp/m8 --refs /tmp/s37/refs --out $OUT/st --runs 200 \
  --rounds 2 --factors '' --models $(echo $M8 | tr ' ' ,) b0=$S/b0 b1=$S/b1 > $OUT/st.log 2>&1; tail -12 $OUT/st.log ;; esac
# 2. b1 at budgets: the split reductions' outputs bitwise the no-budget run's on the GPU
case $P in *2*) timeout 60 python3 bench/stream_h200.py --models-dir /tmp/m8 --refs /tmp/s37/refs --out $OUT/bu --runs 30 \
  --rounds 1 --factors 1.25,1.0 --models selfie,centernet b1=$S/b1 > $OUT/bu.log 2>&1; tail -8 $OUT/bu.log ;; esac
# 3. b1 side by side with cuDNN, with traces
case $P in *3*) timeout 220 sh bench/speed_h200.sh $S/peers /tmp/m8 /tmp/s37/refs $OUT/sp b1=$S/b1 -- $M8 > $OUT/sp.log 2>&1
grep -A10 '^| model | streaminfer' $OUT/sp.log | head -11 ;; esac
# 4. is a small model's run_ms the driver's way of waiting (faceres-deep's median was 0.683 ms
#    in every build of session 36)? __GL_YIELD: unset, NOTHING (spin), USLEEP
case $P in *4*) timeout 100 python3 bench/stream_h200.py --models-dir /tmp/m8 --refs /tmp/s37/refs --out $OUT/y --runs 200 \
  --rounds 2 --factors '' --models faceres-deep,posenet,selfie \
  dflt=$S/b1 spin=$S/b1@__GL_YIELD=NOTHING sleep=$S/b1@__GL_YIELD=USLEEP > $OUT/y.log 2>&1; cat $OUT/y/stream.md ;; esac
# at most 8 files come back: everything in one archive, the logs beside it
(cd $OUT && tar czf all.tgz st bu sp y 2>/dev/null; rm -rf st bu sp y)
