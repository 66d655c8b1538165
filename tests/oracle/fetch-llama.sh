#!/bin/sh
# Fetch and build the llama.cpp that node-llama-cpp 3.22.1 ships, as the oracle that
# `make test-oracle` and `make bench-model` compare logitlab against.
#
# Why node-llama-cpp: npm is the one registry this machine reaches, and that package carries
# a git bundle of its pinned llama.cpp release, so the oracle is a fixed, recorded commit.
# Everything lands in build/oracle/ (git-ignored). Idempotent: a finished step is skipped.
#
# Usage: tests/oracle/fetch-llama.sh [JOBS]   (default 2)
set -eu
JOBS=${1:-2}
PKG=node-llama-cpp@3.22.1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$ROOT/build/oracle
SRC=$OUT/llama.cpp
BLD=$OUT/llama-build
mkdir -p "$OUT"

if [ ! -f "$OUT/package/package.json" ]; then
	echo "fetch-llama: npm pack $PKG"
	(cd "$OUT" && npm pack --silent "$PKG" >npm-pack.log 2>&1) || {
		echo "fetch-llama: npm pack $PKG failed (see $OUT/npm-pack.log)" >&2
		exit 3
	}
	tar -xzf "$OUT"/node-llama-cpp-3.22.1.tgz -C "$OUT"
fi

if [ ! -f "$SRC/include/llama.h" ]; then
	BUNDLE=$(find "$OUT/package" -name '*.bundle' | head -n 1)
	if [ -z "$BUNDLE" ]; then
		echo "fetch-llama: no *.bundle in $OUT/package" >&2
		exit 3
	fi
	echo "fetch-llama: clone $BUNDLE"
	rm -rf "$SRC"
	git -c advice.detachedHead=false clone --quiet "$BUNDLE" "$SRC"
fi
COMMIT=$(git -C "$SRC" rev-parse HEAD)
DESCR=$(git -C "$SRC" describe --tags --always 2>/dev/null || echo "$COMMIT")
SHA=$(sha256sum "$OUT/node-llama-cpp-3.22.1.tgz" | cut -d' ' -f1)
printf '%s %s %s sha256:%s\n' "$COMMIT" "$DESCR" "$PKG" "$SHA" >"$OUT/llama-commit.txt"
echo "fetch-llama: llama.cpp $COMMIT ($DESCR), from $PKG (sha256 $SHA)"

# ggml's AMX matrix kernels (which -march=native turns on for this machine's Xeon) crash in
# ggml_backend_amx_mul_mat on Q8_0 weights here, in llama-bench as well as in the oracle; GCC
# lets an explicit -mno-amx-* win over -march=native, so the build is native but without AMX.
# The configuration is part of the stamp: changing it rebuilds.
NOAMX="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
CONFIG="Release GGML_NATIVE=ON CUDA=OFF CURL=OFF static $NOAMX"
if [ ! -x "$BLD/bin/llama-bench" ] || [ ! -x "$BLD/bin/llama-quantize" ] || [ "$(cat "$BLD/.built" 2>/dev/null)" != "$CONFIG" ]; then
	echo "fetch-llama: cmake build ($JOBS jobs): $CONFIG"
	start=$(date +%s)
	cmake -S "$SRC" -B "$BLD" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
		-DCMAKE_C_FLAGS="$NOAMX" -DCMAKE_CXX_FLAGS="$NOAMX" \
		-DGGML_CUDA=OFF -DLLAMA_CURL=OFF -DBUILD_SHARED_LIBS=OFF \
		-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
		-DLLAMA_BUILD_TOOLS=ON >"$OUT/cmake-configure.log" 2>&1 || {
		echo "fetch-llama: cmake configure failed (see $OUT/cmake-configure.log)" >&2
		exit 3
	}
	cmake --build "$BLD" --config Release -j "$JOBS" --target llama llama-bench llama-quantize \
		>"$OUT/cmake-build.log" 2>&1 || {
		echo "fetch-llama: cmake build failed (see $OUT/cmake-build.log)" >&2
		exit 3
	}
	end=$(date +%s)
	echo "$((end - start))" >"$OUT/build-seconds.txt"
	echo "$CONFIG" >"$BLD/.built"
	echo "fetch-llama: built in $((end - start)) s"
fi
