/*
 * plastic_kernels.cl: delivery through a translated synapse model (docs/architecture.md,
 * "Plastic synapses and the spike history"). The host builds one program per synapse model from
 * nestcl_rt_source, a prelude naming the model (host/src/engine/plastic.c):
 *   NESTCL_SYN_T, NESTCL_SYNCP_T   the synapse and common-properties structs
 *   NESTCL_SYN_SEND                its send()
 *   NESTCL_SYN_STATE(X), NESTCL_SYN_SOURCE(X)
 *                                  X(member, type, off) for every per-synapse and
 *                                  per-source field: its array starts at byte
 *                                  off * count of the state buffer
 * then the model's <model>_syn.cl, then this text. The C path
 * (plastic.c: deliver_rows_cpu) does the same through the descriptor.
 *
 * One work-group per spiking source (dimension 1), whose work-items share the
 * source's row (dimension 0: strided on GPUs, contiguous chunks on CPU
 * devices, as nestcl_deliver). Each synapse is updated by exactly one
 * work-item, which runs all spikes of the source in this super step through it
 * in time order; so a weight never depends on scheduling. The per-source state
 * is read by every work-item before the barrier and written back once, by the
 * work-item of the row's first synapse: every synapse of a row computes the
 * same per-source values (the translator's proof of the role).
 *
 * Where the sources come from (loop):
 *   0  the host's list: srcs[3s .. 3s+2] = (gid, q0, q1), lags[q0, q1) in
 *      time order, n_srcs of them, one work-group each (cycle.c);
 *   1  the device loop (host/src/engine/device_loop/resident_plastic.c): the super step's
 *      sources srcs[s] (their number in status), each neuron's lags in its
 *      bucket (nestcl_core.h), sorted here first; a fixed number of
 *      work-groups takes every get_num_groups(1)-th source; nothing after a
 *      halt (engine_kernels.cl, NESTCL_RES_HALT);
 *   2  the same, clocked (a replay): the origin is the one the gather left in
 *      the status words.
 */
#define NESTCL_SYN_LOAD_STATE(m, T, off) self.m = ((__global const T *)(state + (ulong)(off)*nnz))[k];
#define NESTCL_SYN_STORE_STATE(m, T, off) ((__global T *)(state + (ulong)(off)*nnz))[k] = self.m;
#define NESTCL_SYN_LOAD_SOURCE(m, T, off) base.m = ((__global const T *)(src_state + (ulong)(off)*n_rows))[row];
#define NESTCL_SYN_STORE_SOURCE(m, T, off) ((__global T *)(src_state + (ulong)(off)*n_rows))[row] = self.m;

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
                             uint min_delay, int loop)
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
}
