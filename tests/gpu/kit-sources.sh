#!/bin/sh
# Prints one hash of the sources the GPU kit (make gpu-kit) is built from, so
# that tests/gpu/check.sh can tell, on the GPU machine, whether a carried kit
# still matches the tree it runs in. Run from the repository root.
set -eu
cd "$(dirname "$0")/../.."
# shellcheck disable=SC2046
sha256sum Makefile $(ls src/*.c src/*.h src/*/*.c src/*/*.h src/*/*.def gpu/*.cu gpu/*.cuh 2>/dev/null) tests/gpu/check_gpu.c \
    tests/bench/bench_gpu.c tests/bench/*.h tests/philox_kat.h | sha256sum | cut -d' ' -f1
