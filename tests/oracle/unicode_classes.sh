#!/bin/sh
# The code points whose class Debian 12's PCRE2 (Unicode 14) and llama.cpp's tables (Unicode
# 15.1, src/unicode-data.cpp of the pinned llama.cpp) disagree on: the source of the U15_*
# ranges in src/gguf/tokenizer_bpe.c. Prints the count by (llama.cpp's class, PCRE2's), then
# the differences as ranges by llama.cpp's class (N L M P S C; "-" is unassigned).
# Usage: tests/oracle/unicode_classes.sh [LLAMA_CPP_SOURCE]   (default build/oracle/llama.cpp)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRC=${1:-$ROOT/build/oracle/llama.cpp}
[ -f "$SRC/src/unicode-data.cpp" ] || "$ROOT/tests/oracle/fetch-llama.sh"
OUT=$ROOT/build/oracle/unicode
mkdir -p "$OUT"
# The (first code point, flags) pairs of unicode_ranges_flags, as a C table.
awk '/unicode_ranges_flags = \{/ { on = 1; print "static const unsigned RANGES[][2] = {"; next }
    on && /^\};/ { print "};"; exit }
    on { print }' "$SRC/src/unicode-data.cpp" >"$OUT/ranges.h"
cc -std=c11 -O2 -I"$OUT" -o "$OUT/unicode_classes" "$ROOT/tests/oracle/unicode_classes.c" -lpcre2-8
"$OUT/unicode_classes" >"$OUT/diff.txt" 2>"$OUT/ranges.txt"
echo "$(wc -l <"$OUT/diff.txt") code points differ (llama.cpp's class, PCRE2's):"
awk '{ print "  " $3 " " $5 }' "$OUT/diff.txt" | sort | uniq -c
echo "as ranges:"
sed 's/^/  /' "$OUT/ranges.txt"
