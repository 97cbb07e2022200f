/*
 * Many plastic projections onto one population (issue 41, item 6): 65
 * projections of stdp_synapse from a source population onto one target
 * population, whose spike history rings start at one entry per neuron and
 * grow during the run. Every set of plastic synapses reads the targets'
 * history, so when a ring grows (or a restore replaces it) every set's kernel
 * must follow it; a cap on how many follow (there was one, at 64) leaves the
 * last sets reading a freed ring. The final weights of all 65 projections
 * and the targets' spikes must equal the C path's (1 thread) on the host
 * clock, in the device loop (launched one by one and replayed), beside a
 * thread, and after a checkpoint written by the device loop and restored
 * into the host clock and into the device loop. Needs the translated models
 * and an OpenCL device with fp64 and 64-bit atomics; without one it skips.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "brunel.h"

#ifdef NESTCL_TEST_HAVE_BUILTIN_MODELS
#define N_PROJ 65
#define N_SRC 100
#define N_TGT 20
#define T_END 60.0
#define T_CKPT 30.0

typedef struct fan_result {
  nestcl_weight_stats w[N_PROJ];
  size_t n_spikes;
  uint64_t spike_sum; /* sum over the targets' spikes of gid * 1,000,003 + step: order-independent */
  int device_loop;
  uint64_t resumes;
} fan_result;

typedef struct fan_net {
  nestcl_engine *e;
  int proj[N_PROJ];
  int rec;
} fan_net;

static int build(const nestcl_engine_config *cfg, fan_net *f)
{
  static const char *names[] = {"E_L", "C_m", "tau_m", "t_ref", "V_th", "V_reset", "tau_syn_ex", "tau_syn_in"};
  static const double values[] = {0.0, 250.0, 20.0, 2.0, 20.0, 10.0, 0.5, 0.5};
  int rc = nestcl_engine_create(cfg, &f->e);
  if (rc) {
    return rc;
  }
  int src, tgt;
  rc = nestcl_engine_set_models(f->e, nestcl_builtin_models, nestcl_builtin_model_count);
  if (!rc)
    rc = nestcl_engine_set_synapse_models(f->e, nestcl_builtin_synapses, nestcl_builtin_synapse_count);
  if (!rc)
    rc = nestcl_engine_create_population(f->e, "iaf_psc_alpha", N_SRC, 0, &src);
  if (!rc)
    rc = nestcl_engine_create_population(f->e, "iaf_psc_alpha", N_TGT, 0, &tgt);
  for (int k = 0; k < 8 && !rc; ++k) {
    rc = nestcl_engine_set(f->e, src, names[k], nestcl_constant(values[k]));
    if (!rc)
      rc = nestcl_engine_set(f->e, tgt, names[k], nestcl_constant(values[k]));
  }
  if (!rc)
    rc = nestcl_engine_set(f->e, tgt, "tau_minus", nestcl_constant(30.0));
  /* Each target gets 2 synapses of each projection, 130 in all, of 4 pA (about 0.02 mV of PSP each). */
  const nestcl_conn_spec c = {NESTCL_RULE_FIXED_INDEGREE, 2, 0, 1, 0, 0.0};
  const nestcl_syn_spec s = {nestcl_constant(4.0), nestcl_constant(1.5), 0};
  const nestcl_syn_param p[] = {{"lambda", 0.05}, {"Wmax", 8.0}};
  for (int k = 0; k < N_PROJ && !rc; ++k) {
    rc = nestcl_engine_connect_synapse(f->e, src, tgt, &c, &s, "stdp_synapse", p, 2, &f->proj[k]);
  }
  /* Poisson drive of about twice the threshold rate (brunel.c): both populations fire at tens of Hz. */
  if (!rc)
    rc = nestcl_engine_add_poisson(f->e, src, 30000.0, 30.0, 1.5, 0);
  if (!rc)
    rc = nestcl_engine_add_poisson(f->e, tgt, 30000.0, 30.0, 1.5, 0);
  if (!rc)
    rc = nestcl_engine_add_spike_recorder(f->e, tgt, 0, N_TGT, &f->rec);
  if (rc) {
    nestcl_engine_destroy(f->e);
    f->e = NULL;
  }
  return rc;
}

static int collect(fan_net *f, fan_result *r)
{
  memset(r, 0, sizeof *r);
  for (int k = 0; k < N_PROJ; ++k) {
    int rc = nestcl_engine_weight_stats(f->e, f->proj[k], &r->w[k]);
    if (rc) {
      return rc;
    }
  }
  const uint64_t *g;
  const int64_t *st;
  nestcl_engine_spikes(f->e, f->rec, &g, &st, &r->n_spikes);
  for (size_t i = 0; i < r->n_spikes; ++i) {
    r->spike_sum += g[i] * 1000003ull + (uint64_t)st[i];
  }
  nestcl_engine_stats s;
  nestcl_engine_get_stats(f->e, &s);
  r->device_loop = s.device_loop;
  for (int v = 0; v < s.n_vps; ++v) {
    r->resumes += s.vps[v].enqueued.resumes;
  }
  return 0;
}

/* One run to T_END (restore: from the checkpoint in dir; ckpt: writing one there at T_CKPT). */
static int run(const nestcl_engine_config *cfg, const char *restore, const char *ckpt, fan_result *r)
{
  fan_net f;
  int rc = build(cfg, &f);
  double t0 = 0.0;
  if (!rc && restore) {
    rc = nestcl_engine_restore(f.e, restore);
    t0 = T_CKPT;
  }
  if (!rc && ckpt) {
    rc = nestcl_engine_simulate(f.e, T_CKPT);
    if (!rc)
      rc = nestcl_engine_checkpoint(f.e, ckpt);
    t0 = T_CKPT;
  }
  if (!rc)
    rc = nestcl_engine_simulate(f.e, T_END - t0);
  if (!rc)
    rc = collect(&f, r);
  nestcl_engine_destroy(f.e);
  return rc;
}

static int compare(const char *what, const fan_result *ref, const fan_result *r, int spikes)
{
  int bad = 0;
  for (int k = 0; k < N_PROJ; ++k) {
    const nestcl_weight_stats *a = &ref->w[k], *b = &r->w[k];
    if (a->n != b->n || a->checksum != b->checksum || a->mean != b->mean || a->sd != b->sd) {
      fprintf(stderr,
              "FAIL %s: projection %d of %d: weights %llu, checksum %016llx, mean %.17g; the C path's %llu, "
              "%016llx, %.17g\n",
              what, k + 1, N_PROJ, (unsigned long long)b->n, (unsigned long long)b->checksum, b->mean,
              (unsigned long long)a->n, (unsigned long long)a->checksum, a->mean);
      bad = 1;
    }
  }
  if (spikes && (ref->n_spikes != r->n_spikes || ref->spike_sum != r->spike_sum)) {
    fprintf(stderr, "FAIL %s: %zu target spikes (sum %016llx); the C path's %zu (%016llx)\n", what, r->n_spikes,
            (unsigned long long)r->spike_sum, ref->n_spikes, (unsigned long long)ref->spike_sum);
    bad = 1;
  }
  printf("%s: %zu target spikes, projection %d's weights %016llx, device loop %d, %llu resumes: %s\n", what,
         r->n_spikes, N_PROJ, (unsigned long long)r->w[N_PROJ - 1].checksum, r->device_loop,
         (unsigned long long)r->resumes, bad ? "DIFFERENT" : "identical");
  return bad;
}

static void remove_dir(const char *dir)
{
  char path[600];
  for (int r = 0; r < 4; ++r) {
    snprintf(path, sizeof path, "%s/rank-%d-of-1.nestcl-ckpt", dir, r);
    unlink(path);
  }
  rmdir(dir);
}

int main(void)
{
  nestcl_engine_config cfg;
  nestcl_engine_config_defaults(&cfg);
  cfg.seed = 777;
  cfg.history_capacity = 1; /* every ring grows during the run */
  fan_result ref;
  if (run(&cfg, NULL, NULL, &ref)) {
    fprintf(stderr, "FAIL C path: %s\n", nestcl_last_error());
    return 1;
  }
  double rate = (double)ref.n_spikes / N_TGT / (T_END * 1e-3);
  printf("C path: %zu target spikes (%.1f Hz), projection %d: %llu synapses, weights %.6f +- %.6f\n", ref.n_spikes,
         rate, N_PROJ, (unsigned long long)ref.w[N_PROJ - 1].n, ref.w[N_PROJ - 1].mean, ref.w[N_PROJ - 1].sd);
  int fails = 0;
  if (rate < 10.0 || rate > 400.0 || !(ref.w[N_PROJ - 1].sd > 0.0) || ref.w[N_PROJ - 1].n != 2 * N_TGT) {
    fprintf(stderr, "FAIL C path: rate %.1f Hz or weights that did not move\n", rate);
    fails++;
  }
  const struct {
    const char *name;
    int threads, host_clock, command_buffer, loop;
    double alpha;
  } v[] = {{"1 stream, host clock", 0, 1, 1, 0, 1.0},
           {"1 stream, the device loop, launched", 0, 0, 0, 1, 1.0},
           {"1 stream, the device loop, replayed", 0, 0, 1, 1, 1.0},
           {"1 thread + 1 stream, alpha 0.5", 1, 0, 1, 0, 0.5}};
  for (size_t k = 0; k < sizeof v / sizeof v[0]; ++k) {
    nestcl_engine_config c = cfg;
    c.cpu_threads = v[k].threads;
    c.gpu_streams = 1;
    c.gpu_fraction = v[k].alpha;
    c.host_clock = v[k].host_clock;
    c.command_buffer = v[k].command_buffer;
    fan_result r;
    int rc = run(&c, NULL, NULL, &r);
    if (rc == NESTCL_ENODEV) {
      printf("SKIP: %s\n", nestcl_last_error());
      return 77;
    }
    if (rc) {
      fprintf(stderr, "FAIL %s: %s\n", v[k].name, nestcl_last_error());
      fails++;
      continue;
    }
    fails += compare(v[k].name, &ref, &r, 1);
    if (r.device_loop != v[k].loop) {
      fprintf(stderr, "FAIL %s: device loop %d, want %d\n", v[k].name, r.device_loop, v[k].loop);
      fails++;
    }
  }
  /* A checkpoint written by the device loop, restored into the host clock and into the device loop. */
  char dir[] = "/tmp/nestcl_fanin_XXXXXX";
  if (!mkdtemp(dir)) {
    fprintf(stderr, "FAIL: mkdtemp\n");
    return 1;
  }
  nestcl_engine_config c = cfg;
  c.cpu_threads = 0;
  c.gpu_streams = 1;
  c.gpu_fraction = 1.0;
  fan_result r;
  if (run(&c, NULL, dir, &r)) {
    fprintf(stderr, "FAIL checkpoint at %g ms: %s\n", T_CKPT, nestcl_last_error());
    fails++;
  } else {
    fails += compare("1 stream, checkpoint at 30 ms, uninterrupted", &ref, &r, 1);
    for (int hc = 1; hc >= 0; --hc) {
      c.host_clock = hc;
      if (run(&c, dir, NULL, &r)) {
        fprintf(stderr, "FAIL restore: %s\n", nestcl_last_error());
        fails++;
        continue;
      }
      fails += compare(hc ? "restored at 30 ms, host clock" : "restored at 30 ms, device loop", &ref, &r, 0);
    }
  }
  remove_dir(dir);
  if (fails) {
    fprintf(stderr, "%d failure(s)\n", fails);
    return 1;
  }
  printf("PASS\n");
  return 0;
}
#else
int main(void)
{
  printf("SKIP: needs the translated models (nestcl_models)\n");
  return 77;
}
#endif
