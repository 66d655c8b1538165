/* Philox4x32-10 against the known-answer vectors published with Random123
 * (its kat_vectors file: counter, key, expected output), and the u rule. */
#include <math.h>
#include <stdint.h>

#include "core/philox.h"
#include "philox_kat.h"
#include "core/sampler.h"
#include "suites.h"

static const struct philox_kat KAT[] = { PHILOX_KAT_ROWS };

START_TEST(test_known_answers)
{
    const struct philox_kat *k = &KAT[_i];
    struct philox4x32 c = { { k->ctr[0], k->ctr[1], k->ctr[2], k->ctr[3] } };
    struct philox4x32 r = philox4x32_10(c, k->key[0], k->key[1]);
    for (int w = 0; w < 4; w++)
        ck_assert_msg(r.v[w] == k->out[w], "vector %d word %d: got %08x, want %08x", _i, w, r.v[w],
                      k->out[w]);
}
END_TEST

START_TEST(test_uniform_is_top_24_bits_of_first_word)
{
    /* Seed 0, counter (0,0,0,0) is the first known answer: u = 0x6627e8 / 2^24. */
    double u = philox_uniform(0, 0, 0, 0);
    ck_assert_double_eq(u, (double)0x6627e8 / 16777216.0);
    /* The seed's high word is the second key word: key (a4093822, 299f31d0). */
    uint64_t seed = ((uint64_t)0x299f31d0 << 32) | 0xa4093822;
    struct philox4x32 c = { { 7, 3, 11, 0 } };
    struct philox4x32 r = philox4x32_10(c, 0xa4093822, 0x299f31d0);
    ck_assert_double_eq(philox_uniform(seed, 7, 3, 11), (double)(r.v[0] >> 8) / 16777216.0);
}
END_TEST

START_TEST(test_uniform_range_and_grid)
{
    for (uint32_t i = 0; i < 100000; i++) {
        double u = sampler_u(12345, 1, 0, i);
        ck_assert(u >= 0.0 && u < 1.0);
        double scaled = u * 16777216.0;
        ck_assert_double_eq(scaled, floor(scaled)); /* on the 2^-24 grid */
    }
}
END_TEST

START_TEST(test_same_seed_same_u_other_counter_other_u)
{
    ck_assert_double_eq(sampler_u(42, 1, 0, 0), sampler_u(42, 1, 0, 0));
    ck_assert_double_ne(sampler_u(42, 1, 0, 0), sampler_u(43, 1, 0, 0));
    ck_assert_double_ne(sampler_u(42, 1, 0, 0), sampler_u(42, 2, 0, 0));
    ck_assert_double_ne(sampler_u(42, 1, 0, 0), sampler_u(42, 1, 1, 0));
    ck_assert_double_ne(sampler_u(42, 1, 0, 0), sampler_u(42, 1, 0, 1));
}
END_TEST

START_TEST(test_uniform_mean_and_variance)
{
    /* 10^6 draws: mean 1/2 and variance 1/12 within a few standard errors. */
    const int n = 1000000;
    double sum = 0.0, sq = 0.0;
    for (int i = 0; i < n; i++) {
        double u = sampler_u(2024, 3, 1, (uint32_t)i);
        sum += u;
        sq += u * u;
    }
    double mean = sum / n, var = sq / n - mean * mean;
    ck_assert_double_eq_tol(mean, 0.5, 5 * sqrt(1.0 / 12.0 / n));
    ck_assert_double_eq_tol(var, 1.0 / 12.0, 0.001);
}
END_TEST

Suite *suite_philox(void)
{
    Suite *s = suite_create("philox");
    TCase *core = tcase_create("core");
    tcase_add_loop_test(core, test_known_answers, 0, (int)(sizeof KAT / sizeof KAT[0]));
    tcase_add_test(core, test_uniform_is_top_24_bits_of_first_word);
    tcase_add_test(core, test_same_seed_same_u_other_counter_other_u);
    suite_add_tcase(s, core);
    TCase *edge = tcase_create("edge");
    tcase_add_test(edge, test_uniform_range_and_grid);
    tcase_add_test(edge, test_uniform_mean_and_variance);
    suite_add_tcase(s, edge);
    return s;
}
