#!/bin/sh
# docs/ARCHITECTURE.md describes the code as it is (issue 14): every file it
# names exists, and every source file of the library's folders is named in it
# (by name or by a pattern such as `op_*.c`), so a file added or moved without
# the map changing fails here.
#   tests/docs_test.sh [ROOT]
set -u
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
DOC=$ROOT/docs/ARCHITECTURE.md
fails=0
bad() { echo "  FAIL $1"; fails=$((fails + 1)); }
[ -f "$DOC" ] || { echo "  FAIL no docs/ARCHITECTURE.md"; exit 1; }
grep -q "docs/ARCHITECTURE.md" "$ROOT/README.md" || bad "the README does not link docs/ARCHITECTURE.md"
# names in backticks that look like files
names=$(grep -o '`[A-Za-z0-9_./*<>-]*\.\(c\|h\|sh\|js\|comp\|md\)`' "$DOC" | tr -d '`' | sort -u)
n=0
for f in $names; do
    n=$((n + 1))
    case $f in *'<'*) continue ;; esac # a template such as shaders/<shader>.comp
    case $f in
    */*) set -- $(cd "$ROOT" && ls -d $f 2>/dev/null) ;;
    *) set -- $(cd "$ROOT" && ls -d base/$f cli/$f runtime/$f pager/$f core/$f io/$f glkernels/$f 2>/dev/null) ;;
    esac
    [ $# -gt 0 ] || bad "docs/ARCHITECTURE.md names $f, which does not exist"
done
m=0
for f in $(cd "$ROOT" && ls base/*.c cli/*.c runtime/*.c pager/*.c core/*.c io/*.c glkernels/*.c); do
    m=$((m + 1))
    b=${f##*/}
    found=0
    for p in $names; do
        case $p in */*) q=$p ;; *) q=${f%/*}/$p ;; esac
        # shellcheck disable=SC2254
        case $f in $q) found=1; break ;; esac
        case $b in $p) found=1; break ;; esac
    done
    [ $found -eq 1 ] || bad "$f is not in docs/ARCHITECTURE.md"
done
[ $fails -eq 0 ] && echo "  ok   docs/ARCHITECTURE.md: its $n file names exist, and it names all $m library sources"
[ $fails -eq 0 ]
