#!/bin/sh
# quant_ggml.sh - logitlab's weight types against ggml's own C (quant_ggml.c):
# compiles ggml-quants.c of the llama.cpp that fetch-llama.sh fetched on its
# own, without FMA contraction (doc/quant.md: a fused build of ggml picks
# other steps now and then), links it with src/model/quant*.c and runs it.
# Not part of make test-oracle: it needs only the source, not the build.
#
# Usage: tests/oracle/quant_ggml.sh [BLOCKS]   (default 4000 per type)
# LLAMA_CPP: a llama.cpp source tree (default build/oracle/llama.cpp).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LLAMA=${LLAMA_CPP:-$ROOT/build/oracle/llama.cpp}
OUT=$ROOT/build/oracle/quant_ggml
CC=${CC:-cc}
[ -f "$LLAMA/ggml/src/ggml-quants.c" ] || "$ROOT/tests/oracle/fetch-llama.sh"
G=$LLAMA/ggml
mkdir -p "$OUT"
$CC -std=gnu11 -O2 -ffp-contract=off -I"$G/include" -I"$G/src" -c "$G/src/ggml-quants.c" \
	-o "$OUT/ggml-quants.o"
$CC -std=c11 -O2 -ffp-contract=off -Wall -Wextra -Werror -I"$ROOT/src" -I"$G/include" -I"$G/src" \
	-o "$OUT/quant_ggml" "$ROOT/tests/oracle/quant_ggml.c" "$ROOT"/src/model/quant*.c \
	"$OUT/ggml-quants.o" -lm
"$OUT/quant_ggml" "${1:-4000}"
