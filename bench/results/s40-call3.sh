#!/bin/sh
# Session 40's last try, s40-call1.sh cut to what the device time left allows: main, shp,
# px2 and px4 (shp with SI_CONV=px:2,0 and px:4,0) interleaved (stream_h200.py, no budget,
# 2 rounds of 200) on five models, and each one's outputs against main's, bitwise.
# Payload and carry as s40-call1.sh's.
S=.gpubuild/s40/p1
mkdir -p /tmp/s40 && tar xzf $S/m.tgz -C /tmp/s40
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
M=/tmp/s40/models R=/tmp/s40/refs
MODELS="selfie faceres-deep centernet posenet handlandmark-full"
timeout 130 python3 bench/stream_h200.py --models-dir $M --refs $R --out $OUT/st --runs 200 --rounds 2 --factors '' \
    --models $(echo $MODELS | tr ' ' ,) main=$S/main/streaminfer shp=$S/shp/streaminfer \
    px2=$S/shp/streaminfer@SI_CONV=px:2,0 px4=$S/shp/streaminfer@SI_CONV=px:4,0 > $OUT/st.log 2>&1
cat $OUT/st/stream.md
for m in $MODELS; do
    ins=$(python3 -c "import json,os,sys; d='$R/$m'; m=json.load(open(d+'/manifest.json')); print(' '.join('--input %s=%s' % (i['name'], os.path.join(d, i['file'])) for i in m['inputs']))")
    for c in main shp px2 px4; do
        b=$c; e=""; case $c in px2) b=shp; e=px:2,0 ;; px4) b=shp; e=px:4,0 ;; esac
        SI_CONV=$e $S/$b/streaminfer -q --output /tmp/s40/o-$c-$m $ins $M/$m.json >/dev/null 2>&1 || echo "$m $c: run failed"
    done
    for c in shp px2 px4; do diff -r /tmp/s40/o-main-$m /tmp/s40/o-$c-$m >/dev/null && echo "$m: $c bitwise main" || echo "$m: $c DIFFERS from main"; done
done | tee $OUT/same-bits.txt
