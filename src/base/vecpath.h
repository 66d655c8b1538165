/* vecpath.h - the vector paths: which build of the dense loops runs.
 *
 * On x86-64 (gcc) each dense loop is compiled three times by VEC_PATHS
 * below, one build a path -- avx512 (x86-64-v4), avx2 (x86-64-v3: AVX2 and
 * FMA) and baseline (x86-64) -- and called through name_on(path, ...),
 * which runs the build of the path it is given, or name(...), which runs
 * vec_path()'s: the best the CPU can run, or the one LOGITLAB_VECTOR names,
 * so that one machine can run, time and test the builds it would not pick.
 * gcc's target_clones did this before, but its resolver picks one clone at
 * load time from the CPU alone, and nothing can ask it for another. Every
 * such loop is written so that the paths give the same bits (element-wise
 * work, sums in one fixed order); tests/check_vecpath.c holds them to it.
 *
 * Elsewhere (clang, which builds the fuzzing harnesses; CPUs other than
 * x86-64) each loop is built once and its name_on ignores the path; the
 * path still picks the quantized products' build (quant.h) on x86-64.
 *
 * Nothing is kept: vec_path() asks the environment and the CPU at each
 * call (a getenv, tens of nanoseconds), so a loop over tokens asks once
 * and passes the answer on, and a sampler's run keeps it in its trace. */
#ifndef LOGITLAB_VECPATH_H
#define LOGITLAB_VECPATH_H

struct err;

enum vec_path {
    VEC_BASELINE = 0, /* what every CPU of the build's architecture runs */
    VEC_AVX2 = 1,     /* x86-64-v3: AVX2, FMA, F16C, BMI1/2 (Haswell, Zen 1 on) */
    VEC_AVX512 = 2,   /* x86-64-v4: AVX-512 F, BW, CD, DQ, VL (Skylake-X, Zen 4 on) */
    VEC_N_PATHS
};

/* The environment variable that forces a path: avx512, avx2 or baseline
 * (unset or empty: the best the CPU can run). */
#define VEC_ENV "LOGITLAB_VECTOR"

/* The paths this build and this CPU can run, as a mask of 1 << path
 * (baseline always). */
unsigned vec_paths_here(void);

/* The best path of the mask: the highest. */
int vec_path_best(unsigned paths);

/* The path that value (LOGITLAB_VECTOR's; NULL or "" for unset) asks for,
 * among the paths of the mask (vec_paths_here's): the best when unset.
 * Returns it, or -1 with one line naming the variable when the value is no
 * path or one the mask lacks. */
int vec_path_parse(const char *value, unsigned paths, struct err *e);

/* vec_path_parse of the environment on this CPU: what main checks first. */
int vec_path_check(struct err *e);

/* The path the dense loops run: vec_path_check's, or the best where it
 * refuses the environment's value (main has refused it by then). */
int vec_path(void);

/* "avx512", "avx2", "baseline": the names LOGITLAB_VECTOR takes. */
const char *vec_path_name(int path);

/* The level of the instruction set a path is built for: "x86-64-v4",
 * "x86-64-v3", "x86-64" (or "generic" off x86-64). */
const char *vec_path_level(int path);

/* The macros that build a loop for every path. A loop is written once as
 *
 *     VEC_BODY double name_body(double *z, int n) { ... }
 *
 * (always inlined, so that it, and the inlined helpers it calls, are
 * compiled for the vector units of each build that takes it in), then
 *
 *     VEC_PATHS(double, name, (double *z, int n), (z, n))
 *
 * defines name_on(int path, double *z, int n) and name(double *z, int n),
 * which VEC_DECLARE(double, name, (double *z, int n)); declares in a
 * header. VEC_PATHS_VOID does the same for a loop that returns nothing;
 * VEC_PATHS_ON (and _VOID) define name_on alone, for a name whose path
 * comes from elsewhere (trace_e: the trace's). VEC_PATHS_BY takes a body
 * for each path (avx512, avx2, baseline), where a loop is written apart
 * for one (fast_vec.c's passes: four lanes a vector for AVX2); off the
 * builds it takes the baseline's. */
#define VEC_BODY         static inline __attribute__((always_inline))
#define VEC_UNPAREN(...) __VA_ARGS__

#define VEC_DECLARE(ret, name, params)                                                             \
    ret name params;                                                                               \
    ret name##_on(int path, VEC_UNPAREN params)
#define VEC_DECLARE_ON(ret, name, params) ret name##_on(int path, VEC_UNPAREN params)

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define VEC_BUILDS 1
/* R is `return` or nothing (a void loop). */
#define VEC_PATHS_BY_(ret, R, name, params, args, b_avx512, b_avx2, b_baseline)                    \
    __attribute__((target("arch=x86-64-v4"))) static ret name##_avx512 params                      \
    {                                                                                              \
        R b_avx512 args;                                                                           \
    }                                                                                              \
    __attribute__((target("arch=x86-64-v3"))) static ret name##_avx2 params                        \
    {                                                                                              \
        R b_avx2 args;                                                                             \
    }                                                                                              \
    static ret name##_baseline params                                                              \
    {                                                                                              \
        R b_baseline args;                                                                         \
    }                                                                                              \
    ret name##_on(int path, VEC_UNPAREN params)                                                    \
    {                                                                                              \
        if (path == VEC_AVX512) {                                                                  \
            R name##_avx512 args;                                                                  \
        } else if (path == VEC_AVX2) {                                                             \
            R name##_avx2 args;                                                                    \
        } else {                                                                                   \
            R name##_baseline args;                                                                \
        }                                                                                          \
    }
#else
#define VEC_PATHS_BY_(ret, R, name, params, args, b_avx512, b_avx2, b_baseline)                    \
    ret name##_on(int path, VEC_UNPAREN params)                                                    \
    {                                                                                              \
        (void)path;                                                                                \
        R b_baseline args;                                                                         \
    }
#endif
#define VEC_PATHS_ON_(ret, R, name, params, args)                                                  \
    VEC_PATHS_BY_(ret, R, name, params, args, name##_body, name##_body, name##_body)

#define VEC_PATHS_ON(ret, name, params, args) VEC_PATHS_ON_(ret, return, name, params, args)
#define VEC_PATHS_ON_VOID(name, params, args) VEC_PATHS_ON_(void, , name, params, args)
#define VEC_PATHS(ret, name, params, args)                                                         \
    VEC_PATHS_ON_(ret, return, name, params, args)                                                 \
    ret name params                                                                                \
    {                                                                                              \
        return name##_on(vec_path(), VEC_UNPAREN args);                                            \
    }
#define VEC_PATHS_VOID(name, params, args)                                                         \
    VEC_PATHS_ON_(void, , name, params, args)                                                      \
    void name params                                                                               \
    {                                                                                              \
        name##_on(vec_path(), VEC_UNPAREN args);                                                   \
    }
#define VEC_PATHS_BY(ret, name, params, args, b_avx512, b_avx2, b_baseline)                        \
    VEC_PATHS_BY_(ret, return, name, params, args, b_avx512, b_avx2, b_baseline)                   \
    ret name params                                                                                \
    {                                                                                              \
        return name##_on(vec_path(), VEC_UNPAREN args);                                            \
    }

#endif
