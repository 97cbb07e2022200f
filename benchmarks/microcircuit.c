/*
 * The cortical microcircuit of Potjans & Diesmann (2014), with the parameters
 * of NEST's own PyNEST example (pynest/examples/Potjans_2014: network_params.py,
 * stimulus_params.py, sim_params.py; helpers.py for the derived quantities),
 * described on the engine through its public API only. 77,169 iaf_psc_exp
 * neurons in eight populations (L2/3, L4, L5, L6, each excitatory and
 * inhibitory); each pair of populations is connected with fixed_total_number,
 * the synapse count derived from the connection probability; weights and
 * delays are normal, redrawn into the sign's half-line and above half a
 * resolution step (NEST's redraw); background by Poisson generators or the DC
 * that replaces them; optional thalamic input. --scale scales the neuron
 * numbers and in-degrees (--k-scale the in-degrees alone), with NEST's
 * compensation: weights / sqrt(K) and a DC that keeps each neuron's mean input.
 * The order of the steps follows network.py: derive parameters, create
 * populations, connect them, connect the background, the thalamus.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmark.h"

#define NPOP 8

typedef struct mc_opts {
  double N_scaling, K_scaling;
  int k_scale_given;
  int poisson_input; /* 0: DC input replaces the Poisson background */
  int thalamic;
  int v0_optimized;
  double delay_exc_mean, delay_inh_mean;
  int analyse[NPOP];
} mc_opts;

/* network_params.py */
static const char *const populations[NPOP] = {"L23E", "L23I", "L4E", "L4I", "L5E", "L5I", "L6E", "L6I"};
static const double full_num_neurons[NPOP] = {20683, 5834, 21915, 5479, 4850, 1065, 14395, 2948};
/* Rates of the full-scale network in NEST 3 (the reference the example's DC compensation uses when
 * in-degrees are scaled, and the bar chart shows): the values of the example's current home,
 * INM-6/microcircuit-PD14-model, which NEST 3.10's documentation points to. NEST 2's example had
 * {0.943, 3.026, 4.368, 5.882, 7.733, 8.664, 1.096, 7.851}; with them the DC of L2/3E at scale 0.1 is
 * 21.5 pA instead of NEST 3.10's 29.0 pA, and every population fires slower than NEST's. */
static const double full_mean_rates[NPOP] = {0.903, 2.965, 4.414, 5.876, 7.569, 8.633, 1.105, 7.829};
/* Connection probabilities, [target][source]. */
static const double conn_probs[NPOP][NPOP] = {{0.1009, 0.1689, 0.0437, 0.0818, 0.0323, 0., 0.0076, 0.},
                                              {0.1346, 0.1371, 0.0316, 0.0515, 0.0755, 0., 0.0042, 0.},
                                              {0.0077, 0.0059, 0.0497, 0.135, 0.0067, 0.0003, 0.0453, 0.},
                                              {0.0691, 0.0029, 0.0794, 0.1597, 0.0033, 0., 0.1057, 0.},
                                              {0.1004, 0.0622, 0.0505, 0.0057, 0.0831, 0.3726, 0.0204, 0.},
                                              {0.0548, 0.0269, 0.0257, 0.0022, 0.06, 0.3158, 0.0086, 0.},
                                              {0.0156, 0.0066, 0.0211, 0.0166, 0.0572, 0.0197, 0.0396, 0.2252},
                                              {0.0364, 0.001, 0.0034, 0.0005, 0.0277, 0.008, 0.0658, 0.1443}};
static const double PSP_exc_mean = 0.15, weight_rel_std = 0.1, g = -4.0, delay_rel_std = 0.5;
static const double K_ext[NPOP] = {1600, 1500, 2100, 1900, 2000, 1900, 2900, 2100};
static const double bg_rate = 8.0, delay_poisson = 1.5;
static const double V0_mean_optimized[NPOP] = {-68.28, -63.16, -63.33, -63.45, -63.11, -61.66, -66.72, -61.43};
static const double V0_std_optimized[NPOP] = {5.36, 4.57, 4.74, 4.94, 4.94, 4.55, 5.46, 4.48};
static const double V0_mean_original = -58.0, V0_std_original = 10.0;
static const double E_L = -65.0, V_th = -50.0, V_reset = -65.0, C_m = 250.0, tau_m = 10.0, tau_syn = 0.5, t_ref = 2.0;
/* stimulus_params.py: thalamic input */
static const double th_start = 700.0, th_duration = 10.0, th_rate = 120.0, num_th_neurons = 902;
static const double conn_probs_th[NPOP] = {0.0, 0.0, 0.0983, 0.0619, 0.0, 0.0, 0.0512, 0.0196};
static const double PSP_th = 0.15, delay_th_mean = 1.5, delay_th_rel_std = 0.5;

static void mc_defaults(void *o)
{
  mc_opts *m = o;
  memset(m, 0, sizeof *m);
  m->N_scaling = m->K_scaling = 1.0;
  m->poisson_input = 1;
  m->v0_optimized = 1;
  m->delay_exc_mean = 1.5;
  m->delay_inh_mean = 0.75;
  for (int i = 0; i < NPOP; ++i) {
    m->analyse[i] = 1;
  }
}

static int number(const char *flag, const char *v, double *out)
{
  char *end;
  double d = v ? strtod(v, &end) : 0.0;
  if (!v || end == v || *end || !isfinite(d)) {
    fprintf(stderr, "error: %s needs a number (got '%s')\n", flag, v ? v : "");
    return -1;
  }
  *out = d;
  return 0;
}

static int mc_parse_flag(void *o, const char *flag, const char *v)
{
  mc_opts *m = o;
  if (strcmp(flag, "--scale") == 0) {
    if (number(flag, v, &m->N_scaling))
      return -1;
    if (!m->k_scale_given)
      m->K_scaling = m->N_scaling;
    if (!(m->N_scaling > 0.0) || m->N_scaling > 1.0) {
      fprintf(stderr, "error: --scale %g must be in (0, 1]\n", m->N_scaling);
      return -1;
    }
    return 1;
  }
  if (strcmp(flag, "--k-scale") == 0) {
    if (number(flag, v, &m->K_scaling))
      return -1;
    m->k_scale_given = 1;
    if (!(m->K_scaling > 0.0) || m->K_scaling > 1.0) {
      fprintf(stderr, "error: --k-scale %g must be in (0, 1]\n", m->K_scaling);
      return -1;
    }
    return 1;
  }
  if (strcmp(flag, "--background") == 0) {
    if (v && strcmp(v, "poisson") == 0) {
      m->poisson_input = 1;
    } else if (v && strcmp(v, "dc") == 0) {
      m->poisson_input = 0;
    } else {
      fprintf(stderr, "error: --background must be poisson or dc (got '%s')\n", v ? v : "");
      return -1;
    }
    return 1;
  }
  if (strcmp(flag, "--thalamic") == 0) {
    m->thalamic = 1;
    return 0;
  }
  if (strcmp(flag, "--v0") == 0) {
    if (v && strcmp(v, "optimized") == 0) {
      m->v0_optimized = 1;
    } else if (v && strcmp(v, "original") == 0) {
      m->v0_optimized = 0;
    } else {
      fprintf(stderr, "error: --v0 must be optimized or original (got '%s')\n", v ? v : "");
      return -1;
    }
    return 1;
  }
  if (strcmp(flag, "--delays") == 0) {
    char *end, *end2;
    double a = v ? strtod(v, &end) : NAN, b = NAN;
    if (v && end != v && *end == ',') {
      b = strtod(end + 1, &end2);
      if (end2 == end + 1 || *end2)
        b = NAN;
    }
    if (!isfinite(a) || !isfinite(b)) {
      fprintf(stderr, "error: --delays needs the mean excitatory and inhibitory delays, e.g. 1.5,0.75 (got '%s')\n",
              v ? v : "");
      return -1;
    }
    if (a < 0.0 || b < 0.0) {
      fprintf(stderr, "error: --delays: the delay table has a negative entry (%g, %g ms)\n", a, b);
      return -1;
    }
    m->delay_exc_mean = a;
    m->delay_inh_mean = b;
    return 1;
  }
  if (strcmp(flag, "--record") == 0) {
    if (!v || !*v) {
      fprintf(stderr, "error: --record needs population names, e.g. L23E,L4I, or all\n");
      return -1;
    }
    if (strcmp(v, "all") == 0) {
      for (int i = 0; i < NPOP; ++i)
        m->analyse[i] = 1;
      return 1;
    }
    int sel[NPOP] = {0};
    const char *s = v;
    while (*s) {
      size_t len = strcspn(s, ",");
      int found = -1;
      for (int i = 0; i < NPOP; ++i) {
        if (strlen(populations[i]) == len && strncmp(s, populations[i], len) == 0)
          found = i;
      }
      if (found < 0) {
        fprintf(stderr, "error: --record: unknown population '%.*s' (populations: L23E L23I L4E L4I L5E L5I L6E L6I)\n",
                (int)len, s);
        return -1;
      }
      sel[found] = 1;
      s += len + (s[len] == ',');
    }
    memcpy(m->analyse, sel, sizeof sel);
    return 1;
  }
  return -2;
}

static int mc_validate(const void *o)
{
  (void)o; /* every flag was checked alone; no combination is refused (NEST's example allows them all) */
  return 0;
}

/* helpers.py: synapse counts of the connection probabilities, for populations of sizes n1 and n2. */
static double num_synapses_from_conn_prob(double p, double n1, double n2)
{
  double prod = n1 * n2;
  return log(1.0 - p) / log((prod - 1.0) / prod);
}

/* helpers.py: PSC amplitude (pA) per PSP amplitude (mV) of an exponential current in a LIF neuron. */
static double postsynaptic_potential_to_current(void)
{
  double sub = 1.0 / (tau_syn - tau_m);
  double pre = tau_m * tau_syn / C_m * sub;
  double frac = pow(tau_m / tau_syn, sub);
  return 1.0 / (pre * (pow(frac, tau_m) - pow(frac, tau_syn)));
}

/* The redraw bounds of network.py: a weight keeps its sign, a delay is at least half a step. */
static nestcl_value weight_dist(double mean)
{
  return mean < 0.0 ? nestcl_normal_clipped(mean, fabs(mean * weight_rel_std), -INFINITY, 0.0)
                    : nestcl_normal_clipped(mean, fabs(mean * weight_rel_std), 0.0, INFINITY);
}

static nestcl_value delay_dist(double mean, double rel_std, double h)
{
  return rel_std == 0.0 ? nestcl_constant(mean) : nestcl_normal_clipped(mean, mean * rel_std, h - 0.5 * h, INFINITY);
}

/*
 * Thalamic input: 902 parrot_neurons repeat one Poisson train each (120 Hz
 * for 10 ms from 700 ms) to their fixed_total_number targets, as in NEST's
 * network.py: every target of a thalamic neuron sees the same train. The
 * generator's connection onto the parrots has NEST's default weight 1 (a
 * parrot ignores it) and delay 1 ms. The thalamus is population NPOP, not
 * analysed; *th_total: its synapses.
 */
static int connect_thalamus(const mc_opts *m, nestcl_engine *e, bench_network *net, double h, double PSC_over_PSP,
                            uint64_t *th_total)
{
  const double K = m->K_scaling;
  int th = -1;
  int rc = nestcl_engine_create_population(e, "parrot_neuron", (uint32_t)num_th_neurons, 0, &th);
  if (!rc)
    rc = nestcl_engine_add_poisson_window(e, th, th_rate, 1.0, 1.0, 0, th_start, th_start + th_duration);
  double weight_th = PSP_th * PSC_over_PSP;
  for (int i = 0; i < NPOP && !rc; ++i) {
    double n_th = num_synapses_from_conn_prob(conn_probs_th[i], num_th_neurons, full_num_neurons[i]);
    if (K != 1.0)
      n_th *= K;
    double w = K != 1.0 ? weight_th / sqrt(K) : weight_th;
    nestcl_conn_spec conn = {NESTCL_RULE_FIXED_TOTAL_NUMBER, 0, 1, 1, (uint64_t)rint(n_th), 0.0};
    nestcl_syn_spec syn = {nestcl_normal_clipped(w, w * weight_rel_std, 0.0, INFINITY),
                           delay_dist(delay_th_mean, delay_th_rel_std, h), 0};
    if (conn.N > 0)
      rc = nestcl_engine_connect(e, th, net->pop[i], &conn, &syn);
    *th_total += conn.N;
  }
  if (!rc) {
    net->pop_name[NPOP] = "TC";
    net->pop[NPOP] = th;
    net->ref_rate_hz[NPOP] = NAN;
    net->analyse[NPOP] = 0;
    net->n_pops = NPOP + 1;
  }
  return rc;
}

/* network.py's __create_neuronal_populations: iaf_psc_exp with the DC input, V_m drawn per population. */
static int create_populations(const mc_opts *m, nestcl_engine *e, bench_network *net, const uint32_t *num_neurons,
                              const double *DC_amp)
{
  int rc = 0;
  net->n_pops = NPOP;
  for (int i = 0; i < NPOP && !rc; ++i) {
    net->pop_name[i] = populations[i];
    net->ref_rate_hz[i] = full_mean_rates[i];
    net->analyse[i] = m->analyse[i];
    rc = nestcl_engine_create_population(e, "iaf_psc_exp", num_neurons[i], 0, &net->pop[i]);
    /* NEST applies E_L before the thresholds it offsets, and V_m last. */
    static const char *const names[] = {"E_L",  "C_m",     "tau_m", "tau_syn_ex", "tau_syn_in",
                                        "V_th", "V_reset", "t_ref", "I_e"};
    const double values[] = {E_L, C_m, tau_m, tau_syn, tau_syn, V_th, V_reset, t_ref, DC_amp[i]};
    for (int k = 0; k < 9 && !rc; ++k) {
      rc = nestcl_engine_set(e, net->pop[i], names[k], nestcl_constant(values[k]));
    }
    if (!rc) {
      rc = nestcl_engine_set(e, net->pop[i], "V_m",
                             m->v0_optimized ? nestcl_normal(V0_mean_optimized[i], V0_std_optimized[i])
                                             : nestcl_normal(V0_mean_original, V0_std_original));
    }
  }
  return rc;
}

static int mc_build(const void *o, const bench_common *c, nestcl_engine *e, bench_network *net)
{
  const mc_opts *m = o;
  const double K = m->K_scaling, h = c->resolution_ms;
  int rc = 0;

  /* __derive_parameters */
  double full_num_synapses[NPOP][NPOP], num_synapses[NPOP][NPOP];
  uint32_t num_neurons[NPOP];
  double ext_indegrees[NPOP];
  for (int i = 0; i < NPOP; ++i) {
    num_neurons[i] = (uint32_t)rint(full_num_neurons[i] * m->N_scaling);
    ext_indegrees[i] = rint(K_ext[i] * K);
    for (int j = 0; j < NPOP; ++j) {
      full_num_synapses[i][j] = num_synapses_from_conn_prob(conn_probs[i][j], full_num_neurons[i], full_num_neurons[j]);
      num_synapses[i][j] = rint(full_num_synapses[i][j] * m->N_scaling * K);
    }
    if (num_neurons[i] < 1) {
      return nestcl_set_error(NESTCL_EINVAL, "--scale %g leaves population %s without neurons", m->N_scaling,
                              populations[i]);
    }
  }
  const double PSC_over_PSP = postsynaptic_potential_to_current();
  double PSC_matrix_mean[NPOP][NPOP], PSC_ext = PSP_exc_mean * PSC_over_PSP, DC_amp[NPOP];
  for (int i = 0; i < NPOP; ++i) {
    for (int j = 0; j < NPOP; ++j) {
      /* Excitatory sources are the even populations; L4E -> L2/3E is doubled. */
      double psp = j % 2 == 0 ? PSP_exc_mean : PSP_exc_mean * g;
      if (i == 0 && j == 2)
        psp = 2.0 * PSP_exc_mean;
      PSC_matrix_mean[i][j] = psp * PSC_over_PSP;
    }
    /* DC input compensates for the missing Poisson input. */
    DC_amp[i] = m->poisson_input ? 0.0 : bg_rate * K_ext[i] * PSC_ext * tau_syn * 0.001;
  }
  double weight_matrix_mean[NPOP][NPOP], weight_ext = PSC_ext;
  memcpy(weight_matrix_mean, PSC_matrix_mean, sizeof weight_matrix_mean);
  if (K != 1.0) {
    /* adjust_weights_and_input_to_synapse_scaling: keep the mean input with fewer, stronger synapses. */
    for (int i = 0; i < NPOP; ++i) {
      double input_rec = 0.0;
      for (int j = 0; j < NPOP; ++j) {
        weight_matrix_mean[i][j] = PSC_matrix_mean[i][j] / sqrt(K);
        input_rec += PSC_matrix_mean[i][j] * (full_num_synapses[i][j] / full_num_neurons[i]) * full_mean_rates[j];
      }
      DC_amp[i] += 0.001 * tau_syn * (1.0 - sqrt(K)) * input_rec;
      if (m->poisson_input) {
        DC_amp[i] += 0.001 * tau_syn * (1.0 - sqrt(K)) * PSC_ext * K_ext[i] * bg_rate;
      }
    }
    weight_ext = PSC_ext / sqrt(K);
  }

  /* __create_neuronal_populations */
  rc = create_populations(m, e, net, num_neurons, DC_amp);

  /* __connect_neuronal_populations: fixed_total_number, NEST's defaults (autapses and multapses allowed). */
  uint64_t total = 0;
  for (int i = 0; i < NPOP && !rc; ++i) {
    for (int j = 0; j < NPOP && !rc; ++j) {
      double delay_mean = j % 2 == 0 ? m->delay_exc_mean : m->delay_inh_mean;
      nestcl_conn_spec conn = {NESTCL_RULE_FIXED_TOTAL_NUMBER, 0, 1, 1, (uint64_t)num_synapses[i][j], 0.0};
      nestcl_syn_spec syn = {weight_dist(weight_matrix_mean[i][j]), delay_dist(delay_mean, delay_rel_std, h), 0};
      if (conn.N > 0) {
        rc = nestcl_engine_connect(e, net->pop[j], net->pop[i], &conn, &syn);
      }
      total += conn.N;
    }
  }

  /* __connect_poisson_bg_input: one generator per population, all_to_all, rate bg_rate * K_ext. */
  for (int i = 0; i < NPOP && !rc && m->poisson_input; ++i) {
    rc = nestcl_engine_add_poisson(e, net->pop[i], bg_rate * ext_indegrees[i], weight_ext, delay_poisson, 0);
  }

  uint64_t th_total = 0;
  if (m->thalamic && !rc)
    rc = connect_thalamus(m, e, net, h, PSC_over_PSP, &th_total);

  uint64_t neurons = 0;
  for (int i = 0; i < NPOP; ++i)
    neurons += num_neurons[i];
  bench_info_add(net, "N_scaling", m->N_scaling);
  bench_info_add(net, "K_scaling", K);
  bench_info_add(net, "neurons_cortex", (double)neurons);
  bench_info_add(net, "synapses_cortex", (double)total);
  bench_info_add(net, "synapses_thalamus", (double)th_total);
  bench_info_add(net, "PSC_over_PSP_pA_per_mV", PSC_over_PSP);
  bench_info_add(net, "weight_ext_pA", weight_ext);
  bench_info_add(net, "weight_L4E_to_L23E_pA", weight_matrix_mean[0][2]);
  bench_info_add(net, "weight_exc_pA", weight_matrix_mean[0][0]);
  bench_info_add(net, "weight_inh_pA", weight_matrix_mean[0][1]);
  bench_info_add(net, "delay_exc_mean_ms", m->delay_exc_mean);
  bench_info_add(net, "delay_inh_mean_ms", m->delay_inh_mean);
  bench_info_add(net, "poisson_input", m->poisson_input);
  bench_info_add(net, "thalamic_input", m->thalamic);
  for (int i = 0; i < NPOP; ++i) {
    char key[48];
    snprintf(key, sizeof key, "DC_amp_%s_pA", populations[i]);
    bench_info_add(net, key, DC_amp[i]);
  }
  for (int i = 0; i < NPOP; ++i) {
    char key[48];
    snprintf(key, sizeof key, "bg_rate_%s_hz", populations[i]);
    bench_info_add(net, key, m->poisson_input ? bg_rate * ext_indegrees[i] : 0.0);
  }
  return rc;
}

const bench_def bench_microcircuit = {
  "microcircuit",
  "the cortical microcircuit of Potjans & Diesmann 2014 (NEST's Potjans_2014 example)",
  "  --scale S            neurons and in-degrees scaled by S in (0, 1] (default 1: 77,169 neurons,\n"
  "                       0.3 billion synapses), with NEST's weight and DC compensation\n"
  "  --k-scale K          in-degrees alone scaled by K in (0, 1] (default: S)\n"
  "  --background B       poisson (default) or dc: NEST's DC that replaces the Poisson input\n"
  "  --thalamic           thalamic input: 902 neurons at 120 Hz from 700 to 710 ms\n"
  "  --v0 V               initial V_m: optimized (default, per population) or original\n"
  "  --delays E,I         mean excitatory and inhibitory delays in ms (default 1.5,0.75;\n"
  "                       relative sd 0.5, redrawn above half a step)\n"
  "  --record POPS        populations to record and analyse, e.g. L23E,L4I (default all)\n",
  sizeof(mc_opts),
  1000.0,
  500.0,
  mc_defaults,
  mc_parse_flag,
  mc_validate,
  mc_build};
