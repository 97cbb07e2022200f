/*
 * What the perfmodel tests share: EXPECT (counts failures in `fails`,
 * prints each) and a seeded xorshift generator with uniform and normal
 * draws, so that every test's synthetic data are the same on every run.
 * Define PM_TEST_SEED before including.
 */
#ifndef NESTCL_PM_TEST_H
#define NESTCL_PM_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

static int fails;
#define EXPECT(cond, ...)                                                                                              \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      fprintf(stderr, "FAIL " __VA_ARGS__);                                                                            \
      fputc('\n', stderr);                                                                                             \
      fails++;                                                                                                         \
    }                                                                                                                  \
  } while (0)

static uint64_t state = PM_TEST_SEED;
static double uniform(void)
{
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return (double)(state >> 11) * 0x1.0p-53;
}

static double gauss(void)
{
  double u = uniform(), v = uniform();
  return sqrt(-2.0 * log(u > 0 ? u : 1e-300)) * cos(6.283185307179586 * v);
}

#endif
