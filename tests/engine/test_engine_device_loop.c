/*
 * The device loop (host/src/engine/device_loop/resident.c, issue 29): one stream runs
 * whole super steps and the host waits for it only every sync_interval super
 * steps, at the end of simulate() and on a stop request.
 *  1. The Brunel network (test_lif, 2,000 neurons) on one stream gives the C
 *     path's spike trains, spike count and synaptic events bit for bit: with
 *     the default interval, with an interval of 3 and simulate() pieces that
 *     end inside super steps and a stop request, and with host_clock (the
 *     loop that waits every super step); and the loop waits at most twice per
 *     drain (the counters), where the host clock waits every super step.
 *     Beside a CPU thread the stream waits once per super step (its spike
 *     list), plus once where a simulate() ends: inside a super step for its
 *     counts, at a super step's end (the stop) for that super step's delivery,
 *     which reads host arrays (resident_step.c). Where the device offers
 *     cl_khr_command_buffer (PoCL 3.1 does), whole super steps are replayed
 *     (one replay each, no launch); with command_buffer = 0 they are launched
 *     kernel by kernel (3 each); the results are the same.
 *  5. A checkpoint taken by a device loop draining every 7 super steps at
 *     99 ms (66 super steps: between two drains but for simulate()'s own),
 *     restored into a new device-loop engine and run to 200 ms, continues
 *     the C path's spike trains bit for bit. (engine_checkpoint, under the
 *     sanitizers, keeps its splits: with a 1-stream writer LeakSanitizer's
 *     tracer crashes at exit, every check passed.)
 *  4. A multimeter in the device loop (samples kept on the device for a
 *     window of super steps): iaf_psc_alpha's V_m, I_syn_ex and I_syn_in every
 *     0.7 ms, draining every 3 super steps, simulate() in pieces that end
 *     inside super steps: the 1-thread run's samples, bit for bit.
 *  3. An RKF45 failure (aeif_cond_exp under -40 nA: V_m passes NEST's bound
 *     of -1 V after about 11 ms, NumericalInstability) in a run that drains
 *     every 1000 super steps names the neuron and step the host clock's loop
 *     names.
 *  2. A spike-list overflow (parrots driven far beyond one spike per step,
 *     from 20 ms on) in a run that drains every 1000 super steps names the
 *     same super step as one that drains after every super step, records
 *     nothing of that super step or later, and the engine refuses to go on.
 * Exit 77 without an OpenCL device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "brunel.h"
#include "nestcl/model.h"

static int failures;

#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                             \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fputc('\n', stderr);                                                                                             \
      failures++;                                                                                                      \
    }                                                                                                                  \
  } while (0)

static nestcl_engine_config stream_cfg(int sync_interval, int host_clock)
{
  nestcl_engine_config c;
  nestcl_engine_config_defaults(&c);
  c.cpu_threads = 0;
  c.gpu_streams = 1;
  c.gpu_fraction = 1.0;
  c.seed = 4242;
  c.sync_interval = sync_interval;
  c.host_clock = host_clock;
  return c;
}

static nestcl_engine_config no_command_buffer(void)
{
  nestcl_engine_config c = stream_cfg(0, 0);
  c.command_buffer = 0;
  return c;
}

static nestcl_engine_config mixed_cfg(void)
{
  nestcl_engine_config c = stream_cfg(0, 0);
  c.cpu_threads = 1;
  c.gpu_fraction = 0.5;
  return c;
}

/* 0, 1 (failed) or 77 (no device). */
static int check_brunel(void)
{
  brunel_net net = brunel_test_lif();
  nestcl_engine_config c1;
  nestcl_engine_config_defaults(&c1);
  c1.seed = 4242;
  const double whole[] = {200.0};
  brunel_result ref;
  if (brunel_run(&net, &c1, 2000, 200, whole, 1, &ref)) {
    fprintf(stderr, "FAIL reference: %s\n", nestcl_last_error());
    return 1;
  }
  const double split[] = {13.3, 50.0, -40.0, 96.7};
  struct {
    const char *name;
    nestcl_engine_config c;
    const double *pieces;
    int n_pieces;
    int device_loop;
    uint64_t max_waits;
  } v[] = {
    {"device loop, default interval", stream_cfg(0, 0), whole, 1, 1, 2},
    {"device loop, kernels launched one by one", no_command_buffer(), whole, 1, 1, 2},
    /* 134 super steps of 1.5 ms: drains every 3, at the pieces' ends and the stop, two waits each at most. */
    {"device loop, interval 3, split, stop", stream_cfg(3, 0), split, 4, 1, 2 * (134 / 3 + 4 + 2)},
    {"host clock", stream_cfg(0, 1), whole, 1, 0, UINT64_MAX},
    /* Beside a thread: one wait per super step (133), one more where a piece ends (5 with the stop). */
    {"1 thread + 1 stream, split, stop", mixed_cfg(), split, 4, 0, 133 + 5},
  };
  for (size_t k = 0; k < sizeof v / sizeof *v; ++k) {
    brunel_result r;
    int rc = brunel_run(&net, &v[k].c, 2000, 200, v[k].pieces, v[k].n_pieces, &r);
    if (rc == NESTCL_ENODEV) {
      printf("SKIP: %s\n", nestcl_last_error());
      brunel_free(&ref);
      return 77;
    }
    if (rc) {
      fprintf(stderr, "FAIL %s: %s\n", v[k].name, nestcl_last_error());
      failures++;
      continue;
    }
    const nestcl_enqueue_counts *q = &r.enq_stream;
    CHECK(brunel_compare(v[k].name, &ref, &r) == 0, "%s: spike trains differ from the C path", v[k].name);
    CHECK(r.st.spikes == ref.st.spikes && r.st.synaptic_events == ref.st.synaptic_events,
          "%s: %llu spikes, %llu events; the C path %llu, %llu", v[k].name, (unsigned long long)r.st.spikes,
          (unsigned long long)r.st.synaptic_events, (unsigned long long)ref.st.spikes,
          (unsigned long long)ref.st.synaptic_events);
    CHECK(r.st.device_loop == v[k].device_loop, "%s: device_loop %d", v[k].name, r.st.device_loop);
    CHECK(q->waits <= v[k].max_waits, "%s: %llu waits, at most %llu expected", v[k].name, (unsigned long long)q->waits,
          (unsigned long long)v[k].max_waits);
    if (!v[k].device_loop) {
      CHECK(q->waits >= (uint64_t)r.st.steps / 15, "%s: %llu waits for %lld steps: fewer than one per super step",
            v[k].name, (unsigned long long)q->waits, (long long)r.st.steps);
    }
    if (r.st.command_buffer) {
      /*
       * Whole super steps replayed: one replay each (133 of 2000 steps of 15),
       * no launch, but for the super steps that simulate() calls split.
       */
      CHECK(v[k].device_loop && v[k].c.command_buffer && q->replays >= 125 && q->replays + q->launches / 3 >= 133 &&
              q->launches <= 3 * 8,
            "%s: a command buffer with %llu replays and %llu launches", v[k].name, (unsigned long long)q->replays,
            (unsigned long long)q->launches);
    } else if (v[k].device_loop) {
      CHECK(q->replays == 0 && q->launches >= 3 * 133, "%s: %llu replays, %llu launches", v[k].name,
            (unsigned long long)q->replays, (unsigned long long)q->launches);
    }
    if (k == 0) {
      printf("command buffer (cl_khr_command_buffer): %s\n",
             r.st.command_buffer ? "offered by the device, replayed" : "not offered by the device, or not usable");
    }
    if (v[k].c.cpu_threads > 0) {
      /* The stream's one wait per super step (its spike list), and launches of the merged kernels only. */
      CHECK(q->waits >= 133 && q->launches <= 3 * 134 + 8, "%s: %llu waits, %llu launches", v[k].name,
            (unsigned long long)q->waits, (unsigned long long)q->launches);
    }
    printf("%s %s: %zu spikes, %llu launches, %llu replays, %llu waits, %llu throttles for %lld steps\n",
           failures ? "?" : "ok", v[k].name, r.n, (unsigned long long)q->launches, (unsigned long long)q->replays,
           (unsigned long long)q->waits, (unsigned long long)q->throttles, (long long)r.st.steps);
    brunel_free(&r);
  }
  brunel_free(&ref);
  return 0;
}

/* Parrots driven at 2 MHz from 20 ms: the error of the run and the last recorded step. */
static int overflow_run(int sync_interval, int host_clock, char *msg, size_t cap, int64_t *last)
{
  nestcl_engine_config c = stream_cfg(sync_interval, host_clock);
  nestcl_engine *e = NULL;
  int rc = nestcl_engine_create(&c, &e), pop, rec;
  if (!rc)
    rc = nestcl_engine_set_models(e, nestcl_builtin_models, nestcl_builtin_model_count);
  if (!rc)
    rc = nestcl_engine_create_population(e, "parrot_neuron", 10, 0, &pop);
  /* A quiet train first (so that something is recorded before), then the flood. */
  if (!rc)
    rc = nestcl_engine_add_poisson(e, pop, 200.0, 1.0, 1.0, 0);
  if (!rc)
    rc = nestcl_engine_add_poisson_window(e, pop, 2.0e6, 1.0, 1.0, 0, 20.0, 1.0e9);
  if (!rc)
    rc = nestcl_engine_add_spike_recorder(e, pop, 0, 10, &rec);
  if (!rc)
    rc = nestcl_engine_prepare(e);
  if (rc == NESTCL_ENODEV) {
    nestcl_engine_destroy(e);
    return 77;
  }
  if (rc) {
    snprintf(msg, cap, "set-up: %s", nestcl_last_error());
    nestcl_engine_destroy(e);
    return -1;
  }
  rc = nestcl_engine_simulate(e, 40.0);
  snprintf(msg, cap, "%s", rc ? nestcl_last_error() : "(none)");
  const uint64_t *gids;
  const int64_t *steps;
  size_t n = 0;
  nestcl_engine_spikes(e, rec, &gids, &steps, &n);
  *last = -1;
  for (size_t k = 0; k < n; ++k) {
    *last = steps[k] > *last ? steps[k] : *last;
  }
  int again = nestcl_engine_simulate(e, 1.0);
  nestcl_engine_destroy(e);
  return rc == NESTCL_ERUNTIME && again != 0 ? 0 : 1;
}

static void check_overflow(void)
{
  char m1[512], m1000[512], mh[512];
  int64_t l1, l1000, lh;
  int r1 = overflow_run(1, 0, m1, sizeof m1, &l1);
  int r1000 = overflow_run(1000, 0, m1000, sizeof m1000, &l1000);
  int rh = overflow_run(0, 1, mh, sizeof mh, &lh);
  CHECK(r1 == 0 && r1000 == 0 && rh == 0,
        "overflow runs: %d '%s', %d '%s', %d '%s' (want a runtime error each, and "
        "a refusal to go on)",
        r1, m1, r1000, m1000, rh, mh);
  CHECK(strcmp(m1, m1000) == 0, "interval 1 says '%s', interval 1000 '%s'", m1, m1000);
  CHECK(strstr(m1000, "spike list overflow") && strstr(m1000, "at t = 2"), "message '%s'", m1000);
  CHECK(strstr(mh, "spike list overflow") != NULL, "host clock: '%s'", mh);
  /* Nothing of the overflowing super step (t in [20, 23) ms: steps >= 200) or later is recorded. */
  CHECK(l1000 >= 0 && l1000 < 230 && l1000 == l1 && l1000 == lh, "last recorded steps %lld, %lld, %lld", (long long)l1,
        (long long)l1000, (long long)lh);
  printf("%s overflow: '%s' (last recorded step %lld)\n", failures ? "?" : "ok", m1000, (long long)l1000);
}

typedef struct mm_out {
  size_t n;
  int width, device_loop;
  int64_t *steps;
  double *values;
} mm_out;

/* 60 iaf_psc_alpha under DC and each other's spikes, sampled every 0.7 ms: 60 ms in the given pieces. */
static int mm_run(const nestcl_engine_config *c, const double *pieces, int n_pieces, mm_out *o)
{
  nestcl_engine *e = NULL;
  int rc = nestcl_engine_create(c, &e), pop, mm;
  if (!rc)
    rc = nestcl_engine_set_models(e, nestcl_builtin_models, nestcl_builtin_model_count);
  if (!rc)
    rc = nestcl_engine_create_population(e, "iaf_psc_alpha", 60, 0, &pop);
  if (!rc)
    rc = nestcl_engine_set(e, pop, "I_e", nestcl_uniform(360.0, 420.0));
  nestcl_conn_spec conn = {NESTCL_RULE_FIXED_INDEGREE, 6, 1, 1, 0, 0.0};
  nestcl_syn_spec syn = {nestcl_uniform(-40.0, 40.0), nestcl_constant(1.5), 0};
  if (!rc)
    rc = nestcl_engine_connect(e, pop, pop, &conn, &syn);
  const char *names[] = {"V_m", "I_syn_ex", "I_syn_in"};
  if (!rc)
    rc = nestcl_engine_add_multimeter(e, pop, 0, 60, names, 3, 0.7, &mm);
  for (int k = 0; k < n_pieces && !rc; ++k) {
    rc = nestcl_engine_simulate(e, pieces[k]);
  }
  if (!rc) {
    const int64_t *st;
    const uint64_t *g;
    const double *v;
    nestcl_engine_samples(e, mm, &st, &g, &v, &o->n, &o->width);
    o->steps = malloc(o->n * sizeof *st + 1);
    o->values = malloc(o->n * (size_t)o->width * sizeof *v + 1);
    if (o->steps && o->values) {
      memcpy(o->steps, st, o->n * sizeof *st);
      memcpy(o->values, v, o->n * (size_t)o->width * sizeof *v);
    } else {
      rc = NESTCL_ENOMEM;
    }
    nestcl_engine_stats es;
    nestcl_engine_get_stats(e, &es);
    o->device_loop = es.device_loop;
  }
  nestcl_engine_destroy(e);
  return rc;
}

static void check_multimeter(void)
{
  nestcl_engine_config c1;
  nestcl_engine_config_defaults(&c1);
  c1.seed = 99;
  nestcl_engine_config c2 = stream_cfg(3, 0);
  c2.seed = 99;
  const double whole[] = {60.0}, pieces[] = {13.3, 20.0, 26.7};
  mm_out ref = {0}, dev = {0};
  int r1 = mm_run(&c1, whole, 1, &ref), r2 = mm_run(&c2, pieces, 3, &dev);
  int same = r1 == 0 && r2 == 0 && ref.n == dev.n && ref.width == dev.width && ref.n > 0 &&
    memcmp(ref.steps, dev.steps, ref.n * sizeof *ref.steps) == 0 &&
    memcmp(ref.values, dev.values, ref.n * (size_t)ref.width * sizeof *ref.values) == 0;
  CHECK(same && dev.device_loop, "multimeter: rc %d and %d, %zu and %zu samples, device loop %d, %s", r1, r2, ref.n,
        dev.n, dev.device_loop, same ? "identical" : "different");
  printf("%s multimeter in the device loop: %zu samples of %d values, identical to 1 thread\n", failures ? "?" : "ok",
         dev.n, dev.width);
  free(ref.steps);
  free(ref.values);
  free(dev.steps);
  free(dev.values);
}

/* Whether b is a's trains from index `at` on (a's steps and gids). */
static int same_from(const brunel_result *a, size_t at, const brunel_result *b)
{
  return at + b->n <= a->n && memcmp(a->gids + at, b->gids, b->n * sizeof *b->gids) == 0 &&
    memcmp(a->steps + at, b->steps, b->n * sizeof *b->steps) == 0;
}

static void check_checkpoint(void)
{
  brunel_net net = brunel_test_lif();
  nestcl_engine_config c1;
  nestcl_engine_config_defaults(&c1);
  c1.seed = 4242;
  const double whole[] = {200.0};
  brunel_result ref, pre = {0}, post = {0};
  int rc = brunel_run(&net, &c1, 2000, 200, whole, 1, &ref);
  char dir[] = "/tmp/nestcl-loop-ckpt-XXXXXX";
  if (rc || !mkdtemp(dir)) {
    CHECK(0, "checkpoint: set-up: %s", rc ? nestcl_last_error() : "mkdtemp failed");
    return;
  }
  nestcl_engine_config c = stream_cfg(7, 0);
  brunel_engine w, r;
  rc = brunel_build(&net, &c, 2000, 200, &w);
  if (!rc)
    rc = nestcl_engine_simulate(w.e, 99.0);
  if (!rc)
    rc = nestcl_engine_checkpoint(w.e, dir);
  if (!rc)
    rc = brunel_collect(&w, &pre);
  nestcl_engine_destroy(w.e);
  if (!rc)
    rc = brunel_build(&net, &c, 2000, 200, &r);
  if (!rc) {
    rc = nestcl_engine_restore(r.e, dir);
    if (!rc)
      rc = nestcl_engine_simulate(r.e, 101.0);
    if (!rc)
      rc = brunel_collect(&r, &post);
    nestcl_engine_destroy(r.e);
  }
  char path[128];
  snprintf(path, sizeof path, "%s/rank-0-of-1.nestcl-ckpt", dir);
  remove(path);
  rmdir(dir);
  CHECK(rc == 0 && pre.n + post.n == ref.n && same_from(&ref, 0, &pre) && same_from(&ref, pre.n, &post),
        "checkpoint between drains: rc %d (%s), %zu + %zu spikes of %zu", rc, rc ? nestcl_last_error() : "", pre.n,
        post.n, ref.n);
  printf("%s checkpoint between drains: %zu + %zu spikes, the C path's\n", failures ? "?" : "ok", pre.n, post.n);
  brunel_free(&ref);
  brunel_free(&pre);
  brunel_free(&post);
}

/* aeif_cond_exp under -40 nA for 30 ms: the error message. */
static int solver_run(int sync_interval, int host_clock, char *msg, size_t cap)
{
  nestcl_engine_config c = stream_cfg(sync_interval, host_clock);
  nestcl_engine *e = NULL;
  int rc = nestcl_engine_create(&c, &e), pop, other;
  if (!rc)
    rc = nestcl_engine_set_models(e, nestcl_builtin_models, nestcl_builtin_model_count);
  /* A quiet population first, so that the failing one is not the first block. */
  if (!rc)
    rc = nestcl_engine_create_population(e, "aeif_cond_exp", 5, 0, &other);
  if (!rc)
    rc = nestcl_engine_create_population(e, "aeif_cond_exp", 3, 0, &pop);
  if (!rc)
    rc = nestcl_engine_set(e, pop, "I_e", nestcl_constant(-4e4));
  if (!rc)
    rc = nestcl_engine_prepare(e);
  if (rc) {
    snprintf(msg, cap, "set-up: %s", nestcl_last_error());
    nestcl_engine_destroy(e);
    return rc == NESTCL_ENODEV ? 77 : -1;
  }
  rc = nestcl_engine_simulate(e, 30.0);
  snprintf(msg, cap, "%s", rc ? nestcl_last_error() : "(none)");
  nestcl_engine_destroy(e);
  return rc == NESTCL_ERUNTIME ? 0 : 1;
}

static void check_solver_failure(void)
{
  char m1000[512], mh[512];
  int r1000 = solver_run(1000, 0, m1000, sizeof m1000), rh = solver_run(0, 1, mh, sizeof mh);
  CHECK(r1000 == 0 && rh == 0 && strcmp(m1000, mh) == 0 && strstr(mh, "NumericalInstability") &&
          strstr(mh, "aeif_cond_exp neuron 5 at t = 1"),
        "solver failure: device loop '%s', host clock '%s'", m1000, mh);
  printf("%s solver failure: '%s'\n", failures ? "?" : "ok", m1000);
}

int main(void)
{
  int rc = check_brunel();
  if (rc == 77) {
    return 77;
  }
  failures += rc;
  check_overflow();
  check_solver_failure();
  check_multimeter();
  check_checkpoint();
  if (failures) {
    fprintf(stderr, "%d failure(s)\n", failures);
    return 1;
  }
  printf("device loop: all checks passed\n");
  return 0;
}
