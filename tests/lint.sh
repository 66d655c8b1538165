#!/bin/sh
# The rules of the house that a compiler does not check (HACKING.md):
#   1. layers: a file of src/LAYER/ includes headers of its own layer and of
#      the layers below it only (Makefile's LAYERS, lowest first); gpu/ sits
#      with the backend; src/main.c and src/cli.c are above every layer;
#   2. <ncurses.h> only in src/tui/term.c, CUDA headers only in gpu/;
#   3. no mutable variable at file scope or static inside a function, but
#      the signal flags (volatile sig_atomic_t);
#   4. no function over 80 lines (table literals aside) and no source file
#      over 700 lines, outside gpu/ (its kernels follow the device's limits).
# Usage: tests/lint.sh [DIR]   (DIR: the tree to check, default the one
# this script is in; tests/lint-self.sh plants faults in a copy)
set -u
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT" || exit 2
LAYERS=$(sed -n 's/^LAYERS *:= *//p' Makefile)
[ -n "$LAYERS" ] || { echo "lint: no LAYERS in $ROOT/Makefile"; exit 2; }
fail=0
say() {
    echo "lint: $*"
    fail=$((fail + 1))
}

# The rank of a layer (0 for the lowest), or nothing when it is not one.
rank() {
    i=0
    for l in $LAYERS; do
        [ "$l" = "$1" ] && { echo $i; return; }
        i=$((i + 1))
    done
}
top=$(echo $LAYERS | wc -w)

sources=$(find src gpu -type f \( -name '*.c' -o -name '*.h' -o -name '*.def' -o -name '*.cu' -o -name '*.cuh' \) | sort)

# 1. Layers.
for f in $sources; do
    case $f in
    gpu/*) mine=$(rank backend) ;;
    src/*/*) mine=$(rank "$(echo "$f" | cut -d/ -f2)") ;;
    *) mine=$top ;;
    esac
    [ -n "$mine" ] || { say "$f: its folder is not a layer (LAYERS: $LAYERS)"; continue; }
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | while IFS= read -r line; do
        n=${line%%:*}
        inc=$(echo "$line" | sed 's/.*include[[:space:]]*"\([^"]*\)".*/\1/')
        case $inc in
        */*) layer=${inc%%/*} ;;
        *) continue ;; # a file of its own folder (cli.h, philox_kat.h)
        esac
        theirs=$(rank "$layer")
        if [ -z "$theirs" ]; then
            echo "lint: $f:$n: includes \"$inc\", which is in no layer"
        elif [ "$theirs" -gt "$mine" ]; then
            echo "lint: $f:$n: includes \"$inc\" from the higher layer $layer"
        fi
    done
done >"${TMPDIR:-/tmp}/lint.$$"
if [ -s "${TMPDIR:-/tmp}/lint.$$" ]; then
    cat "${TMPDIR:-/tmp}/lint.$$"
    fail=$((fail + $(wc -l <"${TMPDIR:-/tmp}/lint.$$")))
fi
rm -f "${TMPDIR:-/tmp}/lint.$$"

# 2. The terminal and the device each in their own place.
for f in $(grep -l '^[[:space:]]*#[[:space:]]*include[[:space:]]*<n\{0,1\}curses' $sources); do
    [ "$f" = src/tui/term.c ] || say "$f: includes ncurses (only src/tui/term.c may)"
done
for f in $(grep -l '^[[:space:]]*#[[:space:]]*include[[:space:]]*<\(cuda\|cub/\|thrust/\|curand\|nvrtc\)' $sources); do
    case $f in gpu/*) ;; *) say "$f: includes a CUDA header (only gpu/ may)" ;; esac
done

# 3. Hidden mutable state: file-scope and function-static variables that
# are not const (the signal flags excepted). Function definitions,
# prototypes, typedefs, externs of const tables and macros are skipped.
for f in $(echo "$sources" | grep '\.c$'); do
    awk -v F="$f" '
        /^[ \t]*#/ { next }
        /^[ \t]*\/\*/, /\*\// { next }
        { depth_before = depth; n = gsub(/\{/, "{"); m = gsub(/\}/, "}"); depth += n - m }
        # file scope: a declaration that starts at column 0, outside braces
        depth_before == 0 && /^(static |extern )?[A-Za-z_][A-Za-z0-9_ \*]*[ \*][A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])*[ \t]*(=|;)/ {
            if ($0 ~ /const/ || $0 ~ /sig_atomic_t/ || $0 ~ /^typedef/ || $0 ~ /^(return|struct [a-z_]+;|enum [a-z_]+;)/)
                next
            printf "lint: %s:%d: a mutable variable at file scope: %s\n", F, NR, $0
        }
        # file scope: a static aggregate defined over several lines ("static struct {")
        depth_before == 0 && /^static [^(]*\{/ && !/const/ {
            printf "lint: %s:%d: a mutable variable at file scope: %s\n", F, NR, $0
        }
        depth_before > 0 && /^[ \t]+static[ \t]/ && !/const/ {
            printf "lint: %s:%d: a static variable inside a function: %s\n", F, NR, $0
        }
    ' "$f"
done >"${TMPDIR:-/tmp}/lint.$$"
if [ -s "${TMPDIR:-/tmp}/lint.$$" ]; then
    cat "${TMPDIR:-/tmp}/lint.$$"
    fail=$((fail + $(wc -l <"${TMPDIR:-/tmp}/lint.$$")))
fi
rm -f "${TMPDIR:-/tmp}/lint.$$"

# 4. Short functions and files (outside gpu/). A function is a line starting a name and
# '(' at column 0, then '{' alone on a line, up to the '}' at column 0; a
# body that is one initializer list (a table) does not count.
for f in $(echo "$sources" | grep '^src/.*\.c$'); do
    awk -v F="$f" -v LIMIT=80 '
        /^[A-Za-z_].*\(/ { sig = $0; sigline = FNR }
        /^\{[ \t]*$/ { start = FNR; name = sig; nline = sigline; inb = 1 }
        inb && /^\}/ {
            n = FNR - start - 1
            if (n > LIMIT) {
                sub(/\(.*/, "", name); k = split(name, w, /[ *]+/)
                printf "lint: %s:%d: %s() is %d lines (at most %d)\n", F, nline, w[k], n, LIMIT
            }
            inb = 0
        }' "$f"
done >"${TMPDIR:-/tmp}/lint.$$"
if [ -s "${TMPDIR:-/tmp}/lint.$$" ]; then
    cat "${TMPDIR:-/tmp}/lint.$$"
    fail=$((fail + $(wc -l <"${TMPDIR:-/tmp}/lint.$$")))
fi
rm -f "${TMPDIR:-/tmp}/lint.$$"
for f in $sources; do
    case $f in gpu/*) continue ;; esac
    n=$(wc -l <"$f")
    [ "$n" -le 700 ] || say "$f: $n lines (at most 700 outside gpu/)"
done

if [ "$fail" -gt 0 ]; then
    echo "lint: $fail problem(s)"
    exit 1
fi
echo "lint: clean (layers: $LAYERS)"
