/*
 * Unit test of kernels_templates/nestcl_math.h on the C path: the tables
 * against long double (and 128/i against C's correctly rounded division), the
 * special values of C99 Annex F bit for bit, exact powers, and for each of
 * exp, expm1, log1p and pow about 10^6 arguments (numeric_math_inputs.h)
 * compared with glibc and with the long double functions as a more precise
 * reference. It asserts that no result is more than 1 ulp from glibc's and
 * none more than max_error ulp from the true value (as far as long double
 * tells), and prints the histogram of distances to glibc and the fraction of
 * results that differ from it. The OpenCL twin of these functions is compared
 * bit for bit in test_numeric_math_opencl.c.
 */
#include "nestcl_check.h"
#include "nestcl_math.h"
#include "numeric_math_inputs.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_RANDOM 1000000

/* Bound on the error against the long double reference, in ulp of the result. */
static const double max_error[MATH_FUNCTIONS] = {0.52, 0.52, 0.52, 0.53};
/*
 * Bound on the fraction of results that differ from glibc's. glibc's exp and
 * pow are almost correctly rounded, its expm1 and log1p (from fdlibm) less so,
 * so most of those differences are glibc's error (the test prints both).
 */
static const double max_differ[MATH_FUNCTIONS] = {0.005, 0.10, 0.05, 0.005};

/* Doubles in increasing order as integers, so that the difference counts the ulps between them. */
static int64_t ordered(double x)
{
  uint64_t u = nestcl_f64_bits(x);
  return (u >> 63) ? -(int64_t)(u & 0x7fffffffffffffffu) : (int64_t)u;
}

/* Distance in ulps; 0 for two NaNs, huge for a NaN against a number. */
static uint64_t ulp_distance(double a, double b)
{
  if (a != a || b != b) {
    return (a != a && b != b) ? 0 : UINT64_MAX;
  }
  int64_t d = ordered(a) - ordered(b);
  return d < 0 ? (uint64_t)-d : (uint64_t)d;
}

/* |got - ref| in units of the last place of the double nearest ref (2^-1074 for subnormals). */
static double fine_error(double got, long double ref)
{
  long double a = fabsl(ref);
  int e;
  frexpl(a, &e); /* a = f 2^e, f in [0.5, 1) */
  if (e < -1021) {
    e = -1021;
  }
  long double ulp = ldexpl(1.0L, e - 53);
  return (double)(fabsl((long double)got - ref) / ulp);
}

static long double reference(int f, double x, double y)
{
  switch (f) {
  case MATH_EXP:
    return expl(x);
  case MATH_EXPM1:
    return expm1l(x);
  case MATH_LOG1P:
    return log1pl(x);
  default:
    return powl(x, y);
  }
}

static double glibc(int f, double x, double y)
{
  switch (f) {
  case MATH_EXP:
    return exp(x);
  case MATH_EXPM1:
    return expm1(x);
  case MATH_LOG1P:
    return log1p(x);
  default:
    return pow(x, y);
  }
}

static void test_tables(void)
{
  long double worst = 0.0L;
  for (int j = 0; j < 128; ++j) {
    long double ref = exp2l((long double)j / 128.0L);
    long double d = (((long double)nestcl_math_exp2_table[2 * j] - ref) + nestcl_math_exp2_table[2 * j + 1]) / ref;
    worst = fmaxl(worst, fabsl(d));
    CHECK(fabsl(d) < 0x1p-61L, "exp2 table entry %d off by %Lg relative", j, d);
  }
  for (int i = 91; i <= 181; ++i) {
    long double ref = logl((long double)i / 128.0L);
    long double d = ((long double)nestcl_math_log_table[2 * (i - 91)] - ref) + nestcl_math_log_table[2 * (i - 91) + 1];
    CHECK(fabsl(d) < 0x1p-62L * (fabsl(ref) + 0x1p-60L), "log table entry %d off by %Lg", i, d);
  }
  for (int i = 91; i <= 181; ++i) {
    CHECK(nestcl_math_inv_table[i - 91] == 128.0 / (double)i, "inverse table entry %d", i);
  }
  CHECK(nestcl_math_log_table[2 * (128 - 91)] == 0.0 && nestcl_math_log_table[2 * (128 - 91) + 1] == 0.0,
        "log(1) must be exactly 0 in the table");
  printf("tables: hi + lo within %.2Lg relative of long double (its own precision)\n", worst);
}

/* Special values: the bits must be exactly these (NaN: any NaN). */
static void expect(const char *what, double got, double want)
{
  int ok = (want != want) ? (got != got) : (nestcl_f64_bits(got) == nestcl_f64_bits(want));
  CHECK(ok, "%s = %a, want %a", what, got, want);
}

static void test_specials(void)
{
  expect("exp(0)", nestcl_exp(0.0), 1.0);
  expect("exp(-0)", nestcl_exp(-0.0), 1.0);
  expect("exp(inf)", nestcl_exp(INFINITY), INFINITY);
  expect("exp(-inf)", nestcl_exp(-INFINITY), 0.0);
  expect("exp(nan)", nestcl_exp(NAN), NAN);
  expect("exp(710)", nestcl_exp(710.0), INFINITY);
  expect("exp(0x1.62e42fefa39efp+9)", nestcl_exp(0x1.62e42fefa39efp+9), exp(0x1.62e42fefa39efp+9));
  expect("exp(0x1.62e42fefa39f0p+9)", nestcl_exp(0x1.62e42fefa39f0p+9), INFINITY);
  expect("exp(-746)", nestcl_exp(-746.0), 0.0);
  expect("exp(-745.13)", nestcl_exp(-745.13), 0x1p-1074);
  expect("exp(2^-55)", nestcl_exp(0x1p-55), 1.0);
  expect("exp(-2^-55)", nestcl_exp(-0x1p-55), 1.0);
  expect("exp(1)", nestcl_exp(1.0), 0x1.5bf0a8b145769p+1);
  expect("expm1(0)", nestcl_expm1(0.0), 0.0);
  expect("expm1(-0)", nestcl_expm1(-0.0), -0.0);
  expect("expm1(inf)", nestcl_expm1(INFINITY), INFINITY);
  expect("expm1(-inf)", nestcl_expm1(-INFINITY), -1.0);
  expect("expm1(nan)", nestcl_expm1(NAN), NAN);
  expect("expm1(2^-1074)", nestcl_expm1(0x1p-1074), 0x1p-1074);
  expect("expm1(-2^-1074)", nestcl_expm1(-0x1p-1074), -0x1p-1074);
  expect("expm1(-50)", nestcl_expm1(-50.0), -1.0);
  expect("expm1(710)", nestcl_expm1(710.0), INFINITY);
  expect("log1p(0)", nestcl_log1p(0.0), 0.0);
  expect("log1p(-0)", nestcl_log1p(-0.0), -0.0);
  expect("log1p(-1)", nestcl_log1p(-1.0), -INFINITY);
  expect("log1p(-2)", nestcl_log1p(-2.0), NAN);
  expect("log1p(-inf)", nestcl_log1p(-INFINITY), NAN);
  expect("log1p(inf)", nestcl_log1p(INFINITY), INFINITY);
  expect("log1p(nan)", nestcl_log1p(NAN), NAN);
  expect("log1p(2^-1074)", nestcl_log1p(0x1p-1074), 0x1p-1074);
  expect("log1p(DBL_MAX)", nestcl_log1p(DBL_MAX), log1p(DBL_MAX));
  /* pow: C99 Annex F.9.4.4 */
  const double some[] = {0.5, 2.0, -3.5, 1e300, -1e-300, INFINITY, -INFINITY, NAN, 0.0, -0.0};
  for (size_t a = 0; a < sizeof some / sizeof some[0]; ++a) {
    expect("pow(x, 0)", nestcl_pow(some[a], 0.0), 1.0);
    expect("pow(x, -0)", nestcl_pow(some[a], -0.0), 1.0);
    expect("pow(1, y)", nestcl_pow(1.0, some[a]), 1.0);
  }
  expect("pow(nan, 2)", nestcl_pow(NAN, 2.0), NAN);
  expect("pow(2, nan)", nestcl_pow(2.0, NAN), NAN);
  expect("pow(-0, -3)", nestcl_pow(-0.0, -3.0), -INFINITY);
  expect("pow(+0, -3)", nestcl_pow(0.0, -3.0), INFINITY);
  expect("pow(-0, -2)", nestcl_pow(-0.0, -2.0), INFINITY);
  expect("pow(-0, -0.5)", nestcl_pow(-0.0, -0.5), INFINITY);
  expect("pow(-0, -inf)", nestcl_pow(-0.0, -INFINITY), INFINITY);
  expect("pow(-0, 3)", nestcl_pow(-0.0, 3.0), -0.0);
  expect("pow(-0, 2)", nestcl_pow(-0.0, 2.0), 0.0);
  expect("pow(-0, 0.5)", nestcl_pow(-0.0, 0.5), 0.0);
  expect("pow(-1, inf)", nestcl_pow(-1.0, INFINITY), 1.0);
  expect("pow(-1, -inf)", nestcl_pow(-1.0, -INFINITY), 1.0);
  expect("pow(0.5, -inf)", nestcl_pow(0.5, -INFINITY), INFINITY);
  expect("pow(-0.5, inf)", nestcl_pow(-0.5, INFINITY), 0.0);
  expect("pow(2, -inf)", nestcl_pow(2.0, -INFINITY), 0.0);
  expect("pow(-2, inf)", nestcl_pow(-2.0, INFINITY), INFINITY);
  expect("pow(-inf, -3)", nestcl_pow(-INFINITY, -3.0), -0.0);
  expect("pow(-inf, -2)", nestcl_pow(-INFINITY, -2.0), 0.0);
  expect("pow(-inf, 3)", nestcl_pow(-INFINITY, 3.0), -INFINITY);
  expect("pow(-inf, 2.5)", nestcl_pow(-INFINITY, 2.5), INFINITY);
  expect("pow(inf, -1)", nestcl_pow(INFINITY, -1.0), 0.0);
  expect("pow(inf, 0.5)", nestcl_pow(INFINITY, 0.5), INFINITY);
  expect("pow(-8, 1/3)", nestcl_pow(-8.0, 1.0 / 3.0), NAN);
  expect("pow(-2, 3)", nestcl_pow(-2.0, 3.0), -8.0);
  expect("pow(-2, 2^53+2)", nestcl_pow(-2.0, 0x1p53 + 2.0), INFINITY);
  expect("pow(-0.5, 2^53+2)", nestcl_pow(-0.5, 0x1p53 + 2.0), 0.0);
  expect("pow(-2, -1075)", nestcl_pow(-2.0, -1075.0), -0.0);
  expect("pow(-2, -1074)", nestcl_pow(-2.0, -1074.0), 0x1p-1074);
  expect("pow(-2, 1025)", nestcl_pow(-2.0, 1025.0), -INFINITY);
  expect("pow(2^-1074, 0.5)", nestcl_pow(0x1p-1074, 0.5), 0x1p-537);
  expect("pow(1e300, 1e300)", nestcl_pow(1e300, 1e300), INFINITY);
  expect("pow(1e300, -1e300)", nestcl_pow(1e300, -1e300), 0.0);
  expect("pow(1 + 2^-52, 2^62)", nestcl_pow(1.0 + 0x1p-52, 0x1p62), INFINITY); /* e^1024 */
  expect("pow(1 - 2^-53, 2^63)", nestcl_pow(1.0 - 0x1p-53, 0x1p63), 0.0); /* e^-1024 */
  expect("pow(-1, DBL_MAX)", nestcl_pow(-1.0, DBL_MAX), 1.0);
  expect("pow(-1, -3)", nestcl_pow(-1.0, -3.0), -1.0);
  expect("pow(-1, 0.5)", nestcl_pow(-1.0, 0.5), NAN);
  /* Exact results come out exact: the error before the last rounding is far below half an ulp. */
  for (int n = -1074; n <= 1023; ++n) {
    double want = ldexp(1.0, n);
    if (nestcl_pow(2.0, (double)n) != want || nestcl_pow(0.5, (double)-n) != want) {
      CHECK(0, "pow(2, %d) = %a, pow(0.5, %d) = %a, want %a", n, nestcl_pow(2.0, n), -n, nestcl_pow(0.5, -n), want);
      break;
    }
  }
  double p10 = 1.0;
  for (int n = 0; n <= 22; ++n, p10 *= 10.0) {
    CHECK(nestcl_pow(10.0, (double)n) == p10, "pow(10, %d) = %.17g", n, nestcl_pow(10.0, (double)n));
  }
  for (int n = 1; n < 40; ++n) {
    double x = 1.0 + n * 0.37;
    CHECK(nestcl_pow(x, 1.0) == x, "pow(%a, 1) = %a", x, nestcl_pow(x, 1.0));
    CHECK(nestcl_pow(x * x, 0.5) == x || fine_error(nestcl_pow(x * x, 0.5), sqrtl((long double)(x * x))) < 0.52,
          "pow(x^2, 0.5) for x = %a", x);
  }
  printf("special values and exact powers: checked\n");
}

static void test_accuracy(int f)
{
  size_t count = math_count(f, N_RANDOM);
  double *x = malloc(count * sizeof(double)), *y = malloc(count * sizeof(double));
  if (!x || !y) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  math_inputs(f, N_RANDOM, x, y);
  uint64_t hist[3] = {0, 0, 0}; /* distance to glibc: 0, 1, more */
  double worst = 0.0, worst_x = 0.0, worst_y = 0.0, lib_worst = 0.0;
  size_t fine_n = 0;
  for (size_t i = 0; i < count; ++i) {
    double got = math_apply(f, x[i], y[i]);
    double lib = glibc(f, x[i], y[i]);
    uint64_t d = ulp_distance(got, lib);
    hist[d < 2 ? d : 2]++;
    if (d > 1) {
      CHECK(0, "%s(%a, %a) = %a, glibc %a: %llu ulp apart", math_names[f], x[i], y[i], got, lib, (unsigned long long)d);
    }
    long double ref = reference(f, x[i], y[i]);
    if (isfinite(ref) && fabsl(ref) <= (long double)DBL_MAX) {
      double e = fine_error(got, ref);
      lib_worst = fmax(lib_worst, fine_error(lib, ref));
      fine_n++;
      if (e > worst) {
        worst = e;
        worst_x = x[i];
        worst_y = y[i];
      }
    }
  }
  double differ = (double)(hist[1] + hist[2]) / (double)count;
  printf("%-6s %zu args: vs glibc %llu same, %llu at 1 ulp, %llu beyond (%.3f%% differ); "
         "max error vs long double %.4f ulp (at %a, %a; %zu finite; glibc's: %.4f ulp)\n",
         math_names[f], count, (unsigned long long)hist[0], (unsigned long long)hist[1], (unsigned long long)hist[2],
         100.0 * differ, worst, worst_x, worst_y, fine_n, lib_worst);
  CHECK(worst <= max_error[f], "%s: max error %.4f ulp exceeds %.2f", math_names[f], worst, max_error[f]);
  /* A sloppy but sub-ulp implementation would differ from glibc in a quarter of the cases or more. */
  CHECK(differ < max_differ[f], "%s differs from glibc in %.3f%% of the arguments", math_names[f], 100.0 * differ);
  free(x);
  free(y);
}

int main(void)
{
  if (LDBL_MANT_DIG < 64) {
    printf("skipped: long double is not more precise than double here\n");
    return 77;
  }
  test_tables();
  test_specials();
  for (int f = 0; f < MATH_FUNCTIONS; ++f) {
    test_accuracy(f);
  }
  if (check_report())
    return 1;
  printf("ok\n");
  return 0;
}
