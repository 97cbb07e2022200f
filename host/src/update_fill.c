/* Filling the update's fixed arguments for the C loop and the kernel (update_fill.h). */
#include <string.h>

#include "update_fill.h"

/* Each value argument is set from its C type, whose size is the OpenCL type's (update_args.h pairs them). */
_Static_assert(sizeof(int) == sizeof(cl_int), "int arguments (from, to) are cl_int in the kernel");
_Static_assert(sizeof(double) == sizeof(cl_double), "double arguments are cl_double in the kernel");

void nestcl_update_args_init(nestcl_update_args *a, uint32_t n, uint32_t K, double resolution_ms, uint32_t ring_slots,
                             uint32_t n_channels, uint32_t spike_capacity, int64_t rec_interval, uint32_t rng_seed,
                             uint64_t id_first, uint64_t id_stride)
{
  memset(a, 0, sizeof *a);
  a->n = n;
  a->K = K;
  a->resolution_ms = resolution_ms;
  a->ring_slots = ring_slots;
  a->n_channels = n_channels;
  a->spike_capacity = spike_capacity;
  a->rec_interval = rec_interval;
  a->rng_seed = rng_seed;
  a->id_first = id_first;
  a->id_stride = id_stride;
}

void nestcl_update_args_slice(nestcl_update_args *a, int64_t origin_steps, int from, int to)
{
  a->origin_steps = origin_steps;
  a->from = from;
  a->to = to;
}

cl_int nestcl_update_kernel_set(cl_kernel k, const nestcl_update_args *a, const nestcl_update_mems *mem,
                                const nestcl_buffer *fields, int n_fields, cl_mem spike_offsets)
{
  cl_int err = CL_SUCCESS;
#define SET_VALUE_(name, c, cl, p) err |= clSetKernelArg(k, NESTCL_UARG_##name, sizeof(c), &a->name);
#define SET_BUFFER_(name, c, cl, p) err |= clSetKernelArg(k, NESTCL_UARG_##name, sizeof(cl_mem), &mem->name);
  NESTCL_UPDATE_FIXED(SET_VALUE_, SET_BUFFER_)
#undef SET_VALUE_
#undef SET_BUFFER_
  for (int f = 0; f < n_fields; ++f) {
    err |= clSetKernelArg(k, (cl_uint)(NESTCL_UPDATE_FIXED_ARGS + f), sizeof(cl_mem), &fields[f].mem);
  }
  if (spike_offsets) {
    err |= clSetKernelArg(k, (cl_uint)(NESTCL_UPDATE_FIXED_ARGS + n_fields), sizeof(cl_mem), &spike_offsets);
  }
  return err;
}

cl_int nestcl_update_kernel_fixed_args(cl_kernel k, uint32_t n, uint32_t K, double resolution_ms, uint32_t ring_slots,
                                       uint32_t n_channels, cl_mem ring, cl_mem spike_count, cl_mem spikes,
                                       uint32_t spike_capacity, int64_t rec_interval, cl_mem rec, uint32_t rng_seed,
                                       uint64_t id_first, uint64_t id_stride, const nestcl_buffer *fields, int n_fields,
                                       cl_mem spike_offsets)
{
  nestcl_update_args a;
  nestcl_update_args_init(&a, n, K, resolution_ms, ring_slots, n_channels, spike_capacity, rec_interval, rng_seed,
                          id_first, id_stride);
  const nestcl_update_mems mem = {.ring = ring, .spike_count = spike_count, .spikes = spikes, .rec = rec};
  return nestcl_update_kernel_set(k, &a, &mem, fields, n_fields, spike_offsets);
}

cl_int nestcl_update_kernel_slice(cl_kernel k, int64_t origin_steps, int from, int to)
{
  cl_long org = origin_steps;
  cl_int f = from, t = to;
  cl_int err = clSetKernelArg(k, NESTCL_UARG_origin_steps, sizeof org, &org);
  err |= clSetKernelArg(k, NESTCL_UARG_from, sizeof f, &f);
  err |= clSetKernelArg(k, NESTCL_UARG_to, sizeof t, &t);
  return err;
}

cl_int nestcl_update_kernel_evq_args(cl_kernel k, const nestcl_model *m, const cl_mem evq[4])
{
  const cl_uint first = (cl_uint)(NESTCL_UPDATE_FIXED_ARGS + m->n_fields + (m->spike_offsets ? 1 : 0));
  cl_int err = CL_SUCCESS;
  for (cl_uint a = 0; a < 4; ++a) {
    err |= clSetKernelArg(k, first + a, sizeof(cl_mem), &evq[a]);
  }
  return err;
}
