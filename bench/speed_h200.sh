#!/bin/sh
# Issue 17: streaminfer against PyTorch/cuDNN on the GPU machine, same models and
# inputs, in one call, for one or more builds (before and after a change); and where
# each build's time goes, from a --trace of one run (the trace waits for the GPU after
# every step, so its per-kind sums are latencies, larger than the untraced run_ms).
#   bench/speed_h200.sh PEERS_DIR MODELS_DIR REFS_DIR OUT_DIR LABEL=BIN[@VAR=VALUE...] [...] -- MODEL...
# (BIN@SI_PRECISION=f16: that build with those variables set, through a wrapper
# written under OUT_DIR, so compare_gpu.py's runs get them too.)
# PEERS_DIR: a copy of ../shared/peers (compare_gpu.py, torchref/). Writes, under
# OUT_DIR/LABEL: compare.md (the ratio table, no budget), compare.json, and
# kinds.md (per model: steps and traced ms by kernel kind); with several builds,
# OUT_DIR/same-bits.txt says whether each model's outputs (the references' inputs,
# no budget) are bitwise the first build's.
set -u
PEERS=$1 MODELS=$2 REFS=$3 OUT=$4
shift 4
builds=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do builds="$builds $1"; shift; done
[ $# -gt 0 ] && shift
names=$(printf '%s,' "$@")
names=${names%,}
for b in $builds; do
    label=${b%%=*} bin=${b#*=}
    d=$OUT/$label
    mkdir -p "$d"
    case $bin in *@*)
        vars=$(echo "${bin#*@}" | tr @ ' ')
        printf '#!/bin/sh\nexec env %s %s "$@"\n' "$vars" "$(cd "$(dirname "${bin%%@*}")" && pwd)/$(basename "${bin%%@*}")" >"$d/bin.sh"
        chmod +x "$d/bin.sh"
        bin=$d/bin.sh ;;
    esac
    echo "== $label ($bin)"
    python3 "$PEERS/compare_gpu.py" --bin "$bin" --models-dir "$MODELS" --refs "$REFS" \
        --models "$names" --runs 200 --factors '' --out "$d" >"$d/compare.log" 2>&1
    sed -n '/^| model/,$p' "$d/compare.log" | tee "$d/compare.md"
    : >"$d/kinds.md"
    for m in "$@"; do
        ins=$(python3 - "$REFS/$m" <<'PY'
import json, os, sys
d = sys.argv[1]
p = os.path.join(d, 'manifest.json')
m = json.load(open(p if os.path.exists(p) else os.path.join(d, 'meta.json')))
print(' '.join('--input %s=%s' % (i['name'], os.path.join(d, i['file'])) for i in m['inputs']))
PY
)
        # shellcheck disable=SC2086
        "$bin" -q --output "$d/out-$m" $ins "$MODELS/$m.json" >/dev/null 2>&1 || echo "$m: run failed" >>"$d/kinds.md"
        # shellcheck disable=SC2086
        "$bin" -q --runs 3 --trace "$d/$m.trace.json" $ins "$MODELS/$m.json" >/dev/null 2>&1 ||
            { echo "$m: the traced run failed" >>"$d/kinds.md"; continue; }
        python3 - "$d/$m.trace.json" "$m" >>"$d/kinds.md" <<'PY'
import json, sys, collections
ev = json.load(open(sys.argv[1]))
ev = ev['traceEvents'] if isinstance(ev, dict) else ev
names = {e['tid']: e['args']['name'] for e in ev if e.get('ph') == 'M' and e.get('name') == 'thread_name'}
agg = collections.defaultdict(lambda: [0, 0.0])
for e in ev:
    if e.get('ph') == 'X':
        k = (names.get(e['tid'], str(e['tid'])), e['name'])
        agg[k][0] += 1
        agg[k][1] += e.get('dur', 0) / 1000.0
tot = sum(v[1] for v in agg.values())
print('\n%s: %.2f ms traced\n\n| track | kind | steps | ms |\n|---|---|---:|---:|' % (sys.argv[2], tot))
for (t, k), (n, ms) in sorted(agg.items(), key=lambda x: -x[1][1])[:12]:
    print('| %s | %s | %d | %.3f |' % (t, k, n, ms))
PY
    done
    cat "$d/kinds.md"
done
first=""
for b in $builds; do
    label=${b%%=*}
    if [ -z "$first" ]; then first=$label; continue; fi
    for m in "$@"; do
        if diff -r "$OUT/$first/out-$m" "$OUT/$label/out-$m" >/dev/null 2>&1; then
            echo "$m: $label bitwise $first"
        else
            echo "$m: $label DIFFERS from $first"
        fi
    done
done | tee "$OUT/same-bits.txt"
