/*
 * The CPU VPs' twins of the core kernels: nestcl_core.h compiled as C, once
 * per weight type, and the loops the OpenCL NDRange expresses (spikes x
 * synapses, neurons). Same text as the kernels, so the same integers land in
 * the rings whichever kind of VP simulates a neuron.
 */
#include "engine_internal.h"
#include "nestcl_ring.h"
#include "nestcl_philox.h"

#define NESTCL_W_T float
#define NESTCL_W_SUFFIX _f
#include "core/nestcl_core.h"
#undef NESTCL_W_T
#undef NESTCL_W_SUFFIX
#define NESTCL_W_T double
#define NESTCL_W_SUFFIX _d
#include "core/nestcl_core.h"

void eng_cpu_deliver(eng_block *b, int weight_double, uint32_t ring_slots, const uint32_t *spikes, size_t n_spikes,
                     int64_t origin)
{
  if (b->n == 0 || b->nnz == 0) {
    return;
  }
  for (size_t s = 0; s < n_spikes; ++s) {
    uint32_t gid = spikes[2 * s];
    int64_t step = origin + (int64_t)spikes[2 * s + 1];
    uint64_t k0 = b->row_ptr[gid], k1 = b->row_ptr[gid + 1];
    if (k0 == k1) {
      continue;
    }
    if (weight_double) {
      nestcl_deliver_range_d(b->ring, b->n_channels, b->n, ring_slots, b->target, (const double *)b->weight, b->delay,
                             b->delay_hom, step, k0, k1, 1);
    } else {
      nestcl_deliver_range_f(b->ring, b->n_channels, b->n, ring_slots, b->target, (const float *)b->weight, b->delay,
                             b->delay_hom, step, k0, k1, 1);
    }
  }
}

void eng_cpu_drive(eng_block *b, const eng_drive *d, uint32_t seed, uint32_t ring_slots, int64_t origin, int from,
                   int to)
{
  /* Step-major: each step writes one ring slot row, contiguous over neurons (the kernel's
     work-item order does not matter there; here it keeps the writes in cache). */
  for (int lag = from; lag < to; ++lag) {
    for (uint32_t i = 0; i < b->n; ++i) {
      nestcl_drive_neuron(b->ring, b->n_channels, b->n, ring_slots, (uint32_t)d->channel, i, b->first_gid, d->gen,
                          origin, lag, lag + 1, d->delay_steps, d->value_fixed, d->is_poisson, seed, d->cdf, d->cdf_len,
                          d->kstop, d->chunks);
    }
  }
}
