#include "model/lmhead.h"

#include <math.h>

#define BF16_BYTES 2

double lmhead_rmsnorm(const double *h, int d, double eps, double *out)
{
    double ss = 0.0;
    for (int i = 0; i < d; i++)
        ss += h[i] * h[i];
    double rms = sqrt(ss / d + eps);
    for (int i = 0; i < d; i++)
        out[i] = h[i] / rms;
    return rms;
}

void lmhead_gemv(const double *w, int V, int d, const double *x, double *logits)
{
    for (int v = 0; v < V; v++) {
        double acc = 0.0;
        for (int i = 0; i < d; i++)
            acc += w[(long)v * d + i] * x[i];
        logits[v] = acc;
    }
}

long long lmhead_weight_count(long long V, long long d)
{
    return V * d;
}

long long lmhead_bf16_bytes(long long V, long long d)
{
    return lmhead_weight_count(V, d) * BF16_BYTES;
}
