/*
 * NEST's random distributions (nestkernel/random_generators.h) for translated
 * models, compiled as C and as OpenCL C. A model's draw
 *
 *   V_.poisson_dist_( V_.rng_, param )      (pp_psc_delta's spike count)
 *   V_.gamma_dist_( V_.rng_ )               (its random dead time)
 *
 * becomes nestcl_dist_<kind>( &stream, parameters ) on a Philox stream keyed by
 * (seed, NESTCL_RNG_PURPOSE_MODEL + call site) with counter (global neuron id,
 * step) (nestcl_philox.h): the numbers do not depend on how neurons are split
 * over threads, streams and ranks, and the C loop and the OpenCL kernel give
 * the same ones (every operation below is exact or shared code: sqrt is
 * correctly rounded in both, log and exp are nestcl_math.h's and the libm
 * emulation's). The distributions are NEST's (the C++ standard's); the numbers
 * are not, since NEST draws from each VP's own generator: a model matches NEST
 * in distribution, not draw for draw.
 *
 * A stream holds NESTCL_RNG_MAX_BLOCKS blocks of four words; the loops below
 * stop there (a rejection sampler then returns its last candidate, with a
 * chance below 10^-40000 of getting there).
 */
#ifndef NESTCL_DIST_H
#define NESTCL_DIST_H

#ifndef __OPENCL_C_VERSION__
#include "nestcl_types.h"
#include "nestcl_math.h" /* nestcl_log, nestcl_log1p; in OpenCL these texts come before this one */
#include "nestcl_libm.h" /* nestcl_libm_exp, nestcl_libm_pow */
#include "nestcl_philox.h"
#endif

/* The stream of a model's draw at call site `site` for neuron id at step. */
NESTCL_INLINE nestcl_rng_stream nestcl_dist_stream(nestcl_u32 seed, nestcl_u32 site, nestcl_u64 id, nestcl_u64 step)
{
  return nestcl_stream_init(nestcl_rng_key(seed, NESTCL_RNG_PURPOSE_MODEL + site), nestcl_rng_counter(id, step));
}

/* std::uniform_real_distribution( a, b ): a + (b - a) u, u in [0, 1). */
NESTCL_INLINE double nestcl_dist_uniform(nestcl_rng_stream *s, double a, double b)
{
  return a + (b - a) * nestcl_stream_uniform(s);
}

/* std::normal_distribution( mean, stddev ): Marsaglia's polar method. */
NESTCL_INLINE double nestcl_dist_normal(nestcl_rng_stream *s, double mean, double stddev)
{
  return mean + stddev * nestcl_stream_normal(s);
}

/* std::lognormal_distribution( m, s ): exp of a normal( m, s ). */
NESTCL_INLINE double nestcl_dist_lognormal(nestcl_rng_stream *s, double m, double sd)
{
  return nestcl_libm_exp(m + sd * nestcl_stream_normal(s), 0);
}

/* std::exponential_distribution( lambda ): -log(1 - u) / lambda, finite since 1 - u > 0. */
NESTCL_INLINE double nestcl_dist_exponential(nestcl_rng_stream *s, double lambda)
{
  return -nestcl_log1p(-nestcl_stream_uniform(s)) / lambda;
}

/*
 * std::poisson_distribution( mean ): nestcl_philox.h's inversion in chunks of
 * mean <= NESTCL_POISSON_MAX_MU (a sum of Poisson draws is Poisson). A mean
 * that is not positive gives 0 (the standard requires mean > 0); one above
 * NESTCL_POISSON_MAX_MU * NESTCL_POISSON_MAX_CHUNKS (6.5e6, more than a
 * stream's uniforms) is drawn with that many chunks of a larger mu, where
 * exp(-mu) may underflow: such means are outside what the device draws.
 */
NESTCL_INLINE nestcl_u64 nestcl_dist_poisson(nestcl_rng_stream *s, double mean)
{
  if (!(mean > 0.0)) {
    return 0;
  }
  double c = ceil(mean / NESTCL_POISSON_MAX_MU);
  nestcl_u32 chunks = c > (double)NESTCL_POISSON_MAX_CHUNKS ? NESTCL_POISSON_MAX_CHUNKS : (nestcl_u32)c;
  const double mu = mean / (double)chunks;
  return (nestcl_u64)nestcl_stream_poisson(s, mu, nestcl_libm_exp(-mu, 0), chunks);
}

/*
 * std::gamma_distribution( alpha, beta ): Marsaglia and Tsang's method for
 * alpha >= 1 (d = alpha - 1/3, c = 1 / sqrt(9 d); x normal, v = (1 + c x)^3,
 * accept d v when log u < x^2 / 2 + d (1 - v + log v)), and for alpha < 1
 * gamma(alpha + 1) u^(1 / alpha); scaled by beta.
 */
NESTCL_INLINE double nestcl_dist_gamma_ge1(nestcl_rng_stream *s, double alpha)
{
  const double d = alpha - 1.0 / 3.0;
  const double c = 1.0 / sqrt(9.0 * d);
  double dv = d;
  for (nestcl_u32 attempt = 0; attempt < NESTCL_RNG_MAX_BLOCKS && s->blocks < NESTCL_RNG_MAX_BLOCKS; ++attempt) {
    const double x = nestcl_stream_normal(s);
    double v = 1.0 + c * x;
    if (v <= 0.0) {
      continue;
    }
    v = v * v * v;
    dv = d * v;
    const double u = nestcl_stream_uniform(s);
    if (u < 1.0 - 0.0331 * (x * x) * (x * x)) {
      return dv;
    }
    if (u > 0.0 && nestcl_log(u) < 0.5 * x * x + d * (1.0 - v + nestcl_log(v))) {
      return dv;
    }
  }
  return dv;
}

NESTCL_INLINE double nestcl_dist_gamma(nestcl_rng_stream *s, double alpha, double beta)
{
  if (!(alpha > 0.0)) {
    return 0.0;
  }
  if (alpha >= 1.0) {
    return nestcl_dist_gamma_ge1(s, alpha) * beta;
  }
  const double g = nestcl_dist_gamma_ge1(s, alpha + 1.0);
  const double u = nestcl_stream_uniform(s);
  return g * nestcl_libm_pow(u, 1.0 / alpha, 0) * beta;
}

/*
 * std::binomial_distribution( t, p ): inversion over chunks of at most 64
 * trials (a sum of binomials with the same p is binomial), each from
 * p(0) = (1 - p)^m and p(k) = p(k - 1) (m - k + 1) / k p / (1 - p); for p > 1/2
 * the failures are drawn (t - Binomial( t, 1 - p )), so (1 - p)^64 >= 2^-64.
 */
NESTCL_INLINE nestcl_u64 nestcl_dist_binomial(nestcl_rng_stream *s, nestcl_u64 t, double p)
{
  if (!(p > 0.0) || t == 0) {
    return 0;
  }
  if (p >= 1.0) {
    return t;
  }
  const int flip = p > 0.5;
  const double q = flip ? 1.0 - p : p;
  const double r = q / (1.0 - q);
  nestcl_u64 k_all = 0;
  for (nestcl_u64 done = 0; done < t;) {
    const nestcl_u64 m = t - done < 64 ? t - done : 64;
    const double u = nestcl_stream_uniform(s);
    double pk = nestcl_libm_pow(1.0 - q, (double)m, 0);
    double F = pk;
    nestcl_u64 k = 0;
    while (u >= F && k < m) {
      k += 1;
      pk = pk * (double)(m - k + 1) / (double)k * r;
      const double next = F + pk;
      if (next == F) {
        break;
      }
      F = next;
    }
    k_all += k;
    done += m;
  }
  return flip ? t - k_all : k_all;
}

/* One draw on the stream of (seed, call site, id, step): what translated models call. */
#define NESTCL_DIST_DRAW(KIND, RET, PARAMS, ARGS)                                                                      \
  NESTCL_INLINE RET nestcl_draw_##KIND(nestcl_u32 seed, nestcl_u32 site, nestcl_u64 id, nestcl_u64 step PARAMS)        \
  {                                                                                                                    \
    nestcl_rng_stream s = nestcl_dist_stream(seed, site, id, step);                                                    \
    return nestcl_dist_##KIND(&s ARGS);                                                                                \
  }
#define NESTCL_DIST_COMMA ,
NESTCL_DIST_DRAW(uniform, double, NESTCL_DIST_COMMA double a NESTCL_DIST_COMMA double b,
                 NESTCL_DIST_COMMA a NESTCL_DIST_COMMA b)
NESTCL_DIST_DRAW(normal, double, NESTCL_DIST_COMMA double a NESTCL_DIST_COMMA double b,
                 NESTCL_DIST_COMMA a NESTCL_DIST_COMMA b)
NESTCL_DIST_DRAW(lognormal, double, NESTCL_DIST_COMMA double a NESTCL_DIST_COMMA double b,
                 NESTCL_DIST_COMMA a NESTCL_DIST_COMMA b)
NESTCL_DIST_DRAW(exponential, double, NESTCL_DIST_COMMA double a, NESTCL_DIST_COMMA a)
NESTCL_DIST_DRAW(poisson, nestcl_u64, NESTCL_DIST_COMMA double a, NESTCL_DIST_COMMA a)
NESTCL_DIST_DRAW(gamma, double, NESTCL_DIST_COMMA double a NESTCL_DIST_COMMA double b,
                 NESTCL_DIST_COMMA a NESTCL_DIST_COMMA b)
NESTCL_DIST_DRAW(binomial, nestcl_u64, NESTCL_DIST_COMMA nestcl_u64 a NESTCL_DIST_COMMA double b,
                 NESTCL_DIST_COMMA a NESTCL_DIST_COMMA b)
#undef NESTCL_DIST_COMMA
#undef NESTCL_DIST_DRAW

#endif /* NESTCL_DIST_H */
