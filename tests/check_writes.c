/* check_writes.c - hostile inputs (issue 12): placeholder, filled by its owner. */
#include "suites.h"

Suite *suite_writes(void)
{
    Suite *s = suite_create("writes");
    return s;
}
