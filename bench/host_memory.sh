#!/bin/sh
# Host-memory budget figures (issue 22): MODEL at --vram VRAM with no host limit
# and with --host-mem HOST, one run each (the first run of a process: weights
# are read as a cold start reads them). Reports outputs bitwise, the host pool,
# peak RSS (VmHWM) against HOST + the empty context's RSS + 32 MiB (+ the arena
# where the GPU is llvmpipe, whose "VRAM" is this process's memory), bytes read
# from files and spilled to the file, the run's wall and CPU time (user + sys,
# every thread: steadier than wall on a shared machine) relative to host-unlimited,
# and the read throughput achieved (file_bytes_read / file_ms) against a plain
# sequential read of the shards (cat into dd, 4 MiB blocks, after one read
# that warms the page cache, as the runs find it: the shards were just read).
#   bench/host_memory.sh BUILD_DIR MODEL_DIR[@SIZE] VRAM HOST [OUT.md]
# @SIZE: a seeded SIZExSIZE input (free sizes: frcnn-irv2), as bench/coldstart.sh.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
B=$1 V=$3 H=$4 OUT=${5:-}
spec_parts "$2"
M=$name
SI=$B/streaminfer
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
mkdir "$T/spill"
# cputime FILE CMD...: CMD's user and system seconds into FILE ("U S"); through the
# shell's times where GNU time is not installed (the H200 machine)
cputime() {
    _f=$1; shift
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f "%U %S" -o "$_f" "$@"
        return
    fi
    times >"$_f.a"
    "$@"
    _rc=$?
    times >"$_f.b"
    cat "$_f.a" "$_f.b" | awk 'NR == 2 || NR == 4 { for (i = 1; i <= 2; i++) { split($i, p, "m"); v[n++] = p[1] * 60 + p[2] } }
        END { printf "%.2f %.2f\n", v[2] - v[0], v[3] - v[1] }' >"$_f"
    return $_rc
}
ins=""
if [ -n "$size" ]; then
    make_input "$size" "$T/in.npy"
    ins="--input $T/in.npy"
fi
run() { # name, args...
    n=$1; shift
    t0=$(now)
    # shellcheck disable=SC2086
    cputime "$T/$n.cpu" "$SI" -q --output "$T/$n" --stats "$T/$n.json" $ins "$@" "$M" \
        2>"$T/$n.err" || { cat "$T/$n.err"; exit 1; }
    t1=$(now)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }' >"$T/$n.wall"
    awk '{ printf "%.2f", $1 + $2 }' "$T/$n.cpu" >"$T/$n.cpus"
}
run full --vram "$V"
run lim --vram "$V" --host-mem "$H" --spill-dir "$T/spill"
same=yes
for f in "$T/full"/*.npy; do cmp -s "$f" "$T/lim/$(basename "$f")" || same=NO; done
[ -z "$(ls -A "$T/spill")" ] || same="$same (spill file left behind!)"
# a plain sequential read of the shards: one process, 4 MiB blocks, in order
shards=$(grep -o '"paths": *\[[^]]*\]' "$M/model.json" | sed 's/"paths": *\[//; s/\]//' | tr -d '" ' | tr ',' '\n')
files=""
total=0
for s in $shards; do
    files="$files $M/$s"
    total=$((total + $(stat -c %s "$M/$s")))
done
# shellcheck disable=SC2086
cat $files >/dev/null
t0=$(now)
# shellcheck disable=SC2086
cat $files | dd of=/dev/null bs=4M iflag=fullblock 2>/dev/null
t1=$(now)
seq_mbs=$(awk -v a="$t0" -v b="$t1" -v n="$total" 'BEGIN { printf "%.0f", n / 1048576 / (b - a) }')
hb=$(numfmt --from=iec "$H")
# shellcheck disable=SC2086
renderer=$("$SI" info $ins "$M" 2>/dev/null | sed -n 's/^gpu *\([^:]*\):.*/\1/p' | head -1)
arena=$(key peak_vram_bytes "$T/lim.json")
case $renderer in *llvmpipe*) extra=$arena; extra_s=" + arena $(mib "$arena")" ;; *) extra=0; extra_s="" ;; esac
row() { # name, label
    j=$T/$1.json
    rd=$(key file_bytes_read "$j")
    ms=$(key file_ms "$j")
    thr=$(awk -v n="$rd" -v t="$ms" 'BEGIN { if (t > 0) printf "%.0f MiB/s", n / 1048576 / (t / 1000); else printf "-" }')
    rel=$(awk -v a="$(cat "$T/$1.wall")" -v b="$(cat "$T/full.wall")" 'BEGIN { printf "%.2fx", a / b }')
    crel=$(awk -v a="$(cat "$T/$1.cpus")" -v b="$(cat "$T/full.cpus")" 'BEGIN { printf "%.2fx", a / b }')
    printf '| %s | %s | %s | %s | %s | %s | %s | %s s (%s) | %s s (%s) | %s |\n' "$2" \
        "$(mib "$(key host_pool_bytes "$j")")" "$(mib "$(key rss_peak_bytes "$j")")" \
        "$(mib "$(key rss_baseline_bytes "$j")")" "$(mib "$rd")" "$(mib "$(key bytes_spilled_to_file "$j")")" \
        "$(mib "$(key bytes_spilled "$j")")" "$(cat "$T/$1.wall")" "$rel" "$(cat "$T/$1.cpus")" "$crel" "$thr"
}
rss=$(key rss_peak_bytes "$T/lim.json")
base=$(key rss_baseline_bytes "$T/lim.json")
bound=$((hb + base + 33554432 + extra))
ok=yes
[ "$rss" -le "$bound" ] || ok=NO
{
    echo "$(basename "$M")${size:+ at ${size}x$size} at --vram $V, weights $(mib "$(key weights_bytes "$T/full.json")"); GPU: $renderer;" \
         "$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
    echo
    echo "| host budget | host pool | peak RSS | empty-context RSS | read from files | spilled to file | spilled (GPU) | wall | CPU (user+sys) | read throughput |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    row full "none"
    row lim "$H"
    echo
    echo "- outputs bitwise identical to host-unlimited: $same"
    echo "- peak RSS at $H: $(mib "$rss") <= $H + empty context $(mib "$base") + 32 MiB$extra_s = $(mib "$bound"): $ok"
    echo "- plain sequential read of the shards (cat | dd bs=4M, one pass, page cache warm): $(mib "$total") at $seq_mbs MiB/s"
} | tee "$T/report"
[ -z "$OUT" ] || cp "$T/report" "$OUT"
