/*
 * The engine's validation (CPU only, fast, also under ASan/UBSan): each bad
 * input gets NESTCL_EINVAL (or ENOMEM for the device budget) and a message
 * that names the problem; plus the hpc_benchmark PSP conversion against the
 * check values of BENCHMARKS.md, and a multimeter/DC smoke check.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nestcl/engine.h"
#include "test_lif.h"

static int fails;

static void expect(int rc, int want, const char *needle, const char *what)
{
  const char *msg = rc ? nestcl_last_error() : "";
  if (rc != want || (needle && !strstr(msg, needle))) {
    fprintf(stderr, "FAIL %s: rc %d (want %d), message '%s' (want '%s')\n", what, rc, want, msg, needle ? needle : "");
    fails++;
  } else {
    printf("ok %s%s%s\n", what, rc ? ": " : "", msg);
  }
}

static nestcl_engine *make(int threads, int streams, double alpha)
{
  nestcl_engine_config c;
  nestcl_engine_config_defaults(&c);
  c.cpu_threads = threads;
  c.gpu_streams = streams;
  c.gpu_fraction = alpha;
  nestcl_engine *e = NULL;
  if (nestcl_engine_create(&c, &e) == 0) {
    nestcl_engine_set_models(e, test_lif_models, 1);
  }
  return e;
}

int main(void)
{
  nestcl_engine_config c;
  nestcl_engine *e;
  nestcl_engine_config_defaults(&c);
  c.gpu_streams = 1;
  c.gpu_fraction = 1.5;
  expect(nestcl_engine_create(&c, &e), NESTCL_EINVAL, "outside [0, 1]", "alpha 1.5");
  c.gpu_fraction = -0.2;
  expect(nestcl_engine_create(&c, &e), NESTCL_EINVAL, "outside [0, 1]", "alpha -0.2");
  c.gpu_streams = 0;
  c.gpu_fraction = 0.5;
  expect(nestcl_engine_create(&c, &e), NESTCL_EINVAL, "no GPU streams", "alpha without streams");

  int p, q, rec;
  e = make(1, 0, 0.0);
  expect(nestcl_engine_create_population(e, "iaf_nonexistent", 10, 0, &p), NESTCL_EINVAL, "unknown model",
         "unknown model");
  expect(nestcl_engine_create_population(e, "test_lif", 10, 0, &p), 0, NULL, "create");
  expect(nestcl_engine_set(e, p, "no_such_param", nestcl_constant(1.0)), NESTCL_EINVAL, "no_such_param",
         "unknown parameter");
  expect(nestcl_engine_set(e, p, "tau_m", nestcl_constant(-1.0)), NESTCL_EINVAL, "positive", "negative tau_m");
  nestcl_conn_spec conn = {NESTCL_RULE_FIXED_INDEGREE, 5, 1, 1, 0, 0.0};
  nestcl_syn_spec syn = {nestcl_constant(10.0), nestcl_constant(-1.0), 0};
  expect(nestcl_engine_connect(e, p, p, &conn, &syn), NESTCL_EINVAL, "negative", "negative delay");
  syn.delay_ms = nestcl_constant(0.04);
  expect(nestcl_engine_connect(e, p, p, &conn, &syn), NESTCL_EINVAL, "below the resolution", "delay < h");
  syn.delay_ms = nestcl_constant(1.0);
  conn.allow_multapses = 0;
  conn.degree = 11;
  expect(nestcl_engine_connect(e, p, p, &conn, &syn), NESTCL_EINVAL, "without multapses", "degree > pool");
  syn.rport = 3;
  conn.degree = 2;
  expect(nestcl_engine_connect(e, p, p, &conn, &syn), NESTCL_EINVAL, "rport", "bad rport");
  nestcl_engine_destroy(e);

  nestcl_engine_config_defaults(&c);
  c.min_delay_ms = 1.0;
  nestcl_engine_create(&c, &e);
  nestcl_engine_set_models(e, test_lif_models, 1);
  nestcl_engine_create_population(e, "test_lif", 10, 0, &p);
  syn.rport = 0;
  syn.delay_ms = nestcl_constant(0.5);
  expect(nestcl_engine_connect(e, p, p, &conn, &syn), NESTCL_EINVAL, "below min_delay", "delay < min_delay");
  nestcl_engine_destroy(e);

  /* Weights that could overflow the fixed-point ring (|sum| < 2^31) are refused at build time. */
  e = make(1, 0, 0.0);
  nestcl_engine_create_population(e, "test_lif", 10, 0, &p);
  conn.rule = NESTCL_RULE_FIXED_INDEGREE;
  conn.degree = 5;
  conn.allow_multapses = 1;
  syn.weight = nestcl_constant(1e9);
  syn.delay_ms = nestcl_constant(1.0);
  expect(nestcl_engine_connect(e, p, p, &conn, &syn), 0, NULL, "connect with 1e9 pA");
  expect(nestcl_engine_simulate(e, 1.0), NESTCL_EINVAL, "overflow the fixed-point ring", "fixed-point overflow");
  nestcl_engine_destroy(e);

  e = make(3, 0, 0.0);
  nestcl_engine_create_population(e, "test_lif", 2, 0, &p);
  expect(nestcl_engine_simulate(e, 1.0), NESTCL_EINVAL, "more virtual processes", "more VPs than neurons");
  nestcl_engine_destroy(e);

  /* A working small network: DC drive, multimeter, simulate twice; samples land where asked. */
  e = make(2, 0, 0.0);
  nestcl_engine_create_population(e, "test_lif", 20, 0, &p);
  nestcl_engine_create_population(e, "test_lif", 5, 0, &q);
  nestcl_engine_set(e, p, "V_m", nestcl_uniform(0.0, 10.0));
  expect(nestcl_engine_add_dc(e, p, 600.0, 1.0), 0, NULL, "dc");
  const char *recs[] = {"V_m", "I_syn_ex"};
  int mm;
  expect(nestcl_engine_add_multimeter(e, p, 3, 4, recs, 2, 1.0, &mm), 0, NULL, "multimeter");
  expect(nestcl_engine_add_spike_recorder(e, p, 0, 20, &rec), 0, NULL, "spike recorder");
  conn.rule = NESTCL_RULE_ALL_TO_ALL;
  conn.allow_autapses = 1;
  syn.weight = nestcl_constant(1.0);
  syn.delay_ms = nestcl_uniform(1.0, 2.0);
  expect(nestcl_engine_connect(e, p, q, &conn, &syn), 0, NULL, "all_to_all with drawn delays");
  expect(nestcl_engine_simulate(e, 20.0), 0, NULL, "simulate 20 ms");
  expect(nestcl_engine_simulate(e, 10.05), NESTCL_EINVAL, "multiple of the resolution", "simulate 10.05 ms");
  expect(nestcl_engine_simulate(e, 10.0), 0, NULL, "simulate 10 ms more");
  expect(nestcl_engine_create_population(e, "test_lif", 5, 0, &q), NESTCL_EINVAL, "already built",
         "create after build");
  const int64_t *st;
  const uint64_t *g;
  const double *val;
  size_t ns;
  int nr;
  nestcl_engine_samples(e, mm, &st, &g, &val, &ns, &nr);
  /* 30 ms at 1 ms: 30 sample times x 4 neurons; the first at step 9 (t = 1 ms). */
  if (ns != 120 || nr != 2 || st[0] != 9 || g[0] != 3 || g[3] != 6 || st[119] != 299) {
    fprintf(stderr, "FAIL multimeter: %zu samples, first (%lld, %llu)\n", ns, ns ? (long long)st[0] : -1LL,
            ns ? (unsigned long long)g[0] : 0ULL);
    fails++;
  }
  const uint64_t *sg;
  const int64_t *ss;
  size_t nspk;
  nestcl_engine_spikes(e, rec, &sg, &ss, &nspk);
  /* 600 pA * tau_m / C_m = 48 mV > 20 mV: every DC-driven neuron fires. */
  if (nspk < 20) {
    fprintf(stderr, "FAIL DC drive: only %zu spikes\n", nspk);
    fails++;
  }
  nestcl_engine_stats s;
  nestcl_engine_get_stats(e, &s);
  if (s.synapses != 100 || s.steps != 300 || s.min_delay_steps != 10 || s.max_delay_steps != 20) {
    fprintf(stderr, "FAIL stats: %llu synapses, %lld steps, delays %d..%d\n", (unsigned long long)s.synapses,
            (long long)s.steps, s.min_delay_steps, s.max_delay_steps);
    fails++;
  }
  printf("multimeter %zu samples, %zu spikes, %.2f bytes/synapse\n", ns, nspk, s.bytes_per_synapse);
  nestcl_engine_destroy(e);

#ifdef NESTCL_TEST_HAVE_BUILTIN_MODELS
  /* Translated synapses: Connect by model name and parameters, each mistake one clear error. */
  e = make(1, 0, 0.0);
  nestcl_engine_set_synapse_models(e, nestcl_builtin_synapses, nestcl_builtin_synapse_count);
  expect(nestcl_engine_create_population(e, "test_lif", 10, 0, &p), 0, NULL, "create for STDP");
  nestcl_conn_spec c3 = {NESTCL_RULE_FIXED_INDEGREE, 3, 0, 1, 0, 0.0};
  nestcl_syn_spec s5 = {nestcl_constant(5.0), nestcl_constant(1.0), 0};
  const nestcl_syn_param good[] = {{"alpha", 0.0513}, {"lambda", 0.1}, {"mu", 0.4}, {"tau_plus", 15.0}};
  const nestcl_syn_param typo[] = {{"lamda", 0.1}};
  const nestcl_syn_param wmax[] = {{"Wmax", -1.0}};
  const nestcl_syn_param wparam[] = {{"weight", 1.0}};
  int ee = -1;
  expect(nestcl_engine_connect_synapse(e, p, p, &c3, &s5, "stdp_nope", NULL, 0, &ee), NESTCL_EINVAL,
         "unknown synapse model 'stdp_nope'", "unknown synapse model");
  expect(nestcl_engine_connect_synapse(e, p, p, &c3, &s5, "stdp_pl_synapse_hom", typo, 1, &ee), NESTCL_EINVAL,
         "cannot set 'lamda'", "unknown synapse parameter");
  expect(nestcl_engine_connect_synapse(e, p, p, &c3, &s5, "stdp_synapse", wmax, 1, &ee), NESTCL_EINVAL, "same sign",
         "weight and Wmax of different sign");
  expect(nestcl_engine_connect_synapse(e, p, p, &c3, &s5, "stdp_synapse", wparam, 1, &ee), NESTCL_EINVAL,
         "in the syn spec", "weight as a parameter");
  expect(nestcl_engine_connect_synapse(e, p, p, &c3, &s5, "static_synapse", good, 1, &ee), NESTCL_EINVAL,
         "takes no parameters", "parameters of static_synapse");
  expect(nestcl_engine_set(e, p, "tau_minus", nestcl_normal(20.0, 1.0)), NESTCL_EINVAL, "positive constant",
         "drawn tau_minus");
  expect(nestcl_engine_set(e, p, "tau_minus", nestcl_constant(30.0)), 0, NULL, "tau_minus");
  expect(nestcl_engine_connect_synapse(e, p, p, &c3, &s5, "stdp_pl_synapse_hom", good, 4, &ee), 0, NULL,
         "Connect stdp_pl_synapse_hom");
  int st_proj = -1;
  expect(nestcl_engine_connect_synapse(e, p, p, &c3, &s5, "static_synapse", NULL, 0, &st_proj), 0, NULL,
         "Connect static_synapse by name");
  expect(nestcl_engine_add_dc(e, p, 600.0, 1.0), 0, NULL, "dc for STDP");
  expect(nestcl_engine_simulate(e, 20.0), 0, NULL, "simulate with STDP");
  nestcl_weight_stats ws;
  expect(nestcl_engine_weight_stats(e, ee, &ws), 0, NULL, "weight stats");
  expect(nestcl_engine_weight_stats(e, st_proj, &ws), NESTCL_EINVAL, "not one of translated synapses",
         "weight stats of a static projection");
  if (ws.n != 30 || !(ws.mean > 0.0)) {
    fprintf(stderr, "FAIL STDP weight stats: %llu synapses, mean %g\n", (unsigned long long)ws.n, ws.mean);
    fails++;
  }
  nestcl_engine_destroy(e);
#endif

  /* hpc_benchmark's weight conversion (BENCHMARKS.md check values). */
  double t_max, v_max;
  nestcl_alpha_psp_peak(10.0, 0.32582722403722841, 250.0, &t_max, &v_max);
  double JE = 0.14 / v_max;
  printf("t_max %.6f ms, 1/v_max %.4f, J_E %.4f pA\n", t_max, 1.0 / v_max, JE);
  if (fabs(t_max - 1.70076) > 5e-5 || fabs(1.0 / v_max - 325.7829) > 5e-4 || fabs(JE - 45.6096) > 5e-4) {
    fprintf(stderr, "FAIL PSP conversion\n");
    fails++;
  }
  double w = nestcl_lambert_wm1(-0.1);
  if (fabs(w * exp(w) + 0.1) > 1e-15 || w > -1.0) {
    fprintf(stderr, "FAIL W_-1(-0.1) = %.17g\n", w);
    fails++;
  }
  expect(nestcl_alpha_psp_peak(10.0, 10.0, 250.0, &t_max, &v_max), NESTCL_EINVAL, "tau_m != tau_syn",
         "psp with equal taus");
  return fails ? 1 : 0;
}
