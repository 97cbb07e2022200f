/*
 * Recording across paths: a multimeter (V_m, I_syn_ex every 0.5 ms) and a
 * spike recorder on a small Poisson- and DC-driven network give bit-identical
 * samples and spikes with 1 CPU thread, 1 PoCL stream, and 1 thread + 1
 * stream, also when simulate() is called in pieces that split super steps.
 * This exercises the device-side recording hook and its draining.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestcl/engine.h"
#include "test_lif.h"

typedef struct rec_out {
  size_t ns, nsp;
  int64_t *steps;
  uint64_t *gids;
  double *vals;
  uint64_t *sg;
  int64_t *ss;
} rec_out;

static int run(int threads, int streams, double alpha, const double *pieces, int n_pieces, rec_out *o)
{
  nestcl_engine_config c;
  nestcl_engine_config_defaults(&c);
  c.seed = 99;
  c.cpu_threads = threads;
  c.gpu_streams = streams;
  c.gpu_fraction = alpha;
  nestcl_engine *e;
  int rc = nestcl_engine_create(&c, &e), p, mm, sr;
  if (rc)
    return rc;
  nestcl_engine_set_models(e, test_lif_models, 1);
  nestcl_engine_create_population(e, "test_lif", 150, 0, &p);
  nestcl_engine_set(e, p, "V_m", nestcl_uniform(0.0, 15.0));
  nestcl_engine_set(e, p, "tau_m", nestcl_normal_clipped(20.0, 3.0, 10.0, 30.0));
  nestcl_conn_spec cs = {NESTCL_RULE_FIXED_INDEGREE, 30, 0, 1, 0, 0.0};
  nestcl_syn_spec ss = {nestcl_normal(40.0, 80.0), nestcl_uniform(1.0, 2.5), 0};
  rc = nestcl_engine_connect(e, p, p, &cs, &ss);
  if (!rc)
    rc = nestcl_engine_add_poisson(e, p, 9000.0, 50.0, 1.0, 0);
  if (!rc)
    rc = nestcl_engine_add_dc(e, p, 120.0, 1.0);
  const char *names[] = {"V_m", "I_syn_ex"};
  if (!rc)
    rc = nestcl_engine_add_multimeter(e, p, 40, 70, names, 2, 0.5, &mm);
  if (!rc)
    rc = nestcl_engine_add_spike_recorder(e, p, 0, 150, &sr);
  for (int k = 0; k < n_pieces && !rc; ++k)
    rc = nestcl_engine_simulate(e, pieces[k]);
  if (!rc) {
    const int64_t *st;
    const uint64_t *g;
    const double *v;
    int nr;
    nestcl_engine_samples(e, mm, &st, &g, &v, &o->ns, &nr);
    o->steps = malloc(o->ns * sizeof *o->steps + 1);
    o->gids = malloc(o->ns * sizeof *o->gids + 1);
    o->vals = malloc(o->ns * 2 * sizeof *o->vals + 1);
    memcpy(o->steps, st, o->ns * sizeof *st);
    memcpy(o->gids, g, o->ns * sizeof *g);
    memcpy(o->vals, v, o->ns * 2 * sizeof *v);
    const uint64_t *sg;
    const int64_t *ssp;
    nestcl_engine_spikes(e, sr, &sg, &ssp, &o->nsp);
    o->sg = malloc(o->nsp * sizeof *sg + 1);
    o->ss = malloc(o->nsp * sizeof *ssp + 1);
    memcpy(o->sg, sg, o->nsp * sizeof *sg);
    memcpy(o->ss, ssp, o->nsp * sizeof *ssp);
  }
  nestcl_engine_destroy(e);
  return rc;
}

static void release(rec_out *o)
{
  free(o->steps);
  free(o->gids);
  free(o->vals);
  free(o->sg);
  free(o->ss);
}

int main(void)
{
  const double whole[] = {60.0}, split[] = {7.3, 20.0, 32.7};
  rec_out ref;
  memset(&ref, 0, sizeof ref);
  if (run(1, 0, 0.0, whole, 1, &ref)) {
    fprintf(stderr, "FAIL reference: %s\n", nestcl_last_error());
    return 1;
  }
  /* 60 ms at 0.5 ms: 120 sample times x 70 neurons; the first at t = 0.5 ms (step 4). */
  if (ref.ns != 120 * 70 || ref.steps[0] != 4 || ref.gids[0] != 40 || ref.nsp < 50) {
    fprintf(stderr, "FAIL reference: %zu samples (first step %lld, gid %llu), %zu spikes\n", ref.ns,
            ref.ns ? (long long)ref.steps[0] : -1LL, ref.ns ? (unsigned long long)ref.gids[0] : 0ULL, ref.nsp);
    return 1;
  }
  struct {
    const char *name;
    int t, s;
    double a;
    const double *p;
    int n;
  } runs[] = {
    {"1 thread in pieces", 1, 0, 0.0, split, 3},
    {"1 stream", 0, 1, 1.0, whole, 1},
    {"1 thread + 1 stream in pieces", 1, 1, 0.5, split, 3},
  };
  int fails = 0;
  for (int r = 0; r < 3; ++r) {
    rec_out o;
    memset(&o, 0, sizeof o);
    int rc = run(runs[r].t, runs[r].s, runs[r].a, runs[r].p, runs[r].n, &o);
    if (rc == NESTCL_ENODEV) {
      printf("SKIP %s: %s\n", runs[r].name, nestcl_last_error());
      release(&ref);
      return 77;
    }
    int bad = rc != 0 || o.ns != ref.ns || o.nsp != ref.nsp ||
      memcmp(o.steps, ref.steps, ref.ns * sizeof *o.steps) != 0 ||
      memcmp(o.gids, ref.gids, ref.ns * sizeof *o.gids) != 0 ||
      memcmp(o.vals, ref.vals, ref.ns * 2 * sizeof *o.vals) != 0 || memcmp(o.sg, ref.sg, ref.nsp * sizeof *o.sg) != 0 ||
      memcmp(o.ss, ref.ss, ref.nsp * sizeof *o.ss) != 0;
    printf("%s: %zu samples, %zu spikes: %s\n", runs[r].name, o.ns, o.nsp,
           rc ? nestcl_last_error() : (bad ? "DIFFERENT" : "identical"));
    fails += bad;
    release(&o);
  }
  printf("reference: %zu samples, %zu spikes\n", ref.ns, ref.nsp);
  release(&ref);
  return fails ? 1 : 0;
}
