/*
 * nestcl_history.h: the postsynaptic spike history that STDP synapses read
 * (NEST's ArchivingNode), per neuron, as a bounded ring; compiled as C11 and
 * as OpenCL C.
 *
 * NEST keeps, per neuron with incoming STDP synapses, a deque of entries
 * (t, Kminus, Kminus_triplet, access_counter). set_spiketime(t) first drops
 * front entries that every incoming STDP synapse has read (access counter >=
 * n_incoming) and that a later entry makes unnecessary (the next entry lies
 * more than max_delay + min_delay + eps before t), then updates the traces
 * (K <- K exp((t_last - t) / tau) + 1) and appends. get_history(t1, t2)
 * gives the entries with t1 + eps <= t < t2 + eps and counts one more read of
 * each; get_K_value(t) is the Kminus trace just before t;
 * register_stdp_connection marks what a new synapse will never read and adds
 * it to n_incoming. These functions do the same on a ring of cap entries per
 * neuron: the answers are NEST's as long as the entries NEST would keep fit.
 * When they do not, set_spiketime returns nonzero and appends nothing; the
 * caller reports the neuron and the bound, so a loss is never silent.
 *
 * The exponentials are glibc's (nestcl_glibc_exp, variant `fused`), so that
 * traces equal NEST's bit for bit. On the device several synapses may read one
 * neuron's history at once: access counters are incremented atomically; all
 * else (set_spiketime, register) runs with one work-item per neuron.
 *
 * Layout: entry k of neuron i (k = 0 the oldest) is slot (head[i] + k) mod cap
 * of row i: arrays [n * cap] for t, kminus, kminus_triplet, access.
 */
#ifndef NESTCL_HISTORY_H
#define NESTCL_HISTORY_H

#ifndef __OPENCL_C_VERSION__
#include "nestcl_libm.h"
#include "nestcl_types.h"
#endif

typedef struct nestcl_history {
  NESTCL_GLOBAL double *t; /* [n * cap] entry time (ms) */
  NESTCL_GLOBAL double *kminus; /* [n * cap] Kminus after the entry's spike */
  NESTCL_GLOBAL double *kminus_triplet; /* [n * cap] */
  NESTCL_GLOBAL nestcl_u32 *access; /* [n * cap] reads so far */
  NESTCL_GLOBAL nestcl_u32 *head; /* [n] slot of the oldest entry */
  NESTCL_GLOBAL nestcl_u32 *len; /* [n] entries */
  NESTCL_GLOBAL double *Kminus; /* [n] the traces after the last spike */
  NESTCL_GLOBAL double *Kminus_triplet; /* [n] */
  NESTCL_GLOBAL double *last_spike; /* [n] ms, -1 before the first spike */
  NESTCL_GLOBAL nestcl_u32 *n_incoming; /* [n] registered STDP synapses */
  NESTCL_GLOBAL double *max_delay; /* [n] ms, largest delay of those synapses */
  nestcl_u32 cap;
} nestcl_history;

/* Slot of entry k of neuron i. */
NESTCL_INLINE nestcl_u64 nestcl_hist_slot(const nestcl_history *h, nestcl_u32 i, nestcl_u32 k)
{
  nestcl_u32 s = h->head[i] + k;
  return (nestcl_u64)i * h->cap + (s >= h->cap ? s - h->cap : s);
}

NESTCL_INLINE double nestcl_hist_t(const nestcl_history *h, nestcl_u32 i, nestcl_u32 k)
{
  return h->t[nestcl_hist_slot(h, i, k)];
}

NESTCL_INLINE double nestcl_hist_kminus(const nestcl_history *h, nestcl_u32 i, nestcl_u32 k)
{
  return h->kminus[nestcl_hist_slot(h, i, k)];
}

NESTCL_INLINE double nestcl_hist_kminus_triplet(const nestcl_history *h, nestcl_u32 i, nestcl_u32 k)
{
  return h->kminus_triplet[nestcl_hist_slot(h, i, k)];
}

/* One more read of entry k (atomic on the device: synapses onto one neuron run side by side). */
NESTCL_INLINE void nestcl_hist_count_read(const nestcl_history *h, nestcl_u32 i, nestcl_u32 k)
{
#ifdef __OPENCL_C_VERSION__
  atomic_inc(&h->access[nestcl_hist_slot(h, i, k)]);
#else
  h->access[nestcl_hist_slot(h, i, k)]++;
#endif
}

/* ArchivingNode::register_stdp_connection( t_first_read, delay ). */
NESTCL_INLINE void nestcl_hist_register(const nestcl_history *h, nestcl_u32 i, double t_first_read, double delay,
                                        double eps)
{
  for (nestcl_u32 k = 0; k < h->len[i] && t_first_read - nestcl_hist_t(h, i, k) > -1.0 * eps; ++k) {
    h->access[nestcl_hist_slot(h, i, k)]++;
  }
  h->n_incoming[i]++;
  h->max_delay[i] = delay > h->max_delay[i] ? delay : h->max_delay[i];
}

/*
 * ArchivingNode::set_spiketime for a spike at t_sp (ms, offset included).
 * min_delay_ms: the network's min_delay in ms. Returns 0, or 1 when the ring
 * is full of entries NEST would keep (nothing is then appended).
 */
NESTCL_INLINE int nestcl_hist_set_spiketime(const nestcl_history *h, nestcl_u32 i, double t_sp, double tau_minus_inv,
                                            double tau_minus_triplet_inv, double min_delay_ms, double eps, int fused)
{
  if (h->n_incoming[i] == 0) {
    h->last_spike[i] = t_sp;
    return 0;
  }
  while (h->len[i] > 1) {
    const double next_t = nestcl_hist_t(h, i, 1);
    if (h->access[nestcl_hist_slot(h, i, 0)] >= h->n_incoming[i] &&
        t_sp - next_t > h->max_delay[i] + min_delay_ms + eps) {
      h->head[i] = h->head[i] + 1 == h->cap ? 0 : h->head[i] + 1;
      h->len[i]--;
    } else {
      break;
    }
  }
  if (h->len[i] == h->cap) {
    return 1;
  }
  h->Kminus[i] = h->Kminus[i] * nestcl_glibc_exp((h->last_spike[i] - t_sp) * tau_minus_inv, fused) + 1.0;
  h->Kminus_triplet[i] =
    h->Kminus_triplet[i] * nestcl_glibc_exp((h->last_spike[i] - t_sp) * tau_minus_triplet_inv, fused) + 1.0;
  h->last_spike[i] = t_sp;
  const nestcl_u64 s = nestcl_hist_slot(h, i, h->len[i]);
  h->t[s] = t_sp;
  h->kminus[s] = h->Kminus[i];
  h->kminus_triplet[s] = h->Kminus_triplet[i];
  h->access[s] = 0u;
  h->len[i]++;
  return 0;
}

/*
 * ArchivingNode::get_history( t1, t2, &start, &finish ): entries [*start,
 * *finish) (logical positions, 0 the oldest) have t1 + eps <= t < t2 + eps;
 * each of them counts one more read.
 */
NESTCL_INLINE void nestcl_hist_get_history(const nestcl_history *h, nestcl_u32 i, double t1, double t2, double eps,
                                           nestcl_u32 *start, nestcl_u32 *finish)
{
  nestcl_u32 k = h->len[i];
  const double t2_lim = t2 + eps, t1_lim = t1 + eps;
  while (k > 0 && nestcl_hist_t(h, i, k - 1) >= t2_lim) {
    --k;
  }
  *finish = k;
  while (k > 0 && nestcl_hist_t(h, i, k - 1) >= t1_lim) {
    nestcl_hist_count_read(h, i, k - 1);
    --k;
  }
  *start = k;
}

/* ArchivingNode::get_K_value( t ): Kminus just before t (0 before the first spike). */
NESTCL_INLINE double nestcl_hist_get_K_value(const nestcl_history *h, nestcl_u32 i, double t, double tau_minus_inv,
                                             double eps, int fused)
{
  for (nestcl_u32 k = h->len[i]; k > 0; --k) {
    const double tk = nestcl_hist_t(h, i, k - 1);
    if (t - tk > eps) {
      return nestcl_hist_kminus(h, i, k - 1) * nestcl_glibc_exp((tk - t) * tau_minus_inv, fused);
    }
  }
  return 0.0;
}

#endif
