#!/bin/sh
# Installs the pinned TensorFlow.js packages of the test oracle
# (tests/oracle/package-lock.json) into tests/oracle/node_modules if missing.
set -eu

die() { echo "oracle/setup.sh: error: $*" >&2; exit 1; }

DIR=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null 2>&1 || die "node not found; install Node.js >= 18 (the oracle is TensorFlow.js under Node)"
command -v npm >/dev/null 2>&1 || die "npm not found; install npm (it comes with Node.js)"
MAJOR=$(node -p 'process.versions.node.split(".")[0]') || die "cannot run node"
[ "$MAJOR" -ge 18 ] || die "node $(node --version) is too old; need >= 18"

have() { [ -f "$DIR/node_modules/@tensorflow/$1/package.json" ]; }
if have tfjs-core && have tfjs-converter && have tfjs-backend-cpu; then
    exit 0
fi

echo "oracle/setup.sh: installing TensorFlow.js into $DIR/node_modules ..."
cd "$DIR"
if ! npm ci --no-audit --no-fund; then
    echo "oracle/setup.sh: npm ci failed; trying npm install" >&2
    npm install --no-audit --no-fund || die "npm install failed in $DIR"
fi
if ! { have tfjs-core && have tfjs-converter && have tfjs-backend-cpu; }; then
    die "TensorFlow.js packages still missing from $DIR/node_modules"
fi
echo "oracle/setup.sh: done"
