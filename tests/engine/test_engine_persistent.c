/*
 * The persistent device loop (issue 41, device_loop/resident_persist.c): the
 * Brunel network of brunel.c (iaf_psc_alpha, static synapses, Poisson drive;
 * 2,000 neurons, 200 ms) on one PoCL stream with persistent = 1 (PoCL's CPU
 * device runs one work-group per thread) gives the C path's spikes bit for
 * bit: in one piece, in pieces that end inside a super step (the partial
 * super steps launched, the whole ones persistent), draining every 3 super
 * steps, after a stop request, and restored from a checkpoint that it wrote;
 * its launches are many super steps each. A launch the device refuses (too
 * wide a work-group) leaves the loop launched per phase, with the same spikes.
 * Then a barrier that cannot complete (NESTCL_PERSISTENT_GROUPS: far more
 * work-groups than the device runs at once, and a short spin bound) ends the
 * run with an error naming the device and the barrier, not a hang, and a
 * later engine of this process launches per phase on that device, with the C
 * path's spikes. Without a device it skips.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "brunel.h"

#ifdef NESTCL_TEST_HAVE_BUILTIN_MODELS
static int run_variant(const brunel_net *net, const nestcl_engine_config *cfg, const brunel_result *ref,
                       const char *name, const double *pieces, int n_pieces, int sync, int want_groups)
{
  nestcl_engine_config c = *cfg;
  c.cpu_threads = 0;
  c.gpu_streams = 1;
  c.gpu_fraction = 1.0;
  c.persistent = 1;
  c.sync_interval = sync;
  brunel_result r;
  int rc = brunel_run(net, &c, 2000, 200, pieces, n_pieces, &r);
  if (rc == NESTCL_ENODEV) {
    printf("SKIP: %s\n", nestcl_last_error());
    return -77;
  }
  if (rc) {
    fprintf(stderr, "FAIL %s: %s\n", name, nestcl_last_error());
    return 1;
  }
  int bad = brunel_compare(name, ref, &r);
  const uint64_t ss = (uint64_t)(r.st.steps / r.st.min_delay_steps), ps = r.enq_stream.persistent_steps;
  printf("%s: %zu spikes, %d work-groups, %llu launches, %llu of %llu super steps persistent: %s\n", name, r.n,
         r.st.persistent_groups, (unsigned long long)r.enq_stream.launches, (unsigned long long)ps,
         (unsigned long long)ss, bad ? "DIFFERENT" : "identical");
  /*
   * Every whole super step ran persistent (a split leaves one in two
   * pieces); in one piece, with only persistent launches, fewer launches
   * than super steps (the first launch, before any timing, runs four).
   */
  if (want_groups &&
      (r.st.persistent_groups < 1 || !r.st.device_loop || ps + 1 < ss ||
       (n_pieces == 1 && r.enq_stream.launches >= ss))) {
    fprintf(stderr, "FAIL %s: persistent groups %d, %llu launches, %llu of %llu super steps persistent\n", name,
            r.st.persistent_groups, (unsigned long long)r.enq_stream.launches, (unsigned long long)ps,
            (unsigned long long)ss);
    bad = 1;
  }
  if (!want_groups && (r.st.persistent_groups != 0 || ps != 0)) {
    fprintf(stderr, "FAIL %s: the persistent loop ran where it should not have\n", name);
    bad = 1;
  }
  brunel_free(&r);
  return bad;
}

/* A checkpoint the persistent loop wrote at 60 ms, restored into another engine that goes on persistent. */
static int checkpoint_restore(const brunel_net *net, const nestcl_engine_config *cfg, const brunel_result *ref)
{
  nestcl_engine_config c = *cfg;
  c.cpu_threads = 0;
  c.gpu_streams = 1;
  c.gpu_fraction = 1.0;
  c.persistent = 1;
  char dir[] = "/tmp/nestcl_persistent_XXXXXX";
  if (!mkdtemp(dir)) {
    fprintf(stderr, "FAIL: mkdtemp\n");
    return 1;
  }
  brunel_engine be;
  brunel_result post;
  int rc = brunel_build(net, &c, 2000, 200, &be);
  if (!rc)
    rc = nestcl_engine_simulate(be.e, 60.0);
  if (!rc)
    rc = nestcl_engine_checkpoint(be.e, dir);
  nestcl_engine_destroy(be.e);
  if (!rc)
    rc = brunel_build(net, &c, 2000, 200, &be);
  if (!rc) {
    rc = nestcl_engine_restore(be.e, dir);
    if (!rc)
      rc = nestcl_engine_simulate(be.e, 140.0);
    if (!rc)
      rc = brunel_collect(&be, &post);
    nestcl_engine_destroy(be.e);
  }
  char path[600];
  snprintf(path, sizeof path, "%s/rank-0-of-1.nestcl-ckpt", dir);
  unlink(path);
  rmdir(dir);
  if (rc) {
    fprintf(stderr, "FAIL checkpoint at 60 ms and restore: %s\n", nestcl_last_error());
    return 1;
  }
  /* The reference's spikes from the checkpoint's step on, in the same order. */
  size_t k0 = 0;
  while (k0 < ref->n && ref->steps[k0] < 600) {
    ++k0;
  }
  int bad = post.n != ref->n - k0 || post.st.persistent_groups < 1;
  for (size_t k = 0; k < post.n && !bad; ++k) {
    bad = post.gids[k] != ref->gids[k0 + k] || post.steps[k] != ref->steps[k0 + k];
  }
  printf("persistent, checkpoint at 60 ms, restored: %zu spikes after it (the C path %zu), %d work-groups: %s\n",
         post.n, ref->n - k0, post.st.persistent_groups, bad ? "DIFFERENT" : "identical");
  if (bad)
    fprintf(stderr, "FAIL persistent, checkpoint and restore: spikes differ from the C path's\n");
  brunel_free(&post);
  return bad;
}

/* A barrier that cannot complete: the error, in bounded time. */
static int forced_failure(const brunel_net *net, const nestcl_engine_config *cfg)
{
  nestcl_engine_config c = *cfg;
  c.cpu_threads = 0;
  c.gpu_streams = 1;
  c.gpu_fraction = 1.0;
  c.persistent = 1;
  setenv("NESTCL_PERSISTENT_GROUPS", "4096", 1);
  setenv("NESTCL_PERSISTENT_SPINS", "200000", 1);
  const double whole[] = {30.0};
  brunel_result r;
  int rc = brunel_run(net, &c, 2000, 200, whole, 1, &r);
  unsetenv("NESTCL_PERSISTENT_GROUPS");
  unsetenv("NESTCL_PERSISTENT_SPINS");
  const char *msg = nestcl_last_error();
  if (rc != NESTCL_ERUNTIME || !strstr(msg, "grid barrier") || !strstr(msg, "device ")) {
    fprintf(stderr, "FAIL forced barrier failure: rc %d (%s); want NESTCL_ERUNTIME naming the device and barrier\n", rc,
            rc ? msg : "none");
    if (!rc)
      brunel_free(&r);
    return 1;
  }
  printf("4096 work-groups, 200000 spins: %s\n", msg);
  return 0;
}

int main(void)
{
  brunel_net net = brunel_iaf_psc_alpha();
  nestcl_engine_config cfg;
  nestcl_engine_config_defaults(&cfg);
  cfg.seed = 4242;
  const double whole[] = {200.0}, split[] = {70.0, 130.0}, stopped[] = {-70.0, 130.0};
  brunel_result ref;
  if (brunel_run(&net, &cfg, 2000, 200, whole, 1, &ref)) {
    fprintf(stderr, "FAIL reference run: %s\n", nestcl_last_error());
    return 1;
  }
  printf("C path: %zu spikes\n", ref.n);
  int fails = 0, r;
  if ((r = run_variant(&net, &cfg, &ref, "persistent", whole, 1, 0, 1)) < 0) {
    brunel_free(&ref);
    return 77;
  }
  fails += r;
  fails += run_variant(&net, &cfg, &ref, "persistent, 70 + 130 ms (inside a super step)", split, 2, 0, 1);
  fails += run_variant(&net, &cfg, &ref, "persistent, draining every 3 super steps", whole, 1, 3, 1);
  fails += run_variant(&net, &cfg, &ref, "persistent, a stop request at 70 ms", stopped, 2, 0, 1);
  fails += checkpoint_restore(&net, &cfg, &ref);
  /* A launch the device refuses (work-groups wider than it takes): the loop goes on launched, as the C path. */
  setenv("NESTCL_PERSISTENT_WIDTH", "1000000", 1);
  fails += run_variant(&net, &cfg, &ref, "persistent refused at the enqueue: launched", whole, 1, 0, 0);
  unsetenv("NESTCL_PERSISTENT_WIDTH");
  fails += forced_failure(&net, &cfg);
  fails += run_variant(&net, &cfg, &ref, "after the failure: launched per phase", whole, 1, 0, 0);
  brunel_free(&ref);
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
