#!/usr/bin/env python3
"""Copies tfjs graph models with their float weights zeroed, so that a folder of
models compresses to almost nothing and fits the GPU machine's carry limit:
    bench/zero_floats.py SRC_DIR DST_DIR
SRC_DIR: model .json files (each with its shards beside it, as the package's
models/ folder). The copies keep every integer, bool and string weight byte for
byte (shapes, axes, sizes and indices that plans depend on) and float weights of
fewer than 64 elements (scalars that some graphs compute shapes and ranges from:
movenet-multipose's Range, faceboxes' padding), and zero the other float weights
(float32, and float32 stored quantized or as float16). A plan, the
programs it compiles and the GPU work of a run depend on shapes only, so open
and first-run times of a copy stand for the model's own (checked against the
real models in bench/results/startup.md, session 35); its outputs do not."""
import json
import os
import sys

ELEM = {"float32": 4, "int32": 4, "bool": 1, "uint8": 1, "uint16": 2, "float16": 2,
        "complex64": 8, "int64": 8}


def zero_model(src_json, dst_dir):
    with open(src_json) as f:
        model = json.load(f)
    base = os.path.dirname(src_json)
    for group in model.get("weightsManifest", []):
        data = bytearray()
        for p in group["paths"]:
            with open(os.path.join(base, p), "rb") as f:
                data += f.read()
        at = 0
        for w in group["weights"]:
            n = 1
            for d in w["shape"]:
                n *= d
            dtype = w["dtype"]
            if dtype == "string":  # each: a 4-byte length, then its bytes
                for _ in range(n):
                    at += 4 + int.from_bytes(data[at:at + 4], "little")
                continue
            q = w.get("quantization")
            size = n * ELEM[q["dtype"] if q else dtype]
            if dtype == "float32" and n >= 64:
                data[at:at + size] = bytes(size)
            at += size
        if at > len(data):
            sys.exit(f"{src_json}: the manifest names {at} bytes, the shards hold {len(data)}")
        at = 0
        for p in group["paths"]:
            size = os.path.getsize(os.path.join(base, p))
            with open(os.path.join(dst_dir, p), "wb") as f:
                f.write(data[at:at + size])
            at += size
    with open(os.path.join(dst_dir, os.path.basename(src_json)), "w") as f:
        json.dump(model, f)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, dst = sys.argv[1], sys.argv[2]
    os.makedirs(dst, exist_ok=True)
    for name in sorted(os.listdir(src)):
        if name.endswith(".json"):
            zero_model(os.path.join(src, name), dst)


if __name__ == "__main__":
    main()
