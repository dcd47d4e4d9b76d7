#!/bin/sh
# Session 41's second device call (session 40's call 2 with shp for px2: px measured slower in call 1): efficientpose, movenet-thunder and blazepose-heavy (which
# did not fit the carry beside call 1's five models), side by side with cuDNN
# (bench/speed_h200.sh: main, and px2: shp with SI_CONV=px:2,0 (s40-call1.sh's builds);
# same-bits between them, traced GPU time by kind), and their cold start (no plan cache,
# the driver's disk cache off): main, noepi, shp. Builds xz-compressed. Payload
# .gpubuild/s40/p2 (m.tgz: models/ and refs/; main/, shp/, noepi/);
# carry [".gl", ".gpubuild/s40/p2", ".peers"].
S=.gpubuild/s40/p2
mkdir -p /tmp/s40 && tar xzf $S/m.tgz -C /tmp/s40
for b in main shp noepi; do mkdir -p /tmp/s40/$b && xz -dc $S/$b/streaminfer.xz > /tmp/s40/$b/streaminfer && chmod +x /tmp/s40/$b/streaminfer; done
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
M=/tmp/s40/models R=/tmp/s40/refs B=/tmp/s40
MODELS="efficientpose movenet-thunder blazepose-heavy"
timeout 280 sh bench/speed_h200.sh .peers $M $R $OUT/sp main=$B/main/streaminfer shp=$B/shp/streaminfer -- $MODELS > $OUT/sp.log 2>&1
cat $OUT/sp/main/compare.md $OUT/sp/shp/compare.md $OUT/sp/same-bits.txt
export __GL_SHADER_DISK_CACHE=0
for b in main noepi shp; do
    echo "== $b"; BIG=$M timeout 20 sh bench/coldstart.sh $B/$b/streaminfer $(for m in $MODELS; do printf '%s.json ' $m; done) -- none
done | tee $OUT/cold.md
(cd $OUT && tar czf sp.tgz sp && rm -rf sp)
