/*
 * nestcl_rt_source.h: the OpenCL text of the runtime headers (nestcl_types.h,
 * nestcl_math.h, nestcl_philox.h, nestcl_fixed.h, nestcl_ring.h, concatenated in
 * this order and embedded at build time). Every OpenCL program of the project is
 * built from nestcl_rt_source followed by its own source, so kernels and the C
 * path share one copy of the math, RNG, fixed-point and ring helpers.
 */
#ifndef NESTCL_RT_SOURCE_H
#define NESTCL_RT_SOURCE_H

#ifdef __cplusplus
extern "C" {
#endif

extern const char nestcl_rt_source[];

#ifdef __cplusplus
}
#endif
#endif
