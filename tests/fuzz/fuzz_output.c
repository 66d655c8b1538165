/* libFuzzer harness: what `generate`, `show` and `export` write, in every
 * format, for any settings on any lesson.
 *
 * An input is: a byte that picks the lesson (bits 0 to 4: values 0 to 27
 * among the toy lessons of FUZZ_LESSONS, default lessons/, 28 to 31 among
 * its full-size ones, real-*; bit 5 set: the lesson is the text after the
 * settings line instead) and the rows (bits 6 and 7: --top 0, 1, 3 or 20); a byte for a full-size
 * step's extras (bit 0 many draws, bit 1 a
 * --find, its token from the other bits); then one line of settings as the
 * ':' prompt and a lesson's `try` take them ("temperature 0.5 | top-k 3"),
 * laid over every step's own settings as the command line's are; then the
 * lesson's text, when bit 5 says so.
 *
 * The loop runs from the prompt as `generate` runs it, its report written in
 * text (streamed), CSV, JSON and Markdown; the lesson's own path is walked
 * as `export` walks it, each step written in the four formats (Markdown
 * both as `show` and as the export document, title and answers included).
 * Every output goes to a memory stream and must hold:
 *   - no C0 control but newline and tab, no DEL, no C1 control (U+0080 to
 *     U+009F, C2 80 to C2 9F in UTF-8): whatever a lesson, a vocabulary or a
 *     setting holds is escaped before it reaches a terminal or a file;
 *   - JSON: balanced braces and brackets, strings closed, only JSON's own
 *     escapes and no raw control inside them, and outside strings nothing
 *     but numbers, punctuation and true, false, null;
 *   - no "nan" or "inf" as a word: numbers are finite or the step is an
 *     error. A vocabulary, a lesson text or a stop string can hold those
 *     letters themselves (Llama 3's vocabulary does), so this is checked
 *     only where they cannot (data_clean); JSON's check above holds always.
 * An error must be one line without a control character. A failed check
 * aborts: that is the finding.
 *
 * A full-size lesson builds its head once a process, at hidden size 512
 * (tests/suites.h's TEST_HIDDEN), and each new context costs a product of
 * the head (about a second under the sanitizers): on those the loop and the
 * path stop after their first step, whose logits the source keeps.
 * FUZZ_TOY=1 in the environment maps the first byte onto the toy lessons
 * alone, for runs long enough to count executions in millions. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "core/draws.h"
#include "data/catalog.h"
#include "report/report.h"
#include "source/path.h"

#define FUZZ_HIDDEN  512 /* tests/suites.h's TEST_HIDDEN */
#define FUZZ_LESSONS 32
#define FUZZ_SETS    16 /* settings on the line */
#define FUZZ_DRAWS   64 /* many draws: a few, to keep a run short */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct opened {
    int state; /* 0 not tried, 1 open, -1 does not open */
    struct lesson L;
    struct source src;
    int clean; /* data_clean of its file and vocabulary */
};

struct fuzz {
    struct catalog cat;
    struct opened lesson[FUZZ_LESSONS];
    int n_toy, n_real;
    int toy[FUZZ_LESSONS], real[FUZZ_LESSONS]; /* indexes into cat.files */
};

struct setline {
    int n;
    char name[FUZZ_SETS][48];
    char value[FUZZ_SETS][256];
};

struct run {
    struct lesson *L;
    struct source *src;
    const struct setline *sets;
    int clean;
    int top, draws, find;
    int max_steps; /* 1 on a full-size lesson, else all */
};

/* ---- the invariants ------------------------------------------------------ */

/* An error as main prints it (escaped: a message may quote a name from a
 * file or a setting's value): one line, something in it, no control
 * character. */
static void check_message(const char *msg)
{
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    if (!f || utf8_write_escaped(f, msg, strlen(msg), 0) < 0 || fclose(f) != 0)
        abort();
    if (len == 0)
        abort();
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (c < 0x20 || c == 0x7F ||
            (c == 0xC2 && i + 1 < len && (unsigned char)buf[i + 1] >= 0x80 &&
             (unsigned char)buf[i + 1] <= 0x9F))
            abort();
    }
    free(buf);
}

static int word_char(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

/* Whether buf holds "nan" or "inf" as a word (what printf makes of a
 * non-finite double, a sign in front or not). */
static int has_nonfinite_word(const char *buf, size_t len)
{
    for (size_t i = 0; i + 3 <= len; i++)
        if ((memcmp(buf + i, "nan", 3) == 0 || memcmp(buf + i, "inf", 3) == 0) &&
            (i == 0 || !word_char((unsigned char)buf[i - 1])) &&
            (i + 3 == len || !word_char((unsigned char)buf[i + 3])))
            return 1;
    return 0;
}

/* One JSON string from buf[i] == '"': returns the index after its closing
 * quote, or aborts. */
static size_t json_string(const char *buf, size_t len, size_t i)
{
    for (i++; i < len; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (c == '"')
            return i + 1;
        if (c < 0x20)
            abort(); /* a raw control inside a string */
        if (c != '\\')
            continue;
        if (++i >= len)
            abort();
        if (buf[i] == 'u') {
            for (int k = 1; k <= 4; k++)
                if (i + k >= len || !strchr("0123456789abcdefABCDEF", buf[i + k]) || !buf[i + k])
                    abort();
            i += 4;
        } else if (!buf[i] || !strchr("\"\\/bfnrt", buf[i])) {
            abort();
        }
    }
    abort(); /* not closed */
}

/* A small scanner, not a parser: brackets balanced and matched, strings
 * well formed, outside them only what JSON allows. */
static void check_json(const char *buf, size_t len)
{
    char stack[64];
    int depth = 0, values = 0;
    for (size_t i = 0; i < len;) {
        char c = buf[i];
        if (c == '"') {
            i = json_string(buf, len, i);
            continue;
        }
        if (c == '{' || c == '[') {
            if (depth == (int)sizeof stack)
                abort();
            if (depth == 0)
                values++;
            stack[depth++] = c == '{' ? '}' : ']';
        } else if (c == '}' || c == ']') {
            if (depth == 0 || stack[--depth] != c)
                abort();
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            if (depth == 0)
                abort();
            while (i < len && strchr("-+.0123456789eE", buf[i]) && buf[i])
                i++; /* a number, its exponent included */
            continue;
        } else if (c >= 'a' && c <= 'z') {
            size_t n = 0;
            while (i + n < len && buf[i + n] >= 'a' && buf[i + n] <= 'z')
                n++;
            if (depth == 0 ||
                !((n == 4 && (!memcmp(buf + i, "true", 4) || !memcmp(buf + i, "null", 4))) ||
                  (n == 5 && !memcmp(buf + i, "false", 5))))
                abort(); /* nan, inf, or any other word */
            i += n;
            continue;
        } else if (!strchr(" \n\t\r,:", c) || !c || (depth == 0 && (c == ',' || c == ':'))) {
            abort();
        }
        i++;
    }
    if (depth != 0 || values != 1)
        abort();
}

/* What every output holds, whatever its format. */
static void check_output(const char *buf, size_t len, enum report_format fmt, int clean)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)buf[i];
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F)
            abort();
        if (c == 0xC2 && i + 1 < len && (unsigned char)buf[i + 1] >= 0x80 &&
            (unsigned char)buf[i + 1] <= 0x9F)
            abort();
    }
    if (fmt == REPORT_JSON)
        check_json(buf, len);
    if (clean && has_nonfinite_word(buf, len))
        abort();
}

/* Whether nothing from the data can spell "nan" or "inf" in an output: the
 * text (a lesson file, the settings line) holds neither, no token does, and
 * no token starts with a letter that could continue one across a token
 * boundary ('a', 'n', 'f'; each token is shown on its own or joined to the
 * ones before it). */
static int data_clean(const char *text, size_t len, const struct vocab *v)
{
    for (size_t i = 0; i + 3 <= len; i++)
        if (memcmp(text + i, "nan", 3) == 0 || memcmp(text + i, "inf", 3) == 0)
            return 0;
    for (int i = 0; i < v->n; i++) {
        const char *t = vocab_token(v, i);
        if (strstr(t, "nan") || strstr(t, "inf") || (t[0] && strchr("anf", t[0])))
            return 0;
    }
    return 1;
}

/* ---- the settings line --------------------------------------------------- */

/* Splits "name value | name value" as app_command reads each part: the
 * first word the name, the rest the value without trailing spaces. */
static void parse_setline(const char *line, size_t len, struct setline *out)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
    out->n = 0;
    char *save = NULL;
    for (char *part = strtok_r(buf, "|", &save); part && out->n < FUZZ_SETS;
         part = strtok_r(NULL, "|", &save)) {
        while (*part == ' ' || *part == ':')
            part++;
        int off = 0;
        if (sscanf(part, "%47s %n", out->name[out->n], &off) < 1)
            continue;
        snprintf(out->value[out->n], sizeof out->value[0], "%s", off ? part + off : "");
        size_t vl = strlen(out->value[out->n]);
        while (vl > 0 && out->value[out->n][vl - 1] == ' ')
            out->value[out->n][--vl] = '\0';
        out->n++;
    }
}

/* Step k's settings with the line's over them. A name that is not a
 * setting is left out (the ':' prompt calls it an unknown command, the
 * command line an unknown option); a value the parser refuses too, its
 * message checked. */
static void step_settings(const struct run *r, int k, struct settings *s)
{
    source_step_settings(r->src, k, s);
    for (int i = 0; i < r->sets->n; i++) {
        struct err e;
        if (settings_known(r->sets->name[i]) &&
            settings_set(s, r->sets->name[i], r->sets->value[i], &e) < 0)
            check_message(e.msg);
    }
}

/* ---- generate -------------------------------------------------------------- */

struct streams {
    FILE *f[4];
    char *buf[4];
    size_t len[4];
};

static void streams_open(struct streams *st)
{
    for (int i = 0; i < 4; i++)
        if (!(st->f[i] = open_memstream(&st->buf[i], &st->len[i])))
            abort();
}

/* Closes the streams and checks what they hold (ok: the run went through;
 * an output that ends in an error is removed, not read). */
static void streams_close(struct streams *st, int ok, int clean)
{
    for (int i = 0; i < 4; i++) {
        if (fclose(st->f[i]) != 0)
            abort();
        if (ok)
            check_output(st->buf[i], st->len[i], (enum report_format)i, clean);
        free(st->buf[i]);
    }
}

/* The loop of `generate`: each step's settings, the sampler, the token
 * appended, the text streamed, until a stop rule or the last step. */
static int run_loop(const struct run *r, struct gen *g, struct trace *t, struct settings *s,
                    FILE *text, struct err *e)
{
    for (int k = 1; k <= r->L->n_steps && k <= r->max_steps; k++) {
        step_settings(r, k, s);
        if (source_run_step(r->src, k, s, g->ids, g->len, t, e) < 0 ||
            gen_append(g, t->choice.id, s, e) < 0)
            return -1;
        if (gen_stream(g, text, 0) < 0)
            abort();
        if (g->stop.rule != STOP_NONE)
            break;
    }
    if (gen_stream(g, text, 1) < 0)
        abort();
    return 0;
}

static void generate(const struct run *r)
{
    struct trace t;
    struct gen g;
    struct settings s;
    struct err e;
    struct streams st;
    source_step_settings(r->src, 1, &s);
    struct gen_report gr = { .lesson = r->L, .settings = &s, .gen = &g };
    if (trace_init(&t, r->L->vocab.n, &e) < 0 ||
        gen_start(&g, &r->L->vocab, r->L->prompt, r->L->prompt_len, r->L->prompt_len, &e) < 0)
        abort();
    streams_open(&st);
    for (int i = 0; i < 4; i++)
        if (report_gen_begin(st.f[i], (enum report_format)i, &gr, &e) < 0)
            abort();
    int rc = run_loop(r, &g, &t, &s, st.f[REPORT_TEXT], &e);
    if (rc == 0) {
        for (int i = 0; i < 4; i++)
            if (report_gen_end(st.f[i], (enum report_format)i, &gr, &e) < 0)
                abort();
    } else {
        check_message(e.msg);
    }
    streams_close(&st, rc == 0, r->clean);
    gen_free(&g);
    trace_free(&t);
}

/* ---- show and export --------------------------------------------------------- */

/* One step of the path in the four formats, as `show` writes it, and its
 * Markdown into the export document (answers into ans). */
static int write_step(const struct run *r, struct report *rep, FILE *doc, FILE *ans)
{
    struct err e;
    for (int i = 0; i < 4; i++) {
        char *buf;
        size_t len;
        FILE *f = open_memstream(&buf, &len);
        if (!f || report_write(f, (enum report_format)i, rep, &e) < 0 || fclose(f) != 0)
            abort();
        check_output(buf, len, (enum report_format)i, r->clean);
        free(buf);
    }
    rep->heading = 2;
    if (report_write(doc, REPORT_MARKDOWN, rep, &e) < 0)
        abort();
    report_markdown_answers(ans, rep);
    return 0;
}

/* A full-size step's extras: the histogram, many draws, a found token. */
struct extras {
    struct draws_hist hist;
    struct draws draws;
    int find;
};

static int step_extras(const struct run *r, const struct settings *s, const struct trace *t,
                       int len, struct report *rep, struct extras *x, struct err *e)
{
    if (!source_is_fast(r->src))
        return 0;
    if (r->L->vocab.n >= 1000 && draws_histogram(t, 16, &x->hist) == 0)
        rep->hist = &x->hist;
    if (r->draws) {
        int rows = r->top > 0 ? r->top : REPORT_FAST_TOP;
        if (draws_run(t, s->sampler.seed, source_draw_step(r->L, len), FUZZ_DRAWS, rows, &x->draws,
                      e) < 0)
            return -1;
        rep->draws = &x->draws;
    }
    if (r->find >= 0) {
        x->find = r->find % r->L->vocab.n;
        rep->find = &x->find;
        rep->n_find = 1;
    }
    return 0;
}

/* Runs one step of the path and writes it; returns 0, or -1 on an error
 * (its message checked). */
static int export_step(const struct run *r, struct source_path *path, struct trace *t, FILE *doc,
                       FILE *ans)
{
    int k = path->step;
    struct settings s;
    struct err e;
    struct extras x;
    step_settings(r, k, &s);
    struct report rep = { .lesson = r->L,
                          .source = r->src,
                          .step = k,
                          .settings = &s,
                          .context = path->g.ids,
                          .context_len = path->g.len,
                          .prompt_len = r->L->prompt_len,
                          .trace = t,
                          .top = r->top };
    if (source_run_step(r->src, k, &s, path->g.ids, path->g.len, t, &e) < 0 ||
        step_extras(r, &s, t, path->g.len, &rep, &x, &e) < 0 ||
        stop_after(&s, &r->L->vocab, path->g.ids, path->g.len, r->L->prompt_len, t->choice.id,
                   &rep.stop, &e) < 0) {
        check_message(e.msg);
        return -1;
    }
    return write_step(r, &rep, doc, ans);
}

static void export(const struct run *r)
{
    struct source_path path;
    struct trace t;
    struct err e;
    char *doc_buf, *ans_buf;
    size_t doc_len, ans_len;
    FILE *doc = open_memstream(&doc_buf, &doc_len), *ans = open_memstream(&ans_buf, &ans_len);
    if (!doc || !ans || trace_init(&t, r->L->vocab.n, &e) < 0)
        abort();
    int rc = source_path_start(&path, r->src, &e);
    if (rc == 0) {
        report_markdown_title(doc, r->L);
        for (int more = 1, n = 0; rc == 0 && more;) {
            rc = export_step(r, &path, &t, doc, ans);
            if (rc == 0 && ++n >= r->max_steps)
                more = 0;
            else if (rc == 0 && (more = source_path_next(&path, &e)) < 0) {
                check_message(e.msg);
                rc = -1;
            }
        }
        source_path_free(&path);
    } else {
        check_message(e.msg);
    }
    if (fclose(ans) != 0)
        abort();
    if (rc == 0 && ans_len > 0) {
        fprintf(doc, "## Answers\n\n");
        fwrite(ans_buf, 1, ans_len, doc);
    }
    if (fclose(doc) != 0)
        abort();
    if (rc == 0)
        check_output(doc_buf, doc_len, REPORT_MARKDOWN, r->clean);
    free(doc_buf);
    free(ans_buf);
    trace_free(&t);
}

/* ---- the lessons ------------------------------------------------------------ */

static struct fuzz *fuzz_setup(void)
{
    struct fuzz *f = calloc(1, sizeof *f);
    struct err e;
    const char *dir = getenv("FUZZ_LESSONS");
    if (!f || catalog_open(&f->cat, dir ? dir : "lessons", &e) < 0 || f->cat.n == 0) {
        fprintf(stderr, "fuzz_output: no lessons (run from the top of the source tree)\n");
        abort();
    }
    for (int i = 0; i < f->cat.n && i < FUZZ_LESSONS; i++) {
        char id[64];
        if (lesson_peek_id(f->cat.files[i], id, &e) < 0) {
            fprintf(stderr, "fuzz_output: %s\n", e.msg);
            abort();
        }
        if (strncmp(id, "real-", 5) == 0)
            f->real[f->n_real++] = i;
        else
            f->toy[f->n_toy++] = i;
    }
    return f;
}

/* Catalog lesson i, loaded and opened the first time an input picks it. */
static struct opened *catalog_lesson(struct fuzz *f, int i)
{
    struct opened *o = &f->lesson[i];
    if (o->state)
        return o;
    struct err e;
    o->state = -1;
    if (lesson_load(&o->L, f->cat.files[i], &e) < 0)
        return o;
    if (source_open(&o->src, &o->L, NULL, FUZZ_HIDDEN, SOURCE_FAST_ROWS, &e) < 0) {
        lesson_free(&o->L);
        return o;
    }
    FILE *in = fopen(f->cat.files[i], "rb");
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (int c; in && (c = getc(in)) != EOF;) {
        if (len + 1 >= cap && !(text = realloc(text, cap = cap ? 2 * cap : 4096)))
            abort();
        text[len++] = (char)c;
    }
    if (in)
        fclose(in);
    o->clean = in && data_clean(text ? text : "", len, &o->L.vocab);
    free(text);
    o->state = 1;
    return o;
}

static void run_both(struct run *r, const char *sets, size_t sets_len, const struct setline *line)
{
    if (r->clean && !data_clean(sets, sets_len, &(struct vocab){ 0 }))
        r->clean = 0;
    r->sets = line;
    generate(r);
    export(r);
}

/* The lesson of the input's text: it must load (or say why, naming the
 * file, as the lesson harness checks), then it runs. A lesson on a model
 * builds a full-size head, a second a run: those are the catalog's. */
static void input_lesson(struct run *r, const char *text, size_t len, const char *sets,
                         size_t sets_len, const struct setline *line)
{
    char *copy = malloc(len + 1);
    if (!copy)
        return;
    memcpy(copy, text, len);
    copy[len] = '\0';
    struct lesson L;
    struct source src;
    struct err e;
    if (lesson_load_text(&L, "fuzz.ini", copy, &e) == 0) {
        if (!L.model.on && source_open(&src, &L, NULL, 0, SOURCE_FAST_ROWS, &e) == 0) {
            r->L = &L;
            r->src = &src;
            r->clean = data_clean(copy, len, &L.vocab);
            run_both(r, sets, sets_len, line);
            source_close(&src);
        }
        lesson_free(&L);
    }
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fuzz *f;
    if (!f)
        f = fuzz_setup();
    if (size < 2)
        return 0;
    static const int TOPS[4] = { 0, 1, 3, 20 };
    struct run r = {
        .top = TOPS[data[0] >> 6], .draws = data[1] & 1, .find = -1, .max_steps = INT_MAX
    };
    if (data[1] & 2)
        r.find = (data[1] >> 2) * 2027; /* a token anywhere in Llama 3's range */
    const char *rest = (const char *)data + 2;
    size_t rest_len = size - 2;
    const char *nl = memchr(rest, '\n', rest_len);
    size_t sets_len = nl ? (size_t)(nl - rest) : rest_len;
    struct setline line;
    parse_setline(rest, sets_len, &line);
    if (data[0] & 0x20) {
        size_t at = nl ? sets_len + 1 : rest_len;
        input_lesson(&r, rest + at, rest_len - at, rest, sets_len, &line);
        return 0;
    }
    int v = data[0] & 0x1F;
    if (getenv("FUZZ_TOY")) /* the long runs: toy lessons alone (see the head) */
        v %= 28;
    if (v < 28 ? f->n_toy == 0 : f->n_real == 0)
        return 0;
    struct opened *o =
        catalog_lesson(f, v < 28 ? f->toy[v % f->n_toy] : f->real[(v - 28) % f->n_real]);
    if (o->state < 0)
        return 0;
    if (v >= 28)
        r.max_steps = 1;
    r.L = &o->L;
    r.src = &o->src;
    r.clean = o->clean;
    run_both(&r, rest, sets_len, &line);
    return 0;
}
