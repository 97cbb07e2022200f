/*
 * Unit test of kernels_templates/nestcl_fixed.h on the C path: the rounding of
 * the double -> fixed conversion (against llround, which rounds half away from
 * zero like the header), saturation, the overflow checker, and the property the
 * format exists for: 10^5 mixed-sign weights summed in 10 shuffled orders give
 * bit-identical totals, serially and with OpenMP atomics from several threads.
 * The double sums of the same orders are printed for contrast (they usually
 * differ, which is why rings are not accumulated in floating point).
 */
#include "nestcl_check.h"
#include "nestcl_fixed.h"
#include "nestcl_philox.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_WEIGHTS 100000
#define N_ORDERS 10

static void test_conversion(void)
{
  const double q = 0x1p-32;
  CHECK(nestcl_fixed_from_double(1.0) == INT64_C(4294967296), "1.0");
  CHECK(nestcl_fixed_from_double(0.5 * q) == 1 && nestcl_fixed_from_double(-0.5 * q) == -1, "ties away from zero");
  CHECK(nestcl_fixed_from_double(2.5 * q) == 3 && nestcl_fixed_from_double(-2.5 * q) == -3, "ties away from zero");
  CHECK(nestcl_fixed_from_double(0.49999999999 * q) == 0, "below half rounds down");
  CHECK(nestcl_fixed_from_double(-1.25 * q) == -1 && nestcl_fixed_from_double(1.75 * q) == 2, "nearest");
  CHECK(nestcl_fixed_from_double(NAN) == 0, "NaN -> 0");
  CHECK(nestcl_fixed_from_double(INFINITY) == INT64_MAX && nestcl_fixed_from_double(-INFINITY) == INT64_MIN,
        "saturation at infinity");
  CHECK(nestcl_fixed_from_double(3e9) == INT64_MAX && nestcl_fixed_from_double(-2147483648.0) == INT64_MIN,
        "saturation at the range");
  CHECK(nestcl_fixed_to_double(nestcl_fixed_from_double(87.8125)) == 87.8125, "exact round trip");
  CHECK(fabs(nestcl_fixed_to_double(nestcl_fixed_from_double(87.81)) - 87.81) <= 0x1p-33, "round trip error");

  /* Random magnitudes over the whole range against llround (half away from zero). */
  nestcl_philox_key key = nestcl_rng_key(3u, NESTCL_RNG_PURPOSE_TEST);
  long mismatches = 0;
  for (uint32_t i = 0; i < 200000; ++i) {
    nestcl_philox_ctr r = nestcl_philox4x32_10(nestcl_rng_counter(i, 1), key);
    double mag = ldexp(nestcl_u01_53(r.v[0], r.v[1]), (int)(r.v[2] % 64u) - 33); /* up to 2^30 */
    double x = (r.v[3] & 1u) ? -mag : mag;
    if (i % 4 == 0) { /* exact ties */
      x = ((double)(int64_t)(r.v[1] % 1000000u) + 0.5) * ((r.v[3] & 2u) ? -0x1p-32 : 0x1p-32);
    }
    long long want = llround(x * 4294967296.0);
    if (nestcl_fixed_from_double(x) != want) {
      if (mismatches++ < 5) {
        fprintf(stderr, "x=%a: got %lld want %lld\n", x, (long long)nestcl_fixed_from_double(x), want);
      }
    }
  }
  CHECK(mismatches == 0, "%ld conversions differ from llround", mismatches);
}

static void test_fits(void)
{
  CHECK(nestcl_fixed_fits(439.0, 11250), "hpc_benchmark weights must fit");
  CHECK(!nestcl_fixed_fits(1e6, 10000), "1e10 per slot must not fit");
  CHECK(nestcl_fixed_fits(1.0, (UINT64_C(1) << 31) - 1), "2^63 - 2^32 fits");
  CHECK(!nestcl_fixed_fits(1.0, UINT64_C(1) << 31), "2^63 does not fit");
  CHECK(nestcl_fixed_fits(0.0, UINT64_MAX) && nestcl_fixed_fits(5.0, 0), "nothing to add always fits");
  CHECK(!nestcl_fixed_fits(-1.0, 1) && !nestcl_fixed_fits(NAN, 1) && !nestcl_fixed_fits(INFINITY, 1),
        "invalid magnitudes");
  CHECK(!nestcl_fixed_fits(3e9, 1), "one weight above the range");
}

/* Weights like a network's: mixed sign, magnitudes 0..300 with all 53 bits used. */
static void make_weights(double *w, int64_t *wf)
{
  nestcl_philox_key key = nestcl_rng_key(11u, NESTCL_RNG_PURPOSE_TEST);
  for (uint32_t i = 0; i < N_WEIGHTS; ++i) {
    nestcl_philox_ctr r = nestcl_philox4x32_10(nestcl_rng_counter(i, 0), key);
    double mag = 300.0 * nestcl_u01_53(r.v[0], r.v[1]);
    w[i] = (r.v[2] & 1u) ? -mag : mag;
    wf[i] = nestcl_fixed_from_double(w[i]);
  }
}

/* Fisher-Yates driven by Philox, so the orders are reproducible. */
static void shuffle(uint32_t *perm, uint32_t order)
{
  nestcl_rng_stream s = nestcl_stream_init(nestcl_rng_key(12u, NESTCL_RNG_PURPOSE_TEST), nestcl_rng_counter(order, 0));
  for (uint32_t i = 0; i < N_WEIGHTS; ++i) {
    perm[i] = i;
  }
  /* 10^5 uniforms take 50000 blocks, within one stream's 2^16. */
  for (uint32_t i = N_WEIGHTS - 1; i > 0; --i) {
    uint32_t j = (uint32_t)(nestcl_stream_uniform(&s) * (double)(i + 1)); /* 0..i */
    uint32_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
}

static void test_shuffled_sums(const double *w, const int64_t *wf, uint32_t *perm)
{
  int64_t totals[N_ORDERS], atomic_totals[N_ORDERS];
  double dtotals[N_ORDERS];
  for (uint32_t o = 0; o < N_ORDERS; ++o) {
    shuffle(perm, o);
    int64_t acc = 0;
    double dacc = 0.0;
    for (uint32_t i = 0; i < N_WEIGHTS; ++i) {
      nestcl_fixed_add(&acc, wf[perm[i]]);
      dacc += w[perm[i]];
    }
    totals[o] = acc;
    dtotals[o] = dacc;

    int64_t shared = 0;
#pragma omp parallel for schedule(dynamic, 97)
    for (int i = 0; i < N_WEIGHTS; ++i) {
      nestcl_fixed_add_atomic(&shared, wf[perm[i]]);
    }
    atomic_totals[o] = shared;
  }
  int distinct_double = 0;
  for (int o = 0; o < N_ORDERS; ++o) {
    CHECK(totals[o] == totals[0], "order %d: fixed total %lld != %lld", o, (long long)totals[o], (long long)totals[0]);
    CHECK(atomic_totals[o] == totals[0], "order %d: atomic total %lld != %lld", o, (long long)atomic_totals[o],
          (long long)totals[0]);
    int seen = 0;
    for (int p = 0; p < o; ++p) {
      seen |= dtotals[p] == dtotals[o];
    }
    distinct_double += !seen;
  }
  /* The exact sum of the rounded weights, in a wider type, as an independent reference. */
  long double exact = 0.0L;
  for (uint32_t i = 0; i < N_WEIGHTS; ++i) {
    exact += (long double)wf[i];
  }
  CHECK((long double)totals[0] == exact, "fixed total differs from the long double sum");
  printf("fixed-point total %lld (= %.17g) in all %d orders, serial and OpenMP-atomic\n", (long long)totals[0],
         nestcl_fixed_to_double(totals[0]), N_ORDERS);
  printf("double sums of the same orders: %d distinct values, e.g. %.17g and %.17g\n", distinct_double, dtotals[0],
         dtotals[1]);
  /* Each weight is rounded by at most 2^-33; the double sum's own error is far smaller. */
  CHECK(fabs(nestcl_fixed_to_double(totals[0]) - dtotals[0]) < N_WEIGHTS * 0x1p-33 + 1e-8,
        "fixed and double totals too far apart");
}

int main(void)
{
  double *w = malloc(sizeof(double) * N_WEIGHTS);
  int64_t *wf = malloc(sizeof(int64_t) * N_WEIGHTS);
  uint32_t *perm = malloc(sizeof(uint32_t) * N_WEIGHTS);
  if (!w || !wf || !perm) {
    fprintf(stderr, "error: out of memory\n");
    return 1;
  }
  test_conversion();
  test_fits();
  make_weights(w, wf);
  test_shuffled_sums(w, wf, perm);
  free(w);
  free(wf);
  free(perm);
  if (check_report())
    return 1;
  printf("ok\n");
  return 0;
}
