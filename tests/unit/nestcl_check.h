/*
 * CHECK(cond, fmt, ...) for the numeric and translator tests, which explain a
 * failure with a printf-style message. By default a failed check prints
 * "FAIL file:line: message", counts in 'failures' and the test goes on, so one
 * run lists every broken property; check_report() turns the count into the exit
 * status. With NESTCL_CHECK_FATAL defined before the include, a failed check
 * also prints the library's last error and exits 1: for the OpenCL tests, where
 * a failed set-up step leaves nothing meaningful to check after it.
 */
#ifndef NESTCL_TEST_NESTCL_CHECK_H
#define NESTCL_TEST_NESTCL_CHECK_H

#include <stdio.h>
#include <stdlib.h>

/*
 * The sizes of the numeric OpenCL tests: full unless NESTCL_TEST_DIVISOR=D
 * (a positive integer) divides them, as the oclgrind runs do (tests/oclgrind:
 * the simulator runs a kernel some 10^4 times slower than PoCL). Bit-identity
 * is checked at any size; statistics tuned for the full size only at it.
 */
static inline size_t nestcl_test_divisor(void)
{
  const char *s = getenv("NESTCL_TEST_DIVISOR");
  long d = s ? strtol(s, NULL, 10) : 1;
  return d > 1 ? (size_t)d : 1u;
}
static inline size_t nestcl_test_size(size_t full)
{
  size_t n = full / nestcl_test_divisor();
  return n ? n : 1u;
}

#ifdef NESTCL_CHECK_FATAL

#include "nestcl/device.h"

#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                             \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fprintf(stderr, "\n  last error: %s\n", nestcl_last_error());                                                    \
      exit(1);                                                                                                         \
    }                                                                                                                  \
  } while (0)

#else

static int failures;

#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                             \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fputc('\n', stderr);                                                                                             \
      failures++;                                                                                                      \
    }                                                                                                                  \
  } while (0)

/* 1 (after saying how many checks failed) when any did, else 0: main's exit status. */
static inline int check_report(void)
{
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  return 0;
}

#endif

#endif
