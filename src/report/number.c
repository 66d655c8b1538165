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
