#include "base/vecpath.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

static const char *const NAMES[VEC_N_PATHS] = { "baseline", "avx2", "avx512" };

unsigned vec_paths_here(void)
{
    unsigned paths = 1u << VEC_BASELINE;
#if defined(__x86_64__) && defined(__clang__)
    /* clang cannot ask for the levels, nor for F16C, MOVBE or LZCNT, which
     * every CPU with AVX2 and BMI2 has. */
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
        __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2")) {
        paths |= 1u << VEC_AVX2;
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
            __builtin_cpu_supports("avx512vl"))
            paths |= 1u << VEC_AVX512;
    }
#elif defined(__x86_64__) && defined(__GNUC__)
    /* The levels as gcc's own target_clones resolver tested them (the CPU's
     * features, and the operating system's saving of their registers). */
    if (__builtin_cpu_supports("x86-64-v3")) {
        paths |= 1u << VEC_AVX2;
        if (__builtin_cpu_supports("x86-64-v4"))
            paths |= 1u << VEC_AVX512;
    }
#endif
    return paths;
}

int vec_path_best(unsigned paths)
{
    int best = VEC_BASELINE;
    for (int p = 0; p < VEC_N_PATHS; p++)
        if (paths & (1u << p))
            best = p;
    return best;
}

/* The paths of the mask by name, best first ("avx2 or baseline"). */
static void list_paths(unsigned paths, char *out, size_t size)
{
    out[0] = '\0';
    int left = 0;
    for (int p = 0; p < VEC_N_PATHS; p++)
        left += !!(paths & (1u << p));
    for (int p = VEC_N_PATHS - 1; p >= 0; p--) {
        if (!(paths & (1u << p)))
            continue;
        size_t at = strlen(out);
        left--;
        snprintf(out + at, size - at, "%s%s", NAMES[p], left > 1 ? ", " : left ? " or " : "");
    }
}

int vec_path_parse(const char *value, unsigned paths, struct err *e)
{
    if (!value || !*value)
        return vec_path_best(paths);
    for (int p = 0; p < VEC_N_PATHS; p++) {
        if (strcmp(value, NAMES[p]) != 0)
            continue;
        if (paths & (1u << p))
            return p;
        char can[64];
        list_paths(paths, can, sizeof can);
        return err_set(e, ERR_USAGE, "%s: this machine cannot run %s (%s); it can run %s", VEC_ENV,
                       NAMES[p], vec_path_level(p), can);
    }
    char all[64];
    list_paths((1u << VEC_N_PATHS) - 1, all, sizeof all);
    return err_set(e, ERR_USAGE, "%s: '%s' is not a vector path (%s)", VEC_ENV, value, all);
}

int vec_path_check(struct err *e)
{
    return vec_path_parse(getenv(VEC_ENV), vec_paths_here(), e);
}

int vec_path(void)
{
    unsigned paths = vec_paths_here();
    int p = vec_path_parse(getenv(VEC_ENV), paths, NULL);
    return p < 0 ? vec_path_best(paths) : p;
}

const char *vec_path_name(int path)
{
    return path >= 0 && path < VEC_N_PATHS ? NAMES[path] : "?";
}

const char *vec_path_level(int path)
{
#if defined(__x86_64__)
    return path == VEC_AVX512 ? "x86-64-v4" : path == VEC_AVX2 ? "x86-64-v3" : "x86-64";
#else
    return path == VEC_AVX512 ? "x86-64-v4" : path == VEC_AVX2 ? "x86-64-v3" : "generic";
#endif
}
