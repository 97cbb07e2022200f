/*
 * Random draws of a translated model in the engine (issue 11, NEST's
 * distributions on Philox, nestcl_dist.h): the project's pp_psc_delta, whose
 * update() draws a Poisson number of spikes per step (dead_time 0) and sends
 * them as one SpikeEvent of that multiplicity, or a gamma-distributed dead
 * time (dead_time_random).
 *
 *  - Poisson counts at a constant rate (c_1 = c_3 = 0, rate c_2): the number of
 *    spikes (the recorder lists a spike of multiplicity m m times, as NEST's
 *    spike_recorder does) and the share of steps with 0, 1 and 2 spikes of a
 *    neuron are Poisson's, within 5 standard errors;
 *  - gamma dead times at a rate high enough to fire on the first step after
 *    the dead time: the mean inter-spike interval is the dead time's mean plus
 *    the rounding to steps and the step that fires;
 *  - the spike trains are the same on 1 and 2 threads, 1 PoCL stream and a mix
 *    (the draws are keyed by neuron and step, not by who computes them);
 *  - a plastic synapse from pp_psc_delta is refused (it would see a spike of
 *    multiplicity m as m events where NEST's sees one).
 * Without an OpenCL device the stream runs are skipped, the rest still runs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestcl/device.h"
#include "nestcl/engine.h"
#include "nestcl/model.h"
#include "../unit/nestcl_check.h"

#define N 2000
#define SIM_MS 100.0
#define H 0.1

typedef struct train {
  uint64_t *gid;
  int64_t *step;
  size_t n;
} train;

typedef struct param {
  const char *name;
  double v;
} param;

/* Runs N pp_psc_delta neurons with the parameters for SIM_MS; 0, 77 (no device for streams) or 1. */
static int run(const param *ps, int nps, int threads, int streams, double alpha, train *out)
{
  nestcl_engine_config c;
  nestcl_engine_config_defaults(&c);
  /* NESTCL_TEST_SEED: another seed, to look at the spread of these figures by hand */
  c.seed = getenv("NESTCL_TEST_SEED") ? (uint32_t)strtoul(getenv("NESTCL_TEST_SEED"), NULL, 10) : 777u;
  c.resolution_ms = H;
  c.cpu_threads = threads;
  c.gpu_streams = streams;
  c.gpu_fraction = alpha;
  nestcl_engine *e = NULL;
  int rc0 = nestcl_engine_create(&c, &e);
  if (rc0 != 0) {
    if (streams && rc0 == NESTCL_ENODEV) {
      return 77;
    }
    fprintf(stderr, "engine: %s\n", nestcl_last_error());
    return 1;
  }
  int pop, rec;
  int rc = nestcl_engine_set_models(e, nestcl_builtin_models, nestcl_builtin_model_count);
  if (!rc)
    rc = nestcl_engine_create_population(e, "pp_psc_delta", N, 0, &pop);
  for (int k = 0; k < nps && !rc; ++k) {
    rc = nestcl_engine_set(e, pop, ps[k].name, nestcl_constant(ps[k].v));
  }
  if (!rc)
    rc = nestcl_engine_add_spike_recorder(e, pop, 0, N, &rec);
  if (!rc)
    rc = nestcl_engine_simulate(e, SIM_MS);
  if (rc) {
    const int code = rc;
    fprintf(stderr, "run (%d threads, %d streams): %s\n", threads, streams, nestcl_last_error());
    nestcl_engine_destroy(e);
    return streams && code == NESTCL_ENODEV ? 77 : 1;
  }
  const uint64_t *g;
  const int64_t *s;
  nestcl_engine_spikes(e, rec, &g, &s, &out->n);
  out->gid = malloc(sizeof *out->gid * (out->n ? out->n : 1));
  out->step = malloc(sizeof *out->step * (out->n ? out->n : 1));
  memcpy(out->gid, g, sizeof *g * out->n);
  memcpy(out->step, s, sizeof *s * out->n);
  nestcl_engine_destroy(e);
  return 0;
}

static void train_free(train *t)
{
  free(t->gid);
  free(t->step);
}

static int same(const train *a, const train *b)
{
  return a->n == b->n && !memcmp(a->gid, b->gid, sizeof *a->gid * a->n) &&
    !memcmp(a->step, b->step, sizeof *a->step * a->n);
}

/* Poisson spike counts, sent with their multiplicity. */
static void test_poisson(void)
{
  const double rate_hz = 5000.0, lambda = rate_hz * H * 1e-3; /* 0.5 per step */
  const param ps[] = {{"dead_time", 0.0}, {"c_1", 0.0}, {"c_2", rate_hz}, {"c_3", 0.0}};
  train t = {0};
  if (run(ps, 4, 1, 0, 0.0, &t)) {
    CHECK(0, "the Poisson run failed");
    return;
  }
  const double steps = SIM_MS / H, trials = (double)N * steps;
  const double want = trials * lambda;
  printf("poisson: %zu spikes, want %.0f +- %.0f (5 sigma)\n", t.n, want, 5.0 * sqrt(want));
  CHECK(fabs((double)t.n - want) < 5.0 * sqrt(want), "%zu spikes, want %.0f", t.n, want);
  /* multiplicities: runs of equal (gid, step) in the recorder's list */
  size_t by_m[4] = {0, 0, 0, 0}, events = 0;
  for (size_t k = 0; k < t.n;) {
    size_t e = k + 1;
    while (e < t.n && t.gid[e] == t.gid[k] && t.step[e] == t.step[k]) {
      ++e;
    }
    by_m[e - k < 3 ? e - k : 3]++;
    events++;
    k = e;
  }
  const double p[3] = {exp(-lambda), lambda * exp(-lambda), lambda * lambda / 2.0 * exp(-lambda)};
  const double n0 = trials - (double)events;
  const double got[3] = {n0, (double)by_m[1], (double)by_m[2]};
  for (int m = 0; m < 3; ++m) {
    const double w = trials * p[m], se = sqrt(trials * p[m] * (1.0 - p[m]));
    printf("  steps with %d spikes: %.0f, want %.0f +- %.0f\n", m, got[m], w, 5.0 * se);
    CHECK(fabs(got[m] - w) < 5.0 * se, "steps with %d spikes: %.0f, want %.0f", m, got[m], w);
  }
  CHECK(by_m[2] > 0 && by_m[3] > 0, "no spike of multiplicity >= 2: multiplicity is not exercised");
  train_free(&t);
}

/* Gamma dead times: with a rate that fires on the first free step, ISI = dead time + rounding + 1 step. */
static void test_gamma(void)
{
  const double dead = 2.0, shape = 3.0;
  const param ps[] = {
    {"dead_time", dead}, {"dead_time_random", 1.0}, {"dead_time_shape", shape}, {"c_1", 0.0}, {"c_2", 1e9},
    {"c_3", 0.0}};
  train t = {0};
  if (run(ps, 6, 1, 0, 0.0, &t)) {
    CHECK(0, "the gamma run failed");
    return;
  }
  /* the recorder lists spikes in step order: ISIs per neuron */
  /* the first 20 intervals of each neuron: they end long before SIM_MS (mean 43 ms, sd 5 ms for 21 of
     them), so the end of the run does not cut the long ones off and bias the sample */
  int64_t *last = malloc(sizeof *last * N);
  int *seen = calloc(N, sizeof *seen);
  uint64_t first = t.n ? t.gid[0] : 0;
  for (size_t k = 0; k < t.n; ++k) {
    first = t.gid[k] < first ? t.gid[k] : first;
  }
  for (int i = 0; i < N; ++i) {
    last[i] = -1;
  }
  double sum = 0.0, sum2 = 0.0;
  size_t n = 0;
  for (size_t k = 0; k < t.n; ++k) {
    const size_t i = (size_t)(t.gid[k] - first);
    if (i < N && last[i] >= 0 && seen[i] < 20) {
      seen[i]++;
      const double isi = (double)(t.step[k] - last[i]) * H;
      sum += isi;
      sum2 += isi * isi;
      n++;
    }
    if (i < N) {
      last[i] = t.step[k];
    }
  }
  free(last);
  free(seen);
  const double mean = n ? sum / (double)n : 0.0, var = n > 1 ? (sum2 - sum * mean) / (double)(n - 1) : 0.0;
  /* Gamma(shape, mean dead): variance dead^2 / shape; the steps round up (on average half a step) and the
     spike comes one step after the dead time ends */
  const double want = dead + 0.5 * H + H, want_var = dead * dead / shape + H * H / 12.0;
  const double se = sqrt(want_var / (double)(n ? n : 1));
  printf("gamma dead time: %zu ISIs, mean %.4f ms (want %.4f +- %.4f), variance %.4f (want %.4f)\n", n, mean, want,
         5.0 * se, var, want_var);
  CHECK(n == 20 * N, "%zu ISIs, want 20 per neuron", n);
  CHECK(fabs(mean - want) < 5.0 * se, "mean ISI %.4f ms, want %.4f", mean, want);
  /* the variance's standard error: Gamma(3)'s kurtosis makes it sqrt(4 / n) of the variance */
  CHECK(fabs(var - want_var) < 5.0 * want_var * sqrt(4.0 / (double)(n ? n : 1)), "ISI variance %.4f, want %.4f", var,
        want_var);
  train_free(&t);
}

/* The same draws whoever computes them. */
static int test_partition(void)
{
  const param ps[] = {{"dead_time", 0.0}, {"c_1", 0.0}, {"c_2", 2000.0}, {"c_3", 0.05}, {"I_e", 50.0}};
  train ref = {0};
  if (run(ps, 5, 1, 0, 0.0, &ref)) {
    CHECK(0, "the reference run failed");
    return 1;
  }
  struct {
    const char *label;
    int threads, streams;
    double alpha;
  } splits[] = {{"2 threads", 2, 0, 0.0}, {"1 stream", 0, 1, 1.0}, {"1 thread + 1 stream, alpha 0.4", 1, 1, 0.4}};
  int skipped = 0;
  for (size_t k = 0; k < sizeof splits / sizeof *splits; ++k) {
    train t = {0};
    int rc = run(ps, 5, splits[k].threads, splits[k].streams, splits[k].alpha, &t);
    if (rc == 77) {
      printf("%s: skipped (no OpenCL device)\n", splits[k].label);
      skipped = 1;
      continue;
    }
    CHECK(rc == 0 && same(&ref, &t), "%s: %zu spikes, not the 1-thread train of %zu", splits[k].label, t.n, ref.n);
    if (rc == 0 && same(&ref, &t)) {
      printf("%s: %zu spikes, equal to 1 thread\n", splits[k].label, t.n);
    }
    train_free(&t);
  }
  train_free(&ref);
  return skipped;
}

/* A plastic synapse from a model that sends multiplicities is refused. */
static void test_plastic_refused(void)
{
  nestcl_engine_config c;
  nestcl_engine_config_defaults(&c);
  nestcl_engine *e = NULL;
  CHECK(nestcl_engine_create(&c, &e) == 0, "engine: %s", nestcl_last_error());
  if (!e) {
    return;
  }
  int a = 0, b = 0, proj = -1;
  int rc = nestcl_engine_set_models(e, nestcl_builtin_models, nestcl_builtin_model_count);
  if (!rc)
    rc = nestcl_engine_set_synapse_models(e, nestcl_builtin_synapses, nestcl_builtin_synapse_count);
  if (!rc)
    rc = nestcl_engine_create_population(e, "pp_psc_delta", 10, 0, &a);
  if (!rc)
    rc = nestcl_engine_create_population(e, "iaf_psc_alpha", 10, 0, &b);
  CHECK(rc == 0, "set-up: %s", nestcl_last_error());
  nestcl_conn_spec conn = {NESTCL_RULE_ALL_TO_ALL, 0, 1, 1, 0, 0.0};
  nestcl_syn_spec syn = {nestcl_constant(1.0), nestcl_constant(1.0), 0};
  rc = nestcl_engine_connect_synapse(e, a, b, &conn, &syn, "stdp_synapse", NULL, 0, &proj);
  CHECK(rc == NESTCL_EINVAL && strstr(nestcl_last_error(), "multiplicity"),
        "stdp_synapse from pp_psc_delta: rc %d, '%s'", rc, nestcl_last_error());
  printf("stdp_synapse from pp_psc_delta refused: %s\n", nestcl_last_error());
  nestcl_engine_destroy(e);
}

int main(void)
{
  test_poisson();
  test_gamma();
  int skipped = test_partition();
  test_plastic_refused();
  if (check_report()) {
    return 1;
  }
  return skipped ? 77 : 0;
}
