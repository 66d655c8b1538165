#!/bin/sh
# tests/lint.sh must catch what it is there for: plants one fault of each
# kind in a copy of the tree and checks that lint fails naming it.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0

fresh() {
    rm -rf "$TMP/tree"
    mkdir -p "$TMP/tree/tests"
    cp -R "$TOP/src" "$TOP/gpu" "$TOP/Makefile" "$TMP/tree/"
    cp "$HERE/lint.sh" "$TMP/tree/tests/"
}

# plant NAME WANT: lint on the planted tree fails and says WANT.
expect_caught() {
    name=$1 want=$2
    if "$TMP/tree/tests/lint.sh" "$TMP/tree" >"$TMP/out" 2>&1; then
        fail=$((fail + 1))
        echo "FAIL: lint passed with $name"
    elif grep -qF "$want" "$TMP/out"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: lint did not name $name ('$want'):"
        cat "$TMP/out"
    fi
}

fresh
printf '#include "tui/app.h"\n' >>"$TMP/tree/src/base/err.c"
expect_caught "an upward include" 'src/base/err.c:'"$(wc -l <"$TMP/tree/src/base/err.c")"': includes "tui/app.h" from the higher layer tui'

fresh
printf '#include "report/report.h"\n' >>"$TMP/tree/gpu/backend_cuda.cu"
expect_caught "an upward include in gpu/" 'gpu/backend_cuda.cu:'"$(wc -l <"$TMP/tree/gpu/backend_cuda.cu")"': includes "report/report.h" from the higher layer report'

fresh
printf '#include <ncurses.h>\n' >>"$TMP/tree/src/tui/screen.c"
expect_caught "ncurses outside term.c" 'src/tui/screen.c: includes ncurses'

fresh
printf '#include <cuda_runtime.h>\n' >>"$TMP/tree/src/core/sampler.c"
expect_caught "a CUDA header outside gpu/" 'src/core/sampler.c: includes a CUDA header'

fresh
printf 'static int planted_counter;\n' >>"$TMP/tree/src/core/sampler.c"
expect_caught "a file-scope variable" 'a mutable variable at file scope: static int planted_counter;'

fresh
printf 'static struct {\n    int n;\n} planted_state;\n' >>"$TMP/tree/src/core/sampler.c"
expect_caught "a file-scope aggregate" 'a mutable variable at file scope: static struct {'

fresh
printf 'int planted_f(void);\nint planted_f(void)\n{\n    static double planted_cache[4];\n    return (int)planted_cache[0];\n}\n' >>"$TMP/tree/src/core/sampler.c"
expect_caught "a static inside a function" 'a static variable inside a function:     static double planted_cache[4];'

fresh
{
    printf 'int planted_long(void);\nint planted_long(void)\n{\n    int x = 0;\n'
    i=0
    while [ $i -lt 81 ]; do
        printf '    x++;\n'
        i=$((i + 1))
    done
    printf '    return x;\n}\n'
} >>"$TMP/tree/src/base/err.c"
expect_caught "a long function" 'planted_long() is 83 lines (at most 80)'

fresh
i=0
while [ $i -lt 701 ]; do
    printf '/* line */\n'
    i=$((i + 1))
done >>"$TMP/tree/src/base/clock.h"
expect_caught "a long file" 'src/base/clock.h: '

echo "lint-self: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
