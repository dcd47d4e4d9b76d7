#!/bin/sh
# Outputs written in place (runtime/backend_gpu.c in_place_ready: with SI_COPY_KERNELS=1 the
# kernel that makes a model output writes its home in the mapped pool, and the copy after the
# run is left out). Written in session 41 and not run there (no device time left); a later
# session runs it to decide whether auto should do it on a GPU. efficientpose (8.7 MB of
# outputs, 0.18 ms of copies a run on the H100), movenet-thunder and blazepose-heavy:
# bench/stream_h200.py, no budget, the median of 200 runs a process, main (the build, default
# settings) and ip (the same build, SI_COPY_KERNELS=1) interleaved, the least of 2 rounds;
# each model's outputs of ip against main's, bitwise, and ip's bytes_out_in_place;
# torchref's CUDA-graph medians in the same call; bench/ratio_table.py. Payload
# .gpubuild/s41/c (m.tgz: models/, refs/ of the three; main/streaminfer.xz: the build);
# carry [".gl", ".peers", ".gpubuild/s41/c"].
S=.gpubuild/s41/c
mkdir -p /tmp/s41 && tar xzf $S/m.tgz -C /tmp/s41
xz -dc $S/main/streaminfer.xz > /tmp/s41/main && chmod +x /tmp/s41/main
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
M=/tmp/s41/models R=/tmp/s41/refs
MODELS="efficientpose movenet-thunder blazepose-heavy"
for m in $MODELS; do
    ins=$(python3 -c "import json,os; d='$R/$m'; j=json.load(open(d+'/manifest.json')); print(' '.join('--input %s=%s' % (i['name'], os.path.join(d, i['file'])) for i in j['inputs']))")
    for c in main ip; do
        k=0; [ $c = ip ] && k=1
        SI_COPY_KERNELS=$k /tmp/s41/main -q --runs 3 --output /tmp/s41/o-$c-$m --stats $OUT/stats-$c-$m.json $ins $M/$m.json >/dev/null 2>&1 || echo "$m $c: run failed"
    done
    diff -r /tmp/s41/o-main-$m /tmp/s41/o-ip-$m >/dev/null && echo "$m: ip bitwise main" || echo "$m: ip DIFFERS from main"
    grep -o '"bytes_out_in_place":[[:space:]]*[0-9]*' $OUT/stats-ip-$m.json
done | tee $OUT/same-bits.txt
timeout 450 sh bench/speed_medians.sh .peers $M $R $OUT main=/tmp/s41/main ip=/tmp/s41/main@SI_COPY_KERNELS=1 -- $MODELS
