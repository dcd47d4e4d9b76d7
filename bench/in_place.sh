#!/bin/sh
# Outputs written in place (si_options.copy_kernels 1): per model, the bytes its output
# kernels wrote straight into the host pool (--stats bytes_out_in_place, two runs) and
# whether the outputs are bitwise those of the copies (SI_COPY_KERNELS=-1). No budget; the
# references' inputs where REFS_DIR has them.
#   bench/in_place.sh STREAMINFER MODELS_DIR REFS_DIR MODEL...
set -u
SI=$1 M=$2 R=$3
shift 3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for m in "$@"; do
    ins=$(python3 - "$R/$m" <<'PY'
import json, os, sys
d = sys.argv[1]
p = os.path.join(d, 'manifest.json')
if os.path.exists(p):
    print(' '.join('--input %s=%s' % (i['name'], os.path.join(d, i['file'])) for i in json.load(open(p))['inputs']))
PY
)
    for k in -1 1; do
        # shellcheck disable=SC2086
        SI_COPY_KERNELS=$k "$SI" -q --no-plan-cache --runs 2 $ins --output "$T/$m$k" --stats "$T/$m$k.json" \
            "$M/$m.json" >/dev/null || echo "$m: the run with SI_COPY_KERNELS=$k failed"
    done
    b=$(sed -n 's/.*"bytes_out_in_place":[[:space:]]*\([0-9]*\).*/\1/p' "$T/${m}1.json")
    d=$(sed -n 's/.*"bytes_downloaded":[[:space:]]*\([0-9]*\).*/\1/p' "$T/${m}1.json")
    diff -r "$T/$m-1" "$T/${m}1" >/dev/null && same=bitwise || same=DIFFERENT
    echo "$m: $b of $d output bytes written in place; outputs $same"
done
