/* base/softfma.h's emulated fused multiply-add against the C library's fma
 * and fmaf (IEEE 754's one rounding of a * b + c; the instruction where
 * the CPU has it): the same bits on millions of operands of every kind the
 * header promises to get right -- random values over the exponent range,
 * short mantissas (whose products are exact, so that the sums fall on
 * ties and on exact cancellations), a c that cancels the product's high
 * part, products so small that the emulation scales them, and the special
 * values. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/softfma.h"
#include "suites.h"

#define N_RANDOM (1 << 20)

/* splitmix64: a fixed sequence of 64-bit words. */
static uint64_t next_word(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* A double of the given sign-and-mantissa word and binary exponent e
 * (-1022..1023), its mantissa cut to its top bits (1..52). */
static double make_double(uint64_t w, int e, int bits)
{
    uint64_t mant = (w & ((1ull << 52) - 1)) >> (52 - bits) << (52 - bits);
    uint64_t u = (w & (1ull << 63)) | ((uint64_t)(e + 1023) << 52) | mant;
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static int same_double(double x, double y)
{
    return (isnan(x) && isnan(y)) || memcmp(&x, &y, sizeof x) == 0;
}

static int same_float(float x, float y)
{
    return (isnan(x) && isnan(y)) || memcmp(&x, &y, sizeof x) == 0;
}

/* Whether r is where soft_fma promises fma's bits: zero or normal, finite. */
static int in_domain(double r)
{
    return r == 0.0 || (isfinite(r) && fabs(r) >= 0x1p-1022);
}

/* One operand triple checked; returns 1 when it was in the domain. */
static int check_triple(double a, double b, double c)
{
    double want = fma(a, b, c);
    if (!in_domain(want))
        return 0;
    double got = soft_fma(a, b, c);
    ck_assert_msg(same_double(got, want), "soft_fma(%a, %a, %a) = %a, fma %a", a, b, c, got, want);
    return 1;
}

/* Random exponents within +-400 and full mantissas; c near the product's
 * size, or its negation (cancellation), or anywhere. */
START_TEST(test_soft_fma_random)
{
    uint64_t st = 1;
    int checked = 0;
    for (int i = 0; i < N_RANDOM; i++) {
        uint64_t w = next_word(&st);
        int ea = (int)(w % 801) - 400, eb = (int)((w >> 16) % 801) - 400;
        double a = make_double(next_word(&st), ea, 52), b = make_double(next_word(&st), eb, 52);
        double c;
        switch ((w >> 40) % 3) {
        case 0:
            c = make_double(next_word(&st), ea + eb + (int)((w >> 48) % 121) - 60, 52);
            break;
        case 1:
            c = -(a * b) * (1.0 + 0x1p-52 * (double)((int)((w >> 48) % 9) - 4));
            break;
        default:
            c = make_double(next_word(&st), (int)((w >> 48) % 1801) - 900, 52);
            break;
        }
        checked += check_triple(a, b, c);
    }
    ck_assert_int_gt(checked, N_RANDOM * 9 / 10);
}
END_TEST

/* Short mantissas (8 to 27 bits): exact products, and sums that land on
 * ties between two doubles and on exact zeros. */
START_TEST(test_soft_fma_short_mantissas)
{
    uint64_t st = 2;
    int checked = 0;
    for (int i = 0; i < N_RANDOM; i++) {
        uint64_t w = next_word(&st);
        int bits = 8 + (int)(w % 20), ea = (int)((w >> 8) % 41) - 20,
            eb = (int)((w >> 16) % 41) - 20;
        double a = make_double(next_word(&st), ea, bits), b = make_double(next_word(&st), eb, bits);
        double c =
            make_double(next_word(&st), ea + eb - (int)((w >> 24) % 60), 1 + (int)((w >> 32) % 52));
        checked += check_triple(a, b, c);
    }
    ck_assert_int_gt(checked, N_RANDOM * 9 / 10);
}
END_TEST

/* Products from 2^-1060 to 2^-980, which soft_fma scales, against a c
 * from 2^-1015 to 2^-966: the product's low half decides the last bit
 * (results that would be subnormal are outside its promise). */
START_TEST(test_soft_fma_tiny_products)
{
    uint64_t st = 3;
    int checked = 0;
    for (int i = 0; i < N_RANDOM; i++) {
        uint64_t w = next_word(&st);
        int ea = -500 - (int)(w % 40), eb = -480 - (int)((w >> 8) % 40);
        double a = make_double(next_word(&st), ea, 52), b = make_double(next_word(&st), eb, 52);
        double c = make_double(next_word(&st), -1015 + (int)((w >> 16) % 50), 52);
        checked += check_triple(a, b, c);
    }
    ck_assert_int_gt(checked, N_RANDOM / 2);
}
END_TEST

START_TEST(test_soft_fma_specials)
{
    const double v[] = { 0.0, -0.0, 1.0, -1.0, 3.0, 0x1p-1000, -0x1p900, INFINITY, -INFINITY, NAN };
    const int n = (int)(sizeof v / sizeof v[0]);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (int k = 0; k < n; k++) {
                double want = fma(v[i], v[j], v[k]);
                if (!in_domain(want) && !isinf(want) && !isnan(want))
                    continue;
                double got = soft_fma(v[i], v[j], v[k]);
                ck_assert_msg(same_double(got, want), "soft_fma(%a, %a, %a) = %a, fma %a", v[i],
                              v[j], v[k], got, want);
            }
}
END_TEST

/* soft_fmaf on every kind of float: random bits (subnormals, infinities
 * and NaNs among them), and short mantissas for ties. */
START_TEST(test_soft_fmaf)
{
    uint64_t st = 4;
    for (int i = 0; i < 4 * N_RANDOM; i++) {
        uint64_t w = next_word(&st), x = next_word(&st);
        uint32_t ua = (uint32_t)w, ub = (uint32_t)(w >> 32), uc = (uint32_t)x;
        if (i & 1) { /* short mantissas near 1: exact products, ties */
            uint32_t keep = ~((1u << (12 + (x >> 32) % 12)) - 1);
            ua = (ua & 0x80000000u) | (0x3f000000u + (ua >> 9 & 0x00ffffffu & keep) % 0x01000000u);
            ub = (ub & 0x80000000u) | (0x3f000000u + (ub >> 9 & 0x00ffffffu & keep) % 0x01000000u);
            uc = (uc & 0x80000000u) | (0x3e800000u + (uc >> 9 & 0x01ffffffu));
        }
        float a, b, c;
        memcpy(&a, &ua, sizeof a);
        memcpy(&b, &ub, sizeof b);
        memcpy(&c, &uc, sizeof c);
        float want = fmaf(a, b, c), got = soft_fmaf(a, b, c);
        ck_assert_msg(same_float(got, want), "soft_fmaf(%a, %a, %a) = %a, fmaf %a", (double)a,
                      (double)b, (double)c, (double)got, (double)want);
    }
}
END_TEST

/* Sums a hair off a tie, which plain rounding twice gets wrong half the
 * time: (1 + i u)(1 - i u) = 1 - i^2 u^2 (u the unit in the last place of
 * 1; the product exact in double for floats), added to a c whose unit in
 * the last place is 2, so that c + 1 is the tie and the hair decides. */
START_TEST(test_soft_fma_near_ties)
{
    uint64_t st = 5;
    for (int i = 1; i <= 362; i++)
        for (int r = 0; r < 64; r++) {
            uint64_t w = next_word(&st);
            double sign = (w & 1) ? -1.0 : 1.0, j = (double)((w >> 1) % (1u << 22));
            float af = (float)(1.0 + i * 0x1p-23), bf = (float)(1.0 - i * 0x1p-23);
            float cf = (float)(sign * (0x1p24 + 2.0 * j));
            float fa = (w & 2) ? af : -af, want = fmaf(fa, (float)sign * bf, cf);
            ck_assert_msg(same_float(soft_fmaf(fa, (float)sign * bf, cf), want),
                          "soft_fmaf(%a, %a, %a): fmaf %a", (double)fa, (double)bf, (double)cf,
                          (double)want);
            double a = 1.0 + i * 0x1p-52, b = 1.0 - i * 0x1p-52;
            double c = sign * (0x1p53 + 2.0 * (double)((w >> 24) % (1u << 30)));
            check_triple((w & 2) ? a : -a, sign * b, c);
        }
}
END_TEST

Suite *suite_softfma(void)
{
    Suite *s = suite_create("softfma");
    TCase *t = tcase_create("softfma");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_soft_fma_random);
    tcase_add_test(t, test_soft_fma_short_mantissas);
    tcase_add_test(t, test_soft_fma_tiny_products);
    tcase_add_test(t, test_soft_fma_specials);
    tcase_add_test(t, test_soft_fmaf);
    tcase_add_test(t, test_soft_fma_near_ties);
    suite_add_tcase(s, t);
    return s;
}
