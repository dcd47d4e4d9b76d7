# Sourced by the test scripts:   . "$(dirname "$0")/lib.sh"
# T: a scratch folder, removed when the script exits.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# key NAME FILE: the number of "NAME" in a --stats JSON file.
key() { sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" "$2"; }
