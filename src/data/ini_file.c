#include "data/ini_file.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/readfile.h"
#include "base/utf8.h"

struct reader {
    const struct ini_rules *rules;
    struct ini_file *f;
    const char *text;
    size_t len, pos;
    int lineno;    /* the line inih is working on */
    int indented;  /* that line starts with a space or tab */
    int after_key; /* a name = value line came since the last header: inih then
                    * reads an indented line as a continuation */
    int stop;      /* the reader refused a line: give inih no more */
    int err_line;  /* the first problem found, 0 if none */
    char err[ERR_MSG_MAX];
    int oom;
    int cap_entries, cap_sections;
};

static void rd_error(struct reader *rd, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void rd_error(struct reader *rd, int line, const char *fmt, ...)
{
    if (rd->err_line && rd->err_line <= line)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rd->err, sizeof rd->err, fmt, ap);
    va_end(ap);
    rd->err_line = line;
}

static int grow(void **p, int *cap, int need, size_t size)
{
    if (need <= *cap)
        return 0;
    int c = *cap ? *cap * 2 : 32;
    void *q = realloc(*p, (size_t)c * size);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

static void check_header(struct reader *rd, const char *line, size_t len)
{
    size_t i = 0;
    if (rd->lineno == 1 && len >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    if (rd->indented && rd->after_key)
        return; /* a continuation line, even when it starts with '[' */
    while (i < len && isspace((unsigned char)line[i]))
        i++;
    if (i == len || line[i] != '[')
        return;
    rd->after_key = 0;
    const char *close = memchr(line + i, ']', len - i);
    if (!close)
        return; /* inih reports it; syntax_message() explains */
    const char *name = line + i + 1;
    size_t n = (size_t)(close - name);
    if (!rd->rules->section_ok(name, n)) {
        rd_error(rd, rd->lineno, "unknown section [%.*s] (sections: %s)", (int)(n > 40 ? 40 : n),
                 name, rd->rules->sections_hint);
        return;
    }
    /* Only a comment may follow a header (inih would drop anything else). */
    const char *rest = close + 1;
    while (rest < line + len && isspace((unsigned char)*rest))
        rest++;
    if (rest < line + len && *rest != ';' && *rest != '#')
        rd_error(rd, rd->lineno, "text after the section header [%.*s]", (int)n, name);
    struct ini_file *f = rd->f;
    if (n >= INI_NAME_MAX ||
        grow((void **)&f->sections, &rd->cap_sections, f->n_sections + 1, sizeof *f->sections)) {
        if (n >= INI_NAME_MAX)
            rd_error(rd, rd->lineno, "section name too long");
        else
            rd->oom = 1;
        return;
    }
    struct ini_section *s = &f->sections[f->n_sections++];
    memcpy(s->name, name, n);
    s->name[n] = '\0';
    s->line = rd->lineno;
}

/* The ini_reader: one line per call, like fgets, but counting lines and
 * refusing the lines that inih's fixed buffer would split in two. */
static char *read_line(char *str, int num, void *stream)
{
    struct reader *rd = stream;
    if (rd->stop || rd->pos >= rd->len)
        return NULL;
    const char *start = rd->text + rd->pos;
    const char *nl = memchr(start, '\n', rd->len - rd->pos);
    size_t linelen = nl ? (size_t)(nl - start) : rd->len - rd->pos;
    size_t content = linelen;
    if (content > 0 && start[content - 1] == '\r')
        content--;
    rd->lineno++;
    if (content > INI_LINE_MAX || linelen + 2 > (size_t)num) {
        rd_error(rd, rd->lineno,
                 "line is %zu bytes long; lines are limited to %d bytes (inih's limit)", content,
                 INI_LINE_MAX);
        rd->stop = 1;
        return NULL;
    }
    memcpy(str, start, linelen);
    str[linelen] = '\n';
    str[linelen + 1] = '\0';
    rd->pos += linelen + (nl ? 1 : 0);
    rd->indented = linelen > 0 && (start[0] == ' ' || start[0] == '\t');
    check_header(rd, start, content);
    return str;
}

/* The first control character of value (utf8.h: C0, DEL, C1) other than a
 * tab, or 0. Text from a file goes to terminals; such a character there
 * would be a command to the terminal, never text (a lesson writes a line
 * break as "\n" in a quoted value). The file is valid UTF-8 by now. */
static uint32_t control_in(const char *value)
{
    for (size_t len = strlen(value); len > 0;) {
        uint32_t cp;
        int l = utf8_decode(value, len, &cp);
        if (l == 0)
            l = 1;
        else if (utf8_cp_is_control(cp) && cp != '\t')
            return cp;
        value += l;
        len -= (size_t)l;
    }
    return 0;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    struct reader *rd = user;
    struct ini_file *f = rd->f;
    int line = rd->lineno;
    rd->after_key = 1;
    struct ini_entry *prev = f->n ? &f->entries[f->n - 1] : NULL;
    int cont = rd->indented && prev && strcmp(prev->section, section) == 0 &&
               strcmp(prev->name, name) == 0;
    if (!cont) {
        if (name[0] == '\0') {
            rd_error(rd, line, "a name is missing before '='");
            return 0;
        }
        if (section[0] == '\0') {
            rd_error(rd, line, "'%s' comes before any [section]", name);
            return 0;
        }
        if (!rd->rules->section_ok(section, strlen(section)))
            return 1; /* reported at its header */
        if (!rd->rules->key_ok(section, name)) {
            rd_error(rd, line, "unknown key '%s' in [%s]", name, section);
            return 0;
        }
    }
    uint32_t bad = control_in(value);
    if (bad) {
        rd_error(rd, line, "control character U+%04X in the value of '%s'", (unsigned)bad, name);
        return 0;
    }
    if (grow((void **)&f->entries, &rd->cap_entries, f->n + 1, sizeof *f->entries)) {
        rd->oom = 1;
        return 0;
    }
    struct ini_entry *en = &f->entries[f->n];
    memset(en, 0, sizeof *en);
    snprintf(en->section, sizeof en->section, "%s", section);
    snprintf(en->name, sizeof en->name, "%s", name);
    en->value = strdup(value);
    if (!en->value) {
        rd->oom = 1;
        return 0;
    }
    if (cont) {
        /* Some inih versions keep an inline comment on a continuation line. */
        for (char *c = en->value; *c; c++)
            if (*c == ';' && (c == en->value || isspace((unsigned char)c[-1]))) {
                *c = '\0';
                break;
            }
        size_t vl = strlen(en->value);
        while (vl > 0 && isspace((unsigned char)en->value[vl - 1]))
            en->value[--vl] = '\0';
    }
    en->line = line;
    en->cont = cont;
    f->n++;
    return 1;
}

/* Explains a line inih could not parse. */
static void syntax_message(struct reader *rd, int line)
{
    const char *p = rd->text;
    for (int l = 1; l < line && p; l++) {
        p = memchr(p, '\n', (size_t)(rd->text + rd->len - p));
        if (p)
            p++;
    }
    while (p && (*p == ' ' || *p == '\t'))
        p++;
    if (p && *p == '[')
        rd_error(rd, line, "a section header needs a closing ']'");
    else
        rd_error(rd, line,
                 "expected 'name = value', a [section] or a comment (a line that continues "
                 "a value must be indented)");
}

static int valid_utf8(const unsigned char *s, size_t n, size_t *bad)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (len == 0 || i + (size_t)len > n || (c == 0))
            break;
        int ok = 1;
        for (int k = 1; k < len; k++)
            ok &= (s[i + (size_t)k] & 0xC0) == 0x80;
        if (!ok || (len == 2 && c < 0xC2) || (len == 3 && c == 0xE0 && s[i + 1] < 0xA0) ||
            (len == 3 && c == 0xED && s[i + 1] >= 0xA0) || /* UTF-16 surrogates */
            (len == 4 &&
             (c > 0xF4 || (c == 0xF0 && s[i + 1] < 0x90) || (c == 0xF4 && s[i + 1] >= 0x90))))
            break;
        i += (size_t)len;
    }
    *bad = i;
    return i == n;
}

static int line_of_offset(const char *text, size_t off)
{
    int line = 1;
    for (size_t i = 0; i < off; i++)
        line += text[i] == '\n';
    return line;
}

void ini_file_free(struct ini_file *f)
{
    for (int i = 0; i < f->n; i++)
        free(f->entries[i].value);
    free(f->entries);
    free(f->sections);
    free(f->path);
    memset(f, 0, sizeof *f);
}

static int parse_text(struct ini_file *f, const char *path, const char *text,
                      const struct ini_rules *r, struct err *e)
{
    size_t len = strlen(text), bad;
    if (len > r->max_bytes)
        return err_set(e, ERR_USAGE, "%s: the file is larger than %zu bytes", path, r->max_bytes);
    if (!valid_utf8((const unsigned char *)text, len, &bad))
        return err_set(e, ERR_USAGE, "%s:%d: the text is not valid UTF-8", path,
                       line_of_offset(text, bad));
    f->path = strdup(path);
    if (!f->path)
        return err_set(e, ERR_SYSTEM, "%s: out of memory", path);
    struct reader rd = { .rules = r, .f = f, .text = text, .len = len };
    int rc = ini_parse_stream(read_line, &rd, handler, &rd);
    if (rc == -2 || rd.oom) {
        ini_file_free(f);
        return err_set(e, ERR_SYSTEM, "%s: out of memory", path);
    }
    if (rc > 0 && (rd.err_line == 0 || rc < rd.err_line))
        syntax_message(&rd, rc);
    if (rd.err_line) {
        ini_file_free(f);
        return err_set(e, ERR_USAGE, "%s:%d: %s", path, rd.err_line, rd.err);
    }
    return 0;
}

int ini_file_load(struct ini_file *f, const char *path, const char *text, const struct ini_rules *r,
                  struct err *e)
{
    memset(f, 0, sizeof *f);
    if (text)
        return parse_text(f, path, text, r, e);
    FILE *fp = readfile_open(path, e); /* a FIFO or a directory is refused, not waited on */
    if (!fp)
        return -1;
    char *buf = malloc(r->max_bytes + 2);
    if (!buf) {
        fclose(fp);
        return err_set(e, ERR_SYSTEM, "%s: out of memory", path);
    }
    size_t n = fread(buf, 1, r->max_bytes + 1, fp);
    int rd_err = ferror(fp);
    fclose(fp);
    int rc;
    if (rd_err) {
        rc = err_set(e, ERR_USAGE, "%s: read error", path);
    } else if (n > r->max_bytes) {
        rc = err_set(e, ERR_USAGE, "%s: the file is larger than %zu bytes", path, r->max_bytes);
    } else if (memchr(buf, '\0', n)) {
        rc = err_set(e, ERR_USAGE, "%s:%d: the file holds a NUL byte (is it a text file?)", path,
                     line_of_offset(buf, (size_t)((char *)memchr(buf, '\0', n) - buf)));
    } else {
        buf[n] = '\0';
        rc = parse_text(f, path, buf, r, e);
    }
    free(buf);
    return rc;
}

int ini_section_line(const struct ini_file *f, const char *name)
{
    for (int i = 0; i < f->n_sections; i++)
        if (strcmp(f->sections[i].name, name) == 0)
            return f->sections[i].line;
    return 0;
}

int ini_error(const struct ini_file *f, int line, struct err *e, const char *fmt, ...)
{
    char msg[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (line > 0)
        return err_set(e, ERR_USAGE, "%s:%d: %s", f->path, line, msg);
    return err_set(e, ERR_USAGE, "%s: %s", f->path, msg);
}

int ini_numbered_section(const char *name, size_t len, const char *prefix)
{
    size_t pl = strlen(prefix);
    if (len <= pl || strncmp(name, prefix, pl) != 0 || name[pl] == '0')
        return 0;
    for (size_t i = pl; i < len; i++)
        if (!isdigit((unsigned char)name[i]))
            return 0;
    return 1;
}
