/* samplers_check.c - logitlab's stages against llama.cpp's kept set on the
 * same row (issue 33): every case of tests/oracle/samplers.txt, its row and
 * context made again here (sampler_rows.h), its settings parsed as the
 * command line parses them (settings_set), run through the reference
 * sampler (sampler_run) and the O(V) path (sampler_run_fast), and compared
 * with llama.cpp's output that tests/oracle/samplers.sh committed as
 * tests/golden/samplers/NAME.txt:
 *   - the kept set: the same ids exactly (llama.cpp's tokens left with a
 *     finite logit; those it leaves at -inf have probability 0 there);
 *   - each kept token's z' (logitlab's, in double) within LOGIT_TOL x (1 +
 *     |z'|) of llama.cpp's logit after the chain (float32): llama.cpp
 *     rounds each of at most three operations (the repetition divide, the
 *     frequency and presence subtraction, the temperature divide) and its
 *     settings (1.1f, 0.8f) to float, 2^-24 relative each, so 1e-6 x (1 +
 *     |z'|) holds them with room, and is 10^4 times tighter than a stage
 *     that is wrong by a percent.
 * A case whose last field is `differs: WHY` records a known disagreement:
 * it passes while the two still differ, and fails when they agree (drop
 * the note then). A case whose logitlab side is `-` is llama.cpp's alone
 * (a sampler logitlab does not have yet): its golden waits for the stage.
 *
 *   samplers_check CASES GOLDEN_DIR [NAME...]
 *   samplers_check --cli CASES DIR [NAME...]
 *
 * Prints one line per case; exit status 0 only if every case held. --cli
 * writes the cases of up to CLI_MAX_V tokens as lessons with the kept set
 * this program computes, for tests/samplers.sh to run `logitlab show` on
 * (the command line's own path to the same sampler).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sampler.h"
#include "core/settings.h"
#include "sampler_rows.h"

#define LOGIT_TOL 1e-6
#define LINE_MAX_ 1024
#define FIELDS    6
#define SHOW_MAX  8
#define CLI_MAX_V 256 /* the cases --cli writes as lessons */

struct kept {
    int n;
    int *id;   /* ascending */
    double *z; /* the logit after the chain */
};

struct run {
    int V;
    float *row;
    double *row_d;
    int ctx[ROWS_MAX_CTX];
    int n_ctx;
    struct settings st;
};

/* Splits line at " | " into at most FIELDS trimmed fields. Returns the count. */
static int split(char *line, char **field)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line; p && n < FIELDS;) {
        char *bar = strstr(p, " | ");
        if (bar)
            *bar = '\0';
        while (*p == ' ' || *p == '\t')
            p++;
        size_t len = strlen(p);
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            p[--len] = '\0';
        field[n++] = p;
        p = bar ? bar + 3 : NULL;
    }
    return n;
}

/* logitlab's words "--order llamacpp --top-k 40" into st, as the options
 * are parsed. Returns 0, or -1 with a message in msg. */
static int parse_settings(char *words, struct settings *st, char *msg, size_t msg_size)
{
    settings_defaults(st);
    for (char *name = strtok(words, " "); name; name = strtok(NULL, " ")) {
        char *value = strtok(NULL, " ");
        struct err e;
        if (strncmp(name, "--", 2) != 0 || !value) {
            snprintf(msg, msg_size, "'%s': settings are --NAME VALUE pairs", name);
            return -1;
        }
        if (settings_set(st, name + 2, value, &e) != 0) {
            snprintf(msg, msg_size, "%.60s: %.900s", name, e.msg);
            return -1;
        }
    }
    return 0;
}

/* The case's row and context. Returns 0, or -1 with a message in msg. */
static int make_input(const char *row_spec, const char *ctx_spec, struct run *r, char *msg,
                      size_t msg_size)
{
    char kind[16];
    uint64_t seed;
    if (rows_parse(row_spec, kind, sizeof kind, &r->V, &seed, msg, msg_size) != 0)
        return -1;
    r->row = malloc(sizeof *r->row * (size_t)r->V);
    r->row_d = malloc(sizeof *r->row_d * (size_t)r->V);
    if (!r->row || !r->row_d) {
        snprintf(msg, msg_size, "out of memory");
        return -1;
    }
    if (rows_make(row_spec, kind, r->V, seed, r->row) != 0) {
        snprintf(msg, msg_size, "row '%s': unknown kind, or a list that is not numbers", row_spec);
        return -1;
    }
    for (int i = 0; i < r->V; i++)
        r->row_d[i] = r->row[i];
    r->n_ctx = rows_context(ctx_spec, r->row, r->V, r->ctx, msg, msg_size);
    return r->n_ctx < 0 ? -1 : 0;
}

static int kept_alloc(struct kept *k, int n)
{
    k->n = 0;
    k->id = malloc(sizeof *k->id * (size_t)(n > 0 ? n : 1));
    k->z = malloc(sizeof *k->z * (size_t)(n > 0 ? n : 1));
    return k->id && k->z ? 0 : -1;
}

static void kept_free(struct kept *k)
{
    free(k->id);
    free(k->z);
}

/* The golden's kept set (its "ID LOGIT" lines, by id). Returns 0, or -1
 * with a message in msg. */
static int read_golden(const char *path, int V, struct kept *k, char *msg, size_t msg_size)
{
    FILE *fp = fopen(path, "r");
    char line[LINE_MAX_];
    if (!fp) {
        snprintf(msg, msg_size, "%.400s: missing (make test-oracle-samplers writes it)", path);
        return -1;
    }
    if (kept_alloc(k, V) != 0) {
        fclose(fp);
        snprintf(msg, msg_size, "out of memory");
        return -1;
    }
    while (fgets(line, sizeof line, fp)) {
        int id;
        double z;
        if (line[0] == '#')
            continue;
        if (sscanf(line, "%d %lf", &id, &z) != 2 || id < 0 || id >= V || k->n == V ||
            (k->n > 0 && id <= k->id[k->n - 1])) {
            fclose(fp);
            snprintf(msg, msg_size, "%.400s: '%.40s' is not an ID LOGIT line in order", path, line);
            return -1;
        }
        k->id[k->n] = id;
        k->z[k->n++] = z;
    }
    fclose(fp);
    return 0;
}

/* logitlab's kept set on r: the reference sampler (fast 0) or the O(V)
 * path (fast 1). Returns 0, or -1 with the sampler's message in msg. */
static int logitlab_kept(const struct run *r, int fast, struct kept *k, char *msg, size_t msg_size)
{
    struct trace t;
    struct err e;
    /* The context is all generated tokens (prompt_len 0), so either
     * penalty-scope counts it, as llama.cpp's accept counts every token. */
    struct sampler_input in = { .vocab_size = r->V,
                                .logits = fast ? NULL : r->row_d,
                                .logits_f = fast ? r->row : NULL,
                                .context = r->ctx,
                                .context_len = r->n_ctx,
                                .prompt_len = 0,
                                .step = 1,
                                .row = 0 };
    memset(&t, 0, sizeof t);
    snprintf(e.msg, sizeof e.msg, "out of memory");
    int rc = trace_init(&t, r->V, &e) != 0 || kept_alloc(k, r->V) != 0 ? -1 : 0;
    if (rc == 0)
        rc = fast ? sampler_run_fast(&in, &r->st.sampler, &t, 1, &e)
                  : sampler_run(&in, &r->st.sampler, &t, &e);
    for (int id = 0; rc == 0 && id < r->V; id++) {
        struct trace_row row;
        if (fast) { /* sampler_fast_row would take O(V) a token: read its arrays */
            row.removed_by = t.fmark[id] == 0 ? TRACE_KEPT : t.fmark[id] - 1;
            row.adjusted = t.fz[id];
        } else {
            row = t.rows[t.rank_of[id]];
        }
        if (rc == 0 && row.removed_by == TRACE_KEPT) {
            k->id[k->n] = id;
            k->z[k->n++] = row.adjusted;
        }
    }
    if (rc != 0)
        snprintf(msg, msg_size, "%.1000s", e.msg);
    trace_free(&t);
    return rc;
}

/* Writes into msg how logitlab's set a differs from llama.cpp's g: the ids
 * only one side keeps (SHOW_MAX of each), or the z' furthest out of
 * tolerance; and into *max_d the largest relative difference of a z' kept
 * by both. Returns 0 when they agree. */
static int compare(const struct kept *a, const struct kept *g, char *msg, size_t msg_size,
                   double *max_d)
{
    size_t used = 0;
    int only_a = 0, only_g = 0, i = 0, j = 0, worst = -1;
    msg[0] = '\0';
    *max_d = 0.0;
    while (i < a->n || j < g->n) {
        int side = i == a->n ? 1 : j == g->n ? -1 : (a->id[i] > g->id[j]) - (a->id[i] < g->id[j]);
        int show = side < 0 ? only_a++ < SHOW_MAX : side > 0 ? only_g++ < SHOW_MAX : 0;
        if (side == 0) {
            double d = fabs(a->z[i] - g->z[j]) / (1.0 + fabs(g->z[j]));
            if (d > *max_d) {
                *max_d = d;
                worst = d > LOGIT_TOL ? j : worst;
            }
            i++, j++;
        } else if (show && used < msg_size) {
            used += (size_t)snprintf(msg + used, msg_size - used, " %s %d (%.9g)",
                                     side < 0 ? "logitlab-only" : "llama-only",
                                     side < 0 ? a->id[i] : g->id[j], side < 0 ? a->z[i] : g->z[j]);
        }
        i += side < 0;
        j += side > 0;
    }
    if (only_a + only_g > 0) {
        if (used < msg_size)
            snprintf(msg + used, msg_size - used, " (kept %d, llama.cpp %d)", a->n, g->n);
    } else if (worst >= 0) {
        snprintf(msg, msg_size, " token %d: z' %.9g, llama.cpp %.9g (%.2g relative, tolerance %g)",
                 g->id[worst], a->z[worst], g->z[worst], *max_d, LOGIT_TOL);
    }
    return only_a + only_g > 0 || worst >= 0;
}

/* One case: its fields f (NAME ROW CONTEXT LLAMA LOGITLAB [differs: WHY]).
 * Returns 0 if it held. */
static int run_case(char **f, int nf, const char *golden_dir)
{
    struct run r = { 0 };
    struct kept g = { 0 }, k[2] = { { 0 }, { 0 } };
    char path[LINE_MAX_], msg[LINE_MAX_] = "", diff[2][LINE_MAX_];
    const char *differs = nf > 5 && strncmp(f[5], "differs:", 8) == 0 ? f[5] : NULL;
    int failed = 1;
    snprintf(path, sizeof path, "%s/%s.txt", golden_dir, f[0]);
    if (strcmp(f[4], "-") == 0) {
        FILE *fp = fopen(path, "r");
        printf("%s %s: llama.cpp's alone (%s); logitlab has no such stage yet\n",
               fp ? "wait" : "FAIL", f[0], fp ? path : "its golden is missing");
        if (fp)
            fclose(fp);
        return fp ? 0 : 1;
    }
    if (make_input(f[1], f[2], &r, msg, sizeof msg) == 0 &&
        parse_settings(f[4], &r.st, msg, sizeof msg) == 0 &&
        read_golden(path, r.V, &g, msg, sizeof msg) == 0 &&
        logitlab_kept(&r, 0, &k[0], msg, sizeof msg) == 0 &&
        logitlab_kept(&r, 1, &k[1], msg, sizeof msg) == 0) {
        double m0, m1;
        int d0 = compare(&k[0], &g, diff[0], sizeof diff[0], &m0);
        int d1 = compare(&k[1], &g, diff[1], sizeof diff[1], &m1);
        failed = differs ? !d0 || !d1 : d0 || d1;
        if (!differs && !failed)
            printf("ok   %s: kept %d, z' within %.1e\n", f[0], g.n, m0 > m1 ? m0 : m1);
        else if (differs && !failed)
            printf("ok   %s: differs as recorded (%s):%s\n", f[0], differs + 9, diff[0]);
        else if (differs)
            printf("FAIL %s: agrees with llama.cpp now (reference %s, O(V) %s): drop its "
                   "'differs' note\n",
                   f[0], d0 ? "differs" : "agrees", d1 ? "differs" : "agrees");
        else
            printf("FAIL %s:%s%s%s%s\n", f[0], d0 ? " reference:" : "", d0 ? diff[0] : "",
                   d1 ? " O(V) path:" : "", d1 ? diff[1] : "");
    } else {
        printf("FAIL %s: %s\n", f[0], msg);
    }
    kept_free(&g);
    kept_free(&k[0]);
    kept_free(&k[1]);
    free(r.row);
    free(r.row_d);
    return failed;
}

/* Writes the values of a lesson key over continued lines, as inih reads
 * them: none longer than LESSON_MAX_LINE. */
static void write_values(FILE *fp, const char *key, const double *v, const int *ids, int n)
{
    int col = fprintf(fp, "%s =", key);
    for (int i = 0; i < n; i++) {
        char num[32];
        if (ids)
            snprintf(num, sizeof num, " %d", ids[i]);
        else if (v[i] == -INFINITY)
            snprintf(num, sizeof num, " -inf");
        else
            snprintf(num, sizeof num, " %.17g", v[i]);
        if (col + (int)strlen(num) > 150)
            col = fprintf(fp, "\n ");
        col += fprintf(fp, "%s", num);
    }
    fprintf(fp, "\n");
}

/* --cli: for a case of at most CLI_MAX_V tokens, none -inf, with a logitlab side, writes
 * into dir NAME.ini (the row and context as a lesson that `logitlab show`
 * reads: logits in %.17g, the floats exactly), NAME.args (logitlab's words)
 * and NAME.kept (the reference sampler's kept set, "ID Z'"), and prints NAME.
 * Returns 0, or 1 when a file cannot be written or the case fails to run. */
static int write_cli(char **f, int nf, const char *dir)
{
    struct run r = { 0 };
    struct kept k = { 0 };
    char msg[LINE_MAX_], path[3][LINE_MAX_], words[LINE_MAX_];
    FILE *fp[3] = { NULL, NULL, NULL };
    int rc = 0;
    (void)nf;
    snprintf(words, sizeof words, "%s", f[4]);
    if (strcmp(f[4], "-") == 0 || make_input(f[1], f[2], &r, msg, sizeof msg) != 0 ||
        r.V > CLI_MAX_V)
        goto done;
    for (int i = 0; i < r.V; i++) /* a lesson refuses -inf: its logits are a model's */
        if (r.row[i] == -INFINITY)
            goto done;
    rc = parse_settings(words, &r.st, msg, sizeof msg) != 0 ||
         logitlab_kept(&r, 0, &k, msg, sizeof msg) != 0;
    for (int i = 0; i < 3 && rc == 0; i++) {
        static const char *const EXT[3] = { "ini", "args", "kept" };
        snprintf(path[i], sizeof path[i], "%.400s/%.200s.%s", dir, f[0], EXT[i]);
        rc = (fp[i] = fopen(path[i], "w")) == NULL;
    }
    if (rc == 0) {
        fprintf(fp[0], "[lesson]\nid = %s\ntitle = sampler oracle case %s\n\n[vocab]\n", f[0],
                f[0]);
        for (int i = 0; i < r.V; i++)
            fprintf(fp[0], "%d = t%d\n", i, i);
        fprintf(fp[0], "\n[step.1]\n");
        write_values(fp[0], "logits", r.row_d, NULL, r.V);
        if (r.n_ctx > 0)
            write_values(fp[0], "context", NULL, r.ctx, r.n_ctx);
        fprintf(fp[1], "%s\n", f[4]);
        for (int i = 0; i < k.n; i++)
            fprintf(fp[2], "%d %.17g\n", k.id[i], k.z[i]);
        printf("%s\n", f[0]);
    } else {
        printf("FAIL %s: %s\n", f[0], msg);
    }
    for (int i = 0; i < 3; i++)
        if (fp[i])
            fclose(fp[i]);
done:
    kept_free(&k);
    free(r.row);
    free(r.row_d);
    return rc;
}

/* Whether case name is among the names asked for (all when none). */
static int wanted(const char *name, int n, char **names)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return n == 0;
}

/* Runs fn on every case of the file cases named in names (all when n is 0).
 * Returns the number of cases that failed, -1 when the file cannot be read. */
static int each_case(const char *cases, int n, char **names, int (*fn)(char **, int, const char *),
                     const char *arg, int *count)
{
    FILE *fp = fopen(cases, "r");
    char line[LINE_MAX_], *f[FIELDS];
    int bad = 0, lineno = 0;
    if (!fp)
        return -1;
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        if (line[0] == '#' || line[strspn(line, " \t\r\n")] == '\0')
            continue;
        int nf = split(line, f);
        if (nf < 5) {
            printf("FAIL %s:%d: not NAME | ROW | CONTEXT | LLAMA | LOGITLAB\n", cases, lineno);
            bad++;
        } else if (wanted(f[0], n, names)) {
            ++*count;
            bad += fn(f, nf, arg);
        }
    }
    fclose(fp);
    return bad;
}

int main(int argc, char **argv)
{
    int cli = argc > 1 && strcmp(argv[1], "--cli") == 0, n = 0;
    if (argc < 3 + cli) {
        fprintf(stderr, "usage: samplers_check CASES GOLDEN_DIR [NAME...]\n"
                        "       samplers_check --cli CASES DIR [NAME...]\n");
        return 2;
    }
    int bad = each_case(argv[1 + cli], argc - 3 - cli, argv + 3 + cli, cli ? write_cli : run_case,
                        argv[2 + cli], &n);
    if (bad < 0) {
        fprintf(stderr, "samplers_check: cannot read %s\n", argv[1 + cli]);
        return 2;
    }
    if (!cli)
        printf("samplers_check: %d cases, %d failed\n", n, bad);
    return bad ? 1 : 0;
}
