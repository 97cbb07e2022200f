/*
 * nestcl_core.h: the engine's per-synapse delivery and per-neuron drive
 * (poisson_generator, dc_generator), written once for both paths: the OpenCL
 * kernels of engine_kernels.cl call these functions, and the CPU VPs call the
 * very same text compiled as C (host/src/engine/core_cpu.c), so a GPU VP and a
 * CPU VP add the same fixed-point integers into their rings (docs/architecture.md, "Determinism and random numbers").
 *
 * The weight type is a parameter of this text: define NESTCL_W_T (float or
 * double) and NESTCL_W_SUFFIX (_f or _d) before including it. C includes it
 * twice, once per weight type; OpenCL gets it once with -D values. Without
 * NESTCL_W_T only the common part (constants, the drive) is defined.
 *
 * CSR target word: bits 0..23 the target's local index within its block,
 * bits 24..31 the ring channel (route_spike's answer), so one 32-bit word per
 * synapse names both. Blocks are limited to 2^24 neurons and 256 channels
 * (checked on the host).
 */
#ifndef NESTCL_CORE_COMMON
#define NESTCL_CORE_COMMON
#ifndef __OPENCL_C_VERSION__
#include "nestcl_history.h"
#include "nestcl_philox.h"
#include "nestcl_ring.h"
#endif
#define NESTCL_TARGET_INDEX_BITS 24
#define NESTCL_TARGET_INDEX_MASK 0x00ffffffu
/* delay_hom value meaning "per-synapse delays in the delay array". */
#define NESTCL_DELAY_PER_SYNAPSE 0xffffffffu
#ifdef __OPENCL_C_VERSION__
typedef ushort nestcl_u16;
#else
typedef uint16_t nestcl_u16;
#endif

/*
 * Poisson(mu) by inversion, as nestcl_poisson_invert (nestcl_philox.h) but
 * with its cumulative sums precomputed: cdf[k] is the F the loop there holds
 * after k terms, built on the host with the very same operations, up to the
 * term that no longer changes F; kstop is the count that loop returns there.
 * The smallest k with u < cdf[k] (binary search; cdf is strictly increasing),
 * or kstop when there is none, is therefore exactly what the loop returns,
 * without a division per term.
 */
NESTCL_INLINE nestcl_u32 nestcl_poisson_table(double u, NESTCL_GLOBAL const double *cdf, nestcl_u32 len,
                                              nestcl_u32 kstop)
{
  if (u >= cdf[len - 1u]) {
    return kstop;
  }
  nestcl_u32 lo = 0u, hi = len - 1u; /* answer in [lo, hi] */
  while (lo < hi) {
    nestcl_u32 mid = (lo + hi) / 2u;
    if (u < cdf[mid]) {
      hi = mid;
    } else {
      lo = mid + 1u;
    }
  }
  return lo;
}

/*
 * The drive of neuron i (local index) of a block whose first global id is
 * first_gid, for the steps origin + [from, to): k inputs of the given
 * fixed-point value at step s land in the slot of s + delay. Poisson: k is the
 * sum of 'chunks' table inversions of successive uniforms of the stream with
 * key (seed, PURPOSE_POISSON), counter (gid | gen << 40, s), as
 * nestcl_rng_poisson draws it; DC: k = 1.
 */
NESTCL_INLINE void nestcl_drive_neuron(NESTCL_GLOBAL nestcl_i64 *ring, nestcl_u32 n_channels, nestcl_u32 n,
                                       nestcl_u32 ring_slots, nestcl_u32 ch, nestcl_u32 i, nestcl_u64 first_gid,
                                       nestcl_u32 gen, nestcl_i64 origin, nestcl_i32 from, nestcl_i32 to,
                                       nestcl_i32 delay, nestcl_i64 value, nestcl_i32 is_poisson, nestcl_u32 seed,
                                       NESTCL_GLOBAL const double *cdf, nestcl_u32 cdf_len, nestcl_u32 kstop,
                                       nestcl_u32 chunks)
{
  nestcl_philox_key key = nestcl_rng_key(seed, NESTCL_RNG_PURPOSE_POISSON);
  nestcl_u64 id = (first_gid + i) | ((nestcl_u64)gen << 40);
  for (nestcl_i32 lag = from; lag < to; ++lag) {
    nestcl_i64 step = origin + lag;
    nestcl_u32 k = 1u;
    if (is_poisson) {
      nestcl_rng_stream s = nestcl_stream_init(key, nestcl_rng_counter(id, (nestcl_u64)step));
      k = 0u;
      for (nestcl_u32 c = 0u; c < chunks; ++c) {
        k += nestcl_poisson_table(nestcl_stream_uniform(&s), cdf, cdf_len, kstop);
      }
    }
    if (k != 0u) {
      nestcl_u32 slot = nestcl_ring_slot(step, delay, ring_slots);
      nestcl_ring_add_fixed(ring, n_channels, n, slot, ch, i, (nestcl_i64)((nestcl_u64)k * (nestcl_u64)value));
    }
  }
}
/*
 * The part of a row [r0, r1) that work-item g of a work-group of G walks: on
 * GPUs every G-th synapse from g (neighbouring lanes read neighbouring
 * synapses); on CPU devices (NESTCL_DELIVER_CONTIGUOUS) a contiguous chunk.
 */
NESTCL_INLINE void nestcl_row_part(nestcl_u64 r0, nestcl_u64 r1, nestcl_u64 g, nestcl_u64 G, nestcl_u64 *k0,
                                   nestcl_u64 *k1, nestcl_u64 *stride)
{
#ifdef NESTCL_DELIVER_CONTIGUOUS
  nestcl_u64 chunk = (r1 - r0 + G - 1) / G;
  *k0 = r0 + g * chunk;
  *k1 = *k0 + chunk < r1 ? *k0 + chunk : r1;
  *stride = 1;
#else
  *k0 = r0 + g;
  *k1 = r1;
  *stride = G;
#endif
}

/* NEST's Time::step( step ).get_ms(): the tics of the step times the length of a tic. */
NESTCL_INLINE double nestcl_step_ms(nestcl_i64 step, nestcl_i64 tics_per_step, double ms_per_tic)
{
  return ms_per_tic * (double)(step * tics_per_step);
}

/*
 * What a translated synapse's send() delivers: weight w of a spike emitted at
 * spike_step, into the channel the target's handle(SpikeEvent&) picks by the
 * sign of the weight (checked on the host to add the weight unchanged).
 */
NESTCL_INLINE void nestcl_plastic_emit(NESTCL_GLOBAL nestcl_i64 *ring, nestcl_u32 n_channels, nestcl_u32 n,
                                       nestcl_u32 ring_slots, nestcl_i64 spike_step, nestcl_i64 delay, nestcl_u32 i,
                                       double w, nestcl_u32 ch_pos, nestcl_u32 ch_neg, nestcl_u32 ch_zero)
{
  nestcl_u32 ch = w > 0.0 ? ch_pos : (w < 0.0 ? ch_neg : ch_zero);
  nestcl_ring_add_fixed(ring, n_channels, n, nestcl_ring_slot(spike_step, delay, ring_slots), ch, i,
                        nestcl_fixed_from_double(w));
}

/*
 * ArchivingNode::set_spiketime for the spikes of neuron i in this super step:
 * their lags at lags[stride * q] for q in [q0, q1), in increasing order (the
 * pairs (index, lag) of a sorted list: lags = pairs + 1, stride 2). A spike
 * already in the history (last_spike >= its time: a retry after the ring
 * grew) is skipped. Returns 0, or 1 when the ring is full (the spikes from
 * there on are not appended).
 */
NESTCL_INLINE int nestcl_hist_append_neuron(const nestcl_history *h, nestcl_u32 i, NESTCL_GLOBAL const nestcl_u32 *lags,
                                            nestcl_u32 stride, nestcl_u32 q0, nestcl_u32 q1, nestcl_i64 origin,
                                            nestcl_i64 tics_per_step, double ms_per_tic, double tau_minus_inv,
                                            double tau_minus_triplet_inv, double min_delay_ms, double eps, int fused)
{
  for (nestcl_u32 q = q0; q < q1; ++q) {
    double t = nestcl_step_ms(origin + (nestcl_i64)lags[stride * q] + 1, tics_per_step, ms_per_tic);
    if (h->last_spike[i] >= t) {
      continue;
    }
    if (nestcl_hist_set_spiketime(h, i, t, tau_minus_inv, tau_minus_triplet_inv, min_delay_ms, eps, fused)) {
      return 1;
    }
  }
  return 0;
}

/*
 * The device loop's per-source view of a super step's spikes
 * (host/src/engine/device_loop/resident_plastic.c): neuron gid's lags are
 * lags[gid * width, + count), count in the low NESTCL_BUCKET_BITS bits of
 * word[gid] when its high bits are the super step's stamp, in the order the
 * gather wrote them; a reader sorts them first (a neuron's spikes of one super
 * step: a few at most, so an insertion sort).
 */
#define NESTCL_BUCKET_BITS 24
NESTCL_INLINE nestcl_u32 nestcl_bucket_count(nestcl_u64 word)
{
  return (nestcl_u32)(word & (((nestcl_u64)1 << NESTCL_BUCKET_BITS) - 1u));
}

NESTCL_INLINE void nestcl_sort_lags(NESTCL_GLOBAL nestcl_u32 *v, nestcl_u32 n)
{
  for (nestcl_u32 a = 1u; a < n; ++a) {
    const nestcl_u32 x = v[a];
    nestcl_u32 b = a;
    while (b > 0u && v[b - 1u] > x) {
      v[b] = v[b - 1u];
      --b;
    }
    v[b] = x;
  }
}
/*
 * Device-resident super steps (host/src/engine/device_loop/resident.c). The words of a
 * stream's status buffer (ulong), which the host reads only when it drains.
 */
#define NESTCL_RES_GLOBAL_N 0 /* [0], [1]: the global list's length, by the super step's parity */
#define NESTCL_RES_SPIKES 2 /* spikes gathered since the build */
#define NESTCL_RES_EVENTS 3 /* synapses those spikes walk (their out-degrees) */
#define NESTCL_RES_FAILED 4 /* 1 + the origin of the first super step with an error; 0: none */
#define NESTCL_RES_RECORDED 5 /* entries in the recording buffer since the last drain */
#define NESTCL_RES_ERR_WORDS 6 /* per block in errs: the count words (model.h, Failures), then a bad-entry flag */
/*
 * A replayed super step (a command buffer, resident_graph.c) has fixed
 * arguments, so its kernels read the clock here: [7] the origin of the super
 * step to update and gather, which the gather copies to [6] for the end of the
 * super step, which advances [7] by the min delay; [8] the recording window's
 * origin (the host writes it when it drains).
 */
#define NESTCL_RES_CLOCK_END 6
#define NESTCL_RES_CLOCK 7
#define NESTCL_RES_WINDOW 8
/*
 * Plastic synapses (host/src/engine/device_loop/resident_plastic.c): [9], [10] the
 * super step's spiking sources in the bucket list, by parity; [11] 1 + the
 * origin of a super step whose history append found a ring full (a halt:
 * every kernel of later super steps does nothing until the host has grown the
 * ring and run the rest of that super step again); [12] the smallest gid of
 * such a neuron (ULONG_MAX: none).
 */
#define NESTCL_RES_SRC_N 9
#define NESTCL_RES_HALT 11
#define NESTCL_RES_HALT_GID 12
/* Marks per gid (the gather's `marks`): recorded by a spike recorder; bucketed for plastic synapses. */
#define NESTCL_MARK_RECORDED 1u
#define NESTCL_MARK_BUCKET 2u

#endif /* NESTCL_CORE_COMMON */

#ifdef NESTCL_W_T
#define NESTCL_CORE_CAT2(a, b) a##b
#define NESTCL_CORE_CAT(a, b) NESTCL_CORE_CAT2(a, b)

/*
 * Synapses [k0, k1) of one row with stride, for a spike emitted at step
 * spike_step: weight converted to fixed point (the same rounding on both
 * paths), added at slot (spike_step + delay).
 */
NESTCL_INLINE void NESTCL_CORE_CAT(nestcl_deliver_range, NESTCL_W_SUFFIX)(
  NESTCL_GLOBAL nestcl_i64 *ring, nestcl_u32 n_channels, nestcl_u32 n, nestcl_u32 ring_slots,
  NESTCL_GLOBAL const nestcl_u32 *target, NESTCL_GLOBAL const NESTCL_W_T *weight, NESTCL_GLOBAL const nestcl_u16 *delay,
  nestcl_u32 delay_hom, nestcl_i64 spike_step, nestcl_u64 k0, nestcl_u64 k1, nestcl_u64 stride)
{
  if (delay_hom != NESTCL_DELAY_PER_SYNAPSE) {
    nestcl_u32 slot = nestcl_ring_slot(spike_step, (nestcl_i64)delay_hom, ring_slots);
    for (nestcl_u64 k = k0; k < k1; k += stride) {
      nestcl_u32 t = target[k];
      nestcl_ring_add_fixed(ring, n_channels, n, slot, t >> NESTCL_TARGET_INDEX_BITS, t & NESTCL_TARGET_INDEX_MASK,
                            nestcl_fixed_from_double((double)weight[k]));
    }
  } else {
    for (nestcl_u64 k = k0; k < k1; k += stride) {
      nestcl_u32 t = target[k];
      nestcl_u32 slot = nestcl_ring_slot(spike_step, (nestcl_i64)delay[k], ring_slots);
      nestcl_ring_add_fixed(ring, n_channels, n, slot, t >> NESTCL_TARGET_INDEX_BITS, t & NESTCL_TARGET_INDEX_MASK,
                            nestcl_fixed_from_double((double)weight[k]));
    }
  }
}
#endif /* NESTCL_W_T */
