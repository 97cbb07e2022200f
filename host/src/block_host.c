/*
 * A nestcl_block that runs on the calling thread (block.h, config.on_host):
 * the slice's update done at once, by the model's translated C loop, over the
 * block's host fields and a ring in host memory (b->ring_copy). It does what
 * the device block's kernels do, in the same order: the staged input into
 * the ring (nestcl_ring_stage, the body of block.c's nestcl_block_stage
 * kernel, here as C), then the update with the events grouped by neuron.
 * nestcl_block_update_collect then takes the spikes, recordings and a
 * failure as for a device block; they are already in the host arrays, so
 * nothing is read back and nothing waited for.
 */
#include "block_internal.h"
#include "nestcl_fixed.h"
#include "nestcl_ring.h"
#include "update_fill.h"

int nestcl_block_host_update(nestcl_block *b, int64_t origin_steps, int from, int to)
{
  const nestcl_model *m = b->c.model;
  if (m->event_queue) {
    int rc = nestcl_block_group_events(b, from, to);
    b->n_ev = 0;
    if (rc) {
      return rc;
    }
  }
  /* The staged input into the ring, as the stage kernel does it (nestcl_ring_stage), for all neurons at once. */
  nestcl_ring_stage(b->ring_copy, b->n_channels, b->c.n, b->c.ring_slots, origin_steps, from, to, b->stage, 0, b->c.n);
  nestcl_update_args a;
  nestcl_block_update_args(b, &a);
  nestcl_update_args_slice(&a, origin_steps, from, to);
  a.ring = b->ring_copy;
  a.spike_count = b->count;
  a.spikes = b->spikes;
  a.rec = b->rec;
  a.spike_offsets = b->spike_offsets;
  if (m->event_queue) {
    a.evq_first = b->evq_first;
    a.evq_lag = b->evq_lag;
    a.evq_offset = b->evq_off;
    a.evq_weight = b->evq_w;
  }
  m->update_cpu(&a, b->fields);
  /* Everything is in the host arrays: collect reads nothing back. */
  b->guess = b->spike_cap;
  b->in_flight = 1;
  b->flight_origin = origin_steps;
  return 0;
}
