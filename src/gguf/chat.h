/* chat.h - the chat formats logitlab wraps a prompt in (--chat), one table
 * (chat.c): how a model's chat template is recognized, and the text around
 * one user turn up to the assistant's answer, as llama.cpp's built-in
 * templates write it (llm_chat_apply_template, with add_generation_prompt). */
#ifndef LOGITLAB_CHAT_H
#define LOGITLAB_CHAT_H

#include <stddef.h>

#define CHAT_MARKS 3

struct chat_format {
    const char *name;      /* in messages: "Llama 3's headers", "ChatML" */
    const char *detect[2]; /* text the template holds, both (NULL: no second) */
    const char *before;    /* before the user's text */
    const char *after;     /* after it: the end of the turn and the assistant's start */
    int specials;          /* before and after name special tokens (encoded as such) */
    int bos;               /* BOS first, whatever the tokenizer says (the template writes it) */
    const char *marks[CHAT_MARKS]; /* each must be one token of the vocabulary (NULL: fewer) */
};

/* The format whose markers tmpl (len bytes) holds, in llama.cpp's order of
 * detection; NULL when none. */
const struct chat_format *chat_format_of(const char *tmpl, size_t len);

/* "Llama 3's headers, Llama 2's [INST], ChatML, ...": every format, for messages. */
void chat_format_list(char *buf, size_t n);

#endif
