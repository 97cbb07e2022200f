/*
 * A model's update() that throws (model.h, Failures): test_lif's fail_step
 * makes one neuron record a failure at the start of a given step, as a
 * translated model does where NEST throws GSLSolverFailure. The run must stop
 * there with NESTCL_ERUNTIME and "test_lif neuron <gid> at t = <ms> ms:
 * <failure> (status <status>)": on the C path (2 threads), on a stream (PoCL:
 * 1 stream), on a stream beside a thread, in a slice that starts inside a
 * super step (simulate split there), and with the spike recorder showing
 * that nothing of the failing super step was exchanged. Exit 77 without an
 * OpenCL device (the thread-only case runs anyway).
 */
#include <stdio.h>
#include <string.h>

#include "nestcl/engine.h"
#include "test_lif.h"

static int fails;

typedef struct fail_case {
  const char *label;
  int threads, streams;
  double alpha;
  double fail_step, fail_code;
  double first_ms, then_ms; /* simulate(first_ms), then simulate(then_ms) */
  const char *want; /* the message, with %llu for the failing neuron's gid */
  int64_t last_ok_step; /* every recorded spike is before it (the failing super step's origin) */
  int64_t fail_at; /* the failing step (the first simulate must pass when it ends before it) */
} fail_case;

/* 0 pass, 1 fail, 77 no device. */
static int run_case(const fail_case *fc)
{
  nestcl_engine_config c;
  nestcl_engine_config_defaults(&c);
  c.cpu_threads = fc->threads;
  c.gpu_streams = fc->streams;
  c.gpu_fraction = fc->alpha;
  c.seed = 77;
  nestcl_engine *e = NULL;
  if (nestcl_engine_create(&c, &e) != 0) {
    fprintf(stderr, "FAIL %s: create: %s\n", fc->label, nestcl_last_error());
    return 1;
  }
  int a, f, rec;
  int rc = nestcl_engine_set_models(e, test_lif_models, 1);
  /* A: active neurons that spike and drive each other; F: the one neuron that throws. */
  if (!rc)
    rc = nestcl_engine_create_population(e, "test_lif", 40, 0, &a);
  if (!rc)
    rc = nestcl_engine_create_population(e, "test_lif", 1, 0, &f);
  if (!rc)
    rc = nestcl_engine_set(e, a, "I_e", nestcl_uniform(400.0, 600.0));
  if (!rc)
    rc = nestcl_engine_set(e, f, "fail_step", nestcl_constant(fc->fail_step));
  if (!rc)
    rc = nestcl_engine_set(e, f, "fail_code", nestcl_constant(fc->fail_code));
  nestcl_conn_spec conn = {NESTCL_RULE_FIXED_INDEGREE, 5, 1, 1, 0, 0.0};
  nestcl_syn_spec syn = {nestcl_constant(20.0), nestcl_constant(1.5), 0}; /* min_delay 15 steps */
  if (!rc)
    rc = nestcl_engine_connect(e, a, a, &conn, &syn);
  if (!rc)
    rc = nestcl_engine_connect(e, a, f, &conn, &syn);
  if (!rc)
    rc = nestcl_engine_add_spike_recorder(e, a, 0, 40, &rec);
  if (!rc)
    rc = nestcl_engine_prepare(e);
  if (rc == NESTCL_ENODEV) {
    printf("SKIP %s: %s\n", fc->label, nestcl_last_error());
    nestcl_engine_destroy(e);
    return 77;
  }
  if (rc) {
    fprintf(stderr, "FAIL %s: set-up: %s\n", fc->label, nestcl_last_error());
    nestcl_engine_destroy(e);
    return 1;
  }
  uint64_t gid;
  uint32_t n;
  nestcl_engine_population_range(e, f, &gid, &n);
  char want[256];
  snprintf(want, sizeof want, fc->want, (unsigned long long)gid);
  int bad = 0;
  if (fc->first_ms > 0.0) {
    rc = nestcl_engine_simulate(e, fc->first_ms);
    if (rc) {
      fprintf(stderr, "FAIL %s: the simulate before the failing step failed: %s\n", fc->label, nestcl_last_error());
      bad = 1;
    }
  }
  rc = nestcl_engine_simulate(e, fc->then_ms);
  const char *msg = rc ? nestcl_last_error() : "(none)";
  if (rc != NESTCL_ERUNTIME || strcmp(msg, want) != 0) {
    fprintf(stderr, "FAIL %s: rc %d, message '%s'; want %d, '%s'\n", fc->label, rc, msg, NESTCL_ERUNTIME, want);
    bad = 1;
  }
  /* The run stopped in the failing super step: no spike of it or later was exchanged and recorded. */
  const uint64_t *gids;
  const int64_t *steps;
  size_t ns = 0;
  nestcl_engine_spikes(e, rec, &gids, &steps, &ns);
  int64_t last = -1;
  for (size_t k = 0; k < ns; ++k) {
    last = steps[k] > last ? steps[k] : last;
  }
  if (ns < 10 || last >= fc->last_ok_step) {
    fprintf(stderr, "FAIL %s: %zu spikes recorded, the last at step %lld; want some, all before step %lld\n", fc->label,
            ns, (long long)last, (long long)fc->last_ok_step);
    bad = 1;
  }
  /* The failure stays: the engine does not go on past it. */
  rc = nestcl_engine_simulate(e, 1.0);
  if (rc != NESTCL_ERUNTIME) {
    fprintf(stderr, "FAIL %s: a simulate after the failure returned %d\n", fc->label, rc);
    bad = 1;
  }
  printf("%s %s: %s (%zu spikes before, the last at step %lld)\n", bad ? "FAIL" : "ok", fc->label, want, ns,
         (long long)last);
  nestcl_engine_destroy(e);
  return bad;
}

int main(void)
{
  /* h = 0.1 ms, min_delay 15 steps: step 137 lies in the super step [135, 150), lag 2. */
  const fail_case cases[] = {
    {"C path, 2 threads", 2, 0, 0.0, 137, 1, 0.0, 30.0,
     "test_lif neuron %llu at t = 13.7 ms: GSLSolverFailure (status -7)", 135, 137},
    {"1 stream", 0, 1, 1.0, 137, 2, 0.0, 30.0, "test_lif neuron %llu at t = 13.7 ms: NumericalInstability (status -14)",
     135, 137},
    {"stream beside a thread", 1, 1, 0.5, 137, 5, 0.0, 30.0,
     "test_lif neuron %llu at t = 13.7 ms: failure (status -35)", 135, 137},
    /* simulate(13.3): steps [0, 133); then the slice [13, 15) of super step 120 fails at lag 14. */
    {"C path, slice inside a super step", 2, 0, 0.0, 134, 1, 13.3, 10.0,
     "test_lif neuron %llu at t = 13.4 ms: GSLSolverFailure (status -7)", 120, 134},
    {"stream, slice inside a super step", 1, 1, 0.5, 134, 2, 13.3, 10.0,
     "test_lif neuron %llu at t = 13.4 ms: NumericalInstability (status -14)", 120, 134},
  };
  int skipped = 0;
  for (size_t k = 0; k < sizeof cases / sizeof *cases; ++k) {
    int r = run_case(&cases[k]);
    if (r == 77) {
      skipped = 1;
    } else {
      fails += r;
    }
  }
  if (fails) {
    fprintf(stderr, "%d case(s) failed\n", fails);
    return 1;
  }
  return skipped ? 77 : 0;
}
