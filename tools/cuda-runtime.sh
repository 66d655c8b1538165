#!/bin/sh
# Prints the folder that holds the CUDA runtime's static library
# (libcudart_static.a) for the nvcc named in $1, or nothing when there is none.
#
# nvcc's own folder is no guide: on PATH it can be a wrapper script
# (/usr/local/bin/nvcc running /usr/local/cuda-13.0/bin/nvcc), whose parent
# holds no CUDA. So nvcc is asked where its own link step looks (--dryrun
# prints its LIBRARIES line without reading the input), then the usual places.
set -u
nvcc=${1:?usage: tools/cuda-runtime.sh NVCC}
home=${nvcc%/bin/nvcc}

dirs=$("$nvcc" --dryrun -o /dev/null logitlab-probe.cu 2>&1 |
    sed -n 's/^#\$ LIBRARIES=//p' | tr -d '"' | tr ' ' '\n' | sed -n 's/^-L//p')

for d in $dirs "$home/lib64" "$home/lib" /usr/local/cuda/lib64 /usr/local/cuda/lib \
    /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu; do
    if [ -f "$d/libcudart_static.a" ]; then
        (cd "$d" && pwd -P)
        exit 0
    fi
done
exit 0
