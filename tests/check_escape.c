/* check_escape.c - hostile inputs (issue 12): placeholder, filled by its owner. */
#include "suites.h"

Suite *suite_escape(void)
{
    Suite *s = suite_create("escape");
    return s;
}
