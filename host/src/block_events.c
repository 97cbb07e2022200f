/*
 * A block's precise spike events (nestcl/block.h, nestcl_block_stage_event):
 * staged as the caller hands them, then grouped by neuron for the update.
 * Both the device block (block.c) and the host block (block_host.c) group
 * them, so this lives below both of them.
 */
#include <stdlib.h>

#include "block_internal.h"

/* Room for cap events in (lag, offset, weight) arrays; what fits stays when one fails. 0 or -1. */
static int grow_events(uint32_t **lag, double **off, double **w, uint32_t cap)
{
  uint32_t *l = realloc(*lag, (size_t)cap * sizeof *l);
  if (l)
    *lag = l;
  double *o = realloc(*off, (size_t)cap * sizeof *o);
  if (o)
    *off = o;
  double *x = realloc(*w, (size_t)cap * sizeof *x);
  if (x)
    *w = x;
  return l && o && x ? 0 : -1;
}

int nestcl_block_stage_event(nestcl_block *b, uint32_t lag, uint32_t i, double offset, double weight)
{
  if (!b->c.model->event_queue) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: the model takes no precise spike events", b->c.model->name);
  }
  if (lag >= b->c.min_delay_steps || i >= b->c.n) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: event for neuron %u at lag %u, but %u neurons and %u lags",
                            b->c.model->name, i, lag, b->c.n, b->c.min_delay_steps);
  }
  if (b->n_ev == b->ev_cap) {
    uint32_t cap = b->ev_cap ? b->ev_cap * 2 : 256;
    if (cap <= b->ev_cap) {
      return nestcl_set_error(NESTCL_EINVAL, "block %s: too many events in one slice", b->c.model->name);
    }
    uint32_t *ei = realloc(b->ev_i, (size_t)cap * sizeof *ei);
    if (ei)
      b->ev_i = ei;
    if (!ei || grow_events(&b->ev_lag, &b->ev_off, &b->ev_w, cap)) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
    b->ev_cap = cap;
  }
  b->ev_i[b->n_ev] = i;
  b->ev_lag[b->n_ev] = lag;
  b->ev_off[b->n_ev] = offset;
  b->ev_w[b->n_ev] = weight;
  b->n_ev++;
  return 0;
}

/*
 * The staged events grouped by neuron (a stable counting sort, so each
 * neuron's keep their staging order) into evq_first/_lag/_off/_w. Each
 * neuron's events must lie in [from, to) in nondecreasing lags: update()
 * takes them in this order and never looks back.
 */
int nestcl_block_group_events(nestcl_block *b, int from, int to)
{
  const uint32_t n = b->c.n, ne = b->n_ev;
  if (!b->evq_first) {
    b->evq_first = calloc((size_t)n + 2, sizeof *b->evq_first);
    if (!b->evq_first) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
  }
  if (ne > b->evq_cap || !b->evq_lag) {
    uint32_t cap = b->evq_cap ? b->evq_cap : 256;
    while (cap < ne)
      cap *= 2;
    if (grow_events(&b->evq_lag, &b->evq_off, &b->evq_w, cap)) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
    b->evq_cap = cap;
  }
  memset(b->evq_first, 0, ((size_t)n + 1) * sizeof *b->evq_first);
  for (uint32_t k = 0; k < ne; ++k) {
    b->evq_first[b->ev_i[k] + 1]++;
  }
  for (uint32_t i = 0; i < n; ++i) {
    b->evq_first[i + 1] += b->evq_first[i];
  }
  /* evq_first[i] walks neuron i's slots while filling; restored below */
  for (uint32_t k = 0; k < ne; ++k) {
    const uint32_t i = b->ev_i[k], at = b->evq_first[i]++;
    if ((int)b->ev_lag[k] < from || (int)b->ev_lag[k] >= to) {
      return nestcl_set_error(NESTCL_EINVAL,
                              "block %s: event for neuron %u at lag %u, outside the update's lags [%d, %d)",
                              b->c.model->name, i, b->ev_lag[k], from, to);
    }
    b->evq_lag[at] = b->ev_lag[k];
    b->evq_off[at] = b->ev_off[k];
    b->evq_w[at] = b->ev_w[k];
  }
  for (uint32_t i = n; i > 0; --i) {
    b->evq_first[i] = b->evq_first[i - 1];
  }
  b->evq_first[0] = 0;
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t k = b->evq_first[i] + 1; k < b->evq_first[i + 1]; ++k) {
      if (b->evq_lag[k] < b->evq_lag[k - 1]) {
        return nestcl_set_error(NESTCL_EINVAL,
                                "block %s: events of neuron %u staged out of time order (lag %u after %u)",
                                b->c.model->name, i, b->evq_lag[k], b->evq_lag[k - 1]);
      }
    }
  }
  return 0;
}
