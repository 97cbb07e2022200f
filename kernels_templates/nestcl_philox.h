/*
 * nestcl_philox.h: the project's counter-based random numbers. Philox-4x32-10
 * (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3",
 * SC'11) and the draws derived from it: uniform, standard normal and Poisson.
 * It is compiled as C and as OpenCL C; every derived draw uses integer operations
 * and the IEEE operations + - * / and sqrt only, all of which are correctly
 * rounded on both paths, so a draw is bit-identical on the CPU and on any OpenCL
 * device. That is why the logarithm needed by the normal draw is the project's own
 * (nestcl_log, in nestcl_math.h) instead of libm's or the OpenCL built-in,
 * whose results may differ in the last bit.
 *
 * Keying (docs/architecture.md, "Determinism and random numbers"): a random stream is named by
 *   key     = (seed, purpose)            key[0] = 32-bit seed, key[1] = purpose
 *   counter = (id, step, block)          v[0] = id bits 0..31, v[1] = id bits 32..63,
 *                                        v[2] = step bits 0..31,
 *                                        v[3] = step bits 32..47 | block << 16
 * "id" is the global id of whatever draws (a neuron's global node id, a
 * synapse's global index for connectivity), "step" the simulation step (or any
 * second coordinate, < 2^48), and "block" numbers the successive Philox blocks
 * (4 words each) of one (id, step) stream, for draws that need more than one
 * block. A stream therefore never depends on the VP, thread or device that
 * simulates the neuron. A stream holds 2^16 blocks (the block field wraps after
 * that); the loops below stay within it.
 *
 * Derived draws and what they consume, starting at the block that ctr names
 * (block 0 for a counter from nestcl_rng_counter):
 *   nestcl_rng_uniform   [0, 1), 53 bits: words 0 and 1 of that block (2 and 3 unused).
 *   nestcl_rng_normal    Marsaglia's polar method: one block per attempt (two
 *                        uniforms), blocks b, b+1, ... until accepted; 4/pi = 1.27
 *                        blocks on average. Returns the first of the pair.
 *   nestcl_rng_poisson   inversion by sequential search, one uniform (two words)
 *                        per chunk, two chunks per block; see nestcl_poisson_setup.
 * The nestcl_stream_* forms draw from a nestcl_rng_stream that hands out the
 * words of blocks b, b+1, ... in order, two words per uniform, so several draws
 * can share one (id, step) stream and each consumes exactly what it needs.
 *
 * Accuracy: uniforms are multiples of 2^-53. The normal uses nestcl_log, within
 * 1 ulp of glibc's log (it differs in the last bit for about 7% of arguments in
 * (0, 1)); sqrt and / are correctly rounded in C and in OpenCL C (double), so
 * each normal is within a few ulp of the exact transform of its uniforms and,
 * above all, the same bits everywhere. The Poisson draw is exact in
 * distribution up to the rounding of its cumulative sums (1e-16).
 */
#ifndef NESTCL_PHILOX_H
#define NESTCL_PHILOX_H

#ifndef __OPENCL_C_VERSION__
#include "nestcl_types.h"
#include "nestcl_math.h" /* nestcl_log; in OpenCL its text comes before this one */
#endif

/* Purposes (key[1]). Assigned here so that no two users share a stream. */
#define NESTCL_RNG_PURPOSE_INIT 1u /* randomised initial state (V_m, ...) */
#define NESTCL_RNG_PURPOSE_POISSON 2u /* poisson_generator input per target and step */
#define NESTCL_RNG_PURPOSE_CONNECT 3u /* connectivity (targets, weights, delays) */
#define NESTCL_RNG_PURPOSE_TEST 15u /* tests */
#define NESTCL_RNG_PURPOSE_MODEL 16u /* first purpose for draws inside translated models */

/* Multipliers and Weyl key increments of Philox-4x32 (from the paper). */
#define NESTCL_PHILOX_M0 0xD2511F53u
#define NESTCL_PHILOX_M1 0xCD9E8D57u
#define NESTCL_PHILOX_W0 0x9E3779B9u
#define NESTCL_PHILOX_W1 0xBB67AE85u

#define NESTCL_RNG_BLOCK_SHIFT 16
#define NESTCL_RNG_MAX_BLOCKS 65536u

typedef struct nestcl_philox_ctr {
  nestcl_u32 v[4];
} nestcl_philox_ctr;

typedef struct nestcl_philox_key {
  nestcl_u32 v[2];
} nestcl_philox_key;

NESTCL_INLINE nestcl_philox_ctr nestcl_philox4x32_round(nestcl_philox_ctr c, nestcl_philox_key k)
{
  nestcl_u64 p0 = (nestcl_u64)NESTCL_PHILOX_M0 * (nestcl_u64)c.v[0];
  nestcl_u64 p1 = (nestcl_u64)NESTCL_PHILOX_M1 * (nestcl_u64)c.v[2];
  nestcl_philox_ctr r;
  r.v[0] = (nestcl_u32)(p1 >> 32) ^ c.v[1] ^ k.v[0];
  r.v[1] = (nestcl_u32)p1;
  r.v[2] = (nestcl_u32)(p0 >> 32) ^ c.v[3] ^ k.v[1];
  r.v[3] = (nestcl_u32)p0;
  return r;
}

/* The Philox-4x32 bijection with 10 rounds: the key is bumped between rounds. */
NESTCL_INLINE nestcl_philox_ctr nestcl_philox4x32_10(nestcl_philox_ctr c, nestcl_philox_key k)
{
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k.v[0] += NESTCL_PHILOX_W0;
      k.v[1] += NESTCL_PHILOX_W1;
    }
    c = nestcl_philox4x32_round(c, k);
  }
  return c;
}

NESTCL_INLINE nestcl_philox_key nestcl_rng_key(nestcl_u32 seed, nestcl_u32 purpose)
{
  nestcl_philox_key k;
  k.v[0] = seed;
  k.v[1] = purpose;
  return k;
}

/* Counter of block 0 of the (id, step) stream; step must be below 2^48. */
NESTCL_INLINE nestcl_philox_ctr nestcl_rng_counter(nestcl_u64 id, nestcl_u64 step)
{
  nestcl_philox_ctr c;
  c.v[0] = (nestcl_u32)id;
  c.v[1] = (nestcl_u32)(id >> 32);
  c.v[2] = (nestcl_u32)step;
  c.v[3] = (nestcl_u32)(step >> 32) & 0xffffu;
  return c;
}

/* The same stream's counter for block b (< 2^16). */
NESTCL_INLINE nestcl_philox_ctr nestcl_rng_counter_block(nestcl_philox_ctr c, nestcl_u32 b)
{
  c.v[3] = (c.v[3] & 0xffffu) | (b << NESTCL_RNG_BLOCK_SHIFT);
  return c;
}

/*
 * 53 random bits as a double in [0, 1): 27 bits of hi and 26 of lo form an
 * integer below 2^53, which converts exactly; the scaling by 2^-53 is exact too.
 */
NESTCL_INLINE double nestcl_u01_53(nestcl_u32 hi, nestcl_u32 lo)
{
  nestcl_u64 m = ((nestcl_u64)(hi >> 5) << 26) | (nestcl_u64)(lo >> 6);
  return (double)m * (1.0 / 9007199254740992.0);
}

/* Block 0 of (key, ctr) as a uniform in [0, 1): consumes words 0 and 1. */
NESTCL_INLINE double nestcl_rng_uniform(nestcl_philox_key key, nestcl_philox_ctr ctr)
{
  nestcl_philox_ctr b = nestcl_philox4x32_10(ctr, key);
  return nestcl_u01_53(b.v[0], b.v[1]);
}

/* Successive words of the blocks of one (id, step) stream. */
typedef struct nestcl_rng_stream {
  nestcl_philox_key key;
  nestcl_philox_ctr ctr; /* counter of the next block to generate */
  nestcl_philox_ctr buf; /* the current block */
  nestcl_u32 pos; /* next unused word of buf; 4: buf is used up */
  nestcl_u32 blocks; /* blocks generated so far */
} nestcl_rng_stream;

NESTCL_INLINE nestcl_rng_stream nestcl_stream_init(nestcl_philox_key key, nestcl_philox_ctr ctr)
{
  nestcl_rng_stream s;
  s.key = key;
  s.ctr = ctr;
  s.buf = ctr;
  s.pos = 4;
  s.blocks = 0;
  return s;
}

NESTCL_INLINE nestcl_u32 nestcl_stream_u32(nestcl_rng_stream *s)
{
  if (s->pos == 4) {
    s->buf = nestcl_philox4x32_10(s->ctr, s->key);
    s->ctr.v[3] += 1u << NESTCL_RNG_BLOCK_SHIFT; /* next block of the same (id, step) */
    s->blocks += 1;
    s->pos = 0;
  }
  nestcl_u32 w = s->buf.v[s->pos];
  s->pos += 1;
  return w;
}

/* Two words: the first gives the high bits. */
NESTCL_INLINE double nestcl_stream_uniform(nestcl_rng_stream *s)
{
  nestcl_u32 hi = nestcl_stream_u32(s);
  nestcl_u32 lo = nestcl_stream_u32(s);
  return nestcl_u01_53(hi, lo);
}

/*
 * Marsaglia's polar method: (x, y) uniform in the square until 0 < r = x^2 + y^2
 * < 1, then x sqrt(-2 ln r / r) is standard normal. 2u - 1 is exact for 53-bit
 * u. The attempt bound keeps the loop finite on devices; reaching it (chance
 * below 10^-43000) returns 0.
 */
NESTCL_INLINE double nestcl_stream_normal(nestcl_rng_stream *s)
{
  for (nestcl_u32 attempt = 0; attempt < NESTCL_RNG_MAX_BLOCKS; ++attempt) {
    double x = 2.0 * nestcl_stream_uniform(s) - 1.0;
    double y = 2.0 * nestcl_stream_uniform(s) - 1.0;
    double r = x * x + y * y;
    if (r < 1.0 && r > 0.0) {
      return x * sqrt(-2.0 * nestcl_log(r) / r);
    }
  }
  return 0.0;
}

NESTCL_INLINE double nestcl_rng_normal(nestcl_philox_key key, nestcl_philox_ctr ctr)
{
  nestcl_rng_stream s = nestcl_stream_init(key, ctr);
  return nestcl_stream_normal(&s);
}

/*
 * Poisson by inversion: the smallest k with u < F(k), the cumulative
 * distribution built term by term from p(0) = exp(-mu) (computed on the host, so
 * no exp is evaluated here) and p(k) = p(k-1) mu / k. The only departure from
 * the exact distribution is the rounding of F (relative 1e-16). Once the terms
 * stop changing F the search ends, so the loop is finite even for u within
 * rounding of 1. Work is proportional to mu, hence the chunks: a draw for
 * lambda is the sum of 'chunks' independent Poisson(mu) draws with
 * mu = lambda / chunks <= NESTCL_POISSON_MAX_MU, which has exactly the
 * Poisson(lambda) distribution. Each chunk consumes one uniform (two words).
 */
#define NESTCL_POISSON_MAX_MU 50.0
/* Two uniforms per block: the most chunks one (id, step) stream can feed. */
#define NESTCL_POISSON_MAX_CHUNKS (2u * NESTCL_RNG_MAX_BLOCKS)

NESTCL_INLINE nestcl_u32 nestcl_poisson_invert(double u, double mu, double exp_neg_mu)
{
  nestcl_u32 k = 0;
  double p = exp_neg_mu;
  double F = p;
  while (u >= F) {
    k += 1;
    p = p * mu / (double)k;
    double next = F + p;
    if (next == F) {
      break;
    }
    F = next;
  }
  return k;
}

NESTCL_INLINE nestcl_u32 nestcl_stream_poisson(nestcl_rng_stream *s, double mu, double exp_neg_mu, nestcl_u32 chunks)
{
  nestcl_u32 n = 0;
  for (nestcl_u32 c = 0; c < chunks; ++c) {
    n += nestcl_poisson_invert(nestcl_stream_uniform(s), mu, exp_neg_mu);
  }
  return n;
}

NESTCL_INLINE nestcl_u32 nestcl_rng_poisson(nestcl_philox_key key, nestcl_philox_ctr ctr, double mu, double exp_neg_mu,
                                            nestcl_u32 chunks)
{
  nestcl_rng_stream s = nestcl_stream_init(key, ctr);
  return nestcl_stream_poisson(&s, mu, exp_neg_mu, chunks);
}

#ifndef __OPENCL_C_VERSION__
/*
 * Host side: the parameters of nestcl_rng_poisson for mean lambda. exp() runs
 * here, once, and its result travels to the kernels as a value (pass it as a
 * kernel argument, or as -D text printed with %.17g, which round-trips).
 * Returns 0, or -1 for a lambda that is negative, not finite, or above
 * NESTCL_POISSON_MAX_MU * NESTCL_POISSON_MAX_CHUNKS = 6.5e6 (one stream's uniforms).
 */
typedef struct nestcl_poisson_param {
  double mu;
  double exp_neg_mu;
  nestcl_u32 chunks;
} nestcl_poisson_param;

static inline int nestcl_poisson_setup(double lambda, nestcl_poisson_param *p)
{
  if (!(lambda >= 0.0) || lambda > NESTCL_POISSON_MAX_MU * (double)NESTCL_POISSON_MAX_CHUNKS) {
    return -1;
  }
  double c = ceil(lambda / NESTCL_POISSON_MAX_MU);
  p->chunks = c < 1.0 ? 1u : (nestcl_u32)c;
  p->mu = lambda / (double)p->chunks;
  p->exp_neg_mu = exp(-p->mu);
  return 0;
}
#endif

#endif /* NESTCL_PHILOX_H */
