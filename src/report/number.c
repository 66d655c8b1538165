/* number.c - every number the report writes: report_number and
 * report_logit for the tables and panes, and the shortest decimal that
 * reads back exactly for the CSV and the JSON. One place, so that every
 * format rounds the same way.
 */
#include "report/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_int.h"

void report_number(char *buf, size_t n, double v, int digits)
{
    if (isinf(v))
        snprintf(buf, n, "%s", v > 0 ? "inf" : "-inf");
    else if (fabs(v) >= REPORT_LARGE)
        snprintf(buf, n, "%.*e", digits > 1 ? digits - 1 : 0, v);
    else
        snprintf(buf, n, "%.*f", digits, v);
}

void report_logit(char *buf, size_t n, double v, int digits)
{
    report_number(buf, n, v, digits);
    if (strchr(buf, 'e') || strchr(buf, 'n'))
        return;
    char *dot = strchr(buf, '.');
    if (!dot)
        return;
    char *end = buf + strlen(buf) - 1;
    while (end > dot + 1 && *end == '0')
        *end-- = '\0';
    if (strcmp(buf, "-0.0") == 0)
        snprintf(buf, n, "0.0");
}

/* The shortest decimal that reads back as exactly v (2.1, not 2.1000000000000001). */
void report_shortest(char *buf, size_t n, double v)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

void report_duration(char *buf, size_t n, double us, int utf8)
{
    /* Each unit up to where the next reads better; the rounded text decides,
     * so 999.7 us is "1.0 ms", never "1000 us". */
    char t[32];
    snprintf(t, sizeof t, "%.0f", us);
    if (us < 1000.0 && strtod(t, NULL) < 1000.0) {
        snprintf(buf, n, "%s %s", t, utf8 ? "\u00b5s" : "us");
        return;
    }
    snprintf(t, sizeof t, "%.1f", us / 1e3);
    if (strtod(t, NULL) < 10000.0) {
        snprintf(buf, n, "%s ms", t);
        return;
    }
    snprintf(buf, n, "%.1f s", us / 1e6);
}

void report_percent(char *buf, size_t n, double p, int digits)
{
    int dec = digits > 2 ? digits - 2 : 0;
    double step = pow(10.0, -dec), pct = p * 100.0;
    if (p > 0.0 && pct < step / 2) /* nonzero, yet it would read 0 */
        snprintf(buf, n, "< %.*f %%", dec, step);
    else if (p < 1.0 && pct > 100.0 - step / 2) /* not all, yet it would read 100 */
        snprintf(buf, n, "> %.*f %%", dec, 100.0 - step);
    else
        snprintf(buf, n, "%.*f %%", dec, pct);
}

enum report_style report_column_style(const double *v, int n, int digits, int width)
{
    for (int i = 0; i < n; i++) {
        if (!isfinite(v[i]))
            continue; /* "inf" reads the same in either style */
        char t[64];
        int len = snprintf(t, sizeof t, "%.*f", digits, v[i]);
        if (fabs(v[i]) >= REPORT_LARGE || len > width)
            return REPORT_EXPONENT;
    }
    return REPORT_FIXED;
}

void report_number_as(char *buf, size_t n, double v, int digits, enum report_style style)
{
    if (!isfinite(v))
        report_number(buf, n, v, digits);
    else if (style == REPORT_EXPONENT)
        snprintf(buf, n, "%.*e", digits > 1 ? digits - 1 : 0, v);
    else
        snprintf(buf, n, "%.*f", digits, v);
}
