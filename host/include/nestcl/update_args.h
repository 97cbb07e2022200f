/*
 * The fixed leading arguments of every translated update, declared once.
 *
 * The C loop takes them as struct nestcl_update_args (model.h), the OpenCL
 * kernel as separate arguments of the same names, in this order, before one
 * pointer per field. Everything that spells them out derives from this list:
 * the struct, the kernel-argument indices the runtime sets
 * (NESTCL_UARG_<name>), the translator's kernel signature, C prologue, helper
 * macros and reserved names. Adding an argument here changes all of them.
 *
 * NESTCL_UPDATE_FIXED(V, P) expands V(name, c_type, cl_type, portable_type)
 * for a value argument and P(name, c_type, cl_type, portable_type) for a
 * pointer to __global memory of that element type:
 *   c_type         the element type in C (struct member and C loop)
 *   cl_type        the element type in OpenCL C (kernel signature)
 *   portable_type  the element type in code compiled as both (nestcl_types.h)
 *
 *   n              neurons in this block
 *   K              receptor count of the population (0 if the model has none)
 *   origin_steps   origin.get_steps()
 *   from, to       lag range of this call
 *   resolution_ms  Time::get_resolution().get_ms()
 *   ring_slots     slots of the ring (min_delay + max_delay)
 *   n_channels     channels of the ring (groups expanded with K)
 *   ring           the ring, [slot][channel][n] int64 fixed point
 *   spike_count    NESTCL_COUNT_WORDS words: the spike counter (incremented
 *                  atomically) and the failure record (model.h, Failures)
 *   spikes         (index, lag) pairs; capacity spike_capacity
 *   spike_capacity
 *   rec_interval   0: no recording; else B_.logger_.record_data(step) stores all
 *                  recordable fields when (step + 1) % rec_interval == 0 ...
 *   rec            ... at rec[((lag - from) * n_rec + r) * n + i], r over the
 *                  model's recordable fields (nestcl_model.recordables)
 *   rng_seed       key[0] of the model's random draws (NEST's rng_seed)
 *   id_first       the global id of neuron 0 of this block ...
 *   id_stride      ... and the step between neighbours: neuron i is
 *                  id_first + i * id_stride, the counter of its draws
 *                  (nestcl_philox.h), so that they do not depend on the VP
 */
#ifndef NESTCL_UPDATE_ARGS_H
#define NESTCL_UPDATE_ARGS_H

#define NESTCL_UPDATE_FIXED(V, P)                                                                                      \
  V(n, uint32_t, uint, nestcl_u32)                                                                                     \
  V(K, uint32_t, uint, nestcl_u32)                                                                                     \
  V(origin_steps, int64_t, long, nestcl_i64)                                                                           \
  V(from, int, int, int)                                                                                               \
  V(to, int, int, int)                                                                                                 \
  V(resolution_ms, double, double, double)                                                                             \
  V(ring_slots, uint32_t, uint, nestcl_u32)                                                                            \
  V(n_channels, uint32_t, uint, nestcl_u32)                                                                            \
  P(ring, int64_t, long, nestcl_i64)                                                                                   \
  P(spike_count, uint32_t, uint, nestcl_u32)                                                                           \
  P(spikes, nestcl_spike, uint2, nestcl_spike_t)                                                                       \
  V(spike_capacity, uint32_t, uint, nestcl_u32)                                                                        \
  V(rec_interval, int64_t, long, nestcl_i64)                                                                           \
  P(rec, double, double, double)                                                                                       \
  V(rng_seed, uint32_t, uint, nestcl_u32)                                                                              \
  V(id_first, uint64_t, ulong, nestcl_u64)                                                                             \
  V(id_stride, uint64_t, ulong, nestcl_u64)

/* NESTCL_UARG_<name>: the kernel-argument index of each fixed argument;
   NESTCL_UPDATE_FIXED_ARGS: their count, the index of the first field. */
#define NESTCL_UARG_ENUM_(name, c, cl, p) NESTCL_UARG_##name,
enum nestcl_update_arg_index { NESTCL_UPDATE_FIXED(NESTCL_UARG_ENUM_, NESTCL_UARG_ENUM_) NESTCL_UPDATE_FIXED_ARGS };
#undef NESTCL_UARG_ENUM_

/* One row per fixed argument, for code that writes them out as text (the
   translator): the names and types above as strings. */
typedef struct nestcl_update_arg_desc {
  const char *name;
  const char *c_type;
  const char *cl_type;
  const char *portable_type;
  int is_pointer;
} nestcl_update_arg_desc;

#define NESTCL_UARG_DESC_V_(name, c, cl, p) {#name, #c, #cl, #p, 0},
#define NESTCL_UARG_DESC_P_(name, c, cl, p) {#name, #c, #cl, #p, 1},
/* Usage: static const nestcl_update_arg_desc t[] = NESTCL_UPDATE_ARG_TABLE; */
#define NESTCL_UPDATE_ARG_TABLE                                                                                        \
  {                                                                                                                    \
    NESTCL_UPDATE_FIXED(NESTCL_UARG_DESC_V_, NESTCL_UARG_DESC_P_)                                                      \
  }

#endif
