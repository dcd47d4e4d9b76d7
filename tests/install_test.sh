#!/bin/sh
# make install into a DESTDIR, then the README's example program built with
# pkg-config against it (shared and --static) and run on a model; the man page
# names every option --help names; make uninstall leaves nothing.
#   tests/install_test.sh BUILD_DIR MODEL.json
set -u
B=$(cd "$1" && pwd)
MODEL=$2
TOP=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
fail() { echo "install_test: $*"; exit 1; }
P=/usr/local
D=$T/root
make -s -C "$TOP" install B="$B" DESTDIR="$D" PREFIX=$P > "$T/make.log" 2>&1 ||
    { tail -20 "$T/make.log"; fail "make install failed"; }
for f in bin/streaminfer lib/libstreaminfer.a lib/libstreaminfer.so.0 lib/libstreaminfer.so \
         include/streaminfer.h lib/pkgconfig/streaminfer.pc share/man/man1/streaminfer.1; do
    [ -e "$D$P/$f" ] || fail "not installed: $P/$f"
done
readelf -d "$D$P/lib/libstreaminfer.so.0" | grep -q 'SONAME.*\[libstreaminfer\.so\.0\]' ||
    fail "libstreaminfer.so.0 has no SONAME libstreaminfer.so.0"
v=$("$D$P/bin/streaminfer" --version) || fail "--version failed"
want=$(sed -n 's/^#define SI_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)/\2/p' "$TOP/include/streaminfer.h" | paste -sd.)
[ "$v" = "streaminfer $want" ] || fail "--version says '$v', the header $want"
grep -q "\"$want\"\\|$want" "$D$P/lib/pkgconfig/streaminfer.pc" || fail "pkg-config version"

# the README's example, exactly as written there
sed -n '/^```c$/,/^```$/p' "$TOP/README.md" | sed '1d;$d' > "$T/app.c"
grep -q 'int main' "$T/app.c" || fail "no example program in the README"
export PKG_CONFIG_PATH="$D$P/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$D"
cc -std=c11 -Wall -Wextra -Werror "$T/app.c" $(pkg-config --cflags --libs streaminfer) -o "$T/app" ||
    fail "the example does not build with pkg-config"
cc -std=c11 -Wall -Wextra -Werror "$T/app.c" $(pkg-config --static --cflags streaminfer) \
    "$D$P/lib/libstreaminfer.a" $(pkg-config --static --libs-only-l streaminfer | sed 's/-lstreaminfer//') \
    -o "$T/app-static" || fail "the example does not build statically"
out=$(LD_LIBRARY_PATH="$D$P/lib" "$T/app" "$MODEL") || fail "the example failed: $out"
echo "$out" | grep -q "streaminfer $want: .*peak GPU [1-9]" || fail "unexpected output: $out"
out2=$("$T/app-static" "$MODEL") || fail "the static example failed: $out2"
[ "$out" = "$out2" ] || fail "shared and static builds differ: '$out' / '$out2'"
LD_LIBRARY_PATH="$D$P/lib" ldd "$T/app" | grep -q "libstreaminfer.so.0 => $D" || fail "app is not linked to the installed .so"

# every option of --help is in the man page
sed 's/\\//g' "$D$P/share/man/man1/streaminfer.1" > "$T/man.txt"
for o in $("$D$P/bin/streaminfer" --help | grep '^  -' | grep -o -- '--*[a-zA-Z][a-z-]*'); do
    grep -qF -- "$o" "$T/man.txt" || fail "man page lacks $o"
done

make -s -C "$TOP" uninstall B="$B" DESTDIR="$D" PREFIX=$P > /dev/null || fail "make uninstall"
left=$(find "$D" -type f -o -type l | head -5)
[ -z "$left" ] || fail "uninstall left: $left"
echo "install_test: installed, README example built with pkg-config (shared and static) and ran: $out"
