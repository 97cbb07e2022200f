/* The OpenCL entry point of test_lif (see test_lif_body.h): the 17 fixed arguments of model.h, then the fields. */
__kernel void nestcl_update_test_lif(uint n, uint K, long origin_steps, int from, int to, double resolution_ms,
                                     uint ring_slots, uint n_channels, __global long *ring, __global uint *spike_count,
                                     __global uint2 *spikes, uint spike_capacity, long rec_interval,
                                     __global double *rec, uint rng_seed, ulong id_first, ulong id_stride,
                                     TEST_LIF_ARGS(double, int))
{
  (void)K;
  (void)rng_seed;
  (void)id_first;
  (void)id_stride;
  (void)resolution_ms;
  uint i = (uint)get_global_id(0);
  if (i >= n) {
    return;
  }
  test_lif_neuron(i, n, origin_steps, from, to, ring_slots, n_channels, ring, spike_count, spikes, spike_capacity,
                  rec_interval, rec, V_m, I_ex, I_in, refr, tau_m, C_m, tau_syn_ex, tau_syn_in, t_ref, V_th, V_reset,
                  E_L, I_e, fail_step, fail_code, P_m, P_ex, P_in, P_mI, ref_counts);
}
