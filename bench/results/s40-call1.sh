#!/bin/sh
# Session 40's first device call. Builds: main (5dce42d); geo (main +
# bench/results/conv-geometry.patch: conv2d's and depthwise conv2d's window geometry as
# constants where their programs are compiled for the epilogue); shp (main +
# bench/results/conv-px.patch: geo, plus conv2d's input width and channels and output width
# and depthwise conv2d's widths as constants, plus conv2d's px variant, off unless
# SI_CONV=px:PIXELS,MIN_OUTPUTS: that many output pixels an invocation, one output channel);
# noepi (main with glk_set_epi(g, 0) at context creation: the programs that read P).
# (1) main, geo, shp, px2 (shp with SI_CONV=px:2,0) and px4 (px:4,0) interleaved
# (stream_h200.py, no budget, 2 rounds of 200), and each one's outputs against main's,
# bitwise. (2) shp's kernel tests on the NVIDIA driver: conv (kt_same_epi, the px variants
# bitwise plain) and pool_reduce (kt_same_ahead: AHEAD8/AHEAD32 of 5dce42d). (3) Cold start
# (bench/coldstart.sh, no plan cache, the driver's disk cache off) of main, noepi and shp.
# Payload .gpubuild/s40/p1 (m.tgz: models/ and refs/; main/, geo/, shp/, noepi/: builds;
# tests/: the kernel tests, xz); carry [".gl", ".gpubuild/s40/p1", ".peers"].
S=.gpubuild/s40/p1
mkdir -p /tmp/s40 && tar xzf $S/m.tgz -C /tmp/s40
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
M=/tmp/s40/models R=/tmp/s40/refs
MODELS="selfie faceres-deep centernet posenet handlandmark-full"
timeout 170 python3 bench/stream_h200.py --models-dir $M --refs $R --out $OUT/st --runs 200 --rounds 2 --factors '' \
    --models $(echo $MODELS | tr ' ' ,) main=$S/main/streaminfer geo=$S/geo/streaminfer shp=$S/shp/streaminfer \
    px2=$S/shp/streaminfer@SI_CONV=px:2,0 px4=$S/shp/streaminfer@SI_CONV=px:4,0 > $OUT/st.log 2>&1
cat $OUT/st/stream.md
for m in $MODELS; do
    ins=$(python3 -c "import json,os,sys; d='$R/$m'; m=json.load(open(d+'/manifest.json')); print(' '.join('--input %s=%s' % (i['name'], os.path.join(d, i['file'])) for i in m['inputs']))")
    for c in main geo shp px2 px4; do
        b=$c; e=""; case $c in px2) b=shp; e=px:2,0 ;; px4) b=shp; e=px:4,0 ;; esac
        SI_CONV=$e $S/$b/streaminfer -q --output /tmp/s40/o-$c-$m $ins $M/$m.json >/dev/null 2>&1 || echo "$m $c: run failed"
    done
    for c in geo shp px2 px4; do diff -r /tmp/s40/o-main-$m /tmp/s40/o-$c-$m >/dev/null && echo "$m: $c bitwise main" || echo "$m: $c DIFFERS from main"; done
done | tee $OUT/same-bits.txt
mkdir -p /tmp/s40/t && for f in $S/tests/*.xz; do xz -dc $f > /tmp/s40/t/$(basename $f .xz); done; chmod +x /tmp/s40/t/*
for t in /tmp/s40/t/*; do
    s=$(date +%s.%N)
    timeout 40 $t > $OUT/$(basename $t).log 2>&1; rc=$?
    e=$(date +%s.%N)
    echo "$(basename $t): rc=$rc $(awk -v a=$s -v b=$e "BEGIN{printf \"%.1f\", b-a}") s; $(grep -c '^\[       OK' $OUT/$(basename $t).log) OK, $(grep -c '^\[  FAILED  \] test' $OUT/$(basename $t).log) failed"
done | tee $OUT/kernels.txt
export __GL_SHADER_DISK_CACHE=0
for b in main noepi shp; do
    echo "== $b"; BIG=$M timeout 15 sh bench/coldstart.sh $S/$b/streaminfer $(for m in $MODELS; do printf '%s.json ' $m; done) -- none
done | tee $OUT/cold.md
