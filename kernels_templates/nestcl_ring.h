/*
 * nestcl_ring.h: the ring-buffer and spike-list helpers that translated update
 * code (OpenCL kernels and C loops alike) and the delivery code of the engine
 * use instead of NEST's RingBuffer, MultiChannelInputBuffer and SpikeEvent
 * sending. The layout is the one of host/include/nestcl/model.h: one int64
 * fixed-point ring [slot][channel][n] per population, slot = (origin_steps +
 * lag) mod ring_slots as NEST's get_modulo(lag); spikes go to a compact
 * (index, lag) list behind one counter. Compiled as C and as OpenCL C.
 */
#ifndef NESTCL_RING_H
#define NESTCL_RING_H

#ifndef __OPENCL_C_VERSION__
#include "nestcl_types.h"
#include "nestcl_fixed.h"
#endif

/* The ring slot of a lag: (origin_steps + lag) mod ring_slots, never negative. */
NESTCL_INLINE nestcl_u32 nestcl_ring_slot(nestcl_i64 origin_steps, nestcl_i64 lag, nestcl_u32 ring_slots)
{
  nestcl_i64 r = (origin_steps + lag) % (nestcl_i64)ring_slots;
  if (r < 0) {
    r += (nestcl_i64)ring_slots;
  }
  return (nestcl_u32)r;
}

/* Element index of (slot, channel, neuron); 64-bit because rings can exceed 2^32 entries. */
NESTCL_INLINE nestcl_u64 nestcl_ring_index(nestcl_u32 n_channels, nestcl_u32 n, nestcl_u32 slot, nestcl_u32 ch,
                                           nestcl_u32 i)
{
  return ((nestcl_u64)slot * n_channels + ch) * n + i;
}

/* Reads one channel of a slot as a double without clearing it. */
NESTCL_INLINE double nestcl_ring_peek(NESTCL_GLOBAL const nestcl_i64 *ring, nestcl_u32 n_channels, nestcl_u32 n,
                                      nestcl_u32 slot, nestcl_u32 ch, nestcl_u32 i)
{
  return nestcl_fixed_to_double(ring[nestcl_ring_index(n_channels, n, slot, ch, i)]);
}

/* NEST's RingBuffer::get_value(): reads and zeroes, so the slot is clean for its next turn. */
NESTCL_INLINE double nestcl_ring_take(NESTCL_GLOBAL nestcl_i64 *ring, nestcl_u32 n_channels, nestcl_u32 n,
                                      nestcl_u32 slot, nestcl_u32 ch, nestcl_u32 i)
{
  nestcl_u64 at = nestcl_ring_index(n_channels, n, slot, ch, i);
  nestcl_i64 v = ring[at];
  ring[at] = 0;
  return nestcl_fixed_to_double(v);
}

/* MultiChannelInputBuffer::reset_values_all_channels(): zeroes every channel of the slot for neuron i. */
NESTCL_INLINE void nestcl_ring_zero_all(NESTCL_GLOBAL nestcl_i64 *ring, nestcl_u32 n_channels, nestcl_u32 n,
                                        nestcl_u32 slot, nestcl_u32 i)
{
  for (nestcl_u32 ch = 0; ch < n_channels; ++ch) {
    ring[nestcl_ring_index(n_channels, n, slot, ch, i)] = 0;
  }
}

/* Adds a fixed-point value: atomic on the device, plain on the CPU (see nestcl_fixed_add). */
NESTCL_INLINE void nestcl_ring_add_fixed(NESTCL_GLOBAL nestcl_i64 *ring, nestcl_u32 n_channels, nestcl_u32 n,
                                         nestcl_u32 slot, nestcl_u32 ch, nestcl_u32 i, nestcl_i64 v)
{
  nestcl_fixed_add(ring + nestcl_ring_index(n_channels, n, slot, ch, i), v);
}

/* The same for a double (a weight): converted once, then added exactly. */
NESTCL_INLINE void nestcl_ring_add(NESTCL_GLOBAL nestcl_i64 *ring, nestcl_u32 n_channels, nestcl_u32 n, nestcl_u32 slot,
                                   nestcl_u32 ch, nestcl_u32 i, double value)
{
  nestcl_ring_add_fixed(ring, n_channels, n, slot, ch, i, nestcl_fixed_from_double(value));
}

/*
 * Adds lags [from, to) of a staging [lag][channel][n] (input the host
 * collected for the slice, in fixed point) to the ring, for neurons
 * [i0, i1): a block's stage kernel calls it for its one neuron, the host's
 * twin (a block on the host) for all of them, so both run the same
 * arithmetic. Zero entries are skipped; nothing is cleared.
 */
NESTCL_INLINE void nestcl_ring_stage(NESTCL_GLOBAL nestcl_i64 *ring, nestcl_u32 n_channels, nestcl_u32 n,
                                     nestcl_u32 ring_slots, nestcl_i64 origin, int from, int to,
                                     NESTCL_GLOBAL const nestcl_i64 *stage, nestcl_u32 i0, nestcl_u32 i1)
{
  for (int lag = from; lag < to; ++lag) {
    const nestcl_u32 slot = nestcl_ring_slot(origin, lag, ring_slots);
    for (nestcl_u32 ch = 0; ch < n_channels; ++ch) {
      for (nestcl_u32 i = i0; i < i1; ++i) {
        const nestcl_i64 v = stage[((nestcl_u64)lag * n_channels + ch) * n + i];
        if (v != 0) {
          ring[nestcl_ring_index(n_channels, n, slot, ch, i)] += v;
        }
      }
    }
  }
}

/*
 * Writes entry at of a spike list. On the device through two 32-bit stores,
 * not the vector literal (uint2)(i, lag): oclgrind's uninitialised-value check
 * reports every store of a vector built from a literal with a run-time lane as
 * "Uninitialized value written to global memory" (the optimiser builds it by
 * insertelement into a poison vector); tests/oclgrind/false_positive shows that
 * on a two-line kernel. The bytes written are the same.
 */
NESTCL_INLINE void nestcl_spike_store(NESTCL_GLOBAL nestcl_spike_t *spikes, nestcl_u32 at, nestcl_u32 i, nestcl_u32 lag)
{
#ifdef __OPENCL_C_VERSION__
  NESTCL_GLOBAL nestcl_u32 *word = (NESTCL_GLOBAL nestcl_u32 *)(spikes + at);
  word[0] = i;
  word[1] = lag;
#else
  spikes[at].index = i;
  spikes[at].lag = lag;
#endif
}

/*
 * Appends spike (i, lag) to the list. The counter always advances, even past
 * the capacity, so the host sees an overflow as count > cap; only entries below
 * the capacity are written. The order of a kernel's list depends on scheduling;
 * consumers must not rely on it (the host sorts where order matters).
 */
NESTCL_INLINE void nestcl_emit_spike(NESTCL_GLOBAL nestcl_u32 *count, NESTCL_GLOBAL nestcl_spike_t *spikes,
                                     nestcl_u32 cap, nestcl_u32 i, nestcl_u32 lag)
{
#ifdef __OPENCL_C_VERSION__
  nestcl_u32 at = atomic_inc(count);
#else
  nestcl_u32 at = *count;
  *count = at + 1u;
#endif
  if (at < cap) {
    nestcl_spike_store(spikes, at, i, lag);
  }
}

/*
 * A spike of multiplicity m (SpikeEvent::set_multiplicity, NEST's pp_psc_delta
 * and the like): m entries (i, lag), as m spikes deliver and record as one
 * event of multiplicity m does (nestcl/model.h, multiplicity). A runaway
 * multiplicity (a parrot network's chain reaction) counts as cap + 1, enough
 * for the host to report the overflow, and writes only what fits: no loop of
 * billions, no wrapped counter. Returns the first entry's position; *m_out is
 * the entries counted.
 */
NESTCL_INLINE nestcl_u32 nestcl_emit_run(NESTCL_GLOBAL nestcl_u32 *count, NESTCL_GLOBAL nestcl_spike_t *spikes,
                                         nestcl_u32 cap, nestcl_u32 i, nestcl_u32 lag, nestcl_u32 m, nestcl_u32 *m_out)
{
  m = m > cap ? cap + 1u : m;
#ifdef __OPENCL_C_VERSION__
  nestcl_u32 at = m ? atomic_add(count, m) : 0u;
#else
  nestcl_u32 at = *count;
  *count = at + m;
#endif
  for (nestcl_u32 k = 0; k < m && at + k < cap; ++k) {
    nestcl_spike_store(spikes, at + k, i, lag);
  }
  *m_out = m;
  return at;
}

NESTCL_INLINE void nestcl_emit_spikes(NESTCL_GLOBAL nestcl_u32 *count, NESTCL_GLOBAL nestcl_spike_t *spikes,
                                      nestcl_u32 cap, nestcl_u32 i, nestcl_u32 lag, nestcl_u32 m)
{
  nestcl_u32 counted;
  (void)nestcl_emit_run(count, spikes, cap, i, lag, m, &counted);
}

/*
 * A spike whose SpikeEvent carries an offset (SpikeEvent::set_offset: a
 * precise spike time within the step, or a payload such as iaf_tum_2000's
 * synaptic jump): its m entries (i, lag), each with the offset at the same
 * position of offsets, the list's parallel array (nestcl/model.h,
 * spike_offsets). Within one work-item the positions follow the order of the
 * sends, so the host recovers the order of one neuron's events.
 */
NESTCL_INLINE void nestcl_emit_spikes_offset(NESTCL_GLOBAL nestcl_u32 *count, NESTCL_GLOBAL nestcl_spike_t *spikes,
                                             NESTCL_GLOBAL double *offsets, nestcl_u32 cap, nestcl_u32 i,
                                             nestcl_u32 lag, nestcl_u32 m, double offset)
{
  nestcl_u32 counted;
  const nestcl_u32 at = nestcl_emit_run(count, spikes, cap, i, lag, m, &counted);
  for (nestcl_u32 k = 0; k < counted && at + k < cap; ++k) {
    offsets[at + k] = offset;
  }
}

/*
 * NEST's SliceRingBuffer::get_next_spike() over the events of one neuron in
 * one update (nestcl/model.h, event_queue): events [*cur, end) of the call,
 * each at lag ev_lag[k] with its precise offset and weight, in the order
 * NEST's own queue hands them out (the runtime stages them so), and the
 * refractory pseudo-event (*refract_stamp, refract_offset) that
 * add_refractory() set (NESTCL_I64_MAX: none). Same order of comparisons as
 * NEST: the pseudo-event goes first when it is not later than the next event
 * (SpikeInfo's <=); a request for another stamp returns 0 and takes nothing;
 * with accumulate, the weights of the following events of the same stamp and
 * offset are added in turn, as NEST adds them.
 */
NESTCL_INLINE int nestcl_evq_next(NESTCL_GLOBAL const nestcl_u32 *ev_lag, NESTCL_GLOBAL const double *ev_offset,
                                  NESTCL_GLOBAL const double *ev_weight, nestcl_u32 *cur, nestcl_u32 end,
                                  nestcl_i64 origin_steps, nestcl_i64 req_stamp, int accumulate,
                                  nestcl_i64 *refract_stamp, double refract_offset, double *ps_offset, double *weight,
                                  int *end_of_refract)
{
  *end_of_refract = 0;
  const int empty = *cur >= end;
  const nestcl_i64 back_stamp = empty ? 0 : origin_steps + (nestcl_i64)ev_lag[*cur];
  const double back_offset = empty ? 0.0 : ev_offset[*cur];
  if (empty || !(*refract_stamp == back_stamp ? refract_offset < back_offset : *refract_stamp > back_stamp)) {
    if (*refract_stamp == req_stamp) {
      *ps_offset = refract_offset;
      *weight = 0.0;
      *end_of_refract = 1;
      *refract_stamp = NESTCL_I64_MAX;
      return 1;
    }
    return 0;
  }
  if (back_stamp != req_stamp) {
    return 0;
  }
  *ps_offset = back_offset;
  *weight = ev_weight[*cur];
  ++*cur;
  if (accumulate) {
    while (*cur < end && ev_offset[*cur] == *ps_offset && origin_steps + (nestcl_i64)ev_lag[*cur] == req_stamp) {
      *weight += ev_weight[*cur];
      ++*cur;
    }
  }
  return 1;
}

/*
 * A failure of neuron i at lag (nestcl/model.h, Failures): count[1..4] =
 * (code, i, lag, status) unless an earlier failure of the same call is there.
 */
NESTCL_INLINE void nestcl_report_failure(NESTCL_GLOBAL nestcl_u32 *count, nestcl_u32 code, nestcl_u32 i, nestcl_u32 lag,
                                         int status)
{
#ifdef __OPENCL_C_VERSION__
  if (atomic_cmpxchg(&count[1], 0u, code) == 0u) {
    count[2] = i;
    count[3] = lag;
    count[4] = (nestcl_u32)status;
  }
#else
  if (count[1] == 0u) {
    count[1] = code;
    count[2] = i;
    count[3] = lag;
    count[4] = (nestcl_u32)status;
  }
#endif
}

#endif /* NESTCL_RING_H */
