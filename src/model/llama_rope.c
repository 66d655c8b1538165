/* llama_rope.c - Llama 3.1's rope scaling from the hyperparameters alone
 * (model/llama.h's llama_rope_divisors): what the forward pass divides each
 * rotary pair's angle by when a file gives the formula's keys, and what the
 * tests' generator stores as rope_freqs.weight; and which of Phi-3's long and
 * short factors a context turns by. */
#include <math.h>
#include <stddef.h>

#include "model/llama.h"

#define LLAMA_PI 3.14159265358979323846

int llama_rot_dims(const struct llama_hparams *hp)
{
    return hp->n_rot ? hp->n_rot : hp->head_dim;
}

void llama_rope_divisors(const struct llama_hparams *hp, double *div)
{
    int rot = llama_rot_dims(hp), half = rot / 2;
    double factor = hp->rope_factor, low = hp->rope_low_freq, high = hp->rope_high_freq;
    double orig = hp->rope_orig_ctx;
    for (int i = 0; i < half; i++) {
        div[i] = 1.0;
        if (factor == 0.0)
            continue;
        double freq = pow(hp->rope_base, -2.0 * i / rot);
        double wavelen = 2.0 * LLAMA_PI / freq;
        if (wavelen < orig / high) /* fast pairs (short range) stay as trained */
            continue;
        if (wavelen > orig / low) { /* slow pairs are stretched by the factor */
            div[i] = factor;
            continue;
        }
        double s = (orig / wavelen - low) / (high - low);
        div[i] = 1.0 / ((1.0 - s) / factor + s);
    }
}

const float *llama_rope_factors(const struct llama_model *m, int n_ctx, const char **which)
{
    int longer = m->rope_long && n_ctx > m->hp.rope_orig_ctx;
    const float *f = longer ? m->rope_long : m->rope_short;
    if (which)
        *which = !f ? NULL : longer ? "long" : "short";
    return f;
}

int llama_layer_slides(const struct llama_hparams *hp, int l)
{
    if (hp->n_swa <= 0)
        return 0;
    return hp->swa_pattern == 0 || l % hp->swa_pattern < hp->swa_pattern - 1;
}
