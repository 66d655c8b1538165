#!/bin/sh
# Builds build/oracle/llama_oracle against the llama.cpp that fetch-llama.sh built (static
# libraries, so the program runs from anywhere). Rebuilds only when the source is newer.
set -eu
# newer A B: A was modified after B (POSIX sh has no -nt).
newer() { [ -n "$(find "$1" -prune -newer "$2" 2>/dev/null)" ]; }
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$ROOT/build/oracle
SRC=$OUT/llama.cpp
BLD=$OUT/llama-build
BIN=$OUT/llama_oracle
if [ ! -f "$BLD/.built" ]; then
	echo "build-oracle: llama.cpp is not built; run tests/oracle/fetch-llama.sh" >&2
	exit 3
fi
if [ -x "$BIN" ] && newer "$BIN" "$ROOT/tests/oracle/llama_oracle.cpp" && newer "$BIN" "$BLD/.built"; then
	exit 0
fi
echo "build-oracle: g++ llama_oracle.cpp"
g++ -std=c++17 -O2 -Wall -Wextra -Werror -I"$SRC/include" -I"$SRC/ggml/include" \
	-o "$BIN" "$ROOT/tests/oracle/llama_oracle.cpp" \
	"$BLD/src/libllama.a" "$BLD/ggml/src/libggml.a" "$BLD/ggml/src/libggml-cpu.a" \
	"$BLD/ggml/src/libggml-base.a" -fopenmp -lpthread -ldl -lm
