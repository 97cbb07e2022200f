/*
 * NEST's hpc_benchmark (pynest/examples/hpc_benchmark.py, BENCHMARKS.md) on
 * the engine: NE = 9000 S, NI = 2250 S iaf_psc_alpha neurons, in-degree
 * CE = 9000 from E and CI = 2250 from I whatever S (fixed_indegree, no
 * autapses, multapses), one delay, J_E = 0.14 mV converted to pA through the
 * alpha PSP peak, g = -5, one Poisson train per neuron at nu_ext CE 1000 Hz,
 * V_m ~ normal(5.7, 7.2); E->E NEST's stdp_pl_synapse_hom (alpha 0.0513,
 * lambda 0.1, mu 0.4, tau_plus 15 ms, tau_minus 30 ms on the neurons) or
 * static at the same initial weight. In the order of the script: parameters,
 * Create, SetStatus, Connect.
 */
#include <math.h>

#include "hpc_benchmark.h"

int hpc_parameters(double scale, double k_scale, hpc_network *n)
{
  n->tau_syn = 0.32582722403722841;
  n->tau_m = 10.0;
  n->C_m = 250.0;
  n->V_th = 20.0;
  n->g = -5.0;
  n->eta = 1.685;
  n->J_E_mV = 0.14;
  n->NE = (uint32_t)(9000.0 * scale);
  n->NI = (uint32_t)(2250.0 * scale);
  /* --k-scale: fewer inputs per neuron (at least one of each kind); the external drive stays (p_rate below
     does not depend on CE). */
  n->CE = (uint32_t)(9000.0 * k_scale + 0.5);
  n->CI = (uint32_t)(2250.0 * k_scale + 0.5);
  n->CE = n->CE ? n->CE : 1;
  n->CI = n->CI ? n->CI : 1;
  n->pe = n->pi = n->ee = -1;
  n->t_max = 0.0;
  n->v_max = 1.0;
  int rc = nestcl_alpha_psp_peak(n->tau_m, n->tau_syn, n->C_m, &n->t_max, &n->v_max);
  n->JE = n->J_E_mV / n->v_max;
  n->JI = n->g * n->JE;
  n->nu_th = n->V_th / ((double)n->CE * n->tau_m / n->C_m * n->JE * exp(1.0) * n->tau_syn);
  n->p_rate = n->eta * n->nu_th * (double)n->CE * 1000.0;
  return rc;
}

int hpc_describe(nestcl_engine *e, const char *model, double delay_ms, int ee_static, hpc_network *n)
{
  int rc = nestcl_engine_create_population(e, model, n->NE, 0, &n->pe);
  if (!rc)
    rc = nestcl_engine_create_population(e, model, n->NI, 0, &n->pi);
  /* NEST applies E_L before the thresholds it offsets, and V_m last. */
  static const char *const names[] = {"E_L", "C_m", "tau_m", "t_ref", "V_th", "V_reset", "tau_syn_ex", "tau_syn_in"};
  const double values[] = {0.0, n->C_m, n->tau_m, 0.5, n->V_th, 0.0, n->tau_syn, n->tau_syn};
  for (int p = 0; p < 2 && !rc; ++p) {
    for (int k = 0; k < 8 && !rc; ++k) {
      rc = nestcl_engine_set(e, p ? n->pi : n->pe, names[k], nestcl_constant(values[k]));
    }
    if (!rc)
      rc = nestcl_engine_set(e, p ? n->pi : n->pe, "tau_minus", nestcl_constant(30.0));
    if (!rc)
      rc = nestcl_engine_set(e, p ? n->pi : n->pe, "V_m", nestcl_normal(5.7, 7.2));
  }
  nestcl_conn_spec ce = {NESTCL_RULE_FIXED_INDEGREE, n->CE, 0, 1, 0, 0.0};
  nestcl_conn_spec ci = {NESTCL_RULE_FIXED_INDEGREE, n->CI, 0, 1, 0, 0.0};
  nestcl_syn_spec sex = {nestcl_constant(n->JE), nestcl_constant(delay_ms), 0};
  nestcl_syn_spec sin_ = {nestcl_constant(n->JI), nestcl_constant(delay_ms), 0};
  if (!rc)
    rc = nestcl_engine_add_poisson(e, n->pe, n->p_rate, n->JE, delay_ms, 0);
  if (!rc)
    rc = nestcl_engine_add_poisson(e, n->pi, n->p_rate, n->JE, delay_ms, 0);
  /* NEST's stdp_params of hpc_benchmark.py; the weight JE as the static variant's. */
  const nestcl_syn_param stdp[] = {{"alpha", 0.0513}, {"lambda", 0.1}, {"mu", 0.4}, {"tau_plus", 15.0}};
  if (!rc)
    rc = nestcl_engine_set_synapse_models(e, nestcl_builtin_synapses, nestcl_builtin_synapse_count);
  if (!rc)
    rc = nestcl_engine_connect_synapse(e, n->pe, n->pe, &ce, &sex, ee_static ? "static_synapse" : "stdp_pl_synapse_hom",
                                       ee_static ? NULL : stdp, ee_static ? 0 : 4, &n->ee);
  if (!rc)
    rc = nestcl_engine_connect(e, n->pi, n->pe, &ci, &sin_);
  if (!rc)
    rc = nestcl_engine_connect(e, n->pe, n->pi, &ce, &sex);
  if (!rc)
    rc = nestcl_engine_connect(e, n->pi, n->pi, &ci, &sin_);
  return rc;
}
