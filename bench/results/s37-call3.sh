#!/bin/sh
# Session 37's third device call. .gpubuild/s37 as s37-call.sh, with dispatch_cost
# (bench/dispatch_cost.c: CPU issue times, uniform-buffer and barrier variants) and b3
# (main at 39f9b6b with bench/results/ubo-params.patch applied: SI_XP_UBO=1 keeps every
# distinct P block and NT once in a uniform buffer and binds a range of it a step, instead
# of glUniform1iv and glUniform1ui); carry [".gl", ".gpubuild/s37"].
S=.gpubuild/s37
mkdir -p /tmp/s37 && tar xzf $S/models.tgz -C /tmp/s37 && tar xzf $S/refs.tgz -C /tmp/s37
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
(for g in 4; do $S/dispatch_cost 2000 5 $g; done) > $OUT/dc.txt 2>&1; cat $OUT/dc.txt
mkdir -p /tmp/zm && tar xzf $S/zero-models.tgz -C /tmp/zm; Z=/tmp/zm/models
mkdir -p /tmp/m8; for f in /tmp/s37/models/* $Z/movenet-thunder.* $Z/blazepose-heavy.*; do cp -L $f /tmp/m8/; done
timeout 100 python3 bench/stream_h200.py --models-dir /tmp/m8 --refs /tmp/s37/refs --out $OUT/st --runs 200 \
  --rounds 2 --factors "" --models selfie,centernet,faceres-deep \
  b3=$S/b3 ubo=$S/b3@SI_XP_UBO=1 > $OUT/st.log 2>&1
cat $OUT/st/stream.md
# the outputs of both, file by file (the same program; only how P reaches it differs)
for m in selfie; do
  ins=$(python3 -c "import json;d='/tmp/s37/refs/$m';j=json.load(open(d+'/manifest.json'));print(' '.join('--input %s=%s/%s'%(i['name'],d,i['file']) for i in j['inputs']))")
  $S/b3 -q --no-plan-cache $ins --output /tmp/o3-$m /tmp/m8/$m.json; SI_XP_UBO=1 $S/b3 -q --no-plan-cache $ins --output /tmp/ou-$m /tmp/m8/$m.json
  diff -r /tmp/o3-$m /tmp/ou-$m > /dev/null && echo "$m same bits" || echo "$m DIFFERS"
done | tee $OUT/same.txt
(cd $OUT && tar czf all.tgz st 2>/dev/null; rm -rf st)
