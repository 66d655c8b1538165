/* backend_nocuda.c - the CUDA backend's place in a build without it (no
 * nvcc, CUDA=0, or the sanitizer build, which cannot load the CUDA runtime):
 * the probe says why, and the table is never used. */
#include "backend/backend.h"

#include <stdio.h>

#ifndef LOGITLAB_NO_CUDA_WHY
#define LOGITLAB_NO_CUDA_WHY "no CUDA backend: built without nvcc"
#endif

static int no_open(struct backend *b, struct err *e)
{
    (void)b;
    return err_set(e, ERR_USAGE, "%s", LOGITLAB_NO_CUDA_WHY);
}

static void no_close(struct backend *b)
{
    (void)b;
}

/* The real table's name and limit, so that the checks word a refusal alike
 * in every build (tests/check_backend.c reads them here). */
const struct backend_ops backend_cuda_ops = {
    .name = "CUDA",
    .max_vocab = BACKEND_CUDA_MAX_VOCAB,
    .open = no_open,
    .close = no_close,
};

int backend_cuda_probe(char *why, size_t n)
{
    snprintf(why, n, "%s", LOGITLAB_NO_CUDA_WHY);
    return 0;
}
