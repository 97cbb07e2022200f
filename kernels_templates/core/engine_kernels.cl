/*
 * engine_kernels.cl: the engine's hand-written kernels. The host builds them
 * from nestcl_rt_source + nestcl_core.h + this text, with -DNESTCL_W_T=float
 * (or double) -DNESTCL_W_SUFFIX=_f (or _d). The work is in nestcl_core.h, which
 * the CPU VPs run as C.
 */

/*
 * Delivery of one super step's global spike list into this block's ring.
 * One work-group per spike: work-item (g, s) of a work-group of G = local size
 * in dimension 0 walks part of spike s's row. Dimension 0 is the position in
 * the row because devices group work-items into SIMD lanes (warps, wavefronts)
 * along dimension 0 first: on a GPU, lanes g, g+1, ... read neighbouring
 * synapses (coalesced) with the stride G. On a CPU device each work-item is a
 * sequential loop, so it walks a contiguous chunk of the row instead (the host
 * builds with NESTCL_DELIVER_CONTIGUOUS there): a stride of G would make every
 * work-item touch every cache line of the row again.
 * Additions are 64-bit integer atomics: the sum does not depend on their order.
 */
__kernel void nestcl_deliver(__global const uint2 *spikes, uint n_spikes, long origin, __global const ulong *row_ptr,
                             __global const uint *target, __global const NESTCL_W_T *weight,
                             __global const nestcl_u16 *delay, uint delay_hom, __global long *ring, uint ring_slots,
                             uint n, uint n_channels)
{
  size_t s = get_global_id(1);
  if (s >= n_spikes) {
    return;
  }
  uint2 sp = spikes[s];
  ulong r0 = row_ptr[sp.x], r1 = row_ptr[sp.x + 1];
  ulong k0, k1, stride;
  nestcl_row_part(r0, r1, (ulong)get_local_id(0), (ulong)get_local_size(0), &k0, &k1, &stride);
  NESTCL_CORE_CAT(nestcl_deliver_range, NESTCL_W_SUFFIX)
  (ring, n_channels, n, ring_slots, target, weight, delay, delay_hom, origin + (long)sp.y, k0, k1, stride);
}

/* poisson_generator / dc_generator input of one block, one work-item per neuron. */
__kernel void nestcl_drive(__global long *ring, uint n_channels, uint n, uint ring_slots, uint ch, ulong first_gid,
                           uint gen, long origin, int from, int to, int delay, long value, int is_poisson, uint seed,
                           __global const double *cdf, uint cdf_len, uint kstop, uint chunks)
{
  uint i = (uint)get_global_id(0);
  if (i >= n) {
    return;
  }
  nestcl_drive_neuron(ring, n_channels, n, ring_slots, ch, i, first_gid, gen, origin, from, to, delay, value,
                      is_poisson, seed, cdf, cdf_len, kstop, chunks);
}

/*
 * Spike history of one block (ArchivingNode::set_spiketime), after the update
 * of a super step and before its delivery: pairs (local index, lag) sorted by
 * index, then lag; the work-item of each index's first pair appends that
 * neuron's spikes in order. A full ring sets flag[0] and the smallest such
 * neuron in flag[1]; the host grows the ring and runs this again (appended
 * spikes are skipped then).
 */
__kernel void nestcl_hist_append(__global const uint *pairs, uint n_pairs, long origin, long tics_per_step,
                                 double ms_per_tic, double tau_minus_inv, double tau_minus_triplet_inv,
                                 double min_delay_ms, double eps, int fused, __global uint *flag, __global double *h_t,
                                 __global double *h_km, __global double *h_kmt, __global uint *h_acc,
                                 __global uint *h_head, __global uint *h_len, __global double *h_Km,
                                 __global double *h_Kmt, __global double *h_last, __global uint *h_nin,
                                 __global double *h_maxd, uint h_cap)
{
  uint q = (uint)get_global_id(0);
  if (q >= n_pairs || (q > 0u && pairs[2u * (q - 1u)] == pairs[2u * q])) {
    return;
  }
  uint i = pairs[2u * q], q1 = q + 1u;
  while (q1 < n_pairs && pairs[2u * q1] == i) {
    ++q1;
  }
  nestcl_history h = {h_t, h_km, h_kmt, h_acc, h_head, h_len, h_Km, h_Kmt, h_last, h_nin, h_maxd, h_cap};
  if (nestcl_hist_append_neuron(&h, i, pairs + 1, 2u, q, q1, origin, tics_per_step, ms_per_tic, tau_minus_inv,
                                tau_minus_triplet_inv, min_delay_ms, eps, fused)) {
    atomic_inc(&flag[0]);
    atomic_min(&flag[1], i);
  }
}

/* The device loop's status words (NESTCL_RES_*) and marks: nestcl_core.h. */

/*
 * Spike (gid, lag) into gid's bucket: the count in its word counts up while
 * the word's stamp is this super step's (a compare-and-swap, so that spikes
 * of one neuron gathered side by side each get their own place), else starts
 * at 1 and puts gid on the list of the super step's sources. Returns nonzero
 * when the bucket is full (more than width spikes of one neuron: the host
 * sizes it so that this cannot happen).
 */
NESTCL_INLINE int nestcl_bucket_add(__global ulong *word, __global uint *src, __global uint *lags, uint width,
                                    __global ulong *n_src, uint gid, uint lag, ulong stamp)
{
  ulong old = word[gid], seen;
  uint c;
  for (;;) {
    c = (old >> NESTCL_BUCKET_BITS) == stamp ? nestcl_bucket_count(old) : 0u;
    seen = atom_cmpxchg(&word[gid], old, (stamp << NESTCL_BUCKET_BITS) | (ulong)(c + 1u));
    if (seen == old) {
      break;
    }
    old = seen;
  }
  if (c == 0u) {
    src[atom_inc(n_src)] = gid;
  }
  if (c >= width) {
    return 1;
  }
  lags[(ulong)gid * width + c] = lag;
  return 0;
}

/*
 * The end of a super step, one work-group per block: the block's spikes
 * (local index, lag) become (gid, lag) entries of the global list, in no
 * particular order (static delivery's fixed-point sums do not depend on it,
 * and the host sorts what it records); the recorded neurons' entries go to
 * the recording buffer as (gid, step since the window's origin); then the
 * block's count words are zeroed for the next super step (NEST's spike
 * register clears at the same point) and the next super step's list length
 * with them. A block whose update failed, whose list overflowed or which
 * wrote an entry out of range leaves its count words in errs the first super
 * step this happens (later ones do not overwrite them), with that super
 * step's origin in status: the host reports them when it next drains, naming
 * the step where they happened. Neurons marked NESTCL_MARK_BUCKET (sources
 * and targets of plastic synapses) also go to their bucket (nestcl_core.h),
 * the first spike of each to the list of this super step's sources.
 */
NESTCL_INLINE void nestcl_gather_block(uint b, __local uint *bad, int halted, int clocked, __global uint *counts,
                                       __global const uint *spikes, __global const uint *blocks,
                                       __global const ulong *block_gid, uint min_delay, long origin, uint parity,
                                       __global uint *global_list, __global ulong *status,
                                       __global const uint *out_degree, __global const uchar *recorded,
                                       __global uint *rec, ulong rec_cap, long window_origin, __global uint *errs,
                                       __global ulong *bucket_word, __global uint *bucket_src,
                                       __global uint *bucket_lags, uint bucket_width)
{
  const ulong stamp = (ulong)(origin / (long)min_delay) + 1ul;
  const uint lid = (uint)get_local_id(0), ls = (uint)get_local_size(0);
  /* blocks[4b ...]: count words' offset, spike list's offset (entries), capacity, neurons */
  __global uint *cnt = counts + blocks[4u * b];
  __global const uint *sp = spikes + 2u * (ulong)blocks[4u * b + 1u];
  const uint cap = blocks[4u * b + 2u], n = blocks[4u * b + 3u];
  if (lid == 0u) {
    *bad = 0u;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint count = cnt[0], failed = cnt[1];
  const uint m = halted ? 0u : count < cap ? count : cap;
  const ulong gid0 = block_gid[b];
  ulong events = 0;
  for (uint j = lid; j < m; j += ls) {
    const uint i = sp[2u * j], lag = sp[2u * j + 1u];
    if (i >= n || lag >= min_delay) {
      atomic_or(bad, 1u);
      continue;
    }
    const uint gid = (uint)(gid0 + i);
    const ulong at = atom_inc(&status[NESTCL_RES_GLOBAL_N + parity]);
    global_list[2u * at] = gid;
    global_list[2u * at + 1u] = lag;
    events += out_degree[gid];
    const uint mark = recorded[gid];
    if ((mark & NESTCL_MARK_BUCKET) != 0u &&
        nestcl_bucket_add(bucket_word, bucket_src, bucket_lags, bucket_width, &status[NESTCL_RES_SRC_N + parity], gid,
                          lag, stamp)) {
      atomic_or(bad, 1u);
    }
    if ((mark & NESTCL_MARK_RECORDED) != 0u) {
      const ulong r = atom_inc(&status[NESTCL_RES_RECORDED]);
      if (r < rec_cap) {
        rec[2u * r] = gid;
        rec[2u * r + 1u] = (uint)(origin - window_origin) + lag;
      }
    }
  }
  if (events) {
    atom_add(&status[NESTCL_RES_EVENTS], events);
  }
  /* Every work-item has read the count words before they are cleared. */
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  if (lid == 0u && !halted) {
    atom_add(&status[NESTCL_RES_SPIKES], (ulong)m);
    if (failed != 0u || count > cap || *bad != 0u) {
      const ulong prev = atom_cmpxchg(&status[NESTCL_RES_FAILED], 0ul, (ulong)origin + 1ul);
      if (prev == 0ul || prev == (ulong)origin + 1ul) {
        for (uint w = 0; w < 5u; ++w) {
          errs[NESTCL_RES_ERR_WORDS * b + w] = cnt[w];
        }
        errs[NESTCL_RES_ERR_WORDS * b + 5u] = *bad;
      }
    }
    for (uint w = 0; w < 5u; ++w) {
      cnt[w] = 0u;
    }
    if (b == 0u) {
      status[NESTCL_RES_GLOBAL_N + (parity ^ 1u)] = 0ul;
      status[NESTCL_RES_SRC_N + (parity ^ 1u)] = 0ul;
      if (clocked) {
        status[NESTCL_RES_CLOCK_END] = (ulong)origin;
      }
    }
  }
}


/*
 * The gather as a kernel of the launched loop: work-group b takes block b. A
 * replay (clocked, resident_graph.c) reads the super step's origin and the
 * recording window's from the status words.
 */
__kernel void nestcl_gather(__global uint *counts, __global const uint *spikes, __global const uint *blocks,
                            __global const ulong *block_gid, uint min_delay, long origin, uint parity,
                            __global uint *global_list, __global ulong *status, __global const uint *out_degree,
                            __global const uchar *recorded, __global uint *rec, ulong rec_cap, long window_origin,
                            __global uint *errs, int clocked, __global ulong *bucket_word, __global uint *bucket_src,
                            __global uint *bucket_lags, uint bucket_width)
{
  __local uint bad;
  /*
   * Halted (a full history ring; only with plastic synapses, which have
   * buckets: resident_plastic.c): nothing until the host resumes. No return
   * before a barrier: PoCL 3.1 mis-ran this kernel with one (lid 0's part ran
   * once per work-item).
   */
  const int halted = bucket_width != 0u && status[NESTCL_RES_HALT] != 0ul;
  if (clocked) {
    origin = (long)status[NESTCL_RES_CLOCK];
    parity = (uint)((origin / (long)min_delay) & 1);
    window_origin = (long)status[NESTCL_RES_WINDOW];
  }
  nestcl_gather_block((uint)get_group_id(0), &bad, halted, clocked, counts, spikes, blocks, block_gid, min_delay,
                      origin, parity, global_list, status, out_degree, recorded, rec, rec_cap, window_origin, errs,
                      bucket_word, bucket_src, bucket_lags, bucket_width);
}

/*
 * eng_drive_window (host/src/engine/cycle.c) on the device: the lags [*f, *t)
 * of [0, to) at which a generator active at steps start < s <= stop is on
 * (stop LONG_MAX: no end); *f == *t when none.
 */
NESTCL_INLINE void nestcl_drive_window(long start_step, long stop_step, long origin, int to, int *f, int *t)
{
  const long lo = start_step + 1 - origin, hi = stop_step == LONG_MAX ? (long)to : stop_step + 1 - origin;
  *f = lo > 0 ? (int)(lo < to ? lo : to) : 0;
  *t = hi < to ? (int)(hi > 0 ? hi : 0) : to;
}

/*
 * Spike s of the global list that nestcl_gather left on the device, delivered
 * into one block by the work-group: its lanes split the source's row
 * (nestcl_row_part). The device loop's merged delivery kernel
 * (device_loop/resident_merge.c generates it) hands its work-groups such
 * (spike, block) pairs in turn, as many as the list it reads there has: its
 * grid is a few work-groups per compute unit, whatever the list's length,
 * and a short list costs a short kernel (issue 41).
 */
NESTCL_INLINE void nestcl_deliver_spike(__global const uint *spikes, ulong s, long origin,
                                        __global const ulong *row_ptr, __global const uint *target,
                                        __global const NESTCL_W_T *weight, __global const nestcl_u16 *delay,
                                        uint delay_hom, __global long *ring, uint ring_slots, uint n, uint n_channels)
{
  const uint gid = spikes[2u * s], lag = spikes[2u * s + 1u];
  ulong r0 = row_ptr[gid], r1 = row_ptr[gid + 1u];
  ulong k0, k1, stride;
  nestcl_row_part(r0, r1, (ulong)get_local_id(0), (ulong)get_local_size(0), &k0, &k1, &stride);
  NESTCL_CORE_CAT(nestcl_deliver_range, NESTCL_W_SUFFIX)
  (ring, n_channels, n, ring_slots, target, weight, delay, delay_hom, origin + (long)lag, k0, k1, stride);
}

/*
 * A grid barrier of the persistent device loop (device_loop/resident_persist.c,
 * issue 41): every work-group of the launch waits here until all have
 * arrived. bar[0] counts arrivals, bar[1] is the barrier's generation, bar[2]
 * the loop's error word. The last to arrive resets the count and moves the
 * generation on; the others spin on the generation, at most `spins` reads:
 * a barrier that does not complete in them (more work-groups than the device
 * runs at once, which the host's residency check should have prevented)
 * sets the error word, and every work-group that sees it leaves at its next
 * barrier, so the launch ends, never hangs, and the host reports it. Only
 * work-item 0 of a group spins; the group waits for it at a local barrier.
 * The fences before the arrival and after the wait order the phases' global
 * writes across work-groups. Returns 1 when the loop must stop.
 */
NESTCL_INLINE int nestcl_grid_sync(volatile __global uint *bar, uint groups, ulong spins, __local uint *stop)
{
  barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0u) {
    uint fail = atomic_add(&bar[2], 0u);
    const uint gen = atomic_add(&bar[1], 0u);
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    if (fail == 0u && atomic_inc(&bar[0]) == groups - 1u) {
      atomic_xchg(&bar[0], 0u);
      mem_fence(CLK_GLOBAL_MEM_FENCE);
      atomic_inc(&bar[1]);
    } else {
      for (ulong k = 0ul; fail == 0u && atomic_add(&bar[1], 0u) == gen; ++k) {
        fail = k >= spins ? 1u : atomic_add(&bar[2], 0u);
      }
    }
    if (fail != 0u) {
      atomic_xchg(&bar[2], 1u);
    }
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    *stop = fail;
  }
  barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
  return *stop != 0u;
}

/*
 * The device loop's spike history of one block (ArchivingNode::set_spiketime,
 * host/src/engine/device_loop/resident_plastic.c): after the gather, before any plastic
 * delivery of the super step; each work-item takes every get_global_size-th
 * of the super step's sources, and those of this block (gids [first_gid,
 * first_gid + n)) append their spikes, sorted by lag, to their history. A
 * full ring halts the loop at this super step (status [11], the smallest such
 * gid in [12]): the host grows the ring and launches this again for the same
 * super step, which skips the spikes appended already. Clocked (a replay):
 * the origin is the one the gather left in [6].
 */
__kernel void nestcl_hist_append_loop(__global ulong *status, __global const uint *bucket_src,
                                      __global const ulong *bucket_word, __global uint *bucket_lags, uint bucket_width,
                                      uint min_delay, long origin, int clocked, ulong first_gid, uint n,
                                      long tics_per_step, double ms_per_tic, double tau_minus_inv,
                                      double tau_minus_triplet_inv, double min_delay_ms, double eps, int fused,
                                      __global double *h_t, __global double *h_km, __global double *h_kmt,
                                      __global uint *h_acc, __global uint *h_head, __global uint *h_len,
                                      __global double *h_Km, __global double *h_Kmt, __global double *h_last,
                                      __global uint *h_nin, __global double *h_maxd, uint h_cap)
{
  if (clocked) {
    origin = (long)status[NESTCL_RES_CLOCK_END];
  }
  /* Halted by an earlier super step: nothing. (This one's own halt is the host's retry.) */
  const ulong halt = status[NESTCL_RES_HALT];
  if (halt != 0ul && halt != (ulong)origin + 1ul) {
    return;
  }
  const uint parity = (uint)((origin / (long)min_delay) & 1);
  const ulong n_src = status[NESTCL_RES_SRC_N + parity];
  nestcl_history h = {h_t, h_km, h_kmt, h_acc, h_head, h_len, h_Km, h_Kmt, h_last, h_nin, h_maxd, h_cap};
  for (ulong s = get_global_id(0); s < n_src; s += get_global_size(0)) {
    const ulong gid = bucket_src[s];
    if (gid < first_gid || gid - first_gid >= (ulong)n) {
      continue;
    }
    const uint i = (uint)(gid - first_gid);
    uint c = nestcl_bucket_count(bucket_word[gid]);
    c = c < bucket_width ? c : bucket_width;
    __global uint *lags = bucket_lags + gid * bucket_width;
    nestcl_sort_lags(lags, c);
    if (nestcl_hist_append_neuron(&h, i, lags, 1u, 0u, c, origin, tics_per_step, ms_per_tic, tau_minus_inv,
                                  tau_minus_triplet_inv, min_delay_ms, eps, fused)) {
      atom_cmpxchg(&status[NESTCL_RES_HALT], 0ul, (ulong)origin + 1ul);
      ulong cur = status[NESTCL_RES_HALT_GID];
      while (gid < cur) { /* atom_min without cl_khr_int64_extended_atomics */
        const ulong seen = atom_cmpxchg(&status[NESTCL_RES_HALT_GID], cur, gid);
        if (seen == cur) {
          break;
        }
        cur = seen;
      }
    }
  }
}
