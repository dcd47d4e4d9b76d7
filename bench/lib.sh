# Sourced by the bench scripts (HERE: this folder):   . "$HERE/lib.sh"
# T (a scratch folder removed at exit) and key, as in tests/lib.sh; and:
. "$HERE/../tests/lib.sh"
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
now() { date +%s.%N; }
# spec_parts MODEL[@SIZE]: sets name and size (empty without @SIZE).
spec_parts() { name=${1%@*}; size=""; [ "$1" = "$name" ] || size=${1#*@}; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# A seeded uniform [0,1) float32 input of [1,S,S,3] as .npy (frcnn's sizes are free).
make_input() { # SIZE FILE
    python3 - "$1" "$2" <<'PY'
import array, random, sys
s = int(sys.argv[1]); random.seed(1)
a = array.array('f', (random.random() for _ in range(s * s * 3)))
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, %d, %d, 3), }" % (s, s)
hdr += ' ' * (63 - (10 + len(hdr)) % 64) + '\n'
with open(sys.argv[2], 'wb') as f:
    f.write(b'\x93NUMPY\x01\x00' + len(hdr).to_bytes(2, 'little') + hdr.encode()); a.tofile(f)
PY
}
