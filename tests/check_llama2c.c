/* check_llama2c.c - the trained model that ships: data/stories260K/'s
 * llama2.c checkpoint converted by logitlab's writer (gguf/llama2c.h) holds
 * the same tensors, bit for bit, and the same vocabulary as the GGUF that
 * llama.cpp's convert-llama2c-to-ggml wrote from the same files
 * (tests/model/fixtures/stories260K.llamacpp.gguf, the first GGUF in the
 * tree that logitlab did not write); bad inputs are refused in one line. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/readfile.h"
#include "gguf/gguf.h"
#include "gguf/llama2c.h"
#include "suites.h"

#define CKPT    "data/stories260K/stories260K.bin"
#define TOK     "data/stories260K/tok512.bin"
#define FIXTURE "tests/model/fixtures/stories260K.llamacpp.gguf"

struct inputs {
    char *ckpt, *tok;
    size_t ckpt_len, tok_len;
};

static struct inputs read_inputs(void)
{
    struct inputs in;
    struct err e;
    ck_assert_msg(readfile(CKPT, LLAMA2C_MAX_BYTES, &in.ckpt, &in.ckpt_len, &e) == 0, "%s", e.msg);
    ck_assert_msg(readfile(TOK, LLAMA2C_MAX_BYTES, &in.tok, &in.tok_len, &e) == 0, "%s", e.msg);
    return in;
}

/* Converts in (as edited by the test) into memory; NULL with e. */
static unsigned char *convert(const struct inputs *in, size_t *len, struct err *e)
{
    unsigned char *g = NULL;
    if (llama2c_to_mem("c.bin", (const unsigned char *)in->ckpt, in->ckpt_len, "t.bin",
                       (const unsigned char *)in->tok, in->tok_len, "stories260K", &g, len, e) < 0)
        return NULL;
    return g;
}

static void same_array(const struct gguf *a, const struct gguf *b, const char *key)
{
    const struct gguf_kv *x = gguf_find(a, key), *y = gguf_find(b, key);
    ck_assert_msg(x && y, "%s missing", key);
    ck_assert_int_eq(x->elem, y->elem);
    ck_assert_uint_eq(x->n, y->n);
    ck_assert_uint_eq(x->bytes, y->bytes);
    ck_assert_msg(memcmp(x->val, y->val, x->bytes) == 0, "%s differs", key);
}

/* Every tensor of llama.cpp's file is in ours with the same shape, type
 * and bytes; its output.weight (a copy of the embeddings, as the
 * checkpoint's classifier is shared) is our tied token_embd.weight. The
 * tokens, scores and types are the same arrays; the special ids too. */
START_TEST(test_same_as_llamacpp)
{
    struct inputs in = read_inputs();
    struct err e;
    size_t len;
    unsigned char *mine = convert(&in, &len, &e);
    ck_assert_msg(mine != NULL, "%s", e.msg);
    struct gguf *a = gguf_open_mem("mine.gguf", mine, len, &e);
    ck_assert_msg(a != NULL, "%s", e.msg);
    struct gguf *b = gguf_open(FIXTURE, &e);
    ck_assert_msg(b != NULL, "%s", e.msg);
    ck_assert_uint_eq(b->n_tensors, 48); /* 3 + 5 layers of 9 */
    ck_assert_uint_eq(a->n_tensors, 47); /* the same, the head tied */
    for (size_t i = 0; i < b->n_tensors; i++) {
        const struct gguf_tensor *t = &b->tensors[i];
        char name[GGUF_MAX_NAME + 1];
        snprintf(name, sizeof name, "%.*s", (int)t->name.len, t->name.s);
        const struct gguf_tensor *u =
            gguf_tensor(a, strcmp(name, "output.weight") == 0 ? "token_embd.weight" : name);
        ck_assert_msg(u != NULL, "%s missing", name);
        ck_assert_int_eq(u->type, t->type);
        ck_assert_int_eq(u->n_dims, t->n_dims);
        for (int d = 0; d < GGUF_MAX_DIMS; d++)
            ck_assert_int_eq(u->ne[d], t->ne[d]);
        ck_assert_uint_eq(u->bytes, t->bytes);
        ck_assert_msg(memcmp(u->data, t->data, t->bytes) == 0, "%s: bytes differ", name);
    }
    same_array(a, b, "tokenizer.ggml.tokens");
    same_array(a, b, "tokenizer.ggml.scores");
    same_array(a, b, "tokenizer.ggml.token_type");
    const char *ids[] = { "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.bos_token_id",
                          "tokenizer.ggml.eos_token_id",     "llama.embedding_length",
                          "llama.feed_forward_length",       "llama.block_count",
                          "llama.attention.head_count",      "llama.attention.head_count_kv",
                          "llama.rope.dimension_count" };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        uint32_t x = 0, y = 1;
        ck_assert_int_eq(gguf_get_u32(a, ids[i], &x, &e), 1);
        ck_assert_int_eq(gguf_get_u32(b, ids[i], &y, &e), 1);
        ck_assert_msg(x == y, "%s: %u against llama.cpp's %u", ids[i], x, y);
    }
    /* The checkpoint's own context: seq_len 512 (llama.cpp's tool: 2048). */
    uint32_t ctx = 0;
    ck_assert_int_eq(gguf_get_u32(a, "llama.context_length", &ctx, &e), 1);
    ck_assert_uint_eq(ctx, 512);
    gguf_close(a);
    gguf_close(b);
    free(mine);
    free(in.ckpt);
    free(in.tok);
}
END_TEST

static void le32_put(char *p, int32_t v)
{
    uint32_t u = (uint32_t)v;
    for (int i = 0; i < 4; i++)
        p[i] = (char)(u >> (8 * i));
}

/* Each fault of the inputs, one line naming the input. The checkpoint is
 * 28 + 4 x 264,128 = 1,056,540 bytes: 32,768 embedding floats, 5 x 64 x 2
 * norms, 5 x (4,096 + 2 x 2,048 + 4,096) attention, 5 x 3 x 11,008 FFN, 64,
 * and the RoPE tables of 512 x 8. */
START_TEST(test_bad_inputs)
{
    struct inputs in = read_inputs();
    struct err e;
    size_t len;
    in.ckpt_len -= 4;
    ck_assert_ptr_null(convert(&in, &len, &e));
    ck_assert_str_eq(e.msg, "c.bin: 1056536 bytes, but a llama2.c checkpoint of dim 64, "
                            "hidden_dim 172, n_layers 5, n_heads 8, n_kv_heads 4, vocab_size "
                            "512, seq_len 512 needs 1056540");
    in.ckpt_len += 4;
    le32_put(in.ckpt + 12, 7); /* n_heads 7 */
    ck_assert_ptr_null(convert(&in, &len, &e));
    ck_assert_str_eq(e.msg, "c.bin: dim 64, n_heads 7 and n_kv_heads 4 do not make whole heads "
                            "of an even size");
    le32_put(in.ckpt + 12, 8);
    le32_put(in.ckpt + 8, -5); /* n_layers */
    ck_assert_ptr_null(convert(&in, &len, &e));
    ck_assert_str_eq(e.msg, "c.bin: n_layers is -5, outside 1 to 65536");
    le32_put(in.ckpt + 8, 5);
    in.tok_len += 1;
    ck_assert_ptr_null(convert(&in, &len, &e));
    ck_assert_str_eq(e.msg, "t.bin: 1 bytes after the last of its 512 tokens");
    in.tok_len -= 100;
    ck_assert_ptr_null(convert(&in, &len, &e));
    ck_assert_msg(strstr(e.msg, "t.bin: ") == e.msg && strstr(e.msg, "(of 512)") != NULL, "%s",
                  e.msg);
    in.tok_len += 99;
    const float nan = NAN;
    memcpy(in.tok + 4, &nan, 4); /* token 0's score */
    ck_assert_ptr_null(convert(&in, &len, &e));
    ck_assert_str_eq(e.msg, "t.bin: token 0's score is NaN");
    free(in.ckpt);
    free(in.tok);
}
END_TEST

Suite *suite_llama2c(void)
{
    Suite *s = suite_create("llama2c");
    TCase *t = tcase_create("convert");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_same_as_llamacpp);
    tcase_add_test(t, test_bad_inputs);
    suite_add_tcase(s, t);
    return s;
}
