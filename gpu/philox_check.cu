// philox_check.cu - the first CUDA check: src/philox.h compiled by nvcc and run
// on the device must give the Random123 known answers and the same u as the CPU.
// Without a CUDA device it says why and passes ("skipped: no CUDA device: ...").
#include <cstdio>
#include <cstring>

extern "C" {
#include "core/philox.h"
#include "philox_kat.h"
}

namespace {

using Kat = philox_kat;

// Random123's kat_vectors for philox4x32-10 (counter, key, expected output).
const Kat kKat[] = { PHILOX_KAT_ROWS };
constexpr int kKats = sizeof kKat / sizeof kKat[0];
constexpr int kDraws = 4096;

__global__ void run_kat(const Kat *kat, uint32_t *out)
{
    int i = threadIdx.x;
    if (i >= kKats)
        return;
    philox4x32 c = { { kat[i].ctr[0], kat[i].ctr[1], kat[i].ctr[2], kat[i].ctr[3] } };
    philox4x32 r = philox4x32_10(c, kat[i].key[0], kat[i].key[1]);
    for (int w = 0; w < 4; w++)
        out[4 * i + w] = r.v[w];
}

__global__ void run_uniform(uint64_t seed, double *u)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < kDraws)
        u[i] = philox_uniform(seed, 1u + (uint32_t)(i % 7), (uint32_t)(i % 3), (uint32_t)i);
}

int check(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 0;
    std::fprintf(stderr, "philox_check: %s: %s\n", what, cudaGetErrorString(e));
    return 1;
}

} // namespace

int main()
{
    int devices = 0;
    cudaError_t e = cudaGetDeviceCount(&devices);
    if (e != cudaSuccess || devices == 0) {
        std::printf("philox_check: skipped: no CUDA device: %s\n",
                    e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        return 0;
    }
    Kat *dkat;
    uint32_t *dout;
    double *du;
    uint32_t out[4 * kKats];
    static double u[kDraws];
    if (check(cudaMalloc(&dkat, sizeof kKat), "cudaMalloc") ||
        check(cudaMalloc(&dout, sizeof out), "cudaMalloc") ||
        check(cudaMalloc(&du, sizeof u), "cudaMalloc") ||
        check(cudaMemcpy(dkat, kKat, sizeof kKat, cudaMemcpyHostToDevice), "copy"))
        return 1;
    run_kat<<<1, 32>>>(dkat, dout);
    run_uniform<<<(kDraws + 255) / 256, 256>>>(12345, du);
    if (check(cudaGetLastError(), "launch") || check(cudaDeviceSynchronize(), "kernel") ||
        check(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost), "copy back") ||
        check(cudaMemcpy(u, du, sizeof u, cudaMemcpyDeviceToHost), "copy back"))
        return 1;
    int bad = 0;
    for (int i = 0; i < kKats; i++)
        for (int w = 0; w < 4; w++)
            if (out[4 * i + w] != kKat[i].out[w]) {
                std::printf("philox_check: vector %d word %d: device %08x, want %08x\n", i, w,
                            out[4 * i + w], kKat[i].out[w]);
                bad++;
            }
    for (int i = 0; i < kDraws; i++) {
        double host = philox_uniform(12345, 1u + (uint32_t)(i % 7), (uint32_t)(i % 3), (uint32_t)i);
        if (u[i] != host) {
            if (bad < 10)
                std::printf("philox_check: draw %d: device %.9f, host %.9f\n", i, u[i], host);
            bad++;
        }
    }
    cudaFree(dkat);
    cudaFree(dout);
    cudaFree(du);
    std::printf("philox_check: %d known answers and %d device draws: %s\n", kKats, kDraws,
                bad ? "FAILED" : "equal to the CPU");
    return bad ? 1 : 0;
}
