/*
 * test_lif: a deliberately small current-based LIF neuron with exponential
 * synapses, hand-written for the engine tests so that they do not depend on
 * the translator. Its update is written once here and compiled both as C (the
 * CPU VPs, and the serial reference of the tests) and as OpenCL C (embedded
 * after nestcl_rt_source), exactly as a translated model would be. Fields, in
 * descriptor order: V_m, I_syn_ex, I_syn_in, refr | tau_m, C_m, tau_syn_ex,
 * tau_syn_in, t_ref, V_th, V_reset, E_L, I_e, fail_step, fail_code | P_m, P_ex, P_in, P_mI,
 * ref_counts. Channels: SYN_EX, SYN_IN (spikes), I (currents).
 *
 * Failures (model.h): a neuron whose fail_step (default -1, never) is a step
 * it updates throws at the start of that step, as a model's update() throws
 * GSLSolverFailure: it records failure fail_code (1 GSLSolverFailure, 2
 * NumericalInstability, others unnamed) with status -7 * fail_code and is not
 * updated further in that call.
 */
#define TEST_LIF_ARGS(T_D, T_I)                                                                                        \
  NESTCL_GLOBAL T_D *V_m, NESTCL_GLOBAL T_D *I_ex, NESTCL_GLOBAL T_D *I_in, NESTCL_GLOBAL T_I *refr,                   \
    NESTCL_GLOBAL T_D *tau_m, NESTCL_GLOBAL T_D *C_m, NESTCL_GLOBAL T_D *tau_syn_ex, NESTCL_GLOBAL T_D *tau_syn_in,    \
    NESTCL_GLOBAL T_D *t_ref, NESTCL_GLOBAL T_D *V_th, NESTCL_GLOBAL T_D *V_reset, NESTCL_GLOBAL T_D *E_L,             \
    NESTCL_GLOBAL T_D *I_e, NESTCL_GLOBAL T_D *fail_step, NESTCL_GLOBAL T_D *fail_code, NESTCL_GLOBAL T_D *P_m,        \
    NESTCL_GLOBAL T_D *P_ex, NESTCL_GLOBAL T_D *P_in, NESTCL_GLOBAL T_D *P_mI, NESTCL_GLOBAL T_I *ref_counts

NESTCL_INLINE void test_lif_neuron(nestcl_u32 i, nestcl_u32 n, nestcl_i64 origin_steps, nestcl_i32 from, nestcl_i32 to,
                                   nestcl_u32 ring_slots, nestcl_u32 n_channels, NESTCL_GLOBAL nestcl_i64 *ring,
                                   NESTCL_GLOBAL nestcl_u32 *spike_count, NESTCL_GLOBAL nestcl_spike_t *spikes,
                                   nestcl_u32 spike_capacity, nestcl_i64 rec_interval, NESTCL_GLOBAL double *rec,
                                   TEST_LIF_ARGS(double, nestcl_i32))
{
  (void)tau_m;
  (void)C_m;
  (void)tau_syn_ex;
  (void)tau_syn_in;
  (void)t_ref;
  for (nestcl_i32 lag = from; lag < to; ++lag) {
    if ((double)(origin_steps + lag) == fail_step[i]) {
      nestcl_report_failure(spike_count, (nestcl_u32)fail_code[i], i, (nestcl_u32)lag, -7 * (int)fail_code[i]);
      return;
    }
    nestcl_u32 slot = nestcl_ring_slot(origin_steps, lag, ring_slots);
    I_ex[i] = I_ex[i] * P_ex[i] + nestcl_ring_take(ring, n_channels, n, slot, 0, i);
    I_in[i] = I_in[i] * P_in[i] + nestcl_ring_take(ring, n_channels, n, slot, 1, i);
    double I_dc = nestcl_ring_take(ring, n_channels, n, slot, 2, i);
    if (refr[i] > 0) {
      refr[i] -= 1;
    } else {
      V_m[i] = E_L[i] + (V_m[i] - E_L[i]) * P_m[i] + (I_ex[i] + I_in[i] + I_e[i] + I_dc) * P_mI[i];
    }
    if (V_m[i] >= V_th[i]) {
      V_m[i] = V_reset[i];
      refr[i] = ref_counts[i];
      nestcl_emit_spike(spike_count, spikes, spike_capacity, i, (nestcl_u32)lag);
    }
    if (rec_interval > 0 && (origin_steps + lag + 1) % rec_interval == 0) {
      rec[((nestcl_u64)(lag - from) * 2u + 0u) * n + i] = V_m[i];
      rec[((nestcl_u64)(lag - from) * 2u + 1u) * n + i] = I_ex[i];
    }
  }
}
