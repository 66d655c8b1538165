/* backend_spec.h - the GPU sampler's two-pass design (core/candidates.h)
 * run on the CPU, one request after another: the specification its kernels
 * follow, and what check_gpu --self puts in the device's place, so that the
 * design is checked against the CPU fast path on every machine.
 *
 * backend_spec_sample is a backend's sample operation for a CPU backend
 * (backend_cpu_ops with it in .sample): it reads each request's row with
 * the CPU backend's get_logits. A request the candidate path cannot take --
 * a list over CAND_MAX, a stage the kernels do not run, fewer finite tokens
 * than rows on screen -- takes the CPU backend's full path; b->by_list and
 * b->by_full count the two.
 * Per-token outputs asked for (final_out, kept_out) come from an explain
 * pass over the row, as the kernels' would write them.
 */
#ifndef LOGITLAB_BACKEND_SPEC_H
#define LOGITLAB_BACKEND_SPEC_H

#include "backend/backend.h"
#include "core/candidates.h"

/* The plan of s's chain for rows of V tokens, or -1 when it turns on a
 * stage the kernels do not run. */
int cand_plan_make(struct cand_plan *P, const struct sampler_settings *s, int V);

int backend_spec_sample(struct backend *b, const struct backend_req *req, int B,
                        struct backend_res *res, struct err *e);

#endif
