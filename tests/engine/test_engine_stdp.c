/*
 * STDP in the engine (issue 9): the Brunel network of brunel.c with its E->E
 * synapses translated stdp_pl_synapse_hom (hpc_benchmark's parameters) or
 * stdp_synapse, 2,000 neurons, in-degree 200, 200 ms, gives bit-identical
 * spike trains and final E->E weights (count, checksum of every (source,
 * target, weight), exact mean and sd) with 1 and 2 CPU threads, 1 and 2 PoCL
 * streams, mixes, threads that share their plastic delivery in tasks (every
 * task run once), simulate() in pieces, both delivery shapes, and a history
 * ring that starts at one entry per neuron and has to grow (in the device
 * loop: it halts at the super step whose append finds a ring full, and the
 * host grows the ring and resumes there; beside a thread the stream waits
 * once per super step, growing a ring before an append that could fill it),
 * and batched
 * delivery under a device memory budget (at least 10 batches per super step)
 * against resident delivery; and the flat plastic delivery (the GPUs' shape,
 * NESTCL_PLASTIC_SHAPE) on the device loop, the host clock, beside a thread
 * and batched. The weights must
 * have moved (plasticity did something) and the run must stay in its regime.
 * Needs the translated models and an OpenCL device with fp64 and 64-bit
 * atomics (PoCL here); without a device it skips.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brunel.h"

#ifdef NESTCL_TEST_HAVE_BUILTIN_MODELS
/*
 * CPU threads that share their plastic delivery (issue 42, host/src/engine/plastic_cpu.c): the same spikes and
 * weights as one thread, whatever the tasks and whichever thread runs them, and every task run exactly once: per
 * super step with spikes the CPU VPs' threads run, summed, the tasks their E blocks are cut into (each VP
 * min(tasks, its E neurons); the E->E synapses are the only plastic ones; unshared, one per VP).
 */
static int check_shared(const brunel_net *net, const nestcl_engine_config *cfg, const brunel_result *ref)
{
  const double whole[] = {200.0};
  const struct {
    const char *name;
    int threads, streams;
    double alpha;
    int tasks;
    uint64_t per_step;
  } runs[] = {
    {"3 threads sharing 7 tasks each", 3, 0, 0.0, 7, 21},
    {"4 threads, a task per neuron (400 each), taken over all the time", 4, 0, 0.0, 4096, 1600},
    {"2 threads + 1 stream, alpha 0.3, sharing 5 tasks each", 2, 1, 0.3, 5, 10},
    {"2 threads, not shared", 2, 0, 0.0, -1, 2},
  };
  int fails = 0;
  for (size_t k = 0; k < sizeof runs / sizeof runs[0]; ++k) {
    nestcl_engine_config c = *cfg;
    c.cpu_threads = runs[k].threads;
    c.gpu_streams = runs[k].streams;
    c.gpu_fraction = runs[k].alpha;
    c.plastic_tasks = runs[k].tasks;
    char what[200];
    snprintf(what, sizeof what, "%s, %s", net->label, runs[k].name);
    brunel_result r;
    if (brunel_run(net, &c, 2000, 200, whole, 1, &r)) {
      fprintf(stderr, "FAIL %s: %s\n", what, nestcl_last_error());
      fails++;
      continue;
    }
    int bad = brunel_compare(what, ref, &r);
    const uint64_t steps = (uint64_t)(r.st.steps / r.st.min_delay_steps), n = r.plastic_tasks;
    if (n == 0 || n % runs[k].per_step != 0 || n / runs[k].per_step > steps ||
        (runs[k].tasks < 0 && r.plastic_tasks_other != 0)) {
      fprintf(stderr, "FAIL %s: %llu tasks run (%llu of other VPs) in %llu super steps, not %llu per super step\n",
              what, (unsigned long long)n, (unsigned long long)r.plastic_tasks_other, (unsigned long long)steps,
              (unsigned long long)runs[k].per_step);
      bad++;
    }
    printf("%s: %zu spikes, weights %016llx, %s; %llu tasks, %llu taken over from other VPs\n", what, r.n,
           (unsigned long long)r.w.checksum, bad ? "DIFFERENT" : "identical", (unsigned long long)n,
           (unsigned long long)r.plastic_tasks_other);
    fails += bad;
    brunel_free(&r);
  }
  return fails;
}

/* 0 pass, 1 fail, 77 no device. */
static int check_net(const brunel_net *net)
{
  nestcl_engine_config cfg;
  nestcl_engine_config_defaults(&cfg);
  cfg.seed = 4242;
  const double whole[] = {200.0}, split[] = {70.0, 130.0};
  brunel_result ref;
  if (brunel_run(net, &cfg, 2000, 200, whole, 1, &ref)) {
    fprintf(stderr, "FAIL %s reference run: %s\n", net->label, nestcl_last_error());
    return 1;
  }
  double rate = (double)ref.n / 2000.0 / 0.2;
  printf("%s, 1 thread: %zu spikes, %.2f Hz, %llu plastic synapses, weights %.6f +- %.6f pA in [%.6f, %.6f] "
         "(initial %.6f), %.2f bytes per plastic synapse\n",
         net->label, ref.n, rate, (unsigned long long)ref.st.plastic_synapses, ref.w.mean, ref.w.sd, ref.w.min,
         ref.w.max, net->J_E, ref.st.bytes_per_plastic_synapse);
  int fails = 0;
  if (rate < 5.0 || rate > 300.0 || ref.st.plastic_synapses != 1600ull * 160ull || ref.w.n != 1600ull * 160ull) {
    fprintf(stderr, "FAIL %s: rate %.2f Hz or plastic synapse count %llu unexpected\n", net->label, rate,
            (unsigned long long)ref.st.plastic_synapses);
    fails++;
  }
  if (!(ref.w.sd > 1e-3) || ref.w.min == ref.w.max || fabs(ref.w.mean - net->J_E) < 1e-9) {
    fprintf(stderr, "FAIL %s: the weights did not move (sd %g)\n", net->label, ref.w.sd);
    fails++;
  }
  const brunel_variant runs[] = {
    {"1 thread, 70+130 ms, history from 1 entry", 1, 0, 0.0, split, 2, 0, 1, NULL, NULL, 0, 0, 0, 0},
    {"2 threads", 2, 0, 0.0, whole, 1, 0, 0, NULL, NULL, 0, 0, 0, 0},
    {"1 stream (the device loop)", 0, 1, 1.0, whole, 1, 0, 0, NULL, NULL, 0, 0, 0, 0},
    {"1 stream, history from 1 entry, draining every 3 super steps, 70+130 ms", 0, 1, 1.0, split, 2, 0, 1, NULL, NULL,
     3, 0, 1, 0},
    {"1 stream, host clock", 0, 1, 1.0, whole, 1, 0, 0, NULL, NULL, 0, 1, 0, 0},
    {"2 streams, history from 1 entry", 0, 2, 1.0, whole, 1, 0, 1, NULL, NULL, 0, 0, 0, 0},
    {"1 thread + 1 stream, alpha 0.3", 1, 1, 0.3, whole, 1, 0, 0, NULL, NULL, 0, 0, 0, 1},
    {"1 thread + 1 stream, alpha 0.5, history from 1 entry", 1, 1, 0.5, whole, 1, 0, 1, NULL, NULL, 0, 0, 0, 0},
    {"1 thread + 1 stream, alpha 0.7, 70+130 ms", 1, 1, 0.7, split, 2, 0, 0, NULL, NULL, 0, 0, 0, 1},
    {"2 streams, strided delivery of width 7", 0, 2, 1.0, whole, 1, 0, 0, "strided", "7", 0, 0, 0, 0},
    {"1 stream, contiguous delivery of width 3", 0, 1, 1.0, whole, 1, 0, 0, "contiguous", "3", 0, 0, 0, 0},
  };
  int bad = brunel_check_variants(net, &cfg, &ref, runs, (int)(sizeof runs / sizeof runs[0]));
  if (bad < 0) {
    brunel_free(&ref);
    return 77;
  }
  fails += bad;
  /*
   * The flat plastic delivery (plastic_kernels.cl: work follows synapses, the
   * GPUs' shape), forced on this CPU device: the device loop's buckets (with
   * halts and resumes), the host clock's list and a stream beside a thread.
   * Of 7 work-items, a row (about 160 synapses) spans many chunks and
   * work-groups and a super step's sources many tiles; of 256, a chunk holds
   * parts of several rows.
   */
  const struct {
    const char *shape;
    brunel_variant v;
  } flat[] = {
    {"flat:7",
     {"flat delivery of width 7, 1 stream, history from 1 entry, draining every 3 super steps, 70+130 ms", 0, 1, 1.0,
      split, 2, 0, 1, NULL, NULL, 3, 0, 1, 0}},
    {"flat:7",
     {"flat delivery of width 7, 1 thread + 1 stream, alpha 0.5", 1, 1, 0.5, whole, 1, 0, 0, NULL, NULL, 0, 0, 0, 1}},
    {"flat", {"flat delivery, 1 stream, host clock", 0, 1, 1.0, whole, 1, 0, 0, NULL, NULL, 0, 1, 0, 0}},
  };
  for (size_t k = 0; k < sizeof flat / sizeof flat[0]; ++k) {
    setenv("NESTCL_PLASTIC_SHAPE", flat[k].shape, 1);
    fails += brunel_check_variants(net, &cfg, &ref, &flat[k].v, 1) != 0;
    unsetenv("NESTCL_PLASTIC_SHAPE");
  }
  /* A shape the kernel does not have is refused, naming the variable. */
  {
    nestcl_engine_config c = cfg;
    c.cpu_threads = 0;
    c.gpu_streams = 1;
    c.gpu_fraction = 1.0;
    setenv("NESTCL_PLASTIC_SHAPE", "flat:257", 1);
    brunel_result r;
    int rc = brunel_run(net, &c, 2000, 200, whole, 1, &r);
    unsetenv("NESTCL_PLASTIC_SHAPE");
    if (rc != NESTCL_EINVAL || !strstr(nestcl_last_error(), "NESTCL_PLASTIC_SHAPE")) {
      fprintf(stderr, "FAIL %s: NESTCL_PLASTIC_SHAPE=flat:257 gave %d: %s\n", net->label, rc,
              rc ? nestcl_last_error() : "no error");
      fails++;
      if (rc == 0)
        brunel_free(&r);
    } else {
      printf("%s, NESTCL_PLASTIC_SHAPE=flat:257: refused: %s\n", net->label, nestcl_last_error());
    }
  }
  /*
   * Batched delivery: a device memory budget that leaves the plastic synapses
   * (P bytes when resident) only room for batches of a few hundred synapses,
   * so that every super step runs at least 10 batches; and one that leaves
   * too little for one batch, which must fail with a clear error.
   */
  const struct {
    const char *name;
    int streams;
    size_t room;
    int ok;
    const char *shape; /* NESTCL_PLASTIC_SHAPE, or NULL */
  } budgets[] = {{"1 stream, batched (device memory budget for ~350 synapses per batch)", 1, 40000, 1, NULL},
                 {"2 streams, batched (the same budget)", 2, 40000, 1, NULL},
                 {"1 stream, batched, flat delivery of width 7", 1, 40000, 1, "flat:7"},
                 {"1 stream, budget too small for one batch", 1, 2000, 0, NULL}};
  for (size_t k = 0; k < sizeof budgets / sizeof budgets[0]; ++k) {
    if (budgets[k].shape) {
      setenv("NESTCL_PLASTIC_SHAPE", budgets[k].shape, 1);
    } else {
      unsetenv("NESTCL_PLASTIC_SHAPE");
    }
    nestcl_engine_config c = cfg;
    c.cpu_threads = 0;
    c.gpu_streams = budgets[k].streams;
    c.gpu_fraction = 1.0;
    /* The host clock: batched synapses keep it, so the device loop's buffers do not count in the budget. */
    c.host_clock = 1;
    brunel_result res;
    if (brunel_run(net, &c, 2000, 200, whole, 1, &res) != 0) {
      fprintf(stderr, "FAIL %s resident stream run: %s\n", net->label, nestcl_last_error());
      fails++;
      continue;
    }
    /* The resident run's device bytes, less what its plastic synapses take, plus room for batches. */
    size_t total = 0;
    for (int m = 0; m < NESTCL_MEM_CLASSES; ++m) {
      total += res.st.device_bytes[m];
    }
    size_t P = (size_t)llround(res.st.bytes_per_plastic_synapse * (double)res.st.plastic_synapses);
    brunel_free(&res);
    {
      nestcl_engine_config cb = c;
      cb.device_memory = total - P + budgets[k].room;
      brunel_result r;
      char what[200];
      snprintf(what, sizeof what, "%s, %s", net->label, budgets[k].name);
      int rc = brunel_run(net, &cb, 2000, 200, whole, 1, &r);
      if (!budgets[k].ok) {
        if (rc != NESTCL_ENOMEM || !strstr(nestcl_last_error(), "too small for one batch")) {
          fprintf(stderr, "FAIL %s: expected the budget error, got %d: %s\n", what, rc, rc ? nestcl_last_error() : "");
          fails++;
        } else {
          printf("%s: refused: %s\n", what, nestcl_last_error());
        }
        continue;
      }
      if (rc) {
        fprintf(stderr, "FAIL %s: %s\n", what, nestcl_last_error());
        fails++;
        continue;
      }
      int bad = brunel_compare(what, &ref, &r);
      double per_step = (double)r.st.plastic_batches / (double)(r.st.steps / r.st.min_delay_steps);
      printf("%s: %zu spikes, weights %016llx, %llu batches (%.1f per super step), %s\n", what, r.n,
             (unsigned long long)r.w.checksum, (unsigned long long)r.st.plastic_batches, per_step,
             bad ? "DIFFERENT" : "identical");
      if (!r.st.plastic_batched || per_step < 10.0) {
        fprintf(stderr, "FAIL %s: not batched enough (%.1f batches per super step)\n", what, per_step);
        bad = 1;
      }
      fails += bad;
      brunel_free(&r);
    }
  }
  unsetenv("NESTCL_PLASTIC_SHAPE");
  fails += check_shared(net, &cfg, &ref);
  brunel_free(&ref);
  return fails ? 1 : 0;
}
#endif

int main(void)
{
#ifdef NESTCL_TEST_HAVE_BUILTIN_MODELS
  int status = 0;
  const char *models[] = {"stdp_pl_synapse_hom", "stdp_synapse"};
  for (int m = 0; m < 2; ++m) {
    brunel_net net = brunel_iaf_psc_alpha_stdp(models[m]);
    int rc = check_net(&net);
    if (rc == 77) {
      return 77;
    }
    status |= rc;
  }
  return status ? 1 : 0;
#else
  printf("SKIP: nestcl_models (the translated synapses) not built\n");
  return 77;
#endif
}
