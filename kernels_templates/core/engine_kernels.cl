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
__kernel void nestcl_deliver(__global const uint2 *spikes, uint n_spikes, long origin,
                             __global const ulong *row_ptr, __global const uint *target,
                             __global const NESTCL_W_T *weight, __global const nestcl_u16 *delay, uint delay_hom,
                             __global long *ring, uint ring_slots, uint n, uint n_channels)
{
  size_t s = get_global_id(1);
  if (s >= n_spikes) {
    return;
  }
  uint2 sp = spikes[s];
  ulong r0 = row_ptr[sp.x], r1 = row_ptr[sp.x + 1];
  ulong k0, k1, stride;
  nestcl_row_part(r0, r1, (ulong)get_local_id(0), (ulong)get_local_size(0), &k0, &k1, &stride);
  NESTCL_CORE_CAT(nestcl_deliver_range, NESTCL_W_SUFFIX)(ring, n_channels, n, ring_slots, target, weight, delay,
                                                         delay_hom, origin + (long)sp.y, k0, k1, stride);
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
                                 double min_delay_ms, double eps, int fused, __global uint *flag,
                                 __global double *h_t, __global double *h_km, __global double *h_kmt,
                                 __global uint *h_acc, __global uint *h_head, __global uint *h_len,
                                 __global double *h_Km, __global double *h_Kmt, __global double *h_last,
                                 __global uint *h_nin, __global double *h_maxd, uint h_cap)
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
  if (nestcl_hist_append_neuron(&h, i, pairs, q, q1, origin, tics_per_step, ms_per_tic, tau_minus_inv,
                                tau_minus_triplet_inv, min_delay_ms, eps, fused)) {
    atomic_inc(&flag[0]);
    atomic_min(&flag[1], i);
  }
}
