#!/bin/sh
# make deps (tools/deps.sh) waits for a held apt lock and retries instead of
# failing (issue 23): run with stand-ins for dpkg-query (one package missing)
# and apt-get (failing as a held lock makes it fail, then working), it must
# pass dpkg's lock timeout, try again, and succeed; with apt-get failing every
# time it must give up after DEPS_TRIES tries with a message.
#   tests/deps_test.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
mkdir -p "$T/bin"
cat >"$T/bin/dpkg-query" <<'X'
#!/bin/sh
# every package installed but pkg-config
for a in "$@"; do last=$a; done
[ "$last" = pkg-config ] && exit 1
echo "install ok installed"
X
cat >"$T/bin/apt-get" <<'X'
#!/bin/sh
echo "$*" >>"$STUB_LOG"
n=$(cat "$STUB_COUNT" 2>/dev/null || echo 0)
echo $((n + 1)) >"$STUB_COUNT"
if [ "$n" -lt "$STUB_FAILS" ]; then
    echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 1 (apt-get)" >&2
    exit 100
fi
exit 0
X
# not root: deps.sh asks sudo, which must reach the stand-in too
printf '#!/bin/sh\nexec "$@"\n' >"$T/bin/sudo"
chmod +x "$T/bin/dpkg-query" "$T/bin/apt-get" "$T/bin/sudo"
run() { # fails-before-success, tries
    rm -f "$T/log" "$T/count"
    PATH="$T/bin:$PATH" STUB_LOG=$T/log STUB_COUNT=$T/count STUB_FAILS=$1 DEPS_TRIES=$2 \
        DEPS_RETRY_SLEEP=0 sh "$HERE/../tools/deps.sh" >"$T/out" 2>&1
}
if run 2 5 && [ "$(wc -l <"$T/log")" -eq 4 ] && grep -q "DPkg::Lock::Timeout=600" "$T/log" &&
    grep -q "install -y -qq --no-install-recommends *pkg-config" "$T/log"; then
    echo "  ok   make deps: two lock failures, tried again, installed (apt-get waits 600 s for dpkg's lock)"
else
    echo "  FAIL make deps with a held lock: $(cat "$T/out" "$T/log" | head -c 400)"; fails=$((fails + 1))
fi
if ! run 99 3 && [ "$(wc -l <"$T/log")" -eq 3 ] && grep -q "failed 3 times; giving up" "$T/out"; then
    echo "  ok   make deps: a lock that stays held gives up after DEPS_TRIES tries, saying so"
else
    echo "  FAIL make deps with a lock held for good: $(cat "$T/out" | head -c 400)"; fails=$((fails + 1))
fi
[ "$fails" -eq 0 ]
