/*
 * nestcl_types.h: the first of the runtime headers that are compiled twice,
 * once as C11 (the CPU path and the host) and once as OpenCL C 1.2 (the host
 * prepends their text to every kernel source, see nestcl_rt_source.h). It maps
 * the few types and qualifiers that differ between the two languages onto one
 * set of names, so that every helper after it is written once and performs the
 * same operations in the same order on both paths (docs/architecture.md, "Determinism and random
 * numbers"). In OpenCL mode
 * nothing here may #include: the text is concatenated, not preprocessed from files.
 */
#ifndef NESTCL_TYPES_H
#define NESTCL_TYPES_H

#ifdef __OPENCL_C_VERSION__

#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
/* No fused multiply-add anywhere: the C path is built with -ffp-contract=off. */
#pragma OPENCL FP_CONTRACT OFF

typedef uchar nestcl_u8;
typedef int nestcl_i32;
typedef uint nestcl_u32;
typedef long nestcl_i64;
typedef ulong nestcl_u64;
typedef double nestcl_f64;
/* (index, lag) of one emitted spike; layout-compatible with struct nestcl_spike. */
typedef uint2 nestcl_spike_t;

#define NESTCL_GLOBAL __global
#define NESTCL_CONSTANT __constant
/*
 * OpenCL C 1.2 allows static functions; "static inline" gives every program its
 * own internal copy, so a build with -cl-opt-disable that does not inline still
 * links (a bare C99 "inline" definition provides no external symbol).
 */
#define NESTCL_INLINE static inline
#define NESTCL_I64_C(x) x##L
#define NESTCL_U64_C(x) x##UL
#define NESTCL_I64_MAX 0x7fffffffffffffffL
#define NESTCL_I64_MIN (-NESTCL_I64_MAX - 1L)

/* Reinterpretation of the bits of a double (memcpy in C, valid in C++ too). */
#define nestcl_f64_bits(x) as_ulong(x)
#define nestcl_bits_f64(u) as_double(u)

#else /* C11 */

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "nestcl/model.h" /* struct nestcl_spike: the C twin of uint2 */

typedef uint8_t nestcl_u8;
typedef int32_t nestcl_i32;
typedef uint32_t nestcl_u32;
typedef int64_t nestcl_i64;
typedef uint64_t nestcl_u64;
typedef double nestcl_f64;
typedef nestcl_spike nestcl_spike_t;

#define NESTCL_GLOBAL
#define NESTCL_CONSTANT const
/* Helpers defined with it in a .c file (the translator's prelude of each model)
 * are not all used there: clang warns of unused static functions outside headers. */
#if defined(__GNUC__)
#define NESTCL_INLINE static inline __attribute__((unused))
#else
#define NESTCL_INLINE static inline
#endif
#define NESTCL_I64_C(x) INT64_C(x)
#define NESTCL_U64_C(x) UINT64_C(x)
#define NESTCL_I64_MAX INT64_MAX
#define NESTCL_I64_MIN INT64_MIN

static inline uint64_t nestcl_f64_bits(double x)
{
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static inline double nestcl_bits_f64(uint64_t u)
{
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

#endif /* __OPENCL_C_VERSION__ */

/*
 * A parameter compiled in as a constant (-DNESTCL_CONST_<member>=value) is read
 * through these identities: the compiler still folds it, but the expression is
 * no constant to the front end, so a condition that specialisation makes
 * constant (NEST's "delta_ > 0 && ..." with delta_ = 0) raises no warning.
 */
NESTCL_INLINE double nestcl_keep_f64(double x)
{
  return x;
}
NESTCL_INLINE nestcl_i64 nestcl_keep_i64(nestcl_i64 x)
{
  return x;
}
NESTCL_INLINE nestcl_i32 nestcl_keep_i32(nestcl_i32 x)
{
  return x;
}
NESTCL_INLINE nestcl_u32 nestcl_keep_u32(nestcl_u32 x)
{
  return x;
}
NESTCL_INLINE nestcl_u64 nestcl_keep_u64(nestcl_u64 x)
{
  return x;
}

#endif /* NESTCL_TYPES_H */
