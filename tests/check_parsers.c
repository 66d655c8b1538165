/* check_parsers.c - hostile inputs (issue 12): placeholder, filled by its owner. */
#include "suites.h"

Suite *suite_parsers(void)
{
    Suite *s = suite_create("parsers");
    return s;
}
