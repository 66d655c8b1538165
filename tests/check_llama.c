/* check_llama.c - the forward pass (model/llama.c) on tiny models built in
 * memory from a seeded generator, against the specification written plainly
 * in double here (ref_eval: the exact reference, straight from the
 * formulas, the whole prompt recomputed at every call, no cache):
 *
 *   x_p = embedding row of token p
 *   per layer:  n = x_p / sqrt(mean(x_p^2) + eps) * attn_norm
 *               q, k, v = Wq n, Wk n, Wv n
 *               in each head, pairs (2i, 2i+1) of q and k turned by
 *                 p * base^(-2i/head_dim) / div_i  (div: rope_freqs, the Llama 3.1
 *                 formula, or Phi-3's long factors when the context exceeds the
 *                 original one, else its short ones), each value then times the
 *                 attention factor (1 unless given)
 *               head h, KV head g = h / (n_head / n_head_kv):
 *                 a_h = sum_{t<=p} softmax_t(q_h . k_{g,t} / sqrt(head_dim)) v_{g,t}
 *               x_p += Wo a
 *               n = x_p / sqrt(mean(x_p^2) + eps) * ffn_norm
 *               x_p += Wdown (silu(Wgate n) * Wup n),  silu(z) = z / (1 + e^-z)
 *   h = x of the last position;  final norm: h / sqrt(mean(h^2) + eps) * output_norm
 *
 * Tolerance against it (TOL): the pass runs in float, each operation
 * rounding by at most 2^-24 = 6e-8 relative; a value of h goes through two
 * layers of about 40 such operations in sequence (the sums of 16 to 256
 * terms of size ~1 grow it little), so 40 x 6e-8 = 2.4e-6 bounds the error
 * in practice (measured: below 6e-7 in F32, Q8_0 and Q4_K). TOL = 4e-6; a
 * wrong pairing of the rotary values or a wrong KV head moves h by 1.4 and
 * 1.8 (test_matches_reference asserts it), a softmax off by 1e-5 by 3e-5.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama_ref.h"
#include "model/quant.h"
#include "suites.h"

#define TOL 4e-6

/* The shape of the brief: 2 layers, width 16, 4 heads sharing 2 KV heads,
 * FFN 24, 11 tokens, a Llama. */
static const struct shape SMALL = { 2, 16, 4, 2, 24, 11, QT_F32, 0, 0, 0 };

/* ---- helpers ----------------------------------------------------------- */

static struct llama_ctx *ctx_make(const struct tiny *t, int n_ctx, int threads)
{
    struct err e;
    struct llama_ctx *c = llama_ctx_new(&t->m, n_ctx, threads, &e);
    ck_assert_msg(c != NULL, "%s", e.msg);
    return c;
}

static void eval_ok(struct llama_ctx *c, const int *tok, int n, float *h)
{
    struct err e;
    ck_assert_msg(llama_eval(c, tok, n, h, &e) == 0, "%s", e.msg);
}

/* max |h - ref| / (1 + |ref|) over the width. */
static double rel_err(const float *h, const double *ref, int d)
{
    double worst = 0;
    for (int i = 0; i < d; i++)
        worst = fmax(worst, fabs((double)h[i] - ref[i]) / (1 + fabs(ref[i])));
    return worst;
}

static double max_diff(const float *a, const float *b, int d)
{
    double worst = 0;
    for (int i = 0; i < d; i++)
        worst = fmax(worst, fabs((double)a[i] - (double)b[i]));
    return worst;
}

/* Runs tok[0..n) as one batch, then one more token, on t; each h against
 * ref_eval within TOL. */
static void check_against_reference(const struct tiny *t, const int *tok, int n)
{
    int d = t->m.hp.n_embd;
    float h[LLAMA_MAX_EMBD], fn[LLAMA_MAX_EMBD];
    double ref[LLAMA_MAX_EMBD], rfn[LLAMA_MAX_EMBD];
    struct llama_ctx *c = ctx_make(t, 64, 2);
    eval_ok(c, tok, n - 1, h);
    ref_eval(t, tok, n - 1, REF_SPEC, ref);
    ck_assert_msg(rel_err(h, ref, d) < TOL, "batch of %d: error %g", n - 1, rel_err(h, ref, d));
    eval_ok(c, tok + n - 1, 1, h);
    ref_eval(t, tok, n, REF_SPEC, ref);
    ck_assert_msg(rel_err(h, ref, d) < TOL, "decode: error %g", rel_err(h, ref, d));
    llama_final_norm(&t->m, h, fn);
    ref_norm(ref, t->onorm, d, t->m.hp.rms_eps, rfn);
    ck_assert_msg(rel_err(fn, rfn, d) < TOL, "final norm: error %g", rel_err(fn, rfn, d));
    llama_ctx_free(c);
}

static const int PROMPT[] = { 3, 1, 4, 1, 5, 9, 2, 6, 5, 3 };
#define PROMPT_N ((int)(sizeof PROMPT / sizeof PROMPT[0]))

/* ---- the tests --------------------------------------------------------- */

/* F32 against the reference, a batch of 9 and one decode step; the two
 * mistakes the reference can make instead are each far outside TOL. */
START_TEST(test_matches_reference)
{
    struct tiny t;
    tiny_build(&t, &SMALL, 11);
    check_against_reference(&t, PROMPT, PROMPT_N);
    float h[LLAMA_MAX_EMBD];
    double ref[LLAMA_MAX_EMBD];
    struct llama_ctx *c = ctx_make(&t, 64, 1);
    eval_ok(c, PROMPT, PROMPT_N, h);
    ref_eval(&t, PROMPT, PROMPT_N, REF_OTHER_PAIRS, ref);
    ck_assert_msg(rel_err(h, ref, 16) > 1000 * TOL, "halves: %g", rel_err(h, ref, 16));
    ref_eval(&t, PROMPT, PROMPT_N, REF_KV_MODULO, ref);
    ck_assert_msg(rel_err(h, ref, 16) > 1000 * TOL, "kv modulo: %g", rel_err(h, ref, 16));
    llama_ctx_free(c);
    tiny_free(&t);
}
END_TEST

/* An architecture's switches on t (width 48): against the reference on 2
 * threads (check_against_reference: batch and decode) and on 1; the
 * reference's mistakes, each of wrong[0..n), far outside TOL. */
static void check_switches(const struct tiny *t, const enum ref_variant *wrong, int n)
{
    check_against_reference(t, PROMPT, PROMPT_N);
    float h[LLAMA_MAX_EMBD];
    double ref[LLAMA_MAX_EMBD];
    struct llama_ctx *c = ctx_make(t, 64, 1);
    eval_ok(c, PROMPT, PROMPT_N, h);
    llama_ctx_free(c);
    ref_eval(t, PROMPT, PROMPT_N, REF_SPEC, ref);
    ck_assert_msg(rel_err(h, ref, 48) < TOL, "1 thread: %g", rel_err(h, ref, 48));
    for (int i = 0; i < n; i++) {
        ref_eval(t, PROMPT, PROMPT_N, wrong[i], ref);
        ck_assert_msg(rel_err(h, ref, 48) > 1000 * TOL, "mistake %d: %g", (int)wrong[i],
                      rel_err(h, ref, 48));
    }
}

/* Qwen 2's switches (gguf/arch.def): biases on Q, K and V, and the NEOX
 * rotary pairs (x[i], x[i + hd/2]). Head size 12: on 2 threads a task
 * would get 48 / (2 x 4) = 6 rows of Q, half a head, were the tasks not
 * rounded to whole heads. The reference without the biases, or with a
 * Llama's adjacent pairs, is far off. A switch the pass lacks, or a bias
 * left out, is refused. */
START_TEST(test_qwen2_switches)
{
    static const struct shape QWEN = { 2,  48, 4,      2,
                                       64, 11, QT_F32, LLAMA_SW_QKV_BIAS | LLAMA_SW_ROPE_NEOX,
                                       0,  0 };
    static const enum ref_variant WRONG[] = { REF_OTHER_PAIRS, REF_NO_BIAS };
    struct tiny t;
    tiny_build(&t, &QWEN, 41);
    check_switches(&t, WRONG, 2);
    struct err e;
    t.m.hp.switches |= 1u << 30;
    ck_assert_ptr_null(llama_ctx_new(&t.m, 64, 1, &e));
    ck_assert_str_eq(e.msg, "llama: switches 0x40000000 are not in this forward pass");
    t.m.hp.switches = QWEN.switches;
    t.layer[1].bk.data = NULL;
    ck_assert_ptr_null(llama_ctx_new(&t.m, 64, 1, &e));
    ck_assert_str_eq(e.msg, "llama: tensor blk.1.attn_k.bias is missing");
    tiny_free(&t);
}
END_TEST

/* Qwen 3's switches: NEOX pairs and each head of Q and K RMS-normed
 * before the turn, with heads wider than the width over the heads (4 of
 * 24 for a width of 48: Q is 96 wide, Wo 48 x 96). Without the norms, or
 * with adjacent pairs, the reference is far off; a norm left out is
 * refused. */
START_TEST(test_qwen3_switches)
{
    static const struct shape QWEN3 = { 2,  48, 4,      2,
                                        64, 11, QT_F32, LLAMA_SW_ROPE_NEOX | LLAMA_SW_QK_NORM,
                                        24, 0 };
    static const enum ref_variant WRONG[] = { REF_OTHER_PAIRS, REF_NO_QK_NORM };
    struct tiny t;
    tiny_build(&t, &QWEN3, 43);
    check_switches(&t, WRONG, 2);
    struct err e;
    t.layer[0].k_norm.data = NULL;
    ck_assert_ptr_null(llama_ctx_new(&t.m, 64, 1, &e));
    ck_assert_str_eq(e.msg, "llama: tensor blk.0.attn_k_norm is missing");
    tiny_free(&t);
}
END_TEST

/* Phi-3's rotary factors and attention factor (sqrt(1 + ln 32 / ln 4096) =
 * 1.190238, Phi-3.5-mini's), on NEOX pairs, head size 12 (6 pairs) on a
 * width of 48. The rule, llama.cpp's: a context of more positions than the
 * original one turns by the long factors, any other by the short ones. At
 * a context of 64, an original context of 63 gives the long, 64 the short:
 * each side against the reference (which picks by the rule written apart,
 * llama_ref.c) and far from the reference with the other factors, without
 * the attention factor, or with adjacent pairs. A model with factors but
 * no original context is refused. */
START_TEST(test_phi3_rope_factors)
{
    static const struct shape PHI3 = {
        2, 48, 4, 4, 64, 11, QT_F32, LLAMA_SW_ROPE_NEOX | LLAMA_SW_FUSED_QKV | LLAMA_SW_FUSED_UP,
        0, 0
    };
    static const float LONG[6] = { 1.0f, 2.0f, 4.0f, 8.0f, 16.0f, 32.0f };
    static const float SHORT[6] = { 1.0f, 1.01f, 1.02f, 1.05f, 1.1f, 1.2f };
    static const enum ref_variant WRONG[] = { REF_OTHER_FACTORS, REF_NO_ATTN_FACTOR,
                                              REF_OTHER_PAIRS };
    struct tiny t;
    tiny_build(&t, &PHI3, 47);
    t.m.rope_long = LONG;
    t.m.rope_short = SHORT;
    t.m.hp.rope_attn_factor = 1.190238f;
    for (int orig = 63; orig <= 64; orig++) {
        const char *which = NULL;
        t.m.hp.rope_orig_ctx = orig;
        ck_assert_ptr_eq(llama_rope_factors(&t.m, 64, &which), orig == 63 ? LONG : SHORT);
        ck_assert_str_eq(which, orig == 63 ? "long" : "short");
        check_switches(&t, WRONG, 3);
    }
    struct err e;
    t.m.hp.rope_orig_ctx = 0;
    ck_assert_ptr_null(llama_ctx_new(&t.m, 64, 1, &e));
    ck_assert_str_eq(e.msg, "llama: rope attention factor 1.19024, original context 0 (want a "
                            "factor >= 0, and a context > 0 with long and short factors)");
    tiny_free(&t);
}
END_TEST

/* A head that turns only its first values (rope.dimension_count below the
 * head size: Phi-4-mini turns 96 of its 128). Heads of 12 turning 8: in
 * the NEOX mode the pairs (i, i + 4), i < 4, by pos * 10000^(-2i/8) over
 * the Phi-3 factors of 4 pairs (the long ones, as the context of 64
 * exceeds the original 32), values 8 to 11 as they were; in the adjacent
 * mode the pairs (0,1) .. (6,7). Each against the reference, and far from
 * it when the reference turns whole heads or takes the other pairs. An odd
 * count, or one wider than the head, is refused. */
START_TEST(test_partial_rotary)
{
    static const float LONG[4] = { 1.0f, 2.0f, 4.0f, 8.0f };
    static const float SHORT[4] = { 1.0f, 1.1f, 1.2f, 1.3f };
    static const unsigned SW[2] = { LLAMA_SW_ROPE_NEOX | LLAMA_SW_FUSED_QKV | LLAMA_SW_FUSED_UP,
                                    0 };
    static const enum ref_variant WRONG[] = { REF_WHOLE_HEAD, REF_OTHER_PAIRS };
    for (int k = 0; k < 2; k++) {
        struct shape s = { 2, 48, 4, 2, 64, 11, QT_F32, SW[k], 12, 8 };
        struct tiny t;
        tiny_build(&t, &s, 59 + (uint64_t)k);
        if (k == 0) {
            t.m.rope_long = LONG, t.m.rope_short = SHORT;
            t.m.hp.rope_orig_ctx = 32;
        }
        check_switches(&t, WRONG, 2);
        struct err e;
        static const int BAD[] = { 7, 14 };
        for (int b = 0; b < 2; b++) {
            t.m.hp.n_rot = BAD[b];
            ck_assert_ptr_null(llama_ctx_new(&t.m, 64, 1, &e));
            char want[128];
            snprintf(want, sizeof want,
                     "llama: %d rotary values in a head of 12 (want an even number, at most the "
                     "head)",
                     BAD[b]);
            ck_assert_str_eq(e.msg, want);
        }
        tiny_free(&t);
    }
}
END_TEST

/* Gemma 3's switches: the embedding rows times sqrt(48), NEOX pairs, per-head
 * norms of Q and K, the attention's and the FFN's outputs RMS-normed before
 * they join the stream, GELU's tanh form for the gate; heads of 16 on a
 * width of 48 (Q 64 wide); layer 0 of 2 slides (pattern 2) through a window
 * of 4 positions with its own rope base (10^4; the global layer's 10^6), so
 * that the prompt of 10 reaches past it. Against the reference, and the
 * reference is far off with any one of them left out. A score scale of its
 * own (Gemma 3 27B's rule) is taken too; a negative window is refused. */
START_TEST(test_gemma3_switches)
{
    static const struct shape GEMMA3 = { 2,
                                         48,
                                         4,
                                         2,
                                         64,
                                         11,
                                         QT_F32,
                                         LLAMA_SW_ROPE_NEOX | LLAMA_SW_QK_NORM |
                                             LLAMA_SW_EMBD_SCALE | LLAMA_SW_POST_NORMS |
                                             LLAMA_SW_GELU,
                                         16,
                                         0 };
    static const enum ref_variant WRONG[] = { REF_NO_WINDOW,     REF_ONE_BASE,      REF_SILU,
                                              REF_NO_POST_NORMS, REF_NO_EMBD_SCALE, REF_NO_QK_NORM,
                                              REF_OTHER_PAIRS };
    struct tiny t;
    tiny_build(&t, &GEMMA3, 53);
    t.m.hp.n_swa = 4, t.m.hp.swa_pattern = 2;
    t.m.hp.rope_base = 1e6f, t.m.hp.rope_base_swa = 1e4f;
    ck_assert(llama_layer_slides(&t.m.hp, 0) && !llama_layer_slides(&t.m.hp, 1));
    check_switches(&t, WRONG, (int)(sizeof WRONG / sizeof WRONG[0]));
    t.m.hp.attn_scale = 0.125f; /* 1 / sqrt(64), where 1 / sqrt(16) would be the default */
    check_against_reference(&t, PROMPT, PROMPT_N);
    struct err e;
    t.m.hp.n_swa = -1;
    ck_assert_ptr_null(llama_ctx_new(&t.m, 64, 1, &e));
    ck_assert_str_eq(e.msg, "llama: sliding window -1, pattern 2, its rope base 10000, score "
                            "scale 0.125 (want the window and pattern >= 0, a base > 0 for a "
                            "window, a scale >= 0)");
    t.m.hp.n_swa = 4;
    t.layer[1].ffn_post_norm.data = NULL;
    ck_assert_ptr_null(llama_ctx_new(&t.m, 64, 1, &e));
    ck_assert_str_eq(e.msg, "llama: tensor blk.1.post_ffw_norm is missing");
    tiny_free(&t);
}
END_TEST

/* Gemma 2's switches: Gemma 3's without the Q and K norms, with every
 * attention score s soft-capped to cap * tanh(s / cap). The cap here is
 * 0.5 (Gemma 2's is 50, which scores this small would not reach), so that
 * the reference without it is far off; every other layer slides (llama.cpp's
 * pattern 2 for Gemma 2) by the global base. A cap of 0 is refused. */
START_TEST(test_gemma2_switches)
{
    static const struct shape GEMMA2 = { 2,
                                         48,
                                         4,
                                         2,
                                         64,
                                         11,
                                         QT_F32,
                                         LLAMA_SW_ROPE_NEOX | LLAMA_SW_EMBD_SCALE |
                                             LLAMA_SW_POST_NORMS | LLAMA_SW_GELU | LLAMA_SW_SOFTCAP,
                                         12,
                                         0 };
    static const enum ref_variant WRONG[] = { REF_NO_SOFTCAP, REF_NO_WINDOW, REF_SILU,
                                              REF_NO_POST_NORMS };
    struct tiny t;
    tiny_build(&t, &GEMMA2, 61);
    t.m.hp.n_swa = 4, t.m.hp.swa_pattern = 2, t.m.hp.rope_base_swa = t.m.hp.rope_base;
    t.m.hp.attn_softcap = 0.5f, t.m.hp.final_softcap = 30.0f;
    check_switches(&t, WRONG, (int)(sizeof WRONG / sizeof WRONG[0]));
    struct err e;
    t.m.hp.attn_softcap = 0.0f;
    ck_assert_ptr_null(llama_ctx_new(&t.m, 64, 1, &e));
    ck_assert_str_eq(e.msg, "llama: soft-caps 0 (scores) and 30 (logits): want both > 0");
    tiny_free(&t);
}
END_TEST

/* Grouped-query attention at both ends: 4 KV heads for 4 heads, and 1. */
START_TEST(test_gqa_extremes)
{
    static const int KV[] = { 4, 1 };
    for (int i = 0; i < 2; i++) {
        struct shape s = SMALL;
        s.n_head_kv = KV[i];
        struct tiny t;
        tiny_build(&t, &s, 21 + (uint64_t)i);
        check_against_reference(&t, PROMPT, PROMPT_N);
        tiny_free(&t);
    }
}
END_TEST

/* Rope scaling, both ways a file can give it. head_dim 4, base 10000: the
 * pairs turn by 1 and 10000^-0.5 = 0.01 radians per position.
 *   (a) rope_freqs = {1, 4}: the slow pair turns 0.0025 per position.
 *   (b) the formula with factor 8, low 1, high 4, orig 1024: wavelengths
 *       2 pi = 6.28 (< 1024/4 = 256: divisor 1) and 2 pi / 0.01 = 628.32
 *       (between 256 and 1024): smooth = (1024 / 628.32 - 1) / 3 = 0.209916,
 *       divisor = 1 / ((1 - 0.209916) / 8 + 0.209916) = 1 / 0.308676 = 3.239642.
 * Each against the reference, and each far from the unscaled model. */
START_TEST(test_rope_scaling)
{
    static const float FREQS[] = { 1.0f, 4.0f };
    struct tiny t;
    tiny_build(&t, &SMALL, 31);
    float plain[LLAMA_MAX_EMBD], h[LLAMA_MAX_EMBD];
    struct llama_ctx *c = ctx_make(&t, 64, 2);
    eval_ok(c, PROMPT, PROMPT_N, plain);
    llama_ctx_free(c);
    t.m.rope_freqs = FREQS;
    check_against_reference(&t, PROMPT, PROMPT_N);
    c = ctx_make(&t, 64, 2);
    eval_ok(c, PROMPT, PROMPT_N, h);
    ck_assert_msg(max_diff(h, plain, 16) > 1e-3, "rope_freqs changed nothing");
    llama_ctx_free(c);

    t.m.rope_freqs = NULL;
    t.m.hp.rope_factor = 8, t.m.hp.rope_low_freq = 1;
    t.m.hp.rope_high_freq = 4, t.m.hp.rope_orig_ctx = 1024;
    double div[2];
    llama_rope_divisors(&t.m.hp, div);
    ck_assert_double_eq(div[0], 1.0);
    ck_assert_double_eq_tol(div[1], 3.239642, 1e-6);
    check_against_reference(&t, PROMPT, PROMPT_N);
    c = ctx_make(&t, 64, 2);
    eval_ok(c, PROMPT, PROMPT_N, h);
    ck_assert_msg(max_diff(h, plain, 16) > 1e-3, "the formula changed nothing");
    llama_ctx_free(c);
    tiny_free(&t);
}
END_TEST

/* Llama 3.2's scaling (factor 32, low 1, high 4, orig 8192, base 500000,
 * head_dim 64). Pair i has wavelength w_i = 2 pi 500000^(i/32); the bounds
 * are 8192/4 = 2048 and 8192/1 = 8192:
 *   i = 14: w = 1956.50 < 2048                       -> 1
 *   i = 15: w = 2948.30, s = (8192/w - 1)/3 = (2.778548 - 1)/3 = 0.592849,
 *           1 / ((1 - s)/32 + s) = 1 / (0.0127235 + 0.592849) -> 1.651329
 *   i = 16: w = 4442.88, s = (1.843848 - 1)/3 = 0.281283,
 *           1 / (0.0224599 + 0.281283) = 1 / 0.303743      -> 3.292262
 *   i = 17: w = 6695.11, s = (1.223580 - 1)/3 = 0.074527,
 *           1 / (0.0289210 + 0.074527) = 1 / 0.103448      -> 9.666729
 *   i = 18: w = 10089.06 > 8192                      -> 32
 * The file's rope_freqs.weight holds these as llama.cpp's converter computes
 * them in float32 (1.6513293, 3.2922628, 9.6667271): within 2.1e-7 of the
 * exact values, inside the 1e-6 asserted here. */
START_TEST(test_rope_divisors_llama32)
{
    struct llama_hparams hp = { .head_dim = 64,
                                .rope_base = 500000.0f,
                                .rope_factor = 32.0f,
                                .rope_low_freq = 1.0f,
                                .rope_high_freq = 4.0f,
                                .rope_orig_ctx = 8192 };
    double div[32];
    llama_rope_divisors(&hp, div);
    for (int i = 0; i <= 14; i++)
        ck_assert_double_eq(div[i], 1.0);
    static const double MID[] = { 1.651329, 3.292262, 9.666729 };
    static const float FILE_F32[] = { 1.6513293f, 3.2922628f, 9.6667271f };
    for (int i = 0; i < 3; i++) {
        ck_assert_double_eq_tol(div[15 + i], MID[i], 1e-6 * MID[i]);
        ck_assert_double_eq_tol(div[15 + i], FILE_F32[i], 1e-6 * MID[i]);
    }
    for (int i = 18; i < 32; i++)
        ck_assert_double_eq(div[i], 32.0);
    hp.rope_factor = 0; /* no scaling: all 1 */
    llama_rope_divisors(&hp, div);
    for (int i = 0; i < 32; i++)
        ck_assert_double_eq(div[i], 1.0);
}
END_TEST

struct progress {
    int calls, done, total;
};

static void on_progress(void *arg, int done, int total)
{
    struct progress *p = arg;
    p->calls++, p->done = done, p->total = total;
}

/* A prompt as one batch, in pieces and one token at a time: the same bits
 * (each value is computed by the same operations in the same order,
 * whatever the batch), here across two pass boundaries (LLAMA_BATCH). The
 * batch reports its progress after each of 2 layers of 3 passes. */
START_TEST(test_batch_equals_steps)
{
    enum { N = 2 * LLAMA_BATCH + 44 };
    struct tiny t;
    tiny_build(&t, &SMALL, 41);
    int tok[N];
    uint64_t rng = 5;
    for (int i = 0; i < N; i++)
        tok[i] = (int)(rng_next(&rng) % 11);
    float one[LLAMA_MAX_EMBD], parts[LLAMA_MAX_EMBD], steps[LLAMA_MAX_EMBD];
    struct llama_ctx *a = ctx_make(&t, N, 2), *b = ctx_make(&t, N, 2), *s = ctx_make(&t, N, 2);
    struct progress pr = { 0, 0, 0 };
    llama_ctx_set_progress(a, on_progress, &pr);
    eval_ok(a, tok, N, one);
    ck_assert(pr.calls == 6 && pr.done == 6 && pr.total == 6);
    eval_ok(b, tok, 100, parts);
    eval_ok(b, tok + 100, 150, parts);
    eval_ok(b, tok + 250, N - 250, parts);
    for (int i = 0; i < N; i++) {
        eval_ok(s, tok + i, 1, steps);
        if (i == PROMPT_N - 1) { /* the short prompt too, against a batch of it */
            float h[LLAMA_MAX_EMBD];
            struct llama_ctx *c = ctx_make(&t, 16, 2);
            eval_ok(c, tok, PROMPT_N, h);
            ck_assert_mem_eq(h, steps, 16 * sizeof(float));
            llama_ctx_free(c);
        }
    }
    ck_assert_int_eq(llama_ctx_len(a), N);
    ck_assert_int_eq(llama_ctx_len(b), N);
    ck_assert_mem_eq(one, parts, 16 * sizeof(float));
    ck_assert_mem_eq(one, steps, 16 * sizeof(float));
    double ref[LLAMA_MAX_EMBD];
    ref_eval(&t, tok, N, REF_SPEC, ref);
    ck_assert_msg(rel_err(one, ref, 16) < TOL, "at %d: error %g", N, rel_err(one, ref, 16));
    llama_ctx_free(a);
    llama_ctx_free(b);
    llama_ctx_free(s);
    tiny_free(&t);
}
END_TEST

/* Stepping back: rewind to 5, another continuation (a different h), rewind
 * to 5 again, the first continuation: the first h bit for bit. */
START_TEST(test_rewind)
{
    static const int OTHER[] = { 7, 7, 0, 10 };
    struct tiny t;
    tiny_build(&t, &SMALL, 51);
    float first[LLAMA_MAX_EMBD], other[LLAMA_MAX_EMBD], again[LLAMA_MAX_EMBD];
    struct llama_ctx *c = ctx_make(&t, 32, 2);
    eval_ok(c, PROMPT, 9, first);
    ck_assert_int_eq(llama_ctx_len(c), 9);
    llama_ctx_rewind(c, 5);
    ck_assert_int_eq(llama_ctx_len(c), 5);
    eval_ok(c, OTHER, 4, other);
    ck_assert_msg(max_diff(first, other, 16) > 1e-3, "another continuation, the same h");
    llama_ctx_rewind(c, 12); /* past the end: nothing to forget */
    ck_assert_int_eq(llama_ctx_len(c), 9);
    llama_ctx_rewind(c, 5);
    eval_ok(c, PROMPT + 5, 4, again);
    ck_assert_mem_eq(first, again, 16 * sizeof(float));
    llama_ctx_rewind(c, 0);
    eval_ok(c, PROMPT, 9, again);
    ck_assert_mem_eq(first, again, 16 * sizeof(float));
    llama_ctx_free(c);
    tiny_free(&t);
}
END_TEST

/* 1, 2 and 3 threads: the same bits, on the small shape and on a wider one
 * (width 64, 8 heads, FFN 96) where every matrix splits into many tasks. */
START_TEST(test_threads_agree)
{
    static const struct shape WIDE = { 2, 64, 8, 2, 96, 50, QT_F32, 0, 0, 0 };
    const struct shape *shapes[] = { &SMALL, &WIDE };
    int tok[40];
    for (int i = 0; i < 40; i++)
        tok[i] = (i * 7 + 3) % 11;
    for (int k = 0; k < 2; k++) {
        struct tiny t;
        tiny_build(&t, shapes[k], 61 + (uint64_t)k);
        int d = shapes[k]->n_embd;
        float h[3][LLAMA_MAX_EMBD], step[3][LLAMA_MAX_EMBD];
        for (int th = 0; th < 3; th++) {
            struct llama_ctx *c = ctx_make(&t, 64, th + 1);
            eval_ok(c, tok, 39, h[th]);
            eval_ok(c, tok + 39, 1, step[th]);
            llama_ctx_free(c);
        }
        for (int th = 1; th < 3; th++) {
            ck_assert_mem_eq(h[0], h[th], (size_t)d * sizeof(float));
            ck_assert_mem_eq(step[0], step[th], (size_t)d * sizeof(float));
        }
        double ref[LLAMA_MAX_EMBD];
        ref_eval(&t, tok, 40, REF_SPEC, ref);
        ck_assert_msg(rel_err(step[0], ref, d) < TOL, "error %g", rel_err(step[0], ref, d));
        tiny_free(&t);
    }
}
END_TEST

static void assert_refused(struct llama_ctx *c, const int *tok, int n, const char *msg)
{
    struct err e;
    float h[LLAMA_MAX_EMBD];
    ck_assert_int_eq(llama_eval(c, tok, n, h, &e), -1);
    ck_assert_int_eq(e.code, ERR_USAGE);
    ck_assert_str_eq(e.msg, msg);
}

/* An id outside the vocabulary and a cache overflow are refused before any
 * work, and leave the context as it was. */
START_TEST(test_eval_refusals)
{
    static const int BAD[] = { 3, 1, 11 }, NEG[] = { -1 };
    struct tiny t;
    tiny_build(&t, &SMALL, 71);
    struct llama_ctx *c = ctx_make(&t, 8, 2), *fresh = ctx_make(&t, 8, 1);
    float h[LLAMA_MAX_EMBD], want[LLAMA_MAX_EMBD];
    assert_refused(c, BAD, 3, "llama: token id 11 (at 2) is outside the vocabulary (0 to 10)");
    assert_refused(c, NEG, 1, "llama: token id -1 (at 0) is outside the vocabulary (0 to 10)");
    assert_refused(c, PROMPT, 0, "llama: nothing to evaluate (0 tokens)");
    ck_assert_int_eq(llama_ctx_len(c), 0);
    eval_ok(c, PROMPT, 5, h);
    assert_refused(c, PROMPT + 5, 4,
                   "llama: 4 more tokens do not fit: the context holds 8 positions and 5 are "
                   "used");
    ck_assert_int_eq(llama_ctx_len(c), 5);
    eval_ok(c, PROMPT + 5, 3, h);
    eval_ok(fresh, PROMPT, 8, want);
    ck_assert_mem_eq(h, want, 16 * sizeof(float));
    assert_refused(c, PROMPT, 1,
                   "llama: 1 more tokens do not fit: the context holds 8 positions and 8 are "
                   "used");
    llama_ctx_free(c);
    llama_ctx_free(fresh);
    tiny_free(&t);
}
END_TEST

static void assert_ctx_refused(const struct llama_model *m, int n_ctx, const char *msg)
{
    struct err e;
    ck_assert_ptr_null(llama_ctx_new(m, n_ctx, 1, &e));
    ck_assert_int_eq(e.code, ERR_USAGE);
    ck_assert_str_eq(e.msg, msg);
}

/* Models whose numbers do not fit together are refused by name. */
START_TEST(test_model_refusals)
{
    struct tiny t;
    tiny_build(&t, &SMALL, 81);
    assert_ctx_refused(&t.m, 0, "llama: a context of 0 positions (want 1 to 1048576)");
    t.m.hp.n_head_kv = 3;
    assert_ctx_refused(&t.m, 8, "llama: 4 heads cannot share 3 KV heads");
    t.m.hp.n_head_kv = 2;
    t.layer[1].wq.rows = 15;
    assert_ctx_refused(&t.m, 8,
                       "llama: tensor blk.1.attn_q has 15 rows of 16 values, want 16 rows of 16");
    t.layer[1].wq.rows = 16;
    t.layer[0].ffn_norm.type = QT_F16;
    assert_ctx_refused(&t.m, 8, "llama: tensor blk.0.ffn_norm is of type F16 (want F32)");
    t.layer[0].ffn_norm.type = QT_F32;
    t.m.tok_embd.data = NULL;
    assert_ctx_refused(&t.m, 8, "llama: tensor token_embd is missing");
    tiny_free(&t);
}
END_TEST

/* Quantized matrices against the reference over their dequantized values:
 * the pass dequantizes inside the products (quant_dot), in float, so the
 * same tolerance holds (the sums are longer: up to 256 terms, still far
 * inside TOL). Q8_0 needs widths of 32, Q4_K of 256. */
START_TEST(test_quantized_weights)
{
    static const struct shape Q8 = { 2, 32, 4, 2, 64, 11, QT_Q8_0, 0, 0, 0 };
    static const struct shape Q4K = { 1, 256, 4, 1, 256, 11, QT_Q4_K, 0, 0, 0 };
    struct tiny t;
    tiny_build(&t, &Q8, 91);
    check_against_reference(&t, PROMPT, PROMPT_N);
    tiny_free(&t);
    tiny_build(&t, &Q4K, 92);
    check_against_reference(&t, PROMPT, PROMPT_N);
    tiny_free(&t);
}
END_TEST

Suite *suite_llama(void)
{
    Suite *s = suite_create("llama");
    TCase *ref = tcase_create("reference");
    tcase_set_timeout(ref, 60);
    tcase_add_test(ref, test_matches_reference);
    tcase_add_test(ref, test_qwen2_switches);
    tcase_add_test(ref, test_qwen3_switches);
    tcase_add_test(ref, test_phi3_rope_factors);
    tcase_add_test(ref, test_partial_rotary);
    tcase_add_test(ref, test_gemma2_switches);
    tcase_add_test(ref, test_gemma3_switches);
    tcase_add_test(ref, test_gqa_extremes);
    tcase_add_test(ref, test_rope_scaling);
    tcase_add_test(ref, test_rope_divisors_llama32);
    suite_add_tcase(s, ref);
    TCase *ctx = tcase_create("context");
    tcase_set_timeout(ctx, 60);
    tcase_add_test(ctx, test_batch_equals_steps);
    tcase_add_test(ctx, test_rewind);
    tcase_add_test(ctx, test_threads_agree);
    tcase_add_test(ctx, test_eval_refusals);
    tcase_add_test(ctx, test_model_refusals);
    suite_add_tcase(s, ctx);
    TCase *quant = tcase_create("quantized");
    tcase_set_timeout(quant, 60);
    tcase_add_test(quant, test_quantized_weights);
    suite_add_tcase(s, quant);
    return s;
}
