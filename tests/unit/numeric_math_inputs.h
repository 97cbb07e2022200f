/*
 * The arguments on which tests/unit/test_numeric_math.c (accuracy against
 * glibc, C only) and test_numeric_math_opencl.c (C against OpenCL, bit for
 * bit) exercise kernels_templates/nestcl_math.h: first a grid of special
 * values (zeros, infinities, NaN, subnormals, the overflow and underflow
 * edges), then random arguments from Philox, spread over categories that
 * cover each function's whole range and its hard regions (subnormal results,
 * arguments near 0 and near -1, pow with y log x near the overflow edge).
 */
#ifndef NESTCL_NUMERIC_MATH_INPUTS_H
#define NESTCL_NUMERIC_MATH_INPUTS_H

#include "nestcl_philox.h"

#include <float.h>
#include <math.h>
#include <stddef.h>

enum { MATH_EXP, MATH_EXPM1, MATH_LOG1P, MATH_POW, MATH_FUNCTIONS };
static const char *const math_names[MATH_FUNCTIONS] = {"exp", "expm1", "log1p", "pow"};

static const double math_specials[] = {0.0,
                                       -0.0,
                                       INFINITY,
                                       -INFINITY,
                                       NAN,
                                       -NAN,
                                       1.0,
                                       -1.0,
                                       2.0,
                                       -2.0,
                                       0.5,
                                       -0.5,
                                       3.0,
                                       -3.0,
                                       0x1p-1074,
                                       -0x1p-1074,
                                       0x1p-1022,
                                       -0x1p-1022,
                                       0x1.8p-1060,
                                       DBL_MAX,
                                       -DBL_MAX,
                                       0x1p-54,
                                       -0x1p-54,
                                       0x1.0000000000001p-54,
                                       -0x1.0000000000001p-54,
                                       0x1p-55,
                                       0x1p-30,
                                       -0x1p-30,
                                       709.0,
                                       709.78,
                                       0x1.62e42fefa39efp+9,
                                       0x1.62e42fefa39f0p+9,
                                       709.79,
                                       710.0,
                                       -708.39,
                                       -708.4,
                                       -745.0,
                                       -745.1332191019411,
                                       -745.1332191019412,
                                       -745.14,
                                       -745.2,
                                       -746.0,
                                       -40.0,
                                       -37.5,
                                       40.0,
                                       -0.9999999999999999,
                                       -0.75,
                                       1e300,
                                       -1e300,
                                       0x1p53,
                                       -0x1p53,
                                       0x1.0000000000001p53,
                                       1.0000000000000002,
                                       0.9999999999999999,
                                       1023.0,
                                       -1074.0,
                                       -1075.0,
                                       1024.0,
                                       0.1,
                                       1.0 / 3.0};
#define MATH_N_SPECIALS (sizeof math_specials / sizeof math_specials[0])

/* Number of arguments (pairs for pow) that math_inputs writes for n random ones. */
static size_t math_count(int f, size_t n)
{
  return (f == MATH_POW ? MATH_N_SPECIALS * MATH_N_SPECIALS : MATH_N_SPECIALS) + n;
}

/* Uniform in [a, b) from two words. */
static double math_uniform(nestcl_u32 hi, nestcl_u32 lo, double a, double b)
{
  return a + (b - a) * nestcl_u01_53(hi, lo);
}

/*
 * Fills x (and y, for pow) with math_count(f, n) arguments: the specials (for
 * pow, every pair of them), then n random ones, category i % 6.
 */
static void math_inputs(int f, size_t n, double *x, double *y)
{
  size_t at = 0;
  if (f == MATH_POW) {
    for (size_t a = 0; a < MATH_N_SPECIALS; ++a) {
      for (size_t b = 0; b < MATH_N_SPECIALS; ++b, ++at) {
        x[at] = math_specials[a];
        y[at] = math_specials[b];
      }
    }
  } else {
    for (size_t a = 0; a < MATH_N_SPECIALS; ++a, ++at) {
      x[at] = math_specials[a];
      y[at] = 0.0;
    }
  }
  nestcl_philox_key key = nestcl_rng_key(20261121u + (nestcl_u32)f, NESTCL_RNG_PURPOSE_TEST);
  for (size_t i = 0; i < n; ++i, ++at) {
    nestcl_philox_ctr r = nestcl_philox4x32_10(nestcl_rng_counter(i, 5), key);
    nestcl_u32 *w = r.v;
    double sign = (w[3] & 1u) ? -1.0 : 1.0;
    int cat = (int)(i % 6);
    double v = 0.0, u = 0.0;
    switch (f) {
    case MATH_EXP:
      switch (cat) {
      case 0:
        v = math_uniform(w[0], w[1], -746.0, 710.0);
        break;
      case 1:
        v = sign * exp2(math_uniform(w[0], w[1], -60.0, 3.0));
        break;
      case 2:
        v = math_uniform(w[0], w[1], -745.3, -707.0);
        break; /* subnormal results */
      case 3:
        v = math_uniform(w[0], w[1], -2.0, 2.0);
        break;
      case 4:
        v = math_uniform(w[0], w[1], 700.0, 709.8);
        break; /* near overflow */
      default:
        v = sign * math_uniform(w[0], w[1], 0.0, 0x1p-8);
        break; /* one table interval */
      }
      break;
    case MATH_EXPM1:
      switch (cat) {
      case 0:
        v = math_uniform(w[0], w[1], -45.0, 45.0);
        break;
      case 1:
        v = sign * exp2(math_uniform(w[0], w[1], -60.0, 5.5));
        break;
      case 2:
        v = math_uniform(w[0], w[1], -1.0, 1.0);
        break;
      case 3:
        v = math_uniform(w[0], w[1], 40.0, 710.0);
        break;
      case 4:
        v = sign * math_uniform(w[0], w[1], 0.0, 0.05);
        break;
      default:
        v = math_uniform(w[0], w[1], -746.0, 710.0);
        break;
      }
      break;
    case MATH_LOG1P:
      switch (cat) {
      case 0: /* any positive finite double, subnormals included */
        v = nestcl_bits_f64(((nestcl_u64)(w[0] % 2047u) << 52) | (((nestcl_u64)w[1] << 32 | w[2]) >> 12));
        break;
      case 1:
        v = sign * exp2(math_uniform(w[0], w[1], -60.0, -0.01));
        break;
      case 2:
        v = math_uniform(w[0], w[1], -1.0, 1.0);
        break;
      case 3:
        v = -1.0 + exp2(math_uniform(w[0], w[1], -53.0, -1.0));
        break; /* near -1 */
      case 4:
        v = exp2(math_uniform(w[0], w[1], 0.0, 1024.0));
        break;
      default:
        v = sign * math_uniform(w[0], w[1], 0.0, 0.02);
        break;
      }
      break;
    default: /* pow: y chosen so that y log x spans exp's whole range where it matters */
      switch (cat) {
      case 0:
        v = exp2(math_uniform(w[0], w[1], -1074.0, 1024.0));
        u = math_uniform(w[2], w[3], -750.0, 712.0) / nestcl_log(v);
        break;
      case 1:
        v = math_uniform(w[0], w[1], 0.0, 4.0);
        u = math_uniform(w[2], w[3], -50.0, 50.0);
        break;
      case 2: /* x near 1, y large */
        v = 1.0 + sign * exp2(math_uniform(w[0], w[1], -52.0, -3.0));
        u = math_uniform(w[2], w[3], -750.0, 712.0) / nestcl_log(v);
        break;
      case 3: /* negative x, integer y */
        v = -math_uniform(w[0], w[1], 0.1, 10.0);
        u = (double)((int)(w[2] % 601u) - 300);
        break;
      case 4: /* any positive double, moderate y */
        v = nestcl_bits_f64(((nestcl_u64)(w[0] % 2047u) << 52) | (((nestcl_u64)w[1] << 32 | w[2]) >> 12));
        u = math_uniform(w[3], w[0], -2.0, 2.0);
        break;
      default: /* ordinary model use: x in (0, 2), small y */
        v = math_uniform(w[0], w[1], 0.0, 2.0);
        u = sign * math_uniform(w[2], w[3], 0.0, 8.0);
        break;
      }
      break;
    }
    x[at] = v;
    y[at] = u;
  }
}

/* The function under test, applied to one argument (pair). */
static double math_apply(int f, double x, double y)
{
  switch (f) {
  case MATH_EXP:
    return nestcl_exp(x);
  case MATH_EXPM1:
    return nestcl_expm1(x);
  case MATH_LOG1P:
    return nestcl_log1p(x);
  default:
    return nestcl_pow(x, y);
  }
}

#endif
