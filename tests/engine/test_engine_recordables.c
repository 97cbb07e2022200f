/*
 * A multimeter on every NEST recordable (the model's RecordablesMap names,
 * derived ones included: V_m of iaf_psc_alpha is y3_ + E_L_) of every project
 * model with such names, on 1 CPU thread, 1 stream, and 1 thread + 1 stream:
 * the samples must be bit-identical. A derived recordable reads parameters
 * from the host's fields, which a stream VP once freed after the upload (V_m
 * on a stream crashed in recordable_value); the engine keeps the parameters'
 * host copies now (host/src/engine/build.c). DC drive only, 24 neurons, 30 ms
 * sampled every 0.5 ms. Exit 77 without an OpenCL device.
 *
 * Built with NESTCL_TEST_MPI (test_engine_recordables_mpi, run on 2 ranks):
 * the same on 1 stream per rank and 1 thread + 1 stream per rank, each rank's
 * samples (its own neurons') compared by (step, gid) with a 1-thread run of
 * its own, and the ranks' sample counts summing to the reference's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef NESTCL_TEST_MPI
#include <mpi.h>
#endif

#include "nestcl/engine.h"
#include "nestcl/model.h"

typedef struct samples {
  size_t n;
  int width;
  double *values;
  int64_t *steps;
  uint64_t *gids;
} samples;

static int run_mpi(const nestcl_model *m, int threads, int streams, double alpha, int mpi, samples *out);

static int run(const nestcl_model *m, int threads, int streams, double alpha, samples *out)
{
  return run_mpi(m, threads, streams, alpha, 0, out);
}

static int run_mpi(const nestcl_model *m, int threads, int streams, double alpha, int mpi, samples *out)
{
  nestcl_engine_config c;
  nestcl_engine_config_defaults(&c);
  c.seed = 5;
  c.cpu_threads = threads;
  c.gpu_streams = streams;
  c.gpu_fraction = alpha;
  c.use_mpi = mpi;
  nestcl_engine *e;
  int rc = nestcl_engine_create(&c, &e), p, mm;
  if (rc)
    return rc;
  const nestcl_model *models[] = {m};
  rc = nestcl_engine_set_models(e, models, 1);
  /* Multi-receptor models get two receptors; DC goes to the current input either way. */
  if (!rc)
    rc = nestcl_engine_create_population(e, m->name, 24, m->has_receptors ? 2 : 0, &p);
  if (!rc)
    rc = nestcl_engine_add_dc(e, p, 400.0, 1.0);
  if (!rc)
    rc = nestcl_engine_add_multimeter(e, p, 0, 24, m->recordable_names, m->n_recordable_names, 0.5, &mm);
  if (!rc)
    rc = nestcl_engine_simulate(e, 30.0);
  if (!rc) {
    const int64_t *st;
    const uint64_t *g;
    const double *v;
    nestcl_engine_samples(e, mm, &st, &g, &v, &out->n, &out->width);
    size_t bytes = out->n * (size_t)out->width * sizeof *v;
    out->values = malloc(bytes + 1);
    out->steps = malloc(out->n * sizeof *st + 1);
    out->gids = malloc(out->n * sizeof *g + 1);
    if (out->values && out->steps && out->gids) {
      memcpy(out->values, v, bytes);
      memcpy(out->steps, st, out->n * sizeof *st);
      memcpy(out->gids, g, out->n * sizeof *g);
    } else {
      rc = NESTCL_ENOMEM;
    }
  }
  nestcl_engine_destroy(e);
  return rc;
}

static void samples_free(samples *s)
{
  free(s->values);
  free(s->steps);
  free(s->gids);
}

#ifdef NESTCL_TEST_MPI
/* Every sample of o (this rank's neurons) equal to the reference's sample of the same step and gid. */
static int matches(const samples *ref, const samples *o)
{
  size_t k = 0;
  for (size_t j = 0; j < o->n; ++j) {
    while (k < ref->n && (ref->steps[k] != o->steps[j] || ref->gids[k] != o->gids[j])) {
      ++k;
    }
    if (k == ref->n ||
        memcmp(&ref->values[k * (size_t)ref->width], &o->values[j * (size_t)o->width],
               (size_t)o->width * sizeof *o->values) != 0) {
      return 0;
    }
  }
  return 1;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0, fails = 0, tested = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int k = 0; k < nestcl_builtin_model_count; ++k) {
    const nestcl_model *m = nestcl_builtin_models[k];
    if (m->n_recordable_names == 0)
      continue;
    samples ref = {0};
    int rc = run(m, 1, 0, 0.0, &ref), any = rc != 0;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) {
      samples_free(&ref);
      continue; /* not run by the engine (the serial test says why) */
    }
    struct {
      const char *name;
      int t, s;
      double a;
    } splits[] = {{"1 stream per rank", 0, 1, 1.0}, {"1 thread + 1 stream per rank", 1, 1, 0.5}};
    for (int s = 0; s < 2; ++s) {
      samples o = {0};
      rc = run_mpi(m, splits[s].t, splits[s].s, splits[s].a, 1, &o);
      int nodev = rc == NESTCL_ENODEV;
      MPI_Allreduce(MPI_IN_PLACE, &nodev, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      if (nodev) {
        if (rank == 0)
          printf("SKIP: no OpenCL device\n");
        MPI_Finalize();
        return 77;
      }
      unsigned long long total = o.n;
      MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      int bad = rc != 0 || total != ref.n || o.width != ref.width || !matches(&ref, &o);
      MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      if (rank == 0) {
        printf("%-30s %-30s %d recordables, %llu samples on 2 ranks: %s\n", m->name, splits[s].name, ref.width, total,
               rc      ? nestcl_last_error()
                 : bad ? "DIFFERENT"
                       : "identical to 1 thread");
      }
      fails += bad;
      samples_free(&o);
    }
    samples_free(&ref);
    tested++;
  }
  if (tested < 8) {
    if (rank == 0)
      fprintf(stderr, "FAIL: only %d models tested\n", tested);
    fails++;
  }
  MPI_Finalize();
  return fails ? 1 : 0;
}
#else
int main(void)
{
  int fails = 0, tested = 0;
  for (int k = 0; k < nestcl_builtin_model_count; ++k) {
    const nestcl_model *m = nestcl_builtin_models[k];
    if (m->n_recordable_names == 0)
      continue;
    samples ref = {0};
    if (run(m, 1, 0, 0.0, &ref)) {
      /* Models the engine does not run (precise spike times) say so; that is no failure here. */
      printf("%-30s not run by the engine: %s\n", m->name, nestcl_last_error());
      continue;
    }
    if (ref.n != 60 * 24 || ref.width != m->n_recordable_names) {
      fprintf(stderr, "FAIL %s: %zu samples of %d values\n", m->name, ref.n, ref.width);
      fails++;
    }
    struct {
      const char *name;
      int t, s;
      double a;
    } splits[] = {{"1 stream", 0, 1, 1.0}, {"1 thread + 1 stream", 1, 1, 0.5}};
    for (int s = 0; s < 2; ++s) {
      samples o = {0};
      int rc = run(m, splits[s].t, splits[s].s, splits[s].a, &o);
      if (rc == NESTCL_ENODEV) {
        printf("SKIP: %s\n", nestcl_last_error());
        return 77;
      }
      int bad = rc != 0 || o.n != ref.n || o.width != ref.width ||
        memcmp(o.values, ref.values, ref.n * (size_t)ref.width * sizeof *ref.values) != 0;
      printf("%-30s %-20s %d recordables, %zu samples: %s\n", m->name, splits[s].name, ref.width, o.n,
             rc      ? nestcl_last_error()
               : bad ? "DIFFERENT"
                     : "identical to 1 thread");
      fails += bad;
      samples_free(&o);
    }
    samples_free(&ref);
    tested++;
  }
  if (tested < 8) {
    fprintf(stderr, "FAIL: only %d models tested\n", tested);
    return 1;
  }
  return fails ? 1 : 0;
}
#endif
