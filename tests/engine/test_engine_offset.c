/*
 * Spike offsets and the last spike time in the engine, with models/'s
 * iaf_tum_2000: its update() reads ArchivingNode::get_spiketime_ms() around
 * set_spiketime() and sends the jump of its active resources as the spike's
 * offset; its handle() multiplies a receptor-1 spike by the offset.
 *
 *  1. The engine delivers no offset: a receptor-1 connection from a model that
 *     sets offsets (iaf_tum_2000 itself) is refused at Connect, naming the
 *     offset; receptor 0 from it, and receptor 1 from a model that sets none
 *     (whose offset is NEST's 0), are accepted.
 *  2. Receptor 1 from iaf_psc_alpha adds weight * 0, as in NEST: the targets'
 *     spikes equal those of a run without that connection, while the same
 *     connection on receptor 0 changes them (so the comparison can fail).
 *  3. The last spike time: after a neuron's second spike its x, y, u (recorded
 *     by a multimeter) are those computed here from its two recorded spike
 *     times (the first interval counted from 0, as NEST's model does).
 *  4. The network (offset senders included, whose kernels take the offset
 *     list) gives the same spikes and samples on 1 and 2 threads, 1 stream and
 *     a thread with a stream.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestcl/device.h"
#include "nestcl/engine.h"
#include "nestcl/model.h"
#include "../unit/nestcl_check.h"

#define NA 20
#define NB 30
#define SIM_MS 200.0
#define H 0.1
#define U_SE 0.3
#define TAU_PSC 3.0
#define TAU_REC 400.0

enum { TO_B_RPORT1 = 0, TO_B_NONE, TO_B_RPORT0 };

typedef struct result {
  uint64_t *gid;
  int64_t *step;
  size_t n;
  int64_t *s_step;
  uint64_t *s_gid;
  double *values; /* x, y, u per sample */
  size_t n_samples;
} result;

static void result_free(result *r)
{
  free(r->gid);
  free(r->step);
  free(r->s_step);
  free(r->s_gid);
  free(r->values);
  memset(r, 0, sizeof *r);
}

static void *copy(const void *p, size_t bytes)
{
  void *q = malloc(bytes ? bytes : 1);
  if (q && bytes) {
    memcpy(q, p, bytes);
  }
  return q;
}

static nestcl_engine *new_engine(int threads, int streams, double alpha, int *rc)
{
  nestcl_engine_config c;
  nestcl_engine_config_defaults(&c);
  c.seed = 4242u;
  c.resolution_ms = H;
  c.cpu_threads = threads;
  c.gpu_streams = streams;
  c.gpu_fraction = alpha;
  nestcl_engine *e = NULL;
  *rc = nestcl_engine_create(&c, &e);
  if (!*rc) {
    *rc = nestcl_engine_set_models(e, nestcl_builtin_models, nestcl_builtin_model_count);
  }
  return e;
}

/* A: iaf_psc_alpha under DC (no offsets); B: iaf_tum_2000 under Poisson input, A -> B as `variant`, B -> A. */
static int run(int threads, int streams, double alpha, int variant, result *out)
{
  int rc;
  nestcl_engine *e = new_engine(threads, streams, alpha, &rc);
  if (!e) {
    return streams && rc == NESTCL_ENODEV ? 77 : (fprintf(stderr, "engine: %s\n", nestcl_last_error()), 1);
  }
  int a = 0, b = 0, rec = 0, mm = 0;
  nestcl_conn_spec all = {NESTCL_RULE_ALL_TO_ALL, 0, 1, 1, 0, 0.0};
  nestcl_conn_spec fixed = {NESTCL_RULE_FIXED_INDEGREE, 5, 1, 1, 0, 0.0};
  nestcl_syn_spec ab = {nestcl_constant(400.0), nestcl_constant(1.5), variant == TO_B_RPORT0 ? 0 : 1};
  nestcl_syn_spec ba = {nestcl_constant(30.0), nestcl_constant(2.0), 0};
  static const char *const names[] = {"x", "y", "u"};
  if (!rc)
    rc = nestcl_engine_create_population(e, "iaf_psc_alpha", NA, 0, &a);
  if (!rc)
    rc = nestcl_engine_create_population(e, "iaf_tum_2000", NB, 0, &b);
  if (!rc)
    rc = nestcl_engine_set(e, b, "U", nestcl_constant(U_SE));
  if (!rc)
    rc = nestcl_engine_set(e, b, "tau_psc", nestcl_constant(TAU_PSC));
  if (!rc)
    rc = nestcl_engine_set(e, b, "tau_rec", nestcl_constant(TAU_REC));
  if (!rc)
    rc = nestcl_engine_set(e, b, "tau_fac", nestcl_constant(0.0));
  if (!rc)
    rc = nestcl_engine_add_dc(e, a, 600.0, H);
  if (!rc)
    rc = nestcl_engine_add_poisson(e, b, 20000.0, 20.0, 1.0, 0);
  if (!rc && variant != TO_B_NONE)
    rc = nestcl_engine_connect(e, a, b, &all, &ab);
  if (!rc)
    rc = nestcl_engine_connect(e, b, a, &fixed, &ba);
  if (!rc)
    rc = nestcl_engine_add_spike_recorder(e, b, 0, NB, &rec);
  if (!rc)
    rc = nestcl_engine_add_multimeter(e, b, 0, NB, names, 3, H, &mm);
  if (!rc)
    rc = nestcl_engine_simulate(e, SIM_MS);
  if (rc) {
    fprintf(stderr, "run (%d threads, %d streams, variant %d): %s\n", threads, streams, variant, nestcl_last_error());
    nestcl_engine_destroy(e);
    return streams && rc == NESTCL_ENODEV ? 77 : 1;
  }
  const uint64_t *g;
  const int64_t *s;
  nestcl_engine_spikes(e, rec, &g, &s, &out->n);
  out->gid = copy(g, out->n * sizeof *g);
  out->step = copy(s, out->n * sizeof *s);
  const int64_t *ss;
  const uint64_t *sg;
  const double *v;
  int nr = 0;
  nestcl_engine_samples(e, mm, &ss, &sg, &v, &out->n_samples, &nr);
  out->s_step = copy(ss, out->n_samples * sizeof *ss);
  out->s_gid = copy(sg, out->n_samples * sizeof *sg);
  out->values = copy(v, out->n_samples * 3 * sizeof *v);
  uint64_t first = 0;
  uint32_t n = 0;
  nestcl_engine_population_range(e, b, &first, &n);
  for (size_t k = 0; k < out->n; ++k) {
    out->gid[k] -= first; /* local indices, to compare with the samples' */
  }
  for (size_t k = 0; k < out->n_samples; ++k) {
    out->s_gid[k] -= first;
  }
  nestcl_engine_destroy(e);
  return nr == 3 ? 0 : 1;
}

static int same_spikes(const result *x, const result *y)
{
  return x->n == y->n && !memcmp(x->gid, y->gid, x->n * sizeof *x->gid) &&
    !memcmp(x->step, y->step, x->n * sizeof *x->step);
}

static int same_samples(const result *x, const result *y)
{
  return x->n_samples == y->n_samples && !memcmp(x->s_step, y->s_step, x->n_samples * sizeof *x->s_step) &&
    !memcmp(x->values, y->values, x->n_samples * 3 * sizeof *x->values);
}

/* 1. Which connections onto iaf_tum_2000 the engine accepts. */
static void test_refusal(void)
{
  int rc;
  nestcl_engine *e = new_engine(1, 0, 0.0, &rc);
  CHECK(e && rc == 0, "engine: %s", nestcl_last_error());
  if (!e) {
    return;
  }
  int a = 0, b = 0;
  rc = nestcl_engine_create_population(e, "iaf_psc_alpha", 4, 0, &a);
  if (!rc)
    rc = nestcl_engine_create_population(e, "iaf_tum_2000", 4, 0, &b);
  CHECK(rc == 0, "set-up: %s", nestcl_last_error());
  nestcl_conn_spec all = {NESTCL_RULE_ALL_TO_ALL, 0, 1, 1, 0, 0.0};
  nestcl_syn_spec r1 = {nestcl_constant(10.0), nestcl_constant(1.0), 1};
  nestcl_syn_spec r0 = {nestcl_constant(10.0), nestcl_constant(1.0), 0};
  rc = nestcl_engine_connect(e, b, b, &all, &r1);
  CHECK(rc == NESTCL_EINVAL && strstr(nestcl_last_error(), "offset") && strstr(nestcl_last_error(), "iaf_tum_2000"),
        "iaf_tum_2000 -> iaf_tum_2000 at rport 1: rc %d, '%s'", rc, nestcl_last_error());
  printf("receptor 1 from an offset sender refused: %s\n", nestcl_last_error());
  CHECK(nestcl_engine_connect(e, b, b, &all, &r0) == 0, "iaf_tum_2000 -> iaf_tum_2000 at rport 0: %s",
        nestcl_last_error());
  CHECK(nestcl_engine_connect(e, a, b, &all, &r1) == 0, "iaf_psc_alpha -> iaf_tum_2000 at rport 1: %s",
        nestcl_last_error());
  CHECK(nestcl_engine_connect(e, b, a, &all, &r0) == 0, "iaf_tum_2000 -> iaf_psc_alpha: %s", nestcl_last_error());
  nestcl_engine_destroy(e);
}

/* NEST's Time::step( s ).get_ms() at 0.1 ms: 100 tics of 1/1000 ms. */
static double step_ms(int64_t s)
{
  return (1.0 / 1000.0) * (double)(s * 100);
}

/* 3. x, y, u after each neuron's second spike, from its two spike times. */
static void check_second_spike(const result *r)
{
  int checked = 0;
  for (uint32_t i = 0; i < NB; ++i) {
    int64_t s1 = -1, s2 = -1;
    for (size_t k = 0; k < r->n && s2 < 0; ++k) {
      if (r->gid[k] == i) {
        *(s1 < 0 ? &s1 : &s2) = r->step[k];
      }
    }
    if (s2 < 0) {
      continue;
    }
    /* the first spike: the interval from 0; then u = U, x = 1 - U, y = U */
    double u = 0.0, x = 1.0, y = 0.0;
    double last = 0.0;
    for (int k = 0; k < 2; ++k) {
      const double t = step_ms((k ? s2 : s1) + 1), h = t - last;
      const double Pyy = exp(-h / TAU_PSC), Pzz = expm1(-h / TAU_REC);
      const double Pxy = (Pzz * TAU_REC - (Pyy - 1.0) * TAU_PSC) / (TAU_PSC - TAU_REC);
      const double z = 1.0 - x - y;
      u *= 0.0;
      x += Pxy * y - Pzz * z;
      y *= Pyy;
      u += U_SE * (1.0 - u);
      const double dy = u * x;
      x -= dy;
      y += dy;
      last = t;
    }
    for (size_t k = 0; k < r->n_samples; ++k) {
      if (r->s_gid[k] == i && r->s_step[k] == s2) {
        const double *v = r->values + 3 * k, want[3] = {x, y, u};
        for (int j = 0; j < 3; ++j) {
          CHECK(fabs(v[j] - want[j]) <= 1e-12 * fmax(1.0, fabs(want[j])),
                "neuron %u after its spikes at steps %lld, %lld: %s = %.17g, expected %.17g", i, (long long)s1,
                (long long)s2,
                j == 0     ? "x"
                  : j == 1 ? "y"
                           : "u",
                v[j], want[j]);
        }
        checked++;
      }
    }
  }
  CHECK(checked >= NB / 2, "only %d neurons spiked twice, the check is too weak", checked);
  printf("x, y, u after the second spike as computed from the spike times: %d neurons\n", checked);
}

int main(void)
{
  test_refusal();
  result base, none, r0;
  memset(&base, 0, sizeof base);
  memset(&none, 0, sizeof none);
  memset(&r0, 0, sizeof r0);
  if (run(1, 0, 0.0, TO_B_RPORT1, &base) || run(1, 0, 0.0, TO_B_NONE, &none) || run(1, 0, 0.0, TO_B_RPORT0, &r0)) {
    CHECK(0, "the C path runs failed");
    return check_report() ? 1 : 0;
  }
  CHECK(base.n > 100, "iaf_tum_2000 fired %zu spikes, too few to compare", base.n);
  CHECK(same_spikes(&base, &none), "receptor 1 from iaf_psc_alpha (offset 0) changed the spikes (%zu vs %zu)", base.n,
        none.n);
  CHECK(!same_spikes(&base, &r0), "receptor 0 from iaf_psc_alpha did not change the spikes: the comparison is void");
  check_second_spike(&base);
  int skipped = 0;
  static const struct {
    int threads, streams;
    double alpha;
  } splits[] = {{2, 0, 0.0}, {0, 1, 1.0}, {1, 1, 0.5}};
  for (size_t k = 0; k < sizeof splits / sizeof *splits; ++k) {
    result r;
    memset(&r, 0, sizeof r);
    int rc = run(splits[k].threads, splits[k].streams, splits[k].alpha, TO_B_RPORT1, &r);
    if (rc == 77) {
      printf("no OpenCL device: %d threads + %d streams skipped\n", splits[k].threads, splits[k].streams);
      skipped = 1;
      continue;
    }
    CHECK(rc == 0, "run %d threads, %d streams", splits[k].threads, splits[k].streams);
    CHECK(rc || same_spikes(&base, &r), "%d threads, %d streams: spikes differ from 1 thread (%zu vs %zu)",
          splits[k].threads, splits[k].streams, r.n, base.n);
    CHECK(rc || same_samples(&base, &r), "%d threads, %d streams: x, y, u samples differ from 1 thread",
          splits[k].threads, splits[k].streams);
    result_free(&r);
  }
  printf("iaf_tum_2000: %zu spikes, equal on every split\n", base.n);
  result_free(&base);
  result_free(&none);
  result_free(&r0);
  if (check_report()) {
    return 1;
  }
  return skipped ? 77 : 0;
}
