#include "gguf/chat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* In llama.cpp's order of detection (llm_chat_detect_template): ChatML's
 * <|im_start|> first, [INST] before the rest. */
static const struct chat_format FORMATS[] = {
    { "ChatML (<|im_start|>)",
      { "<|im_start|>", NULL },
      "<|im_start|>user\n",
      "<|im_end|>\n<|im_start|>assistant\n",
      1,
      0,
      { "<|im_start|>", "<|im_end|>", NULL } },
    { "Llama 2's [INST]", { "[INST]", NULL }, "[INST] ", " [/INST]", 0, 1, { NULL } },
    { "Phi-3's <|user|>",
      { "<|assistant|>", "<|end|>" },
      "<|user|>\n",
      "<|end|>\n<|assistant|>\n",
      1,
      0,
      { "<|user|>", "<|end|>", "<|assistant|>" } },
    { "Gemma's <start_of_turn>",
      { "<start_of_turn>", NULL },
      "<start_of_turn>user\n",
      "<end_of_turn>\n<start_of_turn>model\n",
      1,
      1,
      { "<start_of_turn>", "<end_of_turn>", NULL } },
    { "Llama 3's headers",
      { "<|start_header_id|>", "<|end_header_id|>" },
      "<|start_header_id|>user<|end_header_id|>\n\n",
      "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
      1,
      1,
      { "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>" } },
};
#define N_FORMATS (sizeof FORMATS / sizeof FORMATS[0])

const struct chat_format *chat_format_of(const char *tmpl, size_t len)
{
    if (!tmpl || !len)
        return NULL;
    char *t = malloc(len + 1); /* the template may hold a NUL: search up to it */
    if (!t)
        return NULL;
    memcpy(t, tmpl, len);
    t[len] = '\0';
    const struct chat_format *f = NULL;
    for (size_t i = 0; i < N_FORMATS && !f; i++)
        if (strstr(t, FORMATS[i].detect[0]) &&
            (!FORMATS[i].detect[1] || strstr(t, FORMATS[i].detect[1])))
            f = &FORMATS[i];
    free(t);
    return f;
}

void chat_format_list(char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < N_FORMATS && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? ", " : "", FORMATS[i].name);
}
