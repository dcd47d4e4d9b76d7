#!/bin/sh
# How the GPU's packHalf2x16 rounds (GLSL leaves it to the implementation): a
# one-node-after-another graph, x -> Relu -> Neg, at --precision f16 with the
# input kept float32, so Relu's output is the one value stored as a half (8192
# elements, over the 4096 kept float32), and the output, float32 again, shows
# how it rounded. Inputs 1 + k*2^-20 (k < 1024) lie between the halves 1 and
# 1 + 2^-10, half of them past the midpoint, one on it (a tie, to even: 1).
# Prints the share of outputs equal to round-to-nearest-even and to
# round-toward-zero of the input.
#   bench/half_rounding.sh STREAMINFER
set -eu
SI=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cat >"$T/model.json" <<'JSON'
{"format":"graph-model","generatedBy":"2.x","convertedBy":"TensorFlow.js Converter v3","modelTopology":{"node":[
{"name":"x","op":"Placeholder","attr":{"dtype":{"type":"DT_FLOAT"},"shape":{"shape":{"dim":[{"size":"1"},{"size":"8192"}]}}}},
{"name":"r","op":"Relu","input":["x"],"attr":{"T":{"type":"DT_FLOAT"}}},
{"name":"y","op":"Neg","input":["r"],"attr":{"T":{"type":"DT_FLOAT"}}}],"versions":{"producer":1}},"weightsManifest":[]}
JSON
python3 - "$T/x.npy" <<'PY'
import struct, sys
x = [1 + (i % 1024) * 2.0 ** -20 for i in range(8192)]
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 8192), }"
hdr += ' ' * (63 - (10 + len(hdr)) % 64) + '\n'
open(sys.argv[1], 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode() + struct.pack('<8192f', *x))
PY
"$SI" -q --precision f16 --f32-ops Placeholder --input "x=$T/x.npy" --output "$T/out" "$T/model.json"
python3 - "$T/x.npy" "$T/out/y.npy" <<'PY'
import struct, sys
def load(p):
    b = open(p, 'rb').read(); n = struct.unpack('<H', b[8:10])[0]; d = b[10 + n:]
    return struct.unpack('<%df' % (len(d) // 4), d)
x, y = load(sys.argv[1]), [-v for v in load(sys.argv[2])]
rne = [struct.unpack('<e', struct.pack('<e', v))[0] for v in x]
rtz = [1.0 if v < 1 + 2 ** -10 else v for v in x]
n = len(x)
print('packHalf2x16: round to nearest even %.4f, toward zero %.4f (of %d values; the tie 1 + 2^-11 -> %r)'
      % (sum(a == b for a, b in zip(y, rne)) / n, sum(a == b for a, b in zip(y, rtz)) / n, n, y[512]))
PY
