/* app_int.h - what the files of the app (app.c, app_history.c, app_keys.c,
 * app_commands.c, app_exercise.c) share with each other and nobody else.
 * Each function says what it does to the struct app; none can fail in a
 * way the caller must handle: problems become a message on the status line.
 */
#ifndef LOGITLAB_APP_INT_H
#define LOGITLAB_APP_INT_H

#include "tui/app.h"

/* ---- app.c: the model ---- */

/* Puts a printf-style message on the bottom line; warn colours it. */
void app_msg(struct app *a, int warn, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Settings of lesson step k: defaults, the lesson's, the command line's,
 * then the ones changed while running. */
void app_step_settings(const struct app *a, int k, struct settings *s);

/* Recomputes the trace of the step on screen (and its draws when on).
 * Returns 0, or -1 when the step was refused (the message line says why,
 * and a->step_ok is 0). */
int app_recompute(struct app *a);

/* Opens a lesson: by catalog index, or by what (an id, a file, a .npy
 * file) when index is -1. Returns 0, or -1 with e (the old one stays). */
int app_open_lesson(struct app *a, const char *what, int index, struct err *e);

/* Opens the next (delta 1) or previous (-1) lesson of the catalog that loads. */
int app_step_lesson(struct app *a, int delta);

/* ---- app_history.c: the steps taken ---- */

/* Makes step k live in context ctx (copied). Returns 0 or -1. */
int app_go_live(struct app *a, int k, const int *ctx, int len);

/* Drops the history from entry from on. */
void app_drop_history(struct app *a, int from);

/* Starts the loaded lesson again from its step k, on the lesson's own path. */
void app_start_at(struct app *a, int k);

/* Going back to the taken step on screen to change it: it becomes live. */
void app_reopen_shown(struct app *a);

/* What Space says when nothing is left to take. */
void app_end_message(struct app *a);

/* Space: walk forward through the steps taken, or take the live step. */
int app_take_step(struct app *a);
/* Appends token id instead of the draw (:take), branching from the step on
 * screen when it is a taken one. */
int app_take_token(struct app *a, int id);
/* The live step takes id: drawn again (not forced) where the draw still
 * gives it, else as the user's choice; for the text view's branches. */
int app_replay_token(struct app *a, int id, int forced);
/* The numbers of token id in trace t into en, for the text view: its p,
 * final p and rank, and the step's most likely tokens. */
void app_keep_numbers(struct app_entry *en, const struct trace *t, int id);
/* A real model's prompt replaced by text (:prompt), the lesson started again. */
int app_set_prompt(struct app *a, const char *text);

/* ---- app_commands.c: settings and commands ---- */

/* The settings the keys change: the selected request's in the batch view,
 * else the step's on screen. */
const struct settings *app_edit_settings(const struct app *a);

/* Sets a setting (a live override, or the selected request's in the batch
 * view); on a taken step, goes back to it first. */
int app_apply_setting(struct app *a, const char *name, const char *value);

/* The step's next suggested setting, from the lesson's own settings. */
int app_try(struct app *a);

/* Drops the settings changed while running. */
int app_reset(struct app *a);

/* Opens or closes the batch view; x there: the request's preset again. */
int app_toggle_batch(struct app *a);
int app_batch_reset_row(struct app *a);

/* ---- app_input.c: the input line ---- */

/* Allocates the empty input line, and frees it. app_input_init returns 0,
 * or -1 with e. */
int app_input_init(struct app *a, struct err *e);
void app_input_free(struct app *a);

/* Empties the input line. */
void app_input_clear(struct app *a);

/* Appends n bytes of s to the input line (the program's own text: no
 * limit but memory). Returns 0, or -1 with the message line saying so. */
int app_input_append(struct app *a, const char *s, size_t n);

/* Edits the input line with key: a character is added (refused with a
 * message past a->input_limit), Backspace erases one, Esc closes the line,
 * Enter hands it to submit. */
int app_key_input(struct app *a, int key, int (*submit)(struct app *));

/* Closes the input line and hands a copy of it, whole, to run. */
int app_submit_input(struct app *a, int (*run)(struct app *, const char *));
int app_submit_command(struct app *a);

/* Opens the ':' prompt with prefill typed, and more after it (NULL: none). */
void app_open_prompt(struct app *a, const char *prefill, const char *more);

/* ---- app_exercise.c ---- */

/* Asks for the next value of the live exercise step. */
void app_ask_prompt(struct app *a);

/* Checks the answer typed. */
int app_submit_answer(struct app *a);

#endif
