/*
 * Unit test of kernels_templates/nestcl_philox.h on the C path: Philox-4x32-10
 * against Random123's published known-answer vectors, the counter layout and
 * streams, the accuracy of the portable logarithm against libm, and the
 * statistics of the uniform, normal and Poisson draws (so that a generator that
 * is deterministic but wrong still fails). The OpenCL twin of these draws is
 * compared bit for bit in test_numeric_opencl.c.
 */
#include "nestcl_check.h"
#include "nestcl_philox.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Random123 tests/kat_vectors, the three "philox4x32 10" lines: counter, key, expected. */
static const uint32_t kat[3][10] = {
  {0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu,
   0x9b00dbd8u},
  {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0x408f276du, 0x41c83b0eu, 0xa20bc7c6u,
   0x6d5451fdu},
  {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u, 0xd16cfe09u, 0x94fdccebu, 0x5001e420u,
   0x24126ea1u},
};

static void test_kat(void)
{
  for (int t = 0; t < 3; ++t) {
    nestcl_philox_ctr c;
    nestcl_philox_key k;
    memcpy(c.v, &kat[t][0], sizeof c.v);
    memcpy(k.v, &kat[t][4], sizeof k.v);
    nestcl_philox_ctr r = nestcl_philox4x32_10(c, k);
    for (int w = 0; w < 4; ++w) {
      CHECK(r.v[w] == kat[t][6 + w], "KAT %d word %d: got %08x, want %08x", t, w, r.v[w], kat[t][6 + w]);
    }
  }
}

static void test_counter_layout(void)
{
  nestcl_philox_ctr c = nestcl_rng_counter(UINT64_C(0x0123456789abcdef), UINT64_C(0x0000fedc87654321));
  CHECK(c.v[0] == 0x89abcdefu && c.v[1] == 0x01234567u && c.v[2] == 0x87654321u && c.v[3] == 0xfedcu,
        "counter layout %08x %08x %08x %08x", c.v[0], c.v[1], c.v[2], c.v[3]);
  nestcl_philox_ctr b = nestcl_rng_counter_block(c, 7);
  CHECK(b.v[3] == (0xfedcu | (7u << 16)) && b.v[2] == c.v[2], "block field %08x", b.v[3]);

  /* A stream hands out the words of blocks 0, 1, 2, ... of its (id, step). */
  nestcl_philox_key key = nestcl_rng_key(12345u, NESTCL_RNG_PURPOSE_TEST);
  nestcl_rng_stream s = nestcl_stream_init(key, c);
  for (uint32_t blk = 0; blk < 5; ++blk) {
    nestcl_philox_ctr want = nestcl_philox4x32_10(nestcl_rng_counter_block(c, blk), key);
    for (int w = 0; w < 4; ++w) {
      uint32_t got = nestcl_stream_u32(&s);
      CHECK(got == want.v[w], "stream block %u word %d", blk, w);
    }
  }
  CHECK(s.blocks == 5, "stream counted %u blocks", s.blocks);

  /* Seed, purpose, id and step each change the block. */
  nestcl_philox_ctr c0 = nestcl_rng_counter(1, 2);
  nestcl_philox_ctr base = nestcl_philox4x32_10(c0, nestcl_rng_key(1, 1));
  nestcl_philox_ctr v1 = nestcl_philox4x32_10(c0, nestcl_rng_key(2, 1));
  nestcl_philox_ctr v2 = nestcl_philox4x32_10(c0, nestcl_rng_key(1, 2));
  nestcl_philox_ctr v3 = nestcl_philox4x32_10(nestcl_rng_counter(2, 2), nestcl_rng_key(1, 1));
  nestcl_philox_ctr v4 = nestcl_philox4x32_10(nestcl_rng_counter(1, 3), nestcl_rng_key(1, 1));
  CHECK(memcmp(&base, &v1, sizeof base) && memcmp(&base, &v2, sizeof base) && memcmp(&base, &v3, sizeof base) &&
          memcmp(&base, &v4, sizeof base),
        "seed/purpose/id/step must all select different blocks");

  CHECK(nestcl_u01_53(0u, 0u) == 0.0, "u01(0) must be 0");
  CHECK(nestcl_u01_53(0xffffffffu, 0xffffffffu) == 1.0 - 0x1p-53, "u01(max) must be 1 - 2^-53");
}

static double ulp_of(double x)
{
  double a = fabs(x);
  return nextafter(a, INFINITY) - a;
}

/* Error of nestcl_log in units of the last place of libm's result. */
static double log_ulp_error(double x)
{
  double ref = log(x);
  double got = nestcl_log(x);
  if (ref == 0.0) {
    return got == 0.0 ? 0.0 : INFINITY;
  }
  return fabs(got - ref) / ulp_of(ref);
}

static void test_log(void)
{
  double worst = 0.0, worst_x = 0.0;
  long over_half = 0, n = 0;
  nestcl_philox_key key = nestcl_rng_key(7u, NESTCL_RNG_PURPOSE_TEST);
  for (uint32_t i = 0; i < 400000; ++i) {
    nestcl_philox_ctr r = nestcl_philox4x32_10(nestcl_rng_counter(i, 99), key);
    double xs[4];
    /* Any positive normal double: random exponent and mantissa. */
    uint64_t bits = ((uint64_t)(r.v[0] % 2046u + 1u) << 52) | (((uint64_t)r.v[1] << 32 | r.v[2]) >> 12);
    xs[0] = nestcl_bits_f64(bits);
    /* The polar method's range (0, 1), and the hardest region, close to 1. */
    xs[1] = nestcl_u01_53(r.v[2], r.v[3]);
    xs[2] = 1.0 + (nestcl_u01_53(r.v[3], r.v[0]) - 0.5) * 0x1p-8;
    xs[3] = 0.70 + 0.72 * nestcl_u01_53(r.v[1], r.v[3]);
    for (int j = 0; j < 4; ++j) {
      if (!(xs[j] > 0.0)) {
        continue;
      }
      double e = log_ulp_error(xs[j]);
      n++;
      if (e > 0.5) {
        over_half++;
      }
      if (e > worst) {
        worst = e;
        worst_x = xs[j];
      }
    }
  }
  printf("nestcl_log vs libm log: %ld inputs, max distance %.3f ulp (at %a), %.2f%% differ in the last bit\n", n, worst,
         worst_x, 100.0 * (double)over_half / (double)n);
  CHECK(worst <= 1.0, "nestcl_log max error %.3f ulp exceeds 1 ulp at %a", worst, worst_x);

  CHECK(nestcl_log(1.0) == 0.0, "log(1) must be exactly 0");
  CHECK(nestcl_log(0.0) == -INFINITY, "log(0) must be -inf");
  CHECK(isnan(nestcl_log(-1.0)) && isnan(nestcl_log(NAN)), "log of negative or NaN must be NaN");
  CHECK(nestcl_log(INFINITY) == INFINITY, "log(inf) must be inf");
  double sub = 0x1.8p-1060; /* subnormal */
  CHECK(log_ulp_error(sub) <= 1.0, "subnormal log error %.3f ulp", log_ulp_error(sub));
  CHECK(log_ulp_error(0x1p-1074) <= 1.0, "log of the smallest subnormal");
  CHECK(log_ulp_error(0x1.fffffffffffffp+1023) <= 1.0, "log of DBL_MAX");
}

#define N_DRAWS 1000000

static void moments(const double *x, int n, double *mean, double *var)
{
  double s = 0.0, s2 = 0.0;
  for (int i = 0; i < n; ++i) {
    s += x[i];
  }
  *mean = s / n;
  for (int i = 0; i < n; ++i) {
    s2 += (x[i] - *mean) * (x[i] - *mean);
  }
  *var = s2 / (n - 1);
}

static void test_uniform_normal(double *buf)
{
  nestcl_philox_key key = nestcl_rng_key(20231121u, NESTCL_RNG_PURPOSE_TEST);
  double mean, var;
  int out_of_range = 0;
  for (int i = 0; i < N_DRAWS; ++i) {
    buf[i] = nestcl_rng_uniform(key, nestcl_rng_counter((uint64_t)i, 5));
    out_of_range += !(buf[i] >= 0.0 && buf[i] < 1.0);
  }
  moments(buf, N_DRAWS, &mean, &var);
  printf("uniform: mean %.6f var %.6f\n", mean, var);
  CHECK(out_of_range == 0, "%d uniforms outside [0, 1)", out_of_range);
  CHECK(fabs(mean - 0.5) < 1.5e-3, "uniform mean %.6f", mean); /* 5 sigma */
  CHECK(fabs(var - 1.0 / 12.0) < 5e-4, "uniform variance %.6f", var);

  long inside1 = 0, tail2 = 0;
  double skew = 0.0, kurt = 0.0;
  for (int i = 0; i < N_DRAWS; ++i) {
    buf[i] = nestcl_rng_normal(key, nestcl_rng_counter((uint64_t)i, 6));
    inside1 += fabs(buf[i]) < 1.0;
    tail2 += buf[i] < -1.959963984540054;
  }
  moments(buf, N_DRAWS, &mean, &var);
  for (int i = 0; i < N_DRAWS; ++i) {
    double d = (buf[i] - mean) / sqrt(var);
    skew += d * d * d;
    kurt += d * d * d * d;
  }
  skew /= N_DRAWS;
  kurt /= N_DRAWS;
  double p1 = (double)inside1 / N_DRAWS, p2 = (double)tail2 / N_DRAWS;
  printf("normal: mean %.6f var %.6f skew %.4f kurtosis %.4f P(|z|<1) %.5f P(z<-1.96) %.5f\n", mean, var, skew, kurt,
         p1, p2);
  CHECK(fabs(mean) < 5e-3, "normal mean %.6f", mean);
  CHECK(fabs(var - 1.0) < 7e-3, "normal variance %.6f", var);
  CHECK(fabs(skew) < 0.015, "normal skewness %.4f", skew);
  CHECK(fabs(kurt - 3.0) < 0.05, "normal kurtosis %.4f", kurt);
  CHECK(fabs(p1 - 0.682689492137) < 2.5e-3, "P(|z| < 1) = %.5f", p1);
  CHECK(fabs(p2 - 0.025) < 8e-4, "P(z < -1.96) = %.5f", p2);
}

static void test_poisson(double *buf)
{
  const double lambdas[] = {0.01, 2.09, 20.0, 123.4};
  nestcl_philox_key key = nestcl_rng_key(99u, NESTCL_RNG_PURPOSE_POISSON);
  for (size_t l = 0; l < sizeof lambdas / sizeof lambdas[0]; ++l) {
    nestcl_poisson_param p = {0.0, 1.0, 1u};
    CHECK(nestcl_poisson_setup(lambdas[l], &p) == 0, "setup %g", lambdas[l]);
    long zeros = 0;
    for (int i = 0; i < N_DRAWS; ++i) {
      uint32_t k = nestcl_rng_poisson(key, nestcl_rng_counter((uint64_t)i, l), p.mu, p.exp_neg_mu, p.chunks);
      buf[i] = (double)k;
      zeros += k == 0;
    }
    double mean, var;
    moments(buf, N_DRAWS, &mean, &var);
    double p0 = (double)zeros / N_DRAWS, want_p0 = exp(-lambdas[l]);
    double se_mean = sqrt(lambdas[l] / N_DRAWS);
    printf("poisson lambda %g (%u chunks of %g): mean %.5f var %.5f P(0) %.6f (exact %.6f)\n", lambdas[l], p.chunks,
           p.mu, mean, var, p0, want_p0);
    CHECK(fabs(mean - lambdas[l]) < 5 * se_mean, "poisson %g mean %.5f", lambdas[l], mean);
    /* sd of the sample variance of a Poisson: sqrt((lambda + 2 lambda^2) / n) */
    CHECK(fabs(var - lambdas[l]) < 5 * sqrt((lambdas[l] + 2 * lambdas[l] * lambdas[l]) / N_DRAWS) + 1e-9,
          "poisson %g variance %.5f", lambdas[l], var);
    CHECK(fabs(p0 - want_p0) < 5 * sqrt(want_p0 * (1 - want_p0) / N_DRAWS) + 1e-9, "poisson %g P(0) %.6f", lambdas[l],
          p0);
  }
  nestcl_poisson_param p = {0.0, 1.0, 1u};
  CHECK(nestcl_poisson_setup(123.4, &p) == 0 && p.chunks == 3 && p.mu <= NESTCL_POISSON_MAX_MU, "chunking");
  CHECK(nestcl_poisson_setup(0.0, &p) == 0 &&
          nestcl_rng_poisson(nestcl_rng_key(1, 1), nestcl_rng_counter(1, 1), p.mu, p.exp_neg_mu, p.chunks) == 0,
        "lambda 0 must give 0");
  CHECK(nestcl_poisson_setup(-1.0, &p) == -1 && nestcl_poisson_setup(NAN, &p) == -1 &&
          nestcl_poisson_setup(1e9, &p) == -1,
        "bad lambdas must be rejected");
  /* u within rounding of 1 must still end the search. */
  CHECK(nestcl_poisson_invert(1.0 - 0x1p-53, 50.0, exp(-50.0)) < 200, "inversion tail");
}

int main(void)
{
  double *buf = malloc(sizeof(double) * N_DRAWS);
  if (!buf) {
    fprintf(stderr, "error: out of memory\n");
    return 1;
  }
  test_kat();
  test_counter_layout();
  test_log();
  test_uniform_normal(buf);
  test_poisson(buf);
  free(buf);
  if (check_report())
    return 1;
  printf("ok\n");
  return 0;
}
