/*
 * A multimeter on every NEST recordable (the model's RecordablesMap names,
 * derived ones included: V_m of iaf_psc_alpha is y3_ + E_L_) of every project
 * model with such names, on 1 CPU thread, 1 stream, and 1 thread + 1 stream:
 * the samples must be bit-identical. A derived recordable reads parameters
 * from the host's fields, which a stream VP once freed after the upload (V_m
 * on a stream crashed in recordable_value); the engine keeps the parameters'
 * host copies now (host/src/engine/build.c). DC drive only, 24 neurons, 30 ms
 * sampled every 0.5 ms. Exit 77 without an OpenCL device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestcl/engine.h"
#include "nestcl/model.h"

typedef struct samples {
  size_t n;
  int width;
  double *values;
} samples;

static int run(const nestcl_model *m, int threads, int streams, double alpha, samples *out)
{
  nestcl_engine_config c;
  nestcl_engine_config_defaults(&c);
  c.seed = 5;
  c.cpu_threads = threads;
  c.gpu_streams = streams;
  c.gpu_fraction = alpha;
  nestcl_engine *e;
  int rc = nestcl_engine_create(&c, &e), p, mm;
  if (rc) return rc;
  const nestcl_model *models[] = {m};
  rc = nestcl_engine_set_models(e, models, 1);
  /* Multi-receptor models get two receptors; DC goes to the current input either way. */
  if (!rc) rc = nestcl_engine_create_population(e, m->name, 24, m->has_receptors ? 2 : 0, &p);
  if (!rc) rc = nestcl_engine_add_dc(e, p, 400.0, 1.0);
  if (!rc)
    rc = nestcl_engine_add_multimeter(e, p, 0, 24, m->recordable_names, m->n_recordable_names, 0.5, &mm);
  if (!rc) rc = nestcl_engine_simulate(e, 30.0);
  if (!rc) {
    const int64_t *st;
    const uint64_t *g;
    const double *v;
    nestcl_engine_samples(e, mm, &st, &g, &v, &out->n, &out->width);
    size_t bytes = out->n * (size_t)out->width * sizeof *v;
    out->values = malloc(bytes + 1);
    if (out->values) memcpy(out->values, v, bytes);
    else rc = NESTCL_ENOMEM;
  }
  nestcl_engine_destroy(e);
  return rc;
}

int main(void)
{
  int fails = 0, tested = 0;
  for (int k = 0; k < nestcl_builtin_model_count; ++k) {
    const nestcl_model *m = nestcl_builtin_models[k];
    if (m->n_recordable_names == 0) continue;
    samples ref = {0, 0, NULL};
    if (run(m, 1, 0, 0.0, &ref)) {
      /* Models the engine does not run (precise spike times) say so; that is no failure here. */
      printf("%-30s not run by the engine: %s\n", m->name, nestcl_last_error());
      continue;
    }
    if (ref.n != 60 * 24 || ref.width != m->n_recordable_names) {
      fprintf(stderr, "FAIL %s: %zu samples of %d values\n", m->name, ref.n, ref.width);
      fails++;
    }
    struct { const char *name; int t, s; double a; } splits[] = {{"1 stream", 0, 1, 1.0}, {"1 thread + 1 stream", 1, 1, 0.5}};
    for (int s = 0; s < 2; ++s) {
      samples o = {0, 0, NULL};
      int rc = run(m, splits[s].t, splits[s].s, splits[s].a, &o);
      if (rc == NESTCL_ENODEV) {
        printf("SKIP: %s\n", nestcl_last_error());
        return 77;
      }
      int bad = rc != 0 || o.n != ref.n || o.width != ref.width ||
                memcmp(o.values, ref.values, ref.n * (size_t)ref.width * sizeof *ref.values) != 0;
      printf("%-30s %-20s %d recordables, %zu samples: %s\n", m->name, splits[s].name, ref.width, o.n,
             rc ? nestcl_last_error() : bad ? "DIFFERENT" : "identical to 1 thread");
      fails += bad;
      free(o.values);
    }
    free(ref.values);
    tested++;
  }
  if (tested < 8) {
    fprintf(stderr, "FAIL: only %d models tested\n", tested);
    return 1;
  }
  return fails ? 1 : 0;
}
