/* cmd_files.h - commands of the command line that run no lesson:
 * `logitlab lessons`, `logitlab tokenize` (which read files), `--version`.
 * Above every layer, beside main.c and cli.c.
 */
#ifndef LOGITLAB_CMD_FILES_H
#define LOGITLAB_CMD_FILES_H

#include "base/err.h"
#include "cli.h"

/* Prints "logitlab: ", what, msg with its control characters escaped
 * (utf8.h: a message quotes names from files and from the command line),
 * then tail, on standard error. */
void cmd_say(const char *what, const char *msg, const char *tail);

/* `logitlab lessons`: each lesson's id and title, a line each; a lesson
 * that cannot be read is named on standard error and counted in e. */
int cmd_lessons(const struct options *o, struct err *e);

/* `logitlab tokenize`: the ids of text (len bytes) by the tokenizer of the
 * GGUF file --model, one line, separated by spaces. The file is read as
 * llama.cpp's vocabulary loader reads it (gguf_llama_vocab_new: any
 * architecture, no tensors needed). A BOS goes first when the file asks
 * for one (tokenizer.ggml.add_bos_token, else llama.cpp's default for its
 * tokenizer), unless --no-bos; special tokens' text is theirs only with
 * --special. So `--no-bos` alone is llama.cpp's test-tokenizer-0
 * (add_special and parse_special off), and `--special` alone its
 * llama-tokenize. A warning about the file's metadata goes to stderr. */
int cmd_tokenize(const struct options *o, const char *text, size_t len, struct err *e);

/* `logitlab models`: each model of Ollama's library and each .gguf file of
 * LM Studio's and llama.cpp's folders (data/model_find.h), a line each: the
 * name -m takes, architecture, the type of its Q weights, its size, whether
 * logitlab runs that architecture, and whose it is; then how many in each
 * folder that exists, or where it looked when none does. Reads each file's
 * header only. Returns 0, or -1 with e when out of memory. */
int cmd_models(struct err *e);

/* --help on standard output, written at once. Returns 0, or -1 and e
 * ("standard output: No space left on device"). */
int cmd_help(struct err *e);

/* `logitlab --version`: the version, and the vector path the dense loops
 * take (base/vecpath.h; path, which vec_path_check chose), and whether
 * LOGITLAB_VECTOR set it. Returns 0. */
int cmd_version(int path);

#endif
