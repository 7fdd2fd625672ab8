/*
 * number.h - a whole number read from a command line or a request, in a
 * range, with the one message every command and route gives for a bad
 * one (docs/commands.md).
 */
#ifndef STORYCTL_NUMBER_H
#define STORYCTL_NUMBER_H

#include "common/err.h"

/* s as a base-10 whole number from min to max into *out; else
 * SC_EUSAGE "WHAT must be a whole number from MIN to MAX, not 'S'". */
int number_parse_int(int *out, const char *s, const char *what, int min,
    int max, struct sc_err *err);

#endif
