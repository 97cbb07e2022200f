/*
 * plastic_kernels.cl: delivery through a translated synapse model (docs/architecture.md,
 * "Plastic synapses and the spike history"). The host builds one program per synapse model from
 * nestcl_rt_source, a prelude naming the model (host/src/plastic_dev.c):
 *   NESTCL_SYN_T, NESTCL_SYNCP_T   the synapse and common-properties structs
 *   NESTCL_SYN_SEND                its send()
 *   NESTCL_SYN_STATE(X), NESTCL_SYN_SOURCE(X)
 *                                  X(member, type, off) for every per-synapse and
 *                                  per-source field: its array starts at byte
 *                                  off * count of the state buffer
 * then the model's <model>_syn.cl, then this text. The C path
 * (plastic_cpu.c) does the same through the descriptor.
 *
 * Each synapse is updated by exactly one work-item, which runs all spikes of
 * its source in this super step through it in time order; so a weight never
 * depends on scheduling. Every synapse of a row computes the same per-source
 * values (the translator's proof of the role), so the per-source state is
 * read as it was at the launch's start and written back once per row. Two
 * shapes (plastic_dev.c picks one per device, NESTCL_PLASTIC_SHAPE forces it):
 *
 *   per source (CPU devices): one work-group per spiking source (dimension 1),
 *   whose work-items share the source's row (dimension 0: contiguous chunks,
 *   or strided as nestcl_deliver). The per-source state is read by every
 *   work-item before a barrier and written back by the work-item of the row's
 *   first synapse. PoCL runs a work-group's items in sequence, so a row is one
 *   cache-friendly walk.
 *
 *   flat (NESTCL_PLASTIC_FLAT, GPUs): work follows synapses. The spiking
 *   sources' rows, one after another, are one list of synapses. A work-group
 *   stages the list a tile of NESTCL_PLASTIC_TILE sources (its width) at a
 *   time in local memory (each source's row, spikes and row length, whose
 *   prefix sums place its synapses in the list) and cuts the tile into chunks
 *   of span times its width synapses (span 1 to NESTCL_PLASTIC_SPAN, as many
 *   as give every work-group a chunk); work-group g of G takes every G-th
 *   chunk, and in a chunk work-item l the synapses l, l + width, ..., so
 *   neighbouring work-items read neighbouring synapses of a row and every
 *   work-item has work however long or short the rows are. A synapse finds
 *   its source by binary search in the tile. The per-source state of a
 *   chunk's rows is staged in local memory before the chunk runs, and what a
 *   row's first synapse in the chunk leaves there after. A row spans chunks
 *   and work-groups: each chunk then adds its synapses of the row to the
 *   row's counter (row_done), and the chunk that completes the row writes the
 *   per-source state back and clears the counter for the next launch (a row
 *   wholly in one chunk needs no counter). The per-source loads and stores
 *   are atomic (an add of 0, an exchange): a row's state is read and written
 *   by different work-groups, ordered by the counter, which a race checker
 *   cannot see.
 *
 * Where the sources come from (loop):
 *   0  the host's list: srcs[3s .. 3s+2] = (gid, q0, q1), lags[q0, q1) in
 *      time order, n_srcs of them (cycle.c);
 *   1  the device loop (host/src/engine/device_loop/resident_plastic.c): the super step's
 *      sources srcs[s] (their number in status), each neuron's lags in its
 *      bucket (nestcl_core.h) in the order the gather wrote them (the per-source
 *      shape sorts them first; the flat shape takes them in time order without
 *      writing them); a fixed number of work-groups; nothing after a halt
 *      (engine_kernels.cl, NESTCL_RES_HALT);
 *   2  the same, clocked (a replay): the origin is the one the gather left in
 *      the status words.
 */
#define NESTCL_SYN_LOAD_STATE(m, T, off) self.m = ((__global const T *)(state + (ulong)(off)*nnz))[k];
#define NESTCL_SYN_STORE_STATE(m, T, off) ((__global T *)(state + (ulong)(off)*nnz))[k] = self.m;
#define NESTCL_SYN_LOAD_SOURCE(m, T, off) base.m = ((__global const T *)(src_state + (ulong)(off)*n_rows))[row];
#define NESTCL_SYN_STORE_SOURCE(m, T, off) ((__global T *)(src_state + (ulong)(off)*n_rows))[row] = self.m;

#ifdef NESTCL_PLASTIC_FLAT
/* Sources per tile: the most work-items of a work-group the host launches in this shape (plastic_dev.h). */
#define NESTCL_PLASTIC_TILE 256
/* The most synapses a work-item takes in one chunk (a chunk: that many times the work-group's width). */
#define NESTCL_PLASTIC_SPAN 8
/* Atomic loads (an add of 0) and stores of the per-source fields, by their type's name. */
#define NESTCL_PL_ALOAD_double(p) as_double(atom_add((volatile __global ulong *)(p), 0ul))
#define NESTCL_PL_ALOAD_long(p) as_long(atom_add((volatile __global ulong *)(p), 0ul))
#define NESTCL_PL_ALOAD_ulong(p) atom_add((volatile __global ulong *)(p), 0ul)
#define NESTCL_PL_ALOAD_int(p) atomic_add((volatile __global int *)(p), 0)
#define NESTCL_PL_ASTORE_double(p, v) atom_xchg((volatile __global ulong *)(p), as_ulong(v))
#define NESTCL_PL_ASTORE_long(p, v) atom_xchg((volatile __global ulong *)(p), as_ulong(v))
#define NESTCL_PL_ASTORE_ulong(p, v) atom_xchg((volatile __global ulong *)(p), (v))
#define NESTCL_PL_ASTORE_int(p, v) atomic_xchg((volatile __global int *)(p), (v))
#define NESTCL_PL_SRC(m, T, off, row) (((__global T *)(src_state + (ulong)(off)*n_rows)) + (row))
/*
 * Per source field, in local memory for each source of the tile: its value as
 * at the launch's start (l_src_), and as a chunk's synapses of the row leave
 * it (l_fin_, which every synapse of a row computes alike).
 */
#define NESTCL_PL_LOCAL(m, T, off) __local T l_src_##m[NESTCL_PLASTIC_TILE], l_fin_##m[NESTCL_PLASTIC_TILE];
#define NESTCL_PL_STAGE(m, T, off) l_src_##m[jj] = NESTCL_PL_ALOAD_##T(NESTCL_PL_SRC(m, T, off, l_row[jj]));
#define NESTCL_PL_TAKE(m, T, off) self.m = l_src_##m[j];
#define NESTCL_PL_KEEP(m, T, off) l_fin_##m[j] = self.m;
#define NESTCL_PL_WRITE(m, T, off) NESTCL_PL_ASTORE_##T(NESTCL_PL_SRC(m, T, off, l_row[jj]), l_fin_##m[jj]);

/* The source of the tile in [lo, hi] whose synapses hold position at (end: the inclusive prefix sums). */
NESTCL_INLINE uint nestcl_plastic_find(__local const ulong *end, uint lo, uint hi, ulong at)
{
  while (lo < hi) {
    const uint mid = (lo + hi) >> 1;
    if (end[mid] > at) {
      hi = mid;
    } else {
      lo = mid + 1u;
    }
  }
  return lo;
}

/*
 * Position in [0, c) of the spike that follows the one at (lag, pos) in time
 * order (ties by position, as a stable sort would put them), or of the first
 * one when pos == c: the bucket is read, not sorted in place, since other
 * work-groups read it at the same time. A source spikes a few times per super
 * step at most (once in most), so a scan per spike costs little.
 */
NESTCL_INLINE uint nestcl_plastic_next(__global const uint *lags, uint c, uint lag, uint pos, uint *next_lag)
{
  uint best = c, best_lag = 0u;
  for (uint p = 0u; p < c; ++p) {
    const uint v = lags[p];
    const int after = pos == c || v > lag || (v == lag && p > pos);
    if (after && (best == c || v < best_lag)) {
      best = p;
      best_lag = v;
    }
  }
  *next_lag = best_lag;
  return best;
}

/* Source s of the list: its row (in range: *len its synapses), its spikes at lags[*q0, *q0 + *c). */
NESTCL_INLINE void nestcl_plastic_source(ulong s, int loop, __global const uint *srcs,
                                         __global const ulong *bucket_word, uint bucket_width, ulong src_first,
                                         uint n_rows, __global const ulong *row_ptr, uint *row, ulong *r0, ulong *len,
                                         uint *q0, uint *c)
{
  ulong gid;
  uint q1;
  if (loop == 0) {
    gid = srcs[3 * s];
    *q0 = srcs[3 * s + 1];
    q1 = srcs[3 * s + 2];
  } else {
    gid = srcs[s];
    const uint n = nestcl_bucket_count(bucket_word[gid]);
    *q0 = (uint)(gid * bucket_width);
    q1 = *q0 + (n < bucket_width ? n : bucket_width);
  }
  if (gid >= src_first && gid - src_first < (ulong)n_rows) {
    *row = (uint)(gid - src_first);
    *r0 = row_ptr[*row];
    *len = row_ptr[*row + 1] - *r0;
    *c = q1 - *q0;
  }
}
#endif

__kernel void nestcl_plastic(__global const uint *srcs, uint n_srcs, __global uint *lags, long origin, ulong src_first,
                             uint n_rows, __global const ulong *row_ptr, __global const uint *target,
                             __global const nestcl_u16 *delay, uint delay_hom, __global uchar *state, ulong nnz,
                             __global uchar *src_state, __global const NESTCL_SYN_T *tmpl,
                             __global const NESTCL_SYNCP_T *cpg, __global long *ring, uint ring_slots, uint n,
                             uint n_channels, uint ch_pos, uint ch_neg, uint ch_zero, long rport, long tics_per_step,
                             double ms_per_tic, double ms_per_step, double eps, double tau_minus_inv, int fused,
                             __global double *h_t, __global double *h_km, __global double *h_kmt, __global uint *h_acc,
                             __global uint *h_head, __global uint *h_len, __global double *h_Km, __global double *h_Kmt,
                             __global double *h_last, __global uint *h_nin, __global double *h_maxd, uint h_cap,
                             __global const ulong *status, __global const ulong *bucket_word, uint bucket_width,
                             uint min_delay, int loop, __global uint *row_done)
{
  ulong n_list = n_srcs;
  if (loop != 0) {
    origin = loop == 2 ? (long)status[NESTCL_RES_CLOCK_END] : origin;
    n_list = status[NESTCL_RES_SRC_N + (uint)((origin / (long)min_delay) & 1)];
    n_list = status[NESTCL_RES_HALT] != 0ul ? 0ul : n_list; /* halted: nothing (no return before a barrier) */
  }
  NESTCL_SYNCP_T cp = *cpg;
  nestcl_history h = {h_t, h_km, h_kmt, h_acc, h_head, h_len, h_Km, h_Kmt, h_last, h_nin, h_maxd, h_cap};
  nestcl_syn_env env;
  env.hist = h_cap ? &h : 0;
  env.rport = rport;
  env.multiplicity = 1;
  env.tau_minus_inv = tau_minus_inv;
  env.eps = eps;
  env.fused = fused;
#ifdef NESTCL_PLASTIC_FLAT
  __local ulong l_end[NESTCL_PLASTIC_TILE]; /* the tile's row lengths, then their inclusive prefix sums */
  __local ulong l_r0[NESTCL_PLASTIC_TILE]; /* each row's first synapse */
  __local uint l_row[NESTCL_PLASTIC_TILE], l_q0[NESTCL_PLASTIC_TILE], l_c[NESTCL_PLASTIC_TILE];
  NESTCL_SYN_SOURCE(NESTCL_PL_LOCAL)
  const uint lid = (uint)get_local_id(0), W = (uint)get_local_size(0);
  const ulong g = get_group_id(1), G = get_num_groups(1);
  const NESTCL_SYN_T tmpl0 = *tmpl;
  ulong before = 0; /* chunks of the tiles before this one */
  for (ulong t0 = 0; t0 < n_list; t0 += W) {
    uint row = 0u, q0 = 0u, c = 0u;
    ulong r0 = 0, len = 0;
    if (t0 + lid < n_list) {
      nestcl_plastic_source(t0 + lid, loop, srcs, bucket_word, bucket_width, src_first, n_rows, row_ptr, &row, &r0,
                            &len, &q0, &c);
    }
    l_row[lid] = row;
    l_r0[lid] = r0;
    l_q0[lid] = q0;
    l_c[lid] = c;
    l_end[lid] = len;
    const uint ns = n_list - t0 < W ? (uint)(n_list - t0) : W; /* the tile's sources */
    for (uint off = 1u; off < ns; off <<= 1) { /* inclusive prefix sums of the first ns (Hillis and Steele) */
      barrier(CLK_LOCAL_MEM_FENCE);
      const ulong add = lid >= off ? l_end[lid - off] : 0ul;
      barrier(CLK_LOCAL_MEM_FENCE);
      l_end[lid] += add;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* Chunks of span W synapses: span as many as give every work-group a chunk, 1 to NESTCL_PLASTIC_SPAN. */
    const ulong n_tile = l_end[ns - 1u], per = n_tile / ((ulong)W * G);
    const ulong span = per < 1ul ? 1ul : (per > NESTCL_PLASTIC_SPAN ? NESTCL_PLASTIC_SPAN : per);
    const ulong size = span * W, n_ch = (n_tile + size - 1ul) / size;
    for (ulong ch = (g + G - before % G) % G; ch < n_ch; ch += G) {
      /* The chunk: synapses [a0, a1) of the tile, of its sources j0 to j1 (rows of none among them too). */
      const ulong a0 = ch * size, a1 = a0 + size < n_tile ? a0 + size : n_tile;
      const uint j0 = nestcl_plastic_find(l_end, 0u, ns - 1u, a0),
                 j1 = nestcl_plastic_find(l_end, j0, ns - 1u, a1 - 1ul);
      for (uint jj = j0 + lid; jj <= j1; jj += W) {
        if (l_end[jj] > (jj ? l_end[jj - 1u] : 0ul)) {
          NESTCL_SYN_SOURCE(NESTCL_PL_STAGE)
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      uint j = j0;
      for (ulong at = a0 + lid; at < a1; at += W) {
        j = nestcl_plastic_find(l_end, j, j1, at);
        const ulong start = j ? l_end[j - 1u] : 0ul;
        NESTCL_SYN_T self = tmpl0;
        NESTCL_SYN_SOURCE(NESTCL_PL_TAKE)
        const ulong k = l_r0[j] + (at - start);
        NESTCL_SYN_STATE(NESTCL_SYN_LOAD_STATE)
        const uint i = target[k] & NESTCL_TARGET_INDEX_MASK;
        const long d = delay_hom != NESTCL_DELAY_PER_SYNAPSE ? (long)delay_hom : (long)delay[k];
        env.target = i;
        env.delay_steps = d;
        env.delay_ms = (double)d * ms_per_step;
        const uint sc = l_c[j];
        __global const uint *sl = lags + l_q0[j];
        uint lag = 0u, pos = sc;
        for (uint m = 0u; m < sc; ++m) {
          pos = nestcl_plastic_next(sl, sc, lag, pos, &lag);
          const long step = origin + (long)lag;
          env.t_spike = nestcl_step_ms(step + 1, tics_per_step, ms_per_tic);
          double w = 0.0;
          if (NESTCL_SYN_SEND(&self, &cp, &env, &w)) {
            nestcl_plastic_emit(ring, n_channels, n, ring_slots, step, d, i, w, ch_pos, ch_neg, ch_zero);
          }
        }
        NESTCL_SYN_STATE(NESTCL_SYN_STORE_STATE)
        if (at == (start > a0 ? start : a0)) { /* the row's first synapse in the chunk */
          NESTCL_SYN_SOURCE(NESTCL_PL_KEEP)
        }
      }
      /* The chunk's synapses are done (and their rows' staged state read: the next chunk may stage again). */
      barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
      for (uint jj = j0 + lid; jj <= j1; jj += W) {
        const ulong s0 = jj ? l_end[jj - 1u] : 0ul, s1 = l_end[jj];
        if (s1 == s0) {
          continue;
        }
        const uint mine = (uint)((s1 < a1 ? s1 : a1) - (s0 > a0 ? s0 : a0)); /* the row's synapses in the chunk */
        const int whole = s0 >= a0 && s1 <= a1; /* the whole row in this chunk: no counter */
        if (whole || (ulong)atomic_add(&row_done[l_row[jj]], mine) + mine == s1 - s0) {
          NESTCL_SYN_SOURCE(NESTCL_PL_WRITE)
          if (!whole) {
            atomic_xchg(&row_done[l_row[jj]], 0u);
          }
        }
      }
    }
    before += n_ch;
    barrier(CLK_LOCAL_MEM_FENCE); /* the tile's arrays are read before the next tile's replace them */
  }
#else
  (void)row_done;
  for (ulong s = get_group_id(1); s < n_list; s += get_num_groups(1)) {
    ulong gid;
    uint q0, q1;
    if (loop == 0) {
      gid = srcs[3 * s];
      q0 = srcs[3 * s + 1];
      q1 = srcs[3 * s + 2];
    } else {
      gid = srcs[s];
      uint c = nestcl_bucket_count(bucket_word[gid]);
      q0 = (uint)(gid * bucket_width);
      q1 = q0 + (c < bucket_width ? c : bucket_width);
    }
    if (gid < src_first || gid - src_first >= (ulong)n_rows) {
      continue; /* the same for the whole work-group */
    }
    if (loop != 0 && get_local_id(0) == 0) {
      nestcl_sort_lags(lags + q0, q1 - q0);
    }
    uint row = (uint)(gid - src_first);
    ulong r0 = row_ptr[row], r1 = row_ptr[row + 1];
    ulong k0, k1, stride;
    nestcl_row_part(r0, r1, (ulong)get_local_id(0), (ulong)get_local_size(0), &k0, &k1, &stride);
    NESTCL_SYN_T base = *tmpl;
    NESTCL_SYN_SOURCE(NESTCL_SYN_LOAD_SOURCE)
    /* Every work-item has read the source's state (and sees its lags sorted) before one writes it back. */
    barrier(CLK_GLOBAL_MEM_FENCE);
    for (ulong k = k0; k < k1; k += stride) {
      NESTCL_SYN_T self = base;
      NESTCL_SYN_STATE(NESTCL_SYN_LOAD_STATE)
      uint i = target[k] & NESTCL_TARGET_INDEX_MASK;
      long d = delay_hom != NESTCL_DELAY_PER_SYNAPSE ? (long)delay_hom : (long)delay[k];
      env.target = i;
      env.delay_steps = d;
      env.delay_ms = (double)d * ms_per_step;
      for (uint q = q0; q < q1; ++q) {
        long step = origin + (long)lags[q];
        env.t_spike = nestcl_step_ms(step + 1, tics_per_step, ms_per_tic);
        double w = 0.0;
        if (NESTCL_SYN_SEND(&self, &cp, &env, &w)) {
          nestcl_plastic_emit(ring, n_channels, n, ring_slots, step, d, i, w, ch_pos, ch_neg, ch_zero);
        }
      }
      NESTCL_SYN_STATE(NESTCL_SYN_STORE_STATE)
      if (k == r0) {
        NESTCL_SYN_SOURCE(NESTCL_SYN_STORE_SOURCE)
      }
    }
  }
#endif
}
