/* The engine tests' Brunel network (see brunel.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brunel.h"
#include "test_lif.h"

brunel_net brunel_test_lif(void)
{
  brunel_net n;
  memset(&n, 0, sizeof n);
  n.label = "test_lif";
  n.models = test_lif_models;
  n.n_models = 1;
  n.model = "test_lif";
  n.V_m = nestcl_normal(10.0, 5.0);
  n.J_E = 60.0;
  n.g = 5.0;
  n.poisson_rate_hz = 14000.0;
  n.rate_min = 20.0;
  n.rate_max = 100.0;
  return n;
}

#ifdef NESTCL_TEST_HAVE_BUILTIN_MODELS
/*
 * Brunel's (2000) network A in the asynchronous-irregular regime, with NEST's
 * brunel_alpha_nest.py neuron (tau_m 20 ms, C_m 250 pF, t_ref 2 ms, V_th 20 mV,
 * V_reset 10 mV, E_L 0, tau_syn 0.5 ms). The in-degree here is small (160 E +
 * 40 I instead of 1,000), so J is larger than that script's 0.1 mV to keep the
 * fluctuations that make firing irregular: J_E = 0.5 mV of PSP peak, converted
 * to pA through the alpha PSP (nestcl_alpha_psp_peak) and rounded to 1/16 pA so
 * that J_E and -g J_E are exact in float (float and double weights then give the
 * same trains). g = 6 (inhibition-dominated); the Poisson drive is eta = 2
 * times the rate nu_th that brings the mean input alone to threshold. Measured
 * here (seed 4242, 200 ms): 27 Hz, CV of ISI 0.68, population-count Fano factor
 * 8 in 1 ms bins (weakly synchronous, as Brunel networks of 2,000 neurons are);
 * g = 5 gave 38 Hz and a Fano factor of 16. The determinism test asserts a
 * rate in [10, 50] Hz, so a model or engine change that silences or saturates
 * the network is caught rather than compared trivially.
 */
brunel_net brunel_iaf_psc_alpha(void)
{
  static const char *names[] = {"E_L", "C_m", "tau_m", "t_ref", "V_th", "V_reset", "tau_syn_ex", "tau_syn_in"};
  static const double values[] = {0.0, 250.0, 20.0, 2.0, 20.0, 10.0, 0.5, 0.5};
  brunel_net n;
  memset(&n, 0, sizeof n);
  n.label = "iaf_psc_alpha";
  n.models = nestcl_builtin_models;
  n.n_models = nestcl_builtin_model_count;
  n.model = "iaf_psc_alpha";
  for (int k = 0; k < 8; ++k) {
    n.names[k] = names[k];
    n.values[k] = values[k];
  }
  n.n_settings = 8;
  n.V_m = nestcl_normal(10.0, 5.0);
  double t_max, v_max;
  nestcl_alpha_psp_peak(20.0, 0.5, 250.0, &t_max, &v_max);
  n.J_E = floor(0.5 / v_max * 16.0 + 0.5) / 16.0;
  n.g = 6.0;
  /* nu_th: the input rate whose mean (J_E e tau_syn tau_m / C_m per spike) reaches V_th. */
  double nu_th = 20.0 / (n.J_E * exp(1.0) * 0.5 * 20.0 / 250.0) * 1000.0;
  n.poisson_rate_hz = 2.0 * nu_th;
  n.rate_min = 10.0;
  n.rate_max = 50.0;
  return n;
}
#endif

#ifdef NESTCL_TEST_HAVE_BUILTIN_MODELS
brunel_net brunel_iaf_psc_alpha_stdp(const char *synapse)
{
  brunel_net n = brunel_iaf_psc_alpha();
  n.synapse_models = nestcl_builtin_synapses;
  n.n_synapse_models = nestcl_builtin_synapse_count;
  n.ee_synapse = synapse;
  n.tau_minus = 30.0;
  if (strcmp(synapse, "stdp_pl_synapse_hom") == 0) {
    n.label = "iaf_psc_alpha, E->E stdp_pl_synapse_hom";
    const nestcl_syn_param p[] = {{"alpha", 0.0513}, {"lambda", 0.1}, {"mu", 0.4}, {"tau_plus", 15.0}};
    memcpy(n.ee_params, p, sizeof p);
    n.n_ee_params = 4;
  } else {
    n.label = "iaf_psc_alpha, E->E stdp_synapse";
    const nestcl_syn_param p[] = {{"lambda", 0.05}, {"Wmax", 2.0 * n.J_E}};
    memcpy(n.ee_params, p, sizeof p);
    n.n_ee_params = 2;
  }
  return n;
}
#endif

/*
 * A piece given as -t: simulate(t) with a stop request set, which must stop at
 * the end of the first super step (NESTCL_EINTR, the clock on a multiple of
 * the min delay of 1.5 ms, within one super step of where it was), then the
 * rest of t.
 */
static int run_stopped(nestcl_engine *e, double h, double t)
{
  int rc = nestcl_engine_prepare(e);
  if (rc) {
    return rc;
  }
  nestcl_engine_stats st;
  nestcl_engine_get_stats(e, &st);
  /* Under MPI only the last rank asks (every rank registers a flag): all must stop at the same step. */
  volatile sig_atomic_t stop = st.rank == st.n_ranks - 1;
  double t0 = nestcl_engine_time_ms(e);
  nestcl_engine_set_stop_flag(e, &stop);
  rc = nestcl_engine_simulate(e, t);
  nestcl_engine_set_stop_flag(e, NULL);
  double t1 = nestcl_engine_time_ms(e);
  long long s0 = llround(t0 / h), s1 = llround(t1 / h), sd = llround(1.5 / h);
  if (rc != NESTCL_EINTR || s1 % sd != 0 || s1 <= s0 || s1 > s0 + sd) {
    fprintf(stderr,
            "stop request at %g ms: simulate returned %d (%s), the clock at %g ms; want NESTCL_EINTR at the "
            "end of the next super step\n",
            t0, rc, rc ? nestcl_last_error() : "", t1);
    return nestcl_set_error(NESTCL_ERUNTIME, "stop request not honoured");
  }
  return nestcl_engine_simulate(e, (double)(llround(t / h) - (s1 - s0)) * h);
}

int brunel_build(const brunel_net *net, const nestcl_engine_config *cfg, uint32_t n_neurons, uint32_t indegree,
                 brunel_engine *out)
{
  memset(out, 0, sizeof *out);
  out->ee = -1;
  int rc = nestcl_engine_create(cfg, &out->e);
  if (rc) {
    return rc;
  }
  nestcl_engine *e = out->e;
  uint32_t NE = n_neurons * 4 / 5, NI = n_neurons - NE;
  uint32_t CE = indegree * 4 / 5, CI = indegree - CE;
  int pe, pi;
  rc = nestcl_engine_set_models(e, net->models, net->n_models);
  if (!rc)
    rc = nestcl_engine_create_population(e, net->model, NE, 0, &pe);
  if (!rc)
    rc = nestcl_engine_create_population(e, net->model, NI, 0, &pi);
  for (int k = 0; k < 2 && !rc; ++k) {
    int p = k ? pi : pe;
    for (int j = 0; j < net->n_settings && !rc; ++j) {
      rc = nestcl_engine_set(e, p, net->names[j], nestcl_constant(net->values[j]));
    }
    if (!rc)
      rc = nestcl_engine_set(e, p, "V_m", net->V_m);
  }
  nestcl_conn_spec c = {NESTCL_RULE_FIXED_INDEGREE, CE, 0, 1, 0, 0.0};
  nestcl_syn_spec se = {nestcl_constant(net->J_E), nestcl_constant(1.5), 0};
  nestcl_syn_spec si = {nestcl_constant(-net->g * net->J_E), nestcl_constant(1.5), 0};
  if (!rc)
    rc = nestcl_engine_set_synapse_models(e, net->synapse_models, net->n_synapse_models);
  if (!rc && net->tau_minus > 0.0)
    rc = nestcl_engine_set(e, pe, "tau_minus", nestcl_constant(net->tau_minus));
  if (!rc)
    rc = nestcl_engine_connect_synapse(e, pe, pe, &c, &se, net->ee_synapse, net->ee_params, net->n_ee_params, &out->ee);
  if (!rc)
    rc = nestcl_engine_connect(e, pe, pi, &c, &se);
  c.degree = CI;
  if (!rc)
    rc = nestcl_engine_connect(e, pi, pe, &c, &si);
  if (!rc)
    rc = nestcl_engine_connect(e, pi, pi, &c, &si);
  if (!rc)
    rc = nestcl_engine_add_poisson(e, pe, net->poisson_rate_hz, net->J_E, 1.5, 0);
  if (!rc)
    rc = nestcl_engine_add_poisson(e, pi, net->poisson_rate_hz, net->J_E, 1.5, 0);
  if (!rc)
    rc = nestcl_engine_add_spike_recorder(e, pe, 0, NE, &out->rec_e);
  if (!rc)
    rc = nestcl_engine_add_spike_recorder(e, pi, 0, NI, &out->rec_i);
  if (rc) {
    nestcl_engine_destroy(e);
    out->e = NULL;
  }
  return rc;
}

int brunel_collect(const brunel_engine *be, brunel_result *out)
{
  memset(out, 0, sizeof *out);
  nestcl_engine *e = be->e;
  const uint64_t *g, *g2;
  const int64_t *s, *s2;
  size_t n, n2;
  nestcl_engine_spikes(e, be->rec_e, &g, &s, &n);
  nestcl_engine_spikes(e, be->rec_i, &g2, &s2, &n2);
  out->gids = malloc((n + n2 + 1) * sizeof *out->gids);
  out->steps = malloc((n + n2 + 1) * sizeof *out->steps);
  if (!out->gids || !out->steps) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  /* Merge E and I trains by (step, gid), as one network-wide train. */
  size_t a = 0, b = 0;
  while (a < n || b < n2) {
    int take_a = b >= n2 || (a < n && (s[a] < s2[b] || (s[a] == s2[b] && g[a] < g2[b])));
    out->gids[out->n] = take_a ? g[a] : g2[b];
    out->steps[out->n] = take_a ? s[a] : s2[b];
    out->n++;
    if (take_a)
      a++;
    else
      b++;
  }
  nestcl_engine_get_stats(e, &out->st);
  memset(&out->enq_stream, 0, sizeof out->enq_stream);
  out->plastic_tasks = out->plastic_tasks_other = 0;
  for (int v = out->st.n_vps - 1; v >= 0 && out->st.vps; --v) {
    if (out->st.vps[v].is_gpu) {
      out->enq_stream = out->st.vps[v].enqueued;
    }
    out->plastic_tasks += out->st.vps[v].plastic_tasks;
    out->plastic_tasks_other += out->st.vps[v].plastic_tasks_other;
  }
  out->st.vps = NULL;
  if (out->st.plastic_synapses) {
    return nestcl_engine_weight_stats(e, be->ee, &out->w);
  }
  return 0;
}

int brunel_run(const brunel_net *net, const nestcl_engine_config *cfg, uint32_t n_neurons, uint32_t indegree,
               const double *pieces, int n_pieces, brunel_result *out)
{
  memset(out, 0, sizeof *out);
  brunel_engine be;
  int rc = brunel_build(net, cfg, n_neurons, indegree, &be);
  if (rc) {
    return rc;
  }
  for (int k = 0; k < n_pieces && !rc; ++k) {
    rc = pieces[k] >= 0.0 ? nestcl_engine_simulate(be.e, pieces[k]) : run_stopped(be.e, cfg->resolution_ms, -pieces[k]);
  }
  if (!rc) {
    rc = brunel_collect(&be, out);
  }
  nestcl_engine_destroy(be.e);
  return rc;
}

void brunel_free(brunel_result *r)
{
  free(r->gids);
  free(r->steps);
  memset(r, 0, sizeof *r);
}

int brunel_compare(const char *what, const brunel_result *a, const brunel_result *b)
{
  size_t n = a->n < b->n ? a->n : b->n;
  for (size_t k = 0; k < n; ++k) {
    if (a->gids[k] != b->gids[k] || a->steps[k] != b->steps[k]) {
      fprintf(stderr, "FAIL %s: spike %zu differs: (%llu, %lld) vs (%llu, %lld)\n", what, k,
              (unsigned long long)a->gids[k], (long long)a->steps[k], (unsigned long long)b->gids[k],
              (long long)b->steps[k]);
      return 1;
    }
  }
  if (a->n != b->n) {
    fprintf(stderr, "FAIL %s: %zu vs %zu spikes\n", what, a->n, b->n);
    return 1;
  }
  if (a->w.n != b->w.n || a->w.checksum != b->w.checksum || a->w.mean != b->w.mean || a->w.sd != b->w.sd ||
      a->w.min != b->w.min || a->w.max != b->w.max) {
    fprintf(stderr,
            "FAIL %s: E->E weights differ: %llu synapses, checksum %016llx, mean %.17g, sd %.17g vs %llu, "
            "%016llx, %.17g, %.17g\n",
            what, (unsigned long long)a->w.n, (unsigned long long)a->w.checksum, a->w.mean, a->w.sd,
            (unsigned long long)b->w.n, (unsigned long long)b->w.checksum, b->w.mean, b->w.sd);
    return 1;
  }
  return 0;
}

int brunel_check_variants(const brunel_net *net, const nestcl_engine_config *cfg, const brunel_result *ref,
                          const brunel_variant *v, int n)
{
  int fails = 0;
  for (int k = 0; k < n; ++k) {
    nestcl_engine_config c = *cfg;
    c.cpu_threads = v[k].threads;
    c.gpu_streams = v[k].streams;
    c.gpu_fraction = v[k].alpha;
    c.weight_type = v[k].weight_double ? NESTCL_WEIGHT_DOUBLE : NESTCL_WEIGHT_FLOAT;
    if (v[k].history_capacity) {
      c.history_capacity = v[k].history_capacity;
    }
    c.sync_interval = v[k].sync_interval;
    c.host_clock = v[k].host_clock;
    brunel_result r;
    char what[200];
    snprintf(what, sizeof what, "%s, %s", net->label, v[k].name);
    if (v[k].mode) {
      setenv("NESTCL_DELIVER_MODE", v[k].mode, 1);
      setenv("NESTCL_DELIVER_WIDTH", v[k].width, 1);
    }
    int rc = brunel_run(net, &c, 2000, 200, v[k].pieces, v[k].n_pieces, &r);
    unsetenv("NESTCL_DELIVER_MODE");
    unsetenv("NESTCL_DELIVER_WIDTH");
    if (rc == NESTCL_ENODEV) {
      printf("SKIP %s: %s\n", what, nestcl_last_error());
      return -77;
    }
    if (rc) {
      fprintf(stderr, "FAIL %s: %s\n", what, nestcl_last_error());
      fails++;
      continue;
    }
    int bad = brunel_compare(what, ref, &r);
    if (v[k].want_resumes && (!r.st.device_loop || r.enq_stream.resumes == 0)) {
      fprintf(stderr, "FAIL %s: device loop %d with %llu resumes; a halt and a resume expected\n", what,
              r.st.device_loop, (unsigned long long)r.enq_stream.resumes);
      bad++;
    }
    if (v[k].one_wait) {
      const uint64_t ss = (uint64_t)(r.st.steps / r.st.min_delay_steps), w = r.enq_stream.waits;
      if (w < ss || w > ss + (uint64_t)v[k].n_pieces) {
        fprintf(stderr, "FAIL %s: the stream waited %llu times in %llu super steps, not once each\n", what,
                (unsigned long long)w, (unsigned long long)ss);
        bad++;
      }
      printf("%s: %llu waits in %llu super steps\n", what, (unsigned long long)w, (unsigned long long)ss);
    }
    if (r.st.plastic_synapses) {
      printf("%s: %zu spikes, weights %016llx, %s%s (%llu resumes)\n", what, r.n, (unsigned long long)r.w.checksum,
             bad ? "DIFFERENT" : "identical", r.st.device_loop ? ", device loop" : "",
             (unsigned long long)r.enq_stream.resumes);
    } else {
      printf("%s: %zu spikes, %s\n", what, r.n, bad ? "DIFFERENT" : "identical");
    }
    fails += bad;
    brunel_free(&r);
  }
  return fails;
}
