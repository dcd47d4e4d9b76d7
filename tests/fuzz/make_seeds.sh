#!/bin/sh
# Seed corpora of the fuzz targets, made at test time from the package's small
# models (never committed):
#   tests/fuzz/make_seeds.sh MAKE_SEEDS_BIN CACHE OUT
# OUT/model_json: model.json of each small model, its shard paths renamed to
#   w.bin (the target's folder holds a w.bin large enough for them);
# OUT/model: the whole-model target's format (fuzz_model.c): budget, json
#   length, json, shard; each model at no budget and at 1 MiB;
# OUT/image, OUT/npy: from MAKE_SEEDS_BIN (make_seeds.c).
set -eu
BIN=$1
CACHE=$2
OUT=$3
MODELS=$CACHE/human-models/models
# small models (shards under 1 MiB, json under 100 kB) for the whole-model
# target; the json target also gets two larger ones (shards under 16 MiB, its
# w.bin): with blazeface and blazeface-back, the four whose lowering once read
# freed memory (issue 12)
# Only models whose host run under the sanitizers takes well under a second
# seed the whole-model target: each input of it runs the model, and one of
# several seconds (blazeface: 8 s on an idle CI core) is near the 10 s timeout
# and leaves no time to fuzz. The others seed the json target, which lowers
# and plans them (where the freed-memory read of issue 12 was).
SMALL=${FUZZ_SEED_MODELS:-"liveness gender age"}
JSON_ONLY=${FUZZ_SEED_JSON_MODELS:-"antispoof emotion gender-ssrnet-imdb blazeface blazeface-back
blazeface-front facemesh-detection-short selfie meet faceres-deep handlandmark-sparse"}
rm -rf "$OUT"
mkdir -p "$OUT/model_json" "$OUT/model"
"$BIN" "$OUT"

u32() { # little-endian 4 bytes of $1
    printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)))"
}
pack() { # budget json shard > seed
    u32 $(($1 & 4294967295)); u32 $(($1 >> 32))
    u32 "$(wc -c < "$2")"
    cat "$2" "$3"
}

tiny=$OUT/tiny.json
cat > "$tiny" <<'JSON'
{"format":"graph-model","modelTopology":{"node":[
{"name":"x","op":"Placeholder","attr":{"dtype":{"type":"DT_FLOAT"},"shape":{"shape":{"dim":[{"size":"-1"},{"size":"4"}]}}}},
{"name":"w","op":"Const","attr":{"dtype":{"type":"DT_FLOAT"},"value":{"tensor":{"dtype":"DT_FLOAT","tensorShape":{"dim":[{"size":"4"}]}}}}},
{"name":"q","op":"Const","attr":{"dtype":{"type":"DT_FLOAT"},"value":{"tensor":{"dtype":"DT_FLOAT","tensorShape":{"dim":[{"size":"4"}]}}}}},
{"name":"c","op":"Const","attr":{"dtype":{"type":"DT_INT32"},"value":{"tensor":{"dtype":"DT_INT32","tensorShape":{"dim":[{"size":"2"}]},"intVal":[2,2]}}}},
{"name":"s","op":"AddV2","input":["x","w"],"attr":{"T":{"type":"DT_FLOAT"}}},
{"name":"m","op":"Mul","input":["s","q"],"attr":{"T":{"type":"DT_FLOAT"}}},
{"name":"r","op":"Reshape","input":["m","c"],"attr":{"T":{"type":"DT_FLOAT"}}},
{"name":"y","op":"Relu","input":["r"],"attr":{"T":{"type":"DT_FLOAT"}}}
]},"weightsManifest":[{"paths":["w.bin"],"weights":[{"name":"w","shape":[4],"dtype":"float32"},
{"name":"q","shape":[4],"dtype":"float32","quantization":{"dtype":"uint8","min":-1,"scale":0.01}}]}]}
JSON
printf '\000\000\200\077\000\000\000\300\000\000\120\100\000\000\000\077\001\002\003\004' > "$OUT/tiny.bin"
cp "$tiny" "$OUT/model_json/tiny.json"
pack 0 "$tiny" "$OUT/tiny.bin" > "$OUT/model/tiny"
pack 64 "$tiny" "$OUT/tiny.bin" > "$OUT/model/tiny-64"

for name in $SMALL $JSON_ONLY; do
    json=$MODELS/$name.json
    [ -f "$json" ] || { echo "make_seeds: $json is missing (tests/fetch_models.sh)" >&2; exit 1; }
    sed -e 's/"paths": *\[[^]]*\]/"paths":["w.bin"]/g' "$json" > "$OUT/model_json/$name.json"
done
for name in $SMALL; do
    pack 0 "$OUT/model_json/$name.json" "$MODELS/$name.bin" > "$OUT/model/$name"
    pack 1048576 "$OUT/model_json/$name.json" "$MODELS/$name.bin" > "$OUT/model/$name-1M"
done
rm -f "$tiny" "$OUT/tiny.bin"
echo "seeds: $(ls "$OUT/model_json" | wc -l) model.json, $(ls "$OUT/model" | wc -l) models, $(ls "$OUT/image" | wc -l) images, $(ls "$OUT/npy" | wc -l) npy in $OUT"
