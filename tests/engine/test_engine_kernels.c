/*
 * Every kernel timed (issue 41, nestcl_engine_kernel_profile): a small Brunel
 * network (static, and E->E stdp_pl_synapse_hom) on one PoCL stream, in the
 * device loop launched one by one and replayed from a command buffer, and on
 * the host clock. With every launch timed (kernel_sample 1) the table's
 * launches add up to the stream's launch count exactly (and a replay is one
 * "command_buffer" entry per replay), every launch is timed, every kernel
 * took device time, and consecutive kernels left idle gaps to measure; the
 * device loop's kernels are the ones docs/architecture.md names. Sampled
 * (kernel_sample 8), launches i with i mod 8 < 2 are timed, exactly those;
 * with kernel_sample 0 there is no table. Without a device it skips.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brunel.h"

#ifdef NESTCL_TEST_HAVE_BUILTIN_MODELS
static const nestcl_kernel_time *find(const nestcl_kernel_profile *p, const char *name)
{
  for (int k = 0; k < p->n_kernels; ++k) {
    if (strcmp(p->kernels[k].name, name) == 0) {
      return &p->kernels[k];
    }
  }
  return NULL;
}

typedef struct variant {
  const char *name;
  int stdp, host_clock, command_buffer, sample;
  const char *must[4]; /* kernels that must be in the table */
} variant;

/* 0 pass, 1 fail, 77 no device. */
static int check(const variant *v)
{
  brunel_net net = v->stdp ? brunel_iaf_psc_alpha_stdp("stdp_pl_synapse_hom") : brunel_iaf_psc_alpha();
  nestcl_engine_config cfg;
  nestcl_engine_config_defaults(&cfg);
  cfg.seed = 4242;
  cfg.cpu_threads = 0;
  cfg.gpu_streams = 1;
  cfg.gpu_fraction = 1.0;
  cfg.host_clock = v->host_clock;
  cfg.command_buffer = v->command_buffer;
  cfg.kernel_sample = v->sample;
  brunel_engine be;
  int rc = brunel_build(&net, &cfg, 400, 40, &be);
  if (!rc)
    rc = nestcl_engine_simulate(be.e, 30.0);
  if (rc == NESTCL_ENODEV) {
    printf("SKIP: %s\n", nestcl_last_error());
    nestcl_engine_destroy(be.e);
    return 77;
  }
  nestcl_kernel_profile kp;
  memset(&kp, 0, sizeof kp);
  nestcl_engine_stats st;
  if (!rc)
    rc = nestcl_engine_kernel_profile(be.e, &kp);
  if (!rc)
    rc = nestcl_engine_get_stats(be.e, &st);
  if (rc) {
    fprintf(stderr, "FAIL %s: %s\n", v->name, nestcl_last_error());
    nestcl_engine_destroy(be.e);
    return 1;
  }
  const nestcl_enqueue_counts *c = &st.vps[0].enqueued;
  int bad = 0;
  uint64_t launches = 0, replays = 0, timed = 0;
  for (int k = 0; k < kp.n_kernels; ++k) {
    const nestcl_kernel_time *t = &kp.kernels[k];
    if (strcmp(t->name, "command_buffer") == 0)
      replays += t->launches;
    else
      launches += t->launches;
    timed += t->profiled;
    /* launches i with i mod N < 2 are timed: 2 per N, and the first one or two of the rest */
    const uint64_t n = (uint64_t)(v->sample ? v->sample : 1);
    const uint64_t want =
      v->sample == 1 ? t->launches : 2 * (t->launches / n) + (t->launches % n < 2 ? t->launches % n : 2);
    if (t->profiled != want || !(t->device_s > 0.0)) {
      fprintf(stderr, "FAIL %s: %s: %llu of %llu launches timed (want %llu), %g s\n", v->name, t->name,
              (unsigned long long)t->profiled, (unsigned long long)t->launches, (unsigned long long)want, t->device_s);
      bad = 1;
    }
    printf("  %-24s %6llu launches, %6llu timed, %9.2f us each\n", t->name, (unsigned long long)t->launches,
           (unsigned long long)t->profiled, t->profiled ? t->device_s / (double)t->profiled * 1e6 : 0.0);
  }
  if (v->sample == 0) {
    bad |= kp.n_kernels != 0 || kp.sample_every != 0;
  } else if (launches != c->launches || replays != c->replays || kp.sample_every != v->sample ||
             (v->sample == 1 && kp.gaps == 0) || launches + replays == 0) {
    fprintf(stderr,
            "FAIL %s: the table has %llu launches and %llu replays (%llu gaps, sample_every %d); the stream "
            "counted %llu and %llu\n",
            v->name, (unsigned long long)launches, (unsigned long long)replays, (unsigned long long)kp.gaps,
            kp.sample_every, (unsigned long long)c->launches, (unsigned long long)c->replays);
    bad = 1;
  }
  for (int k = 0; k < 4 && v->must[k]; ++k) {
    if (!find(&kp, v->must[k])) {
      fprintf(stderr, "FAIL %s: no kernel %s in the table\n", v->name, v->must[k]);
      bad = 1;
    }
  }
  printf("%s: %d kernels, %llu launches, %llu replays, %llu timed, %llu gaps of %.2f us: %s\n", v->name, kp.n_kernels,
         (unsigned long long)launches, (unsigned long long)replays, (unsigned long long)timed,
         (unsigned long long)kp.gaps, kp.gaps ? kp.idle_s / (double)kp.gaps * 1e6 : 0.0, bad ? "FAIL" : "ok");
  nestcl_kernel_profile_free(&kp);
  nestcl_engine_destroy(be.e);
  return bad;
}

int main(void)
{
  const variant vs[] = {
    {"device loop, launched, every launch",
     0,
     0,
     0,
     1,
     {"nestcl_update_merged", "nestcl_gather", "nestcl_step_merged_0"}},
    {"device loop, replayed, every launch", 0, 0, 1, 1, {"command_buffer"}},
    {"device loop, launched, 1 in 8", 0, 0, 0, 8, {"nestcl_gather"}},
    {"device loop, STDP, launched", 1, 0, 0, 1, {"nestcl_gather", "nestcl_hist_append_loop", "nestcl_plastic"}},
    {"host clock, every launch", 0, 1, 1, 1, {"nestcl_deliver"}},
    {"host clock, STDP, 1 in 8", 1, 1, 1, 8, {"nestcl_plastic", "nestcl_hist_append"}},
    {"device loop, no kernel timing", 0, 0, 0, 0, {NULL}},
  };
  int fails = 0;
  for (size_t k = 0; k < sizeof vs / sizeof vs[0]; ++k) {
    int r = check(&vs[k]);
    if (r == 77) {
      return 77;
    }
    fails += r;
  }
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
