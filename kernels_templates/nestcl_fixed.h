/*
 * nestcl_fixed.h: 64-bit fixed-point accumulation for ring buffers (docs/architecture.md,
 * "Ring buffers"). Integer addition is associative, so the sum of the weights that reach
 * one ring slot is the same whatever the order of the atomic adds: over work
 * items, threads, streams, devices and the CPU/GPU split. Float atomics would
 * make every run's rounding depend on scheduling. Compiled as C and as OpenCL C.
 *
 * Format: value = round(x * 2^NESTCL_FIXED_FRAC_BITS) in an int64, rounding to
 * nearest with ties away from zero, with FRAC_BITS = 32:
 *   resolution  2^-32 = 2.33e-10 (in the weight's unit: pA, nS, ...); each weight
 *               is off by at most 2^-33 = 1.16e-10 from the double it came from;
 *   range       |value| < 2^31 = 2.147e9 per slot, per channel, per neuron.
 * Overflow bound: a slot holds at most max_events additions of weights with
 * |w| <= max_abs_weight; every partial sum fits when
 *   round(max_abs_weight * 2^32) * max_events <= 2^63 - 1,
 * roughly max_abs_weight * max_events < 2.1e9, which nestcl_fixed_fits() checks
 * on the host before a run. (hpc_benchmark: |w| <= 87.8 pA * 5 (inhibitory) = 439 pA,
 * 11250 inputs, so 4.9e6 per slot even if all fired in one step.) An overflow
 * wraps around (two's complement) on both paths; it is never undefined behaviour.
 *
 * Conversion to fixed point uses no rint/llrint/convert_long_rte: x * 2^32 is an
 * exact scaling, the cast truncates toward zero in both languages, and the
 * remainder decides the rounding, so both paths give the same integer whatever
 * their rounding-mode defaults. Conversion back, v * 2^-32, is exact for
 * |v| < 2^53 (|x| < 2^21), and correctly rounded beyond.
 */
#ifndef NESTCL_FIXED_H
#define NESTCL_FIXED_H

#ifndef __OPENCL_C_VERSION__
#include "nestcl_types.h"
#endif

#define NESTCL_FIXED_FRAC_BITS 32
#define NESTCL_FIXED_SCALE 4294967296.0 /* 2^32 */
#define NESTCL_FIXED_INV_SCALE (1.0 / 4294967296.0)

/* Saturates at the int64 limits (not reached within the checked bounds); NaN gives 0. */
NESTCL_INLINE nestcl_i64 nestcl_fixed_from_double(double x)
{
  double t = x * NESTCL_FIXED_SCALE;
  if (!(t == t)) {
    return 0;
  }
  if (t >= 9223372036854775808.0) {
    return NESTCL_I64_MAX;
  }
  if (t <= -9223372036854775808.0) {
    return NESTCL_I64_MIN;
  }
  nestcl_i64 i = (nestcl_i64)t; /* toward zero */
  double rest = t - (double)i; /* exact, in (-1, 1); 0 once |t| >= 2^52 */
  if (rest >= 0.5) {
    i += 1;
  } else if (rest <= -0.5) {
    i -= 1;
  }
  return i;
}

NESTCL_INLINE double nestcl_fixed_to_double(nestcl_i64 v)
{
  return (double)v * NESTCL_FIXED_INV_SCALE;
}

/* Two's-complement addition without C's signed-overflow undefined behaviour. */
NESTCL_INLINE nestcl_i64 nestcl_fixed_sum(nestcl_i64 a, nestcl_i64 b)
{
  return (nestcl_i64)((nestcl_u64)a + (nestcl_u64)b);
}

#ifdef __OPENCL_C_VERSION__

/* Device: always atomic (cl_khr_int64_base_atomics), work items share slots. */
NESTCL_INLINE void nestcl_fixed_add(__global nestcl_i64 *p, nestcl_i64 v)
{
  atom_add(p, v);
}

NESTCL_INLINE void nestcl_fixed_add_atomic(__global nestcl_i64 *p, nestcl_i64 v)
{
  atom_add(p, v);
}

#else

/* CPU: a VP writes only to its own neurons' ring, so a plain add suffices. */
static inline void nestcl_fixed_add(nestcl_i64 *p, nestcl_i64 v)
{
  *p = nestcl_fixed_sum(*p, v);
}

/* For callers whose threads share slots. */
static inline void nestcl_fixed_add_atomic(nestcl_i64 *p, nestcl_i64 v)
{
#if defined(_OPENMP)
  nestcl_u64 *q = (nestcl_u64 *)p; /* unsigned: wrap-around is defined */
#pragma omp atomic
  *q += (nestcl_u64)v;
#else
  __atomic_fetch_add((nestcl_u64 *)p, (nestcl_u64)v, __ATOMIC_RELAXED);
#endif
}

/*
 * Host check of the overflow bound above: 1 when max_events additions of
 * weights of magnitude at most max_abs_weight fit in every partial sum, else 0.
 */
static inline int nestcl_fixed_fits(double max_abs_weight, nestcl_u64 max_events)
{
  if (!(max_abs_weight >= 0.0) || max_abs_weight * NESTCL_FIXED_SCALE >= 9223372036854775808.0) {
    return 0;
  }
  nestcl_u64 w = (nestcl_u64)nestcl_fixed_from_double(max_abs_weight);
  if (w == 0 || max_events == 0) {
    return 1;
  }
  return w <= (nestcl_u64)NESTCL_I64_MAX / max_events;
}

#endif /* __OPENCL_C_VERSION__ */

#endif /* NESTCL_FIXED_H */
