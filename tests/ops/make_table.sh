#!/bin/sh
# Writes tests/OPS.md (issue 15): generates the per-op cases (gen.js), runs
# them (BUILD/tests/test_ops) and tabulates the converter's op list against
# streaminfer's op table and the results (table.js).
#   tests/ops/make_table.sh BUILD_DIR
set -eu
B=$1
HERE=$(cd "$(dirname "$0")" && pwd)
"$HERE/../oracle/setup.sh"
node "$HERE/gen.js" "$B/ops-cases"
"$B/tests/test_ops" --list-ops > "$B/ops-known.tsv"
# the table shows failing cases as FAILING; it is written whatever they give
"$B/tests/test_ops" "$B/ops-cases" "$B/ops-results.tsv" | tail -n 1 || true
node "$HERE/table.js" "$B/ops-known.tsv" "$B/ops-results.tsv" > "$HERE/../OPS.md"
tail -n 1 "$HERE/../OPS.md"
