#!/bin/sh
# A host-memory budget below the model's weights (issue 22): at a VRAM budget
# that pages, with --host-mem HOST, weights are read again from the shards and
# spills go to the spill file; every output bitwise the host-unlimited run's;
# the host pool within HOST; peak RSS (VmHWM) within HOST + the empty
# context's RSS + 32 MiB + the arena (llvmpipe's "VRAM" is this process's
# memory); the spill folder empty afterwards, also when a write to the spill
# file fails (injected, SI_FAIL_SPILL_WRITE); a host budget too small refused
# naming the smallest that works, which `plan` then accepts (and refuses one
# byte less).
#   tests/hostmem_test.sh STREAMINFER MODEL_DIR VRAM HOST
set -u
SI=$1 M=$2 V=$3 H=$4
. "$(dirname "$0")/lib.sh"
fails=0
fail() { echo "  FAIL $*"; fails=$((fails + 1)); }
hb=$(numfmt --from=iec "$H")
mkdir "$T/spill" "$T/spill2"
# the two runs at once: the machine has two cores
"$SI" -q --vram "$V" --output "$T/full" --stats "$T/full.json" "$M" 2>"$T/err1" &
p1=$!
"$SI" -q --vram "$V" --host-mem "$H" --spill-dir "$T/spill" --output "$T/lim" --stats "$T/lim.json" "$M" \
    2>"$T/err2"
r2=$?
wait $p1 || { echo "  FAIL host-unlimited run (exit $?): $(cat "$T/err1")"; exit 1; }
[ $r2 -eq 0 ] || { echo "  FAIL run at --host-mem $H: $(cat "$T/err2")"; exit 1; }
w=$(key weights_bytes "$T/lim.json")
pool=$(key host_pool_bytes "$T/lim.json")
rd=$(key file_bytes_read "$T/lim.json")
sp=$(key bytes_spilled_to_file "$T/lim.json")
rss=$(key rss_peak_bytes "$T/lim.json")
base=$(key rss_baseline_bytes "$T/lim.json")
arena=$(key peak_vram_bytes "$T/lim.json")
[ "$hb" -lt "$w" ] || fail "$H is not below the weights ($w bytes)"
[ "$pool" -le "$hb" ] || fail "host pool $pool over the host budget $hb"
[ "$rd" -gt "$w" ] || fail "read $rd bytes from files, not more than the weights ($w): none read again"
[ "$sp" -gt 0 ] || fail "nothing spilled to the file"
rf=$(key file_bytes_read "$T/full.json")
[ "$rf" -gt 0 ] && [ "$rf" -le "$w" ] || fail "host-unlimited: read $rf bytes, not the weights once ($w at most)"
[ "$(key bytes_spilled_to_file "$T/full.json")" -eq 0 ] || fail "host-unlimited: spilled to a file"
[ "$arena" -le "$(numfmt --from=iec "$V")" ] || fail "peak GPU $arena over $V"
bound=$((hb + base + 33554432 + arena))
[ "$rss" -gt 0 ] && [ "$base" -gt 0 ] || fail "no RSS figures"
[ "$rss" -le "$bound" ] || fail "peak RSS $rss over $hb + baseline $base + 32 MiB + arena $arena = $bound"
n=0
for f in "$T/full"/*.npy; do
    n=$((n + 1))
    cmp -s "$f" "$T/lim/$(basename "$f")" || fail "$(basename "$f") differs from the host-unlimited run"
done
[ $n -gt 0 ] || fail "no outputs"
[ -z "$(ls -A "$T/spill")" ] || fail "left in the spill folder: $(ls -A "$T/spill")"
# (the figures as a line of their own where a check above failed: "ok" only where none did)
[ "$fails" -eq 0 ] && tag=ok || tag=".."
echo "  $tag   $(basename "$M") at --vram $V --host-mem $H (weights $w): pool $pool, read from files $rd," \
     "spilled to file $sp, $n outputs bitwise; peak RSS $rss, bound $bound (baseline $base)"
# a failing write to the spill file: a clear error, nothing left behind
if SI_FAIL_SPILL_WRITE=2 "$SI" -q --vram "$V" --host-mem "$H" --spill-dir "$T/spill2" "$M" 2>"$T/err3"; then
    fail "the injected spill-file failure was not reported"
else
    grep -q "spill file" "$T/err3" || fail "the failure does not name the spill file: $(cat "$T/err3")"
    [ -z "$(ls -A "$T/spill2")" ] || fail "left in the spill folder after a failure: $(ls -A "$T/spill2")"
    echo "  ok   a failed spill-file write: '$(cat "$T/err3")', spill folder empty"
fi
# too small: refused, naming the smallest host budget that works
"$SI" plan -q --vram "$V" --host-mem 64K "$M" >/dev/null 2>"$T/err4"
r4=$?
least=$(sed -n 's/.*smallest host budget that works is .*(\([0-9]*\) bytes).*/\1/p' "$T/err4")
if [ $r4 -ne 4 ] || [ -z "$least" ]; then
    fail "64K: exit $r4, not a refusal naming the smallest host budget: $(cat "$T/err4")"
else
    "$SI" plan -q --vram "$V" --host-mem "$least" "$M" >/dev/null 2>"$T/err5" ||
        fail "the named smallest host budget $least is refused: $(cat "$T/err5")"
    "$SI" plan -q --vram "$V" --host-mem $((least - 1)) "$M" >/dev/null 2>&1 && fail "$((least - 1)) is accepted"
    echo "  ok   --host-mem 64K refused (exit 4): smallest host budget $least, accepted; one byte less refused"
fi
[ $fails -eq 0 ]
