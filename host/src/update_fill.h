/*
 * The values of the update's fixed arguments (nestcl/update_args.h), filled
 * once for both ways of running it: as struct nestcl_update_args for the
 * model's C loop (the engine's CPU VPs, a block on the host) and as kernel
 * arguments for its OpenCL kernel (the engine's GPU blocks, a device block).
 * The kernel setter walks the same X-macro as the struct, so the indices and
 * the order cannot drift from what the translator writes.
 */
#ifndef NESTCL_UPDATE_FILL_H
#define NESTCL_UPDATE_FILL_H

#include <stdint.h>

#include "nestcl/device.h"
#include "nestcl/model.h"

/*
 * The values that stay the same from slice to slice, for the neurons of one
 * block; everything else of *a is zeroed: the slice (nestcl_update_args_slice),
 * the pointers (set by the caller: host arrays for the C loop, unused for the
 * kernel) and the trailing spike_offsets and evq_* pointers.
 */
void nestcl_update_args_init(nestcl_update_args *a, uint32_t n, uint32_t K, double resolution_ms, uint32_t ring_slots,
                             uint32_t n_channels, uint32_t spike_capacity, int64_t rec_interval, uint32_t rng_seed,
                             uint64_t id_first, uint64_t id_stride);

/* The slice of one call: lags [from, to) after the step origin_steps. */
void nestcl_update_args_slice(nestcl_update_args *a, int64_t origin_steps, int from, int to);

/* The device buffers behind the pointer arguments of the kernel, one per P(...) of NESTCL_UPDATE_FIXED. */
#define NESTCL_UFILL_NO_MEMBER_(name, c, cl, p)
#define NESTCL_UFILL_MEM_MEMBER_(name, c, cl, p) cl_mem name;
typedef struct nestcl_update_mems {
  NESTCL_UPDATE_FIXED(NESTCL_UFILL_NO_MEMBER_, NESTCL_UFILL_MEM_MEMBER_)
} nestcl_update_mems;
#undef NESTCL_UFILL_NO_MEMBER_
#undef NESTCL_UFILL_MEM_MEMBER_

/*
 * Sets all fixed arguments of a model's update kernel: the values from *a
 * (its slice too, which each launch sets again with
 * nestcl_update_kernel_slice), the buffers from *mem; then the n_fields field
 * buffers, and spike_offsets (the argument after the fields) only where it is
 * not NULL, for a model with spike_offsets set. Returns the OR of the OpenCL
 * results.
 */
cl_int nestcl_update_kernel_set(cl_kernel k, const nestcl_update_args *a, const nestcl_update_mems *mem,
                                const nestcl_buffer *fields, int n_fields, cl_mem spike_offsets);

/*
 * nestcl_update_kernel_set with the values as arguments (all but the slice),
 * as the engine's build calls it. Returns the OR of the OpenCL results.
 */
cl_int nestcl_update_kernel_fixed_args(cl_kernel k, uint32_t n, uint32_t K, double resolution_ms, uint32_t ring_slots,
                                       uint32_t n_channels, cl_mem ring, cl_mem spike_count, cl_mem spikes,
                                       uint32_t spike_capacity, int64_t rec_interval, cl_mem rec, uint32_t rng_seed,
                                       uint64_t id_first, uint64_t id_stride, const nestcl_buffer *fields, int n_fields,
                                       cl_mem spike_offsets);

/* The slice arguments of one launch (origin_steps, from, to). Returns the OR of the OpenCL results. */
cl_int nestcl_update_kernel_slice(cl_kernel k, int64_t origin_steps, int from, int to);

/*
 * The event arguments of the update kernel of a model with event_queue set
 * (model.h): evq_first, evq_lag, evq_offset, evq_weight, after the fields and
 * spike_offsets. Returns the OR of the OpenCL results.
 */
cl_int nestcl_update_kernel_evq_args(cl_kernel k, const nestcl_model *m, const cl_mem evq[4]);

#endif
