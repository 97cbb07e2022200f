/*
 * Checkpoint and restart (issue 13): the Brunel network of brunel.c (2,000
 * neurons, in-degree 200, seed 4242) run 99 ms (66 super steps of 1.5 ms),
 * checkpointed, the engine destroyed, a new engine described alike restored
 * and run to 200 ms gives the uninterrupted run's spike trains (before the
 * checkpoint from the first engine, after it from the second) and final E->E
 * weights, bit for bit: restored into the same split, and into others (2
 * threads -> 1 stream, 1 thread + 1 stream -> 2 threads, 2 streams -> 1
 * thread). For the translated iaf_psc_alpha with static synapses and with E->E
 * stdp_synapse (per-synapse and per-source state, spike histories), and for
 * test_lif. Refusals, each leaving the engine unbuilt and still able to
 * restore a good checkpoint afterwards: a flipped byte (checksum), a truncated
 * file, a missing rank file, a file that is no checkpoint, another seed
 * (another network), a checkpoint off a super step's end, and a restore after
 * simulate(). With --restore-mpi DIR it instead restores the checkpoint that
 * test_engine_mpi wrote on 2 ranks into one process (1 thread, then 1 thread
 * + 1 stream) and compares with the uninterrupted run.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brunel.h"

#define T_CKPT 99.0
#define T_END 200.0
#define N_NEURONS 2000u
#define INDEGREE 200u

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

/* a "/" b into out (cap bytes); a path that does not fit ends the test. */
static void join_path(char *out, size_t cap, const char *a, const char *b)
{
  if (snprintf(out, cap, "%s/%s", a, b) >= (int)cap) {
    fprintf(stderr, "FAIL: path too long: %s/%s\n", a, b);
    exit(1);
  }
}

static nestcl_engine_config split_cfg(int threads, int streams, double alpha, uint32_t seed)
{
  nestcl_engine_config c;
  nestcl_engine_config_defaults(&c);
  c.seed = seed;
  c.cpu_threads = threads;
  c.gpu_streams = streams;
  c.gpu_fraction = alpha;
  return c;
}

/* Runs to T_CKPT and writes the checkpoint; *pre receives the trains so far. */
static int write_checkpoint(const brunel_net *net, const nestcl_engine_config *c, const char *dir, brunel_result *pre)
{
  brunel_engine be;
  int rc = brunel_build(net, c, N_NEURONS, INDEGREE, &be);
  if (!rc)
    rc = nestcl_engine_simulate(be.e, T_CKPT);
  if (!rc)
    rc = nestcl_engine_checkpoint(be.e, dir);
  if (!rc)
    rc = brunel_collect(&be, pre);
  nestcl_engine_destroy(be.e);
  return rc;
}

/* A new engine described alike, restored from dir, run to T_END; *post: the trains after the checkpoint. */
static int restore_run(const brunel_net *net, const nestcl_engine_config *c, const char *dir, brunel_result *post)
{
  brunel_engine be;
  int rc = brunel_build(net, c, N_NEURONS, INDEGREE, &be);
  if (!rc)
    rc = nestcl_engine_restore(be.e, dir);
  if (!rc && nestcl_engine_time_ms(be.e) != T_CKPT) {
    rc = nestcl_set_error(NESTCL_ERUNTIME, "restored clock at %g ms, want %g", nestcl_engine_time_ms(be.e), T_CKPT);
  }
  if (!rc)
    rc = nestcl_engine_simulate(be.e, T_END - T_CKPT);
  if (!rc)
    rc = brunel_collect(&be, post);
  nestcl_engine_destroy(be.e);
  return rc;
}

/* pre (steps < the checkpoint's) followed by post, as one train with post's statistics and weights. */
static brunel_result join(const brunel_result *pre, const brunel_result *post)
{
  brunel_result r = *post;
  r.n = pre->n + post->n;
  r.gids = malloc((r.n + 1) * sizeof *r.gids);
  r.steps = malloc((r.n + 1) * sizeof *r.steps);
  memcpy(r.gids, pre->gids, pre->n * sizeof *r.gids);
  memcpy(r.steps, pre->steps, pre->n * sizeof *r.steps);
  memcpy(r.gids + pre->n, post->gids, post->n * sizeof *r.gids);
  memcpy(r.steps + pre->n, post->steps, post->n * sizeof *r.steps);
  return r;
}

static void rm_dir(const char *dir)
{
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *de;
  char path[4200];
  while ((de = readdir(d)) != NULL) {
    if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
      join_path(path, sizeof path, dir, de->d_name);
      remove(path);
    }
  }
  closedir(d);
  rmdir(dir);
}

static int copy_file(const char *from, const char *to, long cut)
{
  FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
  int ok = a && b;
  long n = 0;
  int ch;
  while (ok && (ch = fgetc(a)) != EOF && (cut < 0 || n < cut)) {
    fputc(ch, b);
    n++;
  }
  if (a)
    fclose(a);
  if (b && fclose(b) != 0)
    ok = 0;
  return ok ? 0 : -1;
}

/* One split pair: 0 pass, 1 fail, 77 no device. */
static int check_split(const brunel_net *net, const brunel_result *ref, const char *root, const char *name,
                       const char *label, nestcl_engine_config w, nestcl_engine_config r)
{
  char dir[4096];
  join_path(dir, sizeof dir, root, name);
  brunel_result pre, post;
  int rc = write_checkpoint(net, &w, dir, &pre);
  if (rc == NESTCL_ENODEV) {
    printf("SKIP %s: %s\n", name, nestcl_last_error());
    return 77;
  }
  if (rc) {
    fprintf(stderr, "FAIL %s, %s: writing: %s\n", net->label, name, nestcl_last_error());
    return 1;
  }
  rc = restore_run(net, &r, dir, &post);
  if (rc == NESTCL_ENODEV) {
    brunel_free(&pre);
    printf("SKIP %s: %s\n", name, nestcl_last_error());
    return 77;
  }
  if (rc) {
    fprintf(stderr, "FAIL %s, %s: restoring: %s\n", net->label, name, nestcl_last_error());
    brunel_free(&pre);
    return 1;
  }
  int64_t cut = (int64_t)(T_CKPT / 0.1 + 0.5);
  int bad = 0;
  for (size_t k = 0; k < pre.n; ++k)
    bad |= pre.steps[k] >= cut;
  for (size_t k = 0; k < post.n; ++k)
    bad |= post.steps[k] < cut;
  if (bad) {
    fprintf(stderr, "FAIL %s, %s: spikes on the wrong side of the checkpoint\n", net->label, name);
  }
  brunel_result all = join(&pre, &post);
  char what[300];
  snprintf(what, sizeof what, "%s, checkpoint %s", net->label, label);
  bad |= brunel_compare(what, ref, &all);
  bad |= post.n == 0 || pre.n == 0;
  printf("%s: %zu + %zu spikes%s, %s\n", what, pre.n, post.n, post.w.n ? ", final weights" : "",
         bad ? "DIFFERENT" : "identical to the uninterrupted run");
  free(all.gids);
  free(all.steps);
  brunel_free(&pre);
  brunel_free(&post);
  return bad;
}

/* Whether an engine is unbuilt and at t = 0 (nothing half loaded). */
static int pristine(nestcl_engine *e)
{
  nestcl_engine_stats st;
  return nestcl_engine_get_stats(e, &st) != 0 && nestcl_engine_time_ms(e) == 0.0;
}

/* A refused restore: the code, the message, and the engine untouched (it restores good afterwards). */
static void check_refusal(const brunel_net *net, const brunel_result *ref, const char *bad_dir, const char *good_dir,
                          uint32_t seed, int want_rc, const char *want_msg)
{
  nestcl_engine_config c = split_cfg(1, 0, 0.0, seed);
  brunel_engine be;
  int rc = brunel_build(net, &c, N_NEURONS, INDEGREE, &be);
  CHECK(rc == 0, "build: %s", nestcl_last_error());
  if (rc)
    return;
  rc = nestcl_engine_restore(be.e, bad_dir);
  const char *msg = rc ? nestcl_last_error() : "(accepted)";
  CHECK(rc == want_rc && strstr(msg, want_msg), "restore of %s: rc %d, '%s'; want %d and '%s'", bad_dir, rc, msg,
        want_rc, want_msg);
  printf("refused (%d): %s\n", rc, msg);
  CHECK(pristine(be.e), "after a refused restore the engine is built or its clock moved");
  if (seed == 4242) {
    /* The same engine still restores a good checkpoint and continues bit for bit. */
    rc = nestcl_engine_restore(be.e, good_dir);
    if (!rc)
      rc = nestcl_engine_simulate(be.e, T_END - T_CKPT);
    brunel_result post;
    if (!rc)
      rc = brunel_collect(&be, &post);
    CHECK(rc == 0, "good restore after a refusal: %s", nestcl_last_error());
    if (!rc) {
      size_t k0 = 0;
      while (k0 < ref->n && ref->steps[k0] < (int64_t)(T_CKPT / 0.1 + 0.5))
        ++k0;
      int same = post.n == ref->n - k0 && post.w.checksum == ref->w.checksum;
      for (size_t k = 0; same && k < post.n; ++k) {
        same = post.gids[k] == ref->gids[k0 + k] && post.steps[k] == ref->steps[k0 + k];
      }
      CHECK(same, "good restore after a refusal: trains or weights differ from the uninterrupted run");
      brunel_free(&post);
    }
  }
  nestcl_engine_destroy(be.e);
}

static void check_refusals(const brunel_net *net, const brunel_result *ref, const char *root, const char *good)
{
  char good_file[4200], dir[4096], f[4200];
  join_path(good_file, sizeof good_file, good, "rank-0-of-1.nestcl-ckpt");
  struct stat st;
  CHECK(stat(good_file, &st) == 0, "no %s", good_file);
  /* A flipped byte in the payload. */
  join_path(dir, sizeof dir, root, "corrupt");
  mkdir(dir, 0777);
  join_path(f, sizeof f, dir, "rank-0-of-1.nestcl-ckpt");
  copy_file(good_file, f, -1);
  FILE *h = fopen(f, "r+b");
  if (h) {
    fseek(h, (long)st.st_size / 2, SEEK_SET);
    int ch = fgetc(h);
    fseek(h, (long)st.st_size / 2, SEEK_SET);
    fputc(ch ^ 0x10, h);
    fclose(h);
  }
  check_refusal(net, ref, dir, good, 4242, NESTCL_EINVAL, "corrupt (checksum mismatch");
  /* Truncated. */
  join_path(dir, sizeof dir, root, "truncated");
  mkdir(dir, 0777);
  join_path(f, sizeof f, dir, "rank-0-of-1.nestcl-ckpt");
  copy_file(good_file, f, (long)st.st_size - 1000);
  check_refusal(net, ref, dir, good, 4242, NESTCL_EINVAL, "truncated");
  /* A missing rank: rank 0 of 2 alone. */
  join_path(dir, sizeof dir, root, "missing");
  mkdir(dir, 0777);
  join_path(f, sizeof f, dir, "rank-0-of-2.nestcl-ckpt");
  copy_file(good_file, f, -1);
  check_refusal(net, ref, dir, good, 4242, NESTCL_EINVAL, "rank-1-of-2.nestcl-ckpt is missing");
  /* Not a checkpoint. */
  join_path(dir, sizeof dir, root, "garbage");
  mkdir(dir, 0777);
  join_path(f, sizeof f, dir, "rank-0-of-1.nestcl-ckpt");
  h = fopen(f, "wb");
  if (h) {
    for (int k = 0; k < 4096; ++k)
      fputc(k * 7, h);
    fclose(h);
  }
  check_refusal(net, ref, dir, good, 4242, NESTCL_EINVAL, "not a nestcl checkpoint");
  /* Empty folder. */
  join_path(dir, sizeof dir, root, "empty");
  mkdir(dir, 0777);
  check_refusal(net, ref, dir, good, 4242, NESTCL_EINVAL, "no checkpoint in");
  /* Another network: the seed differs. */
  check_refusal(net, ref, good, good, 4243, NESTCL_EINVAL, "the checkpoint was written for another network");
}

/* 0 pass, 1 fail, 77 no device. */
static int check_net(const brunel_net *net, const char *root, int refusals)
{
  nestcl_engine_config c1 = split_cfg(1, 0, 0.0, 4242);
  brunel_result ref;
  const double whole[] = {T_END};
  if (brunel_run(net, &c1, N_NEURONS, INDEGREE, whole, 1, &ref)) {
    fprintf(stderr, "FAIL %s reference: %s\n", net->label, nestcl_last_error());
    return 1;
  }
  printf("%s: uninterrupted 1 thread, %zu spikes\n", net->label, ref.n);
  int status = 0;
  struct {
    const char *name;
    nestcl_engine_config w, r;
  } pairs[] = {
    {"1 thread -> 1 thread", split_cfg(1, 0, 0.0, 4242), split_cfg(1, 0, 0.0, 4242)},
    {"2 threads -> 1 stream", split_cfg(2, 0, 0.0, 4242), split_cfg(0, 1, 1.0, 4242)},
    {"1 thread + 1 stream -> 2 threads", split_cfg(1, 1, 0.5, 4242), split_cfg(2, 0, 0.0, 4242)},
    {"2 streams -> 1 thread + 1 stream, alpha 0.3", split_cfg(0, 2, 1.0, 4242), split_cfg(1, 1, 0.3, 4242)},
  };
  char net_root[4096];
  join_path(net_root, sizeof net_root, root, net->ee_synapse ? "stdp" : net->model);
  mkdir(net_root, 0777);
  for (size_t k = 0; k < sizeof pairs / sizeof *pairs; ++k) {
    char name[32];
    snprintf(name, sizeof name, "split%zu", k);
    int rc = check_split(net, &ref, net_root, name, pairs[k].name, pairs[k].w, pairs[k].r);
    if (rc == 77 && k > 0) {
      continue; /* no device: the thread-only pair still counts */
    }
    status |= rc == 77 ? 0 : rc;
  }
  if (refusals) {
    char good[4200];
    join_path(good, sizeof good, net_root, "split0");
    check_refusals(net, &ref, net_root, good);
    /* Off a super step's end (99.1 ms), and after simulate(). */
    brunel_engine be;
    nestcl_engine_config c = split_cfg(1, 0, 0.0, 4242);
    if (brunel_build(net, &c, N_NEURONS, INDEGREE, &be) == 0) {
      int rc = nestcl_engine_simulate(be.e, 99.1);
      char dir[4200];
      join_path(dir, sizeof dir, net_root, "off");
      if (!rc)
        rc = nestcl_engine_checkpoint(be.e, dir);
      CHECK(rc == NESTCL_EINVAL && strstr(nestcl_last_error(), "not the end of a super step"),
            "checkpoint at 99.1 ms: rc %d, '%s'", rc, rc ? nestcl_last_error() : "");
      CHECK(access(dir, F_OK) != 0 || rmdir(dir) == 0, "a refused checkpoint left files in %s", dir);
      rc = nestcl_engine_restore(be.e, good);
      CHECK(rc == NESTCL_EINVAL && strstr(nestcl_last_error(), "restore after simulate"),
            "restore after simulate: rc %d, '%s'", rc, rc ? nestcl_last_error() : "");
      nestcl_engine_destroy(be.e);
    }
  }
  brunel_free(&ref);
  return status || failures ? 1 : 0;
}

/* --restore-mpi DIR: the 2-rank checkpoint of test_engine_mpi restored in one process. */
static int restore_mpi(const char *dir)
{
  int status = 0;
#ifdef NESTCL_TEST_HAVE_BUILTIN_MODELS
  brunel_net nets[2] = {brunel_iaf_psc_alpha(), brunel_iaf_psc_alpha_stdp("stdp_pl_synapse_hom")};
  const char *sub[2] = {"static", "stdp"};
#else
  brunel_net nets[1] = {brunel_test_lif()};
  const char *sub[1] = {"lif"};
#endif
  for (size_t k = 0; k < sizeof nets / sizeof *nets; ++k) {
    nestcl_engine_config c1 = split_cfg(1, 0, 0.0, 4242);
    brunel_result ref;
    const double whole[] = {T_END};
    if (brunel_run(&nets[k], &c1, N_NEURONS, INDEGREE, whole, 1, &ref)) {
      fprintf(stderr, "FAIL reference: %s\n", nestcl_last_error());
      return 1;
    }
    char d[4200];
    join_path(d, sizeof d, dir, sub[k]);
    nestcl_engine_config splits[2] = {split_cfg(1, 0, 0.0, 4242), split_cfg(1, 1, 0.5, 4242)};
    for (int s = 0; s < 2; ++s) {
      brunel_result post;
      int rc = restore_run(&nets[k], &splits[s], d, &post);
      if (rc == NESTCL_ENODEV) {
        printf("SKIP the stream split: %s\n", nestcl_last_error());
        continue;
      }
      if (rc) {
        fprintf(stderr, "FAIL %s from the 2-rank checkpoint %s: %s\n", nets[k].label, d, nestcl_last_error());
        status = 1;
        continue;
      }
      size_t k0 = 0;
      while (k0 < ref.n && ref.steps[k0] < (int64_t)(T_CKPT / 0.1 + 0.5))
        ++k0;
      brunel_result tail = ref;
      tail.gids = ref.gids + k0;
      tail.steps = ref.steps + k0;
      tail.n = ref.n - k0;
      char what[200];
      snprintf(what, sizeof what, "%s, 2 ranks -> 1 process (%s)", nets[k].label,
               s ? "1 thread + 1 stream" : "1 thread");
      int bad = brunel_compare(what, &tail, &post) || post.n == 0;
      printf("%s: %zu spikes after %g ms, %s\n", what, post.n, T_CKPT, bad ? "DIFFERENT" : "identical");
      status |= bad;
      brunel_free(&post);
    }
    brunel_free(&ref);
  }
  return status;
}

int main(int argc, char **argv)
{
  if (argc == 3 && strcmp(argv[1], "--restore-mpi") == 0) {
    return restore_mpi(argv[2]);
  }
  char root[] = "/tmp/nestcl-ckpt-test-XXXXXX";
  const char *tmp = getenv("TMPDIR");
  char rootbuf[4096];
  snprintf(rootbuf, sizeof rootbuf, "%s/nestcl-ckpt-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  char *r = mkdtemp(rootbuf);
  if (!r) {
    r = mkdtemp(root);
  }
  if (!r) {
    fprintf(stderr, "FAIL: no temporary folder\n");
    return 1;
  }
  int status = 0;
#ifdef NESTCL_TEST_HAVE_BUILTIN_MODELS
  brunel_net alpha = brunel_iaf_psc_alpha();
  status |= check_net(&alpha, r, 1);
  brunel_net stdp = brunel_iaf_psc_alpha_stdp("stdp_synapse");
  status |= check_net(&stdp, r, 1);
#else
  printf("note: nestcl_models not built; only test_lif is checked\n");
#endif
  brunel_net lif = brunel_test_lif();
  status |= check_net(&lif, r, 0);
  /* Clean up: every sub-folder, then the root. */
  DIR *d = opendir(r);
  if (d) {
    struct dirent *de;
    char sub[4200], sub2[4300];
    while ((de = readdir(d)) != NULL) {
      if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
        continue;
      join_path(sub, sizeof sub, r, de->d_name);
      DIR *d2 = opendir(sub);
      if (d2) {
        struct dirent *e2;
        while ((e2 = readdir(d2)) != NULL) {
          if (!strcmp(e2->d_name, ".") || !strcmp(e2->d_name, ".."))
            continue;
          join_path(sub2, sizeof sub2, sub, e2->d_name);
          rm_dir(sub2);
        }
        closedir(d2);
      }
      rm_dir(sub);
    }
    closedir(d);
  }
  rm_dir(r);
  return status ? 1 : 0;
}
