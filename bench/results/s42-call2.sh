#!/bin/sh
# Session 42: issue 17's eight models by medians, outputs written in place, and where each
# side's GPU time goes, in two calls (the models do not fit one carry): PART a (centernet,
# posenet, faceres-deep, handlandmark-full, selfie; payload .gpubuild/s41/a) and PART b
# (efficientpose, movenet-thunder, blazepose-heavy; .gpubuild/s41/b), each m.tgz (models/: the
# package's NAME.json and NAME.bin; refs/: tests/make_refs.sh's NAME/) and main/streaminfer.xz
# (xz -c of main's build/streaminfer at c74c4bf or later). Per call:
#  1. outputs written in place (session 41, opt-in): each model run with SI_COPY_KERNELS=1
#     against the default, outputs compared file by file, bytes_out_in_place from --stats;
#  2. bench/speed_medians.sh, TORCH_PROFILE=1: no budget, the median of 200 runs a process,
#     main, again (the same build under a second label: the command's own spread) and ip (the
#     same build, SI_COPY_KERNELS=1) interleaved, the least of 2 rounds; torchref's CUDA-graph
#     medians and its kernels' time by category (torch.profiler); the ratios;
#  3. bench/gpu_trace.py on main: GPU time by kernel kind from timer queries (one traced run).
#   run with: sh bench/results/s42-call2.sh a|b; carry [".gl", ".peers", ".gpubuild/s41/PART"]
P=$1
S=.gpubuild/s41/$P
case $P in
a) MODELS="centernet posenet faceres-deep handlandmark-full selfie" ;;
b) MODELS="efficientpose movenet-thunder blazepose-heavy" ;;
*) echo "PART a or b"; exit 2 ;;
esac
W=/tmp/s42$P
mkdir -p $W && tar xzf $S/m.tgz -C $W
xz -dc $S/main/streaminfer.xz > $W/streaminfer && chmod +x $W/streaminfer
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/card.txt; cat $OUT/card.txt
M=$W/models R=$W/refs
start=$(date +%s)
for m in $MODELS; do
    ins=$(python3 -c "import json,os; d='$R/$m'; j=json.load(open(d+'/manifest.json')); print(' '.join('--input %s=%s' % (i['name'], os.path.join(d, i['file'])) for i in j['inputs']))")
    for c in main ip; do
        k=0; [ $c = ip ] && k=1
        # shellcheck disable=SC2086
        SI_COPY_KERNELS=$k $W/streaminfer -q --runs 3 --output $W/o-$c-$m --stats $OUT/stats-$c-$m.json $ins $M/$m.json >/dev/null 2>&1 || echo "$m $c: run failed"
    done
    diff -r $W/o-main-$m $W/o-ip-$m >/dev/null && echo "$m: ip bitwise main" || echo "$m: ip DIFFERS from main"
    grep -o '"bytes_out_in_place":[[:space:]]*[0-9]*' $OUT/stats-ip-$m.json
done | tee $OUT/same-bits.txt
echo "bits checked at $(( $(date +%s) - start )) s"
TORCH_PROFILE=1 timeout 420 sh bench/speed_medians.sh .peers $M $R $OUT main=$W/streaminfer \
    again=$W/streaminfer@SI_UNUSED=1 ip=$W/streaminfer@SI_COPY_KERNELS=1 -- $MODELS
echo "medians done at $(( $(date +%s) - start )) s"
names=$(echo $MODELS | tr ' ' ',')
timeout 100 python3 bench/gpu_trace.py --models-dir $M --refs $R --out $OUT/trace --models $names \
    --runs 20 --factors '' --top 8 $W/streaminfer > /dev/null 2> $OUT/trace.err
echo "traced at $(( $(date +%s) - start )) s"
python3 - $OUT/torchref.json <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    sys.exit('no torchref.json')
for r in d['results']:
    p = r.get('profile')
    if p:
        print('%s: cuDNN-side kernels %.0f us in %.0f launches a run: %s' % (
            r['model'], p['kernel_us_total'], p['kernels_per_run'],
            ', '.join('%s %.0f' % kv for kv in p['by_category_us'].items())))
PY
