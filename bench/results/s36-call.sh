#!/bin/sh
# Session 36's device call. From the checkout root, with .gpubuild/s36 holding b0 (main at
# 17b41e0), b1 (b0 with TopK's blocks kept as sorted runs and merged, 32 loads ahead in wide
# pools and reductions, eight ahead in narrow float reductions and softmax), peers/ (../shared/peers), models.tgz and refs.tgz (the six's models/ and refs/, with
# movenet-thunder's and blazepose-heavy's refs), and
# zero-models.tgz (bench/zero_floats.py's copy of the 41 package models), whose
# movenet-thunder and blazepose-heavy (weights zeroed: the real ones pass the carry limit)
# join the six for timing, with their refs' inputs; carry [".gl", ".gpubuild/s36"].
S=.gpubuild/s36
mkdir -p /tmp/s36 && tar xzf $S/models.tgz -C /tmp/s36 && tar xzf $S/refs.tgz -C /tmp/s36
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
M6="centernet selfie faceres-deep handlandmark-full efficientpose posenet"
mkdir -p /tmp/zm && tar xzf $S/zero-models.tgz -C /tmp/zm; Z=/tmp/zm/models
mkdir -p /tmp/m8; for f in /tmp/s36/models/* $Z/movenet-thunder.* $Z/blazepose-heavy.*; do cp -L $f /tmp/m8/; done  # copies: a link out of the folder is refused (its shards would be outside it)
M8="$M6 movenet-thunder blazepose-heavy"
P=${PARTS:-1234}  # the parts to run (as run: 1234, then 23 again after the links were refused)
# 1. outputs of b0 and b1 bitwise the same (TopK's order is a total one; the pools,
#    reductions and softmax sum in the same order)
case $P in *1*)
for m in $M6; do
  ins=$(python3 -c "import json,sys;d='/tmp/s36/refs/$m';j=json.load(open(d+'/manifest.json'));print(' '.join('--input %s=%s/%s'%(i['name'],d,i['file']) for i in j['inputs']))")
  for b in b0 b1; do $S/$b -q --no-plan-cache $ins --output /tmp/o-$b-$m /tmp/s36/models/$m.json; done
  same=yes; for f in /tmp/o-b0-$m/*.npy; do cmp -s $f /tmp/o-b1-$m/$(basename $f) || same=no; done
  echo "$m same bits: $same"
done > $OUT/same.txt 2>&1; cat $OUT/same.txt ;; esac
# 2. the two builds interleaved, no budget (medians of 200, least of 2 rounds)
case $P in *2*) timeout 130 python3 bench/stream_h200.py --models-dir /tmp/m8 --refs /tmp/s36/refs --out $OUT/st --runs 200 \
  --rounds 2 --factors '' --models $(echo $M8 | tr ' ' ,) b0=$S/b0 b1=$S/b1 > $OUT/st.log 2>&1; tail -12 $OUT/st.log ;; esac
# 3. b1 side by side with cuDNN, with traces
case $P in *3*) timeout 200 sh bench/speed_h200.sh $S/peers /tmp/m8 /tmp/s36/refs $OUT/sp b1=$S/b1 -- $M8 > $OUT/sp.log 2>&1
grep -A10 '^| model | streaminfer' $OUT/sp.log | head -11 ;; esac
# 4. the command line pointing the driver's shader cache at DIR/gl (cli/main.c, 4078b8a), as
#    root with none of the driver's variables set: two starts of the 40 package models
case $P in *4*)
unset __GL_SHADER_DISK_CACHE __GL_SHADER_DISK_CACHE_PATH
rm -rf /tmp/pc2; mkdir -p /tmp/pc2
for r in 1 2; do echo "== b1 plan cache, start $r"; PLAN_CACHE=/tmp/pc2 timeout 45 sh bench/cold_package.sh $S/b1 $Z; done > $OUT/cold.txt 2>&1
du -s /tmp/pc2/gl > $OUT/glcache.txt 2>&1; ls /tmp/pc2/gl | head -3 >> $OUT/glcache.txt 2>&1; cat $OUT/glcache.txt
grep -c "| none |" $OUT/cold.txt ;; esac
tar czf $OUT/sp.tgz -C $OUT sp 2>/dev/null && rm -rf $OUT/sp
