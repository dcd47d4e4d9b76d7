#!/bin/sh
# Installs what streaminfer builds and tests with, from Debian's packages.
set -eu
pkgs="build-essential pkg-config libepoxy-dev libegl-dev libgles-dev libegl-mesa0 libgl1-mesa-dri
      liburing-dev libcjson-dev libcmocka-dev libstb-dev valgrind glslang-tools
      clang-14 libclang-rt-14-dev llvm-14"
command -v node >/dev/null 2>&1 || pkgs="$pkgs nodejs"
command -v npm >/dev/null 2>&1 || pkgs="$pkgs npm"
# Node-API headers for bindings/node (make node): Debian's nodejs keeps them in
# libnode-dev; NodeSource's nodejs ships them itself and conflicts with libnode-dev,
# so it is asked for only with Debian's nodejs (or none yet) and no headers found
node_inc=$(node -p "require('path').resolve(process.execPath, '../../include/node')" 2>/dev/null || true)
if [ ! -f "$node_inc/node_api.h" ] && [ ! -f /usr/include/node/node_api.h ]; then
  if ! command -v node >/dev/null 2>&1 || dpkg-query -W -f='${Version}' nodejs 2>/dev/null | grep -q dfsg; then
    pkgs="$pkgs libnode-dev"
  else
    echo "deps: no node_api.h for this node ($(command -v node)); make node needs NODE_INC=DIR" >&2
  fi
fi
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then echo "deps: all installed"; exit 0; fi
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
# another apt or dpkg (unattended-upgrades on a fresh machine, a second make deps)
# may hold the locks: apt-get waits up to DEPS_LOCK_WAIT seconds for dpkg's locks,
# and each step is tried DEPS_TRIES times, DEPS_RETRY_SLEEP seconds apart (apt-get
# update fails at once on a held lists lock, and on a network hiccup)
LOCK_WAIT=${DEPS_LOCK_WAIT:-600}
TRIES=${DEPS_TRIES:-10}
PAUSE=${DEPS_RETRY_SLEEP:-15}
apt() { DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout="$LOCK_WAIT" "$@"; }
retry() { # what, command...
  what=$1
  shift
  i=1
  until "$@"; do
    if [ "$i" -ge "$TRIES" ]; then
      echo "deps: $what failed $TRIES times; giving up" >&2
      exit 1
    fi
    echo "deps: $what failed (try $i of $TRIES; an apt lock held, or the network); again in $PAUSE s" >&2
    i=$((i + 1))
    sleep "$PAUSE"
  done
}
echo "deps: installing$missing"
retry "apt-get update" apt update -qq
# shellcheck disable=SC2086
retry "apt-get install" apt install -y -qq --no-install-recommends $missing
