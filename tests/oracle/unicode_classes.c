/* unicode_classes.c - where Debian 12's PCRE2 and llama.cpp classify a code
 * point differently, for the U15_* ranges of src/gguf/tokenizer_bpe.c.
 *
 * llama.cpp classifies code points by its unicode-data.cpp (Unicode 15.1 at
 * the pinned commit): a table of (first code point, flags) pairs, which
 * unicode_classes.sh turns into ranges.h. PCRE2 (10.42) has Unicode 14. For
 * every code point this prints nothing when the two agree on its class
 * (N, L, M, P, S, Z, C or unassigned), else one line "HEX llama CLASS pcre
 * CLASS"; then, on stderr, the differences as ranges, by llama.cpp's class.
 * Usage (from unicode_classes.sh): unicode_classes >diff.txt */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>

#include "ranges.h"

/* llama.cpp's category flags (its unicode.h), and PCRE2's expressions for
 * the same classes; Cn before C, so that unassigned is told apart. */
static const struct {
    unsigned flag;
    const char *name, *re;
} CLASS[] = {
    { 0x02, "N", "^\\p{N}$" }, { 0x04, "L", "^\\p{L}$" },   { 0x10, "M", "^\\p{M}$" },
    { 0x20, "P", "^\\p{P}$" }, { 0x40, "S", "^\\p{S}$" },   { 0x08, "Z", "^\\p{Z}$" },
    { 0x01, "-", "^\\p{Cn}$" }, { 0x80, "C", "^\\p{C}$" },
};
#define N_CLASS ((int)(sizeof CLASS / sizeof CLASS[0]))

static int utf8(unsigned c, unsigned char *o)
{
    if (c < 0x80)
        return o[0] = (unsigned char)c, 1;
    if (c < 0x800)
        return o[0] = (unsigned char)(0xc0 | c >> 6), o[1] = (unsigned char)(0x80 | (c & 63)), 2;
    if (c < 0x10000)
        return o[0] = (unsigned char)(0xe0 | c >> 12),
               o[1] = (unsigned char)(0x80 | ((c >> 6) & 63)),
               o[2] = (unsigned char)(0x80 | (c & 63)), 3;
    o[0] = (unsigned char)(0xf0 | c >> 18);
    o[1] = (unsigned char)(0x80 | ((c >> 12) & 63));
    o[2] = (unsigned char)(0x80 | ((c >> 6) & 63));
    o[3] = (unsigned char)(0x80 | (c & 63));
    return 4;
}

/* PCRE2's class of c, as a llama.cpp flag (surrogates: C, as Cs). */
static unsigned pcre_flag(pcre2_code **re, pcre2_match_data *md, unsigned c)
{
    if (c >= 0xd800 && c <= 0xdfff)
        return 0x80;
    unsigned char b[4];
    int n = utf8(c, b);
    for (int i = 0; i < N_CLASS; i++)
        if (pcre2_match(re[i], b, (PCRE2_SIZE)n, 0, 0, md, NULL) >= 0)
            return CLASS[i].flag;
    return 0;
}

static const char *name(unsigned flag)
{
    for (int i = 0; i < N_CLASS; i++)
        if (CLASS[i].flag == flag)
            return CLASS[i].name;
    return "?";
}

int main(void)
{
    pcre2_code *re[N_CLASS];
    for (int i = 0; i < N_CLASS; i++) {
        int code;
        PCRE2_SIZE at;
        re[i] = pcre2_compile((PCRE2_SPTR)CLASS[i].re, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP,
                              &code, &at, NULL);
        if (!re[i])
            return 3;
    }
    pcre2_match_data *md = pcre2_match_data_create(4, NULL);
    size_t nr = sizeof RANGES / sizeof RANGES[0], r = 0;
    unsigned first = 0, last = 0, cls = 0;
    int open = 0;
    for (unsigned c = 0; c <= 0x10ffff; c++) {
        while (r + 1 < nr && RANGES[r + 1][0] <= c)
            r++;
        unsigned mine = RANGES[r][1] & 0xff, theirs = pcre_flag(re, md, c);
        int differ = mine != theirs;
        if (differ)
            printf("%06X llama %s pcre %s\n", c, name(mine), name(theirs));
        if (open && (!differ || mine != cls || c != last + 1)) {
            fprintf(stderr, "%s %X-%X\n", name(cls), first, last);
            open = 0;
        }
        if (differ && !open)
            first = c, cls = mine, open = 1;
        if (differ)
            last = c;
    }
    if (open)
        fprintf(stderr, "%s %X-%X\n", name(cls), first, last);
    return 0;
}
