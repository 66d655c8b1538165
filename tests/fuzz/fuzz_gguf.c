/* libFuzzer harness: the GGUF reader and the llama loader on any bytes.
 * What the reader accepts must be inside the input: every entry's value,
 * every tensor's data, every string an accessor hands out; every refusal
 * names the file. The getters run on every entry with every type, so a
 * getter that trusts a type it was not given shows up here. The first rows
 * of every accepted tensor are decoded and multiplied (model/quant.h), so
 * that a decoder that reads past the sizes the reader gave its type shows
 * up too (ASan), whatever the blocks hold. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gguf/gguf.h"
#include "gguf/gguf_llama.h"
#include "model/quant.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void inside(const uint8_t *data, size_t size, const void *p, size_t n)
{
    const uint8_t *q = p;
    if (n > 0 && (q < data || q > data + size || n > (size_t)(data + size - q)))
        abort();
}

/* Every getter on one entry, as whatever type: 1, 0 or -1, never a crash. */
static void probe(const struct gguf *g, const struct gguf_kv *kv, const uint8_t *data, size_t size)
{
    char key[256];
    struct err e;
    size_t k = kv->key.len < sizeof key - 1 ? kv->key.len : sizeof key - 1;
    memcpy(key, kv->key.s, k);
    key[k] = '\0';
    if (strlen(key) != kv->key.len || gguf_find(g, key) != kv)
        return; /* a key with a NUL, or cut: the getters take C strings */
    uint32_t u;
    int32_t i;
    uint64_t u64, n;
    float f;
    int b;
    struct gguf_str s;
    gguf_get_u32(g, key, &u, &e);
    gguf_get_i32(g, key, &i, &e);
    gguf_get_u64(g, key, &u64, &e);
    gguf_get_f32(g, key, &f, &e);
    gguf_get_bool(g, key, &b, &e);
    if (gguf_get_str(g, key, &s, &e) == 1)
        inside(data, size, s.s, s.len);
    if (gguf_get_arr_len(g, key, GGUF_T_STRING, &n, &e) == 1 && n <= 4096) {
        struct gguf_str *a = malloc((n ? n : 1) * sizeof *a);
        if (a && gguf_get_strs(g, key, a, (size_t)n, &e) == 1)
            for (size_t j = 0; j < n; j++)
                inside(data, size, a[j].s, a[j].len);
        free(a);
    }
    float fv[64];
    int32_t iv[64];
    if (gguf_get_arr_len(g, key, GGUF_T_F32, &n, &e) == 1 && n <= 64)
        gguf_get_f32s(g, key, fv, (size_t)n, &e);
    if (gguf_get_arr_len(g, key, GGUF_T_I32, &n, &e) == 1 && n <= 64)
        gguf_get_i32s(g, key, iv, (size_t)n, &e);
    char esc[128];
    gguf_escape(kv->key.s, kv->key.len, esc, sizeof esc);
}

/* Up to 4 rows of a tensor (rows of at most 4096 values) dequantized and
 * multiplied by a vector of ones: every byte they read must be the tensor's. */
static void decode_rows(const struct gguf_tensor *x)
{
    int64_t n = x->ne[0];
    size_t rb = quant_row_bytes(x->type, n);
    if (rb == 0 || x->bytes % rb != 0)
        abort(); /* the reader accepted a type or shape quant.h cannot size */
    if (n > 4096)
        return;
    int rows = x->bytes / rb < 4 ? (int)(x->bytes / rb) : 4;
    float *v = malloc((size_t)n * sizeof *v), *ones = malloc((size_t)n * sizeof *ones), out[4];
    if (!v || !ones) {
        free(v), free(ones);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        ones[i] = 1.0f;
    for (int r = 0; r < rows; r++)
        quant_dequant(x->type, (const unsigned char *)x->data + (size_t)r * rb, v, n);
    quant_dot_rows(x->type, x->data, n, rows, ones, out);
    free(v), free(ones);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct err e;
    struct gguf *g = gguf_open_mem("fuzz.gguf", data, size, &e);
    if (!g) {
        if (strncmp(e.msg, "fuzz.gguf: ", 11) != 0)
            abort();
        return 0;
    }
    for (size_t k = 0; k < g->n_kv; k++) {
        const struct gguf_kv *kv = &g->kv[k];
        inside(data, size, kv->key.s, kv->key.len);
        inside(data, size, kv->val, kv->bytes);
        probe(g, kv, data, size);
    }
    for (size_t t = 0; t < g->n_tensors; t++) {
        const struct gguf_tensor *x = &g->tensors[t];
        inside(data, size, x->name.s, x->name.len);
        inside(data, size, x->data, x->bytes);
        if (x->offset % g->alignment != 0 || x->bytes == 0)
            abort();
        decode_rows(x);
    }
    struct gguf_llama *L = gguf_llama_new(g, &e);
    if (L) {
        for (int i = 0; i < L->tok.n; i++)
            inside(data, size, L->tok.text[i].s, L->tok.text[i].len);
        gguf_llama_free(L);
    } else if (strncmp(e.msg, "fuzz.gguf: ", 11) != 0) {
        abort();
    }
    gguf_close(g);
    return 0;
}
