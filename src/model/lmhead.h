/* lmhead.h - the last RMSNorm and the LM head: logits = W . RMSNorm(h).
 *
 * The toy version works in double on a lesson's small head, so its numbers
 * can be checked by hand. (The 128,256-row bf16 head comes with the real run.)
 */
#ifndef LOGITLAB_LMHEAD_H
#define LOGITLAB_LMHEAD_H

/* RMSNorm with unit gain: out_i = h_i / sqrt(mean(h^2) + eps). Returns the
 * root mean square sqrt(mean(h^2) + eps) it divided by. */
double lmhead_rmsnorm(const double *h, int d, double eps, double *out);

/* logits[v] = sum_i w[v*d + i] * x[i] for v in [0, V). */
void lmhead_gemv(const double *w, int V, int d, const double *x, double *logits);

/* Weights in a V x d head, and the bytes they take in bf16 (2 bytes each). */
long long lmhead_weight_count(long long V, long long d);
long long lmhead_bf16_bytes(long long V, long long d);

#endif
