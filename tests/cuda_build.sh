#!/bin/sh
# Where the CUDA backend is built (issue 31, part 5): with nvcc and its
# runtime but no GPU, the build a user runs (`make all`, what `make run`
# builds) invokes no nvcc and its message says why, while `make test`'s
# build still compiles the kernels; CUDA=1 builds the backend anyway. A fake
# nvcc stands in for the toolkit (make -n only prints what it would run), so
# this runs on every machine; on one with a GPU, `make all` must build it.
set -u
HERE=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/tests/lib.sh"

mkdir -p "$TMP/cuda/bin" "$TMP/cuda/lib64"
: >"$TMP/cuda/lib64/libcudart_static.a"
cat >"$TMP/cuda/bin/nvcc" <<EOF
#!/bin/sh
# --dryrun names the link step's library folder, as tools/cuda-runtime.sh reads it
echo '#\$ LIBRARIES=  "-L$TMP/cuda/lib64"'
EOF
chmod +x "$TMP/cuda/bin/nvcc"
NV="$TMP/cuda/bin/nvcc"
gpu=$(ls -d /dev/nvidia[0-9]* /proc/driver/nvidia/gpus/* /dev/dxg 2>/dev/null | head -n 1)

# dry NAME ARGS...: the commands make -n -B (everything out of date) would
# run into $TMP/NAME, and how many of them compile with nvcc.
dry() {
    name=$1
    shift
    make -n -B -C "$HERE" NVCC="$NV" "$@" >"$TMP/$name" 2>&1 || bad "make -n $*: $(tail -n 3 "$TMP/$name")"
    grep -c "$NV .*-c\|$NV .*-o" "$TMP/$name"
}

n=$(dry all all)
if [ -z "$gpu" ]; then
    [ "$n" = 0 ] && ok || bad "make all with nvcc and no GPU runs nvcc $n times"
    grep -q "but no NVIDIA GPU on this machine: the CUDA backend is not built" "$TMP/all" && ok ||
        bad "make all does not say why it builds no CUDA: $(head -n 1 "$TMP/all")"
else
    [ "$n" -gt 0 ] && ok || bad "make all on a machine with a GPU ($gpu) builds no CUDA"
fi
n=$(dry test test)
[ "$n" -ge 1 ] && ok || bad "make test's build does not compile the kernels (nvcc $n times)"
n=$(dry forced all CUDA=1)
[ "$n" -ge 1 ] && grep -q 'building the CUDA backend' "$TMP/forced" && ok ||
    bad "make all CUDA=1 does not build the backend (nvcc $n times)"
n=$(dry off all CUDA=0)
[ "$n" = 0 ] && ok || bad "make all CUDA=0 runs nvcc $n times"

printf 'cuda_build: %d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]
