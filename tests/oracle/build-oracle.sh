#!/bin/sh
# Builds build/oracle/llama_oracle (run.sh) and build/oracle/llama_tokenize (vocab.sh) against
# the llama.cpp that fetch-llama.sh built (static libraries, so the programs run from
# anywhere). Rebuilds each only when its source is newer.
set -eu
# newer A B: A was modified after B (POSIX sh has no -nt).
newer() { [ -n "$(find "$1" -prune -newer "$2" 2>/dev/null)" ]; }
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$ROOT/build/oracle
SRC=$OUT/llama.cpp
BLD=$OUT/llama-build
if [ ! -f "$BLD/.built" ]; then
	echo "build-oracle: llama.cpp is not built; run tests/oracle/fetch-llama.sh" >&2
	exit 3
fi
for name in llama_oracle llama_tokenize; do
	bin=$OUT/$name
	src=$ROOT/tests/oracle/$name.cpp
	if [ -x "$bin" ] && newer "$bin" "$src" && newer "$bin" "$BLD/.built"; then
		continue
	fi
	echo "build-oracle: g++ $name.cpp"
	g++ -std=c++17 -O2 -Wall -Wextra -Werror -I"$SRC/include" -I"$SRC/ggml/include" \
		-o "$bin" "$src" \
		"$BLD/src/libllama.a" "$BLD/ggml/src/libggml.a" "$BLD/ggml/src/libggml-cpu.a" \
		"$BLD/ggml/src/libggml-base.a" -fopenmp -lpthread -ldl -lm
done
