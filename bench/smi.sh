# Sourced by the bench scripts: the card's memory in use, from nvidia-smi (MiB).
used() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1; }
sampler() { # the highest memory.used seen, into file $1, every 20 ms until killed
    max=0
    while :; do
        u=$(used)
        if [ "$u" -gt "$max" ]; then max=$u; echo "$max" >"$1"; fi
        sleep 0.02
    done
}
ctx_baseline() { # sets idle and ctx: the card's memory idle, and with an empty streaminfer context
    idle=$(used)
    "$1/bench/hold_context" 3 >/dev/null & _pid=$!
    sleep 1.5
    ctx=$(used)
    wait "$_pid"
    echo "idle card: $idle MiB; with an empty streaminfer context: $ctx MiB"
}
