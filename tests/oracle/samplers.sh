#!/bin/sh
# make test-oracle-samplers (and make test-oracle): llama.cpp's samplers on the cases of
# tests/oracle/samplers.txt, written as the goldens tests/golden/samplers/NAME.txt, then
# logitlab's stages held to them (samplers_check, which make test runs on the committed
# goldens).
#
#   tests/oracle/samplers.sh [SAMPLERS_CHECK]
#
# 1. builds build/samplers/llama_samplers (tests/oracle/llama_samplers.cpp) against the
#    llama.cpp that fetch-llama.sh built, in LLAMA_ORACLE (default build/oracle; only read:
#    another checkout's build/oracle serves, LLAMA_ORACLE=../main/build/oracle);
# 2. runs it on each case (row, context, llama.cpp's chain) and writes the golden, saying
#    which are new or changed (git diff shows how);
# 3. runs SAMPLERS_CHECK on every case.
# ORACLE_ONLY, an extended regular expression, keeps the cases whose name it matches.
# Exit status 0 only if every step and every case passed.
set -eu
# newer A B: A was modified after B (POSIX sh has no -nt).
newer() { [ -n "$(find "$1" -prune -newer "$2" 2>/dev/null)" ]; }
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHECK=${1:-build/samplers_check} # relative to the root, as make names it
HERE=$ROOT/tests/oracle
LLAMA=${LLAMA_ORACLE:-$ROOT/build/oracle}
BLD=$LLAMA/llama-build
OUT=$ROOT/build/samplers
GOLD=$ROOT/tests/golden/samplers
BIN=$OUT/llama_samplers
cd "$ROOT"

if [ ! -f "$BLD/.built" ]; then
	if [ -n "${LLAMA_ORACLE:-}" ]; then
		echo "samplers.sh: $LLAMA has no llama.cpp build (run tests/oracle/fetch-llama.sh there)" >&2
		exit 3
	fi
	"$HERE/fetch-llama.sh"
fi
mkdir -p "$OUT" "$GOLD"
if [ ! -x "$BIN" ] || ! newer "$BIN" "$HERE/llama_samplers.cpp" || ! newer "$BIN" "$HERE/sampler_rows.h" ||
	! newer "$BIN" "$BLD/.built"; then
	echo "samplers.sh: g++ llama_samplers.cpp"
	# src/ for llama-sampler.h: llama_sampler_init_dry_testing, DRY on token ids.
	${CXX:-g++} -std=c++17 -O2 -Wall -Wextra -Werror -I"$LLAMA/llama.cpp/include" \
		-I"$LLAMA/llama.cpp/ggml/include" -I"$LLAMA/llama.cpp/src" -I"$HERE" \
		-o "$BIN" "$HERE/llama_samplers.cpp" \
		"$BLD/src/libllama.a" "$BLD/ggml/src/libggml.a" "$BLD/ggml/src/libggml-cpu.a" \
		"$BLD/ggml/src/libggml-base.a" -fopenmp -lpthread -ldl -lm
fi
COMMIT=$(cut -c1-12 "$LLAMA/llama-commit.txt")
[ -x "$CHECK" ] || make --no-print-directory "$CHECK"

# The cases, one a line: NAME, ROW, CONTEXT and llama.cpp's CHAIN, tab-separated.
cases() {
	awk -F' [|] ' '!/^#/ && NF >= 5 {
		for (i = 1; i <= 4; i++) { gsub(/^[ \t]+|[ \t]+$/, "", $i) }
		print $1 "\t" $2 "\t" $3 "\t" $4 }' "$HERE/samplers.txt" |
		grep -E "^(${ORACLE_ONLY:-.*})	"
}

echo "== llama.cpp $COMMIT: $(cases | wc -l) cases of tests/oracle/samplers.txt"
fail=0 new=0 changed=0
TAB=$(printf '\t')
while IFS=$TAB read -r name row ctx chain; do
	if ! "$BIN" "$row" "$ctx" "$chain" >"$OUT/$name.out" 2>"$OUT/$name.err"; then
		echo "samplers.sh: $name: llama_samplers failed: $(head -n 1 "$OUT/$name.err")" >&2
		fail=1
		continue
	fi
	{ echo "# llama.cpp $COMMIT, tests/oracle/llama_samplers.cpp"; cat "$OUT/$name.out"; } >"$OUT/$name.txt"
	if [ ! -f "$GOLD/$name.txt" ]; then
		new=$((new + 1))
		echo "new:     $name ($(sed -n 's/^# kept \([0-9]*\) .*/\1/p' "$OUT/$name.txt") kept)"
	elif ! cmp -s "$OUT/$name.txt" "$GOLD/$name.txt"; then
		changed=$((changed + 1))
		echo "CHANGED: $name (git diff tests/golden/samplers/$name.txt)"
	fi
	cp "$OUT/$name.txt" "$GOLD/$name.txt"
done <<EOF
$(cases)
EOF
echo "== goldens: $new new, $changed changed"
for g in "$GOLD"/*.txt; do
	[ -f "$g" ] || continue
	n=$(basename "$g" .txt)
	grep -q "^${n}[[:space:]]" "$HERE/samplers.txt" || echo "samplers.sh: $g: no such case (remove it?)"
done

echo "== logitlab against them ($CHECK)"
# shellcheck disable=SC2046 # the names, one word each
"$CHECK" "$HERE/samplers.txt" "$GOLD" $(cases | cut -f1) || fail=1
exit $fail
