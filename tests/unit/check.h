/*
 * Minimal assertions for the unit tests: a failed CHECK prints where, what,
 * and the library's last error message, then exits 1 so ctest reports it.
 */
#ifndef NESTCL_TEST_CHECK_H
#define NESTCL_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "nestcl/device.h"

#define CHECK(cond)                                                                                                    \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      fprintf(stderr, "%s:%d: check failed: %s\n  last error: %s\n", __FILE__, __LINE__, #cond, nestcl_last_error());  \
      exit(1);                                                                                                         \
    }                                                                                                                  \
  } while (0)

/* A call that must succeed (return 0). */
#define CHECK_OK(call) CHECK((call) == 0)

#endif
