#!/bin/bash
# session 30: quad dw/deconv (new = main d14e80a + XP hooks) vs cur (7a7c252); quad off; conv oc4 forced / from thresholds
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
D=.gpubuild/s29a
M=efficientpose,movenet-thunder,blazepose-heavy,selfie
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
# cross-build bits
for m in ${M//,/ }; do
  args=$(python3 -c "import sys; sys.path.insert(0,'bench'); import stream_h200 as s; print(' '.join(s.inputs('$D/refs','$m')))")
  for c in cur:$D/cur: new:$D/new: noquad:$D/new:SI_XP_NOQUAD=1 oc4:$D/new:SI_CONV=oc4 t19:$D/new:SI_XP_OC4=524288 t17:$D/new:SI_XP_OC4=131072; do
    IFS=: read l b e <<< "$c"; rm -rf /tmp/o-$m-$l
    env $e $b -q --no-plan-cache --output /tmp/o-$m-$l $args $D/models/$m.json >/dev/null 2>>$OUT/err.txt
  done
  for l in new noquad oc4 t19 t17; do diff -rq /tmp/o-$m-cur /tmp/o-$m-$l >/dev/null && echo "$m $l same-bits-as-cur" || echo "$m $l DIFFERS"; done
done | tee $OUT/bits.txt
timeout 330 python3 bench/stream_h200.py --models-dir $D/models --refs $D/refs --out $OUT/st --runs 200 --rounds 2 \
  --factors '' --models $M cur=$D/cur new=$D/new noquad=$D/new@SI_XP_NOQUAD=1 oc4=$D/new@SI_CONV=oc4 t19=$D/new@SI_XP_OC4=524288 t17=$D/new@SI_XP_OC4=131072 2>&1 | grep '^|'
timeout 120 sh bench/speed_h200.sh $D/peers $D/models $D/refs $OUT/sp new=$D/new -- efficientpose movenet-thunder blazepose-heavy selfie > $OUT/sp.log 2>&1
tail -6 $OUT/sp/new/compare.md
grep "GPU kernels | dwconv\|GPU kernels | conv2d\|GPU kernels | deconv" $OUT/sp/new/kinds.md
python3 $D/top.py $OUT/sp/new > $OUT/top-new.txt
rm -rf $OUT/sp/*/out-* $OUT/sp/*/*.trace.json
