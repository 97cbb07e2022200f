/*
 * An independent, deliberately simple serial reference for the engine: no
 * CSR, no ring, no VPs. Synapses are one flat list drawn by re-implementing
 * the keying documented in engine.h; each step updates every neuron, then
 * walks the whole synapse list for the step's spikes and adds weights into an
 * absolute-time input table [step][channel][neuron], with the same fixed-point
 * conversion (weights rounded to float first, as the engine stores them) and
 * the same Philox streams. The neuron itself is the model's own C update
 * called for one neuron and one step at a time (n = 1, a one-slot ring filled
 * from the table), so what is checked is everything around the neuron:
 * connectivity, routing, delays, rings, drive, spike lists and exchange. The
 * engine (1 thread, 2 threads, thread + stream) must agree spike for spike, on
 * a network that uses every connection rule, drawn weights, drawn
 * (heterogeneous) delays and two Poisson generators; for the translated
 * iaf_psc_alpha (when nestcl_models is built) and for test_lif.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestcl/engine.h"
#include "nestcl_fixed.h"
#include "nestcl_philox.h"
#include "test_lif.h"
#include "brunel.h"

#define NA 240u
#define NB 60u
#define N (NA + NB)
#define STEPS 1000
#define H 0.1
#define SEED 777u

typedef struct syn {
  uint32_t src, tgt;
  int ch;
  double w;
  int d;
} syn;

/* The model under test, its settings (applied before V_m, as the engine's SetStatus calls) and weight scale. */
typedef struct ref_model {
  const char *label;
  const nestcl_model *const *models;
  int n_models;
  const nestcl_model *m;
  const char *const *names;
  const double *values;
  int n_settings;
  double wscale;
} ref_model;

static const ref_model *M;

typedef struct proj_desc {
  int src_first, src_n, tgt_first, tgt_n;
  nestcl_rule rule;
  uint32_t degree;
  int autapses, multapses;
  nestcl_value w, d;
} proj_desc;

static proj_desc P[4]; /* P0 with M's weight scale */
static const proj_desc P0[4] = {
  {0,
   NA,
   0,
   NA,
   NESTCL_RULE_FIXED_INDEGREE,
   20,
   0,
   1,
   {NESTCL_DIST_CONSTANT, 60.0, 0, 0, 0},
   {NESTCL_DIST_CONSTANT, 1.5, 0, 0, 0}},
  {0,
   NA,
   NA,
   NB,
   NESTCL_RULE_FIXED_INDEGREE,
   20,
   1,
   0,
   {NESTCL_DIST_NORMAL, 60.0, 30.0, 0, 0},
   {NESTCL_DIST_UNIFORM, 1.0, 3.0, 1.0, 3.0}},
  {NA,
   NB,
   0,
   NA,
   NESTCL_RULE_FIXED_OUTDEGREE,
   50,
   1,
   1,
   {NESTCL_DIST_CONSTANT, -300.0, 0, 0, 0},
   {NESTCL_DIST_CONSTANT, 1.0, 0, 0, 0}},
  {NA,
   NB,
   NA,
   NB,
   NESTCL_RULE_ONE_TO_ONE,
   0,
   1,
   1,
   {NESTCL_DIST_CONSTANT, -50.0, 0, 0, 0},
   {NESTCL_DIST_CONSTANT, 2.0, 0, 0, 0}},
};

static double draw(const nestcl_value *v, uint32_t purpose, uint64_t id, uint64_t step)
{
  if (v->kind == NESTCL_DIST_CONSTANT)
    return v->a;
  nestcl_rng_stream s = nestcl_stream_init(nestcl_rng_key(SEED, purpose), nestcl_rng_counter(id, step));
  if (v->kind == NESTCL_DIST_UNIFORM)
    return v->a + (v->b - v->a) * nestcl_stream_uniform(&s);
  return v->a + v->b * nestcl_stream_normal(&s);
}

static uint32_t word(uint64_t id, int p, uint64_t a)
{
  nestcl_philox_ctr c = nestcl_rng_counter(id, ((uint64_t)p << 34) | (a >> 2));
  return nestcl_philox4x32_10(c, nestcl_rng_key(SEED, NESTCL_RNG_PURPOSE_CONNECT)).v[a & 3];
}

static syn *syns;
static size_t n_syn, cap_syn;

static void add(int p, uint64_t row_id, uint64_t j, uint32_t src, uint32_t tgt)
{
  double w = draw(&P[p].w, NESTCL_RNG_PURPOSE_CONNECT, row_id, ((uint64_t)p << 34) | (1ull << 32) | j);
  double d = draw(&P[p].d, NESTCL_RNG_PURPOSE_CONNECT, row_id, ((uint64_t)p << 34) | (2ull << 32) | j);
  if (n_syn == cap_syn) {
    cap_syn = cap_syn ? 2 * cap_syn : 1024;
    syns = realloc(syns, cap_syn * sizeof *syns);
  }
  syns[n_syn].src = src;
  syns[n_syn].tgt = tgt;
  int ch;
  double value;
  if (M->m->route_spike(w, 0, 0, &ch, &value) != 0) {
    fprintf(stderr, "FAIL: %s rejects weight %g\n", M->label, w);
    exit(1);
  }
  syns[n_syn].ch = ch;
  syns[n_syn].w = (double)(float)value;
  /* ms -> tics (1 us, nearest) -> steps (nearest), as NEST rounds delays */
  syns[n_syn].d = (int)((llround(d * 1000.0) + llround(H * 1000.0) / 2) / llround(H * 1000.0));
  n_syn++;
}

/* Is x among the first k entries of v? (quadratic, on purpose: no marks, no hashing) */
static int among(const uint32_t *v, uint32_t k, uint32_t x)
{
  for (uint32_t i = 0; i < k; ++i)
    if (v[i] == x)
      return 1;
  return 0;
}

static void draw_network(void)
{
  uint32_t chosen[64];
  for (int p = 0; p < 4; ++p) {
    const proj_desc *d = &P[p];
    int same = d->src_first == d->tgt_first;
    if (d->rule == NESTCL_RULE_FIXED_INDEGREE) {
      for (int t = d->tgt_first; t < d->tgt_first + d->tgt_n; ++t) {
        uint64_t a = 0;
        for (uint32_t j = 0; j < d->degree;) {
          uint32_t s = d->src_first + (uint32_t)(((uint64_t)word(t, p, a++) * d->src_n) >> 32);
          if ((!d->autapses && same && s == (uint32_t)t) || (!d->multapses && among(chosen, j, s)))
            continue;
          chosen[j] = s;
          add(p, t, j, s, t);
          ++j;
        }
      }
    } else if (d->rule == NESTCL_RULE_FIXED_OUTDEGREE) {
      for (int s = d->src_first; s < d->src_first + d->src_n; ++s) {
        uint64_t a = 0;
        for (uint32_t j = 0; j < d->degree;) {
          uint32_t t = d->tgt_first + (uint32_t)(((uint64_t)word(s, p, a++) * d->tgt_n) >> 32);
          if ((!d->autapses && same && t == (uint32_t)s) || (!d->multapses && among(chosen, j, t)))
            continue;
          chosen[j < 64 ? j : 63] = t;
          add(p, s, j, s, t);
          ++j;
        }
      }
    } else {
      for (int k = 0; k < d->tgt_n; ++k)
        add(p, d->tgt_first + k, 0, d->src_first + k, d->tgt_first + k);
    }
  }
}

static int engine_run(int threads, int streams, double alpha, uint64_t **g, int64_t **s, size_t *n)
{
  nestcl_engine_config c;
  nestcl_engine_config_defaults(&c);
  c.seed = SEED;
  c.cpu_threads = threads;
  c.gpu_streams = streams;
  c.gpu_fraction = alpha;
  nestcl_engine *e;
  int rc = nestcl_engine_create(&c, &e), pa = -1, pb = -1, rec = -1, rec_b = -1;
  if (rc)
    return rc;
  rc = nestcl_engine_set_models(e, M->models, M->n_models);
  if (!rc)
    rc = nestcl_engine_create_population(e, M->m->name, NA, 0, &pa);
  if (!rc)
    rc = nestcl_engine_create_population(e, M->m->name, NB, 0, &pb);
  for (int k = 0; k < 2 && !rc; ++k) {
    for (int j = 0; j < M->n_settings && !rc; ++j) {
      rc = nestcl_engine_set(e, k ? pb : pa, M->names[j], nestcl_constant(M->values[j]));
    }
    if (!rc)
      rc = nestcl_engine_set(e, k ? pb : pa, "V_m", nestcl_normal(10.0, 5.0));
  }
  for (int p = 0; p < 4 && !rc; ++p) {
    nestcl_conn_spec cs = {P[p].rule, P[p].degree, P[p].autapses, P[p].multapses, 0, 0.0};
    nestcl_syn_spec ss = {P[p].w, P[p].d, 0};
    rc = nestcl_engine_connect(e, P[p].src_first ? pb : pa, P[p].tgt_first ? pb : pa, &cs, &ss);
  }
  if (!rc)
    rc = nestcl_engine_add_poisson(e, pa, 14000.0, 60.0 * M->wscale, 1.5, 0);
  if (!rc)
    rc = nestcl_engine_add_poisson(e, pb, 15000.0, 60.0 * M->wscale, 1.0, 0);
  if (!rc)
    rc = nestcl_engine_add_spike_recorder(e, pa, 0, NA, &rec);
  if (!rc)
    rc = nestcl_engine_add_spike_recorder(e, pb, 0, NB, &rec_b);
  if (!rc)
    rc = nestcl_engine_simulate(e, STEPS * H);
  if (!rc) {
    const uint64_t *ga, *gb;
    const int64_t *sa, *sb;
    size_t na, nb;
    nestcl_engine_spikes(e, rec, &ga, &sa, &na);
    nestcl_engine_spikes(e, rec_b, &gb, &sb, &nb);
    *g = malloc((na + nb + 1) * sizeof **g);
    *s = malloc((na + nb + 1) * sizeof **s);
    size_t a = 0, b = 0;
    *n = 0;
    while (a < na || b < nb) {
      int ta = b >= nb || (a < na && (sa[a] < sb[b] || (sa[a] == sb[b] && ga[a] < gb[b])));
      (*g)[*n] = ta ? ga[a] : gb[b];
      (*s)[*n] = ta ? sa[a++] : sb[b++];
      (*n)++;
    }
  }
  nestcl_engine_destroy(e);
  return rc;
}

/* The reference simulation of the model M; the engine runs against it. 0 pass, 1 fail. */
static int check_model(const ref_model *model)
{
  M = model;
  const nestcl_model *m = M->m;
  for (int p = 0; p < 4; ++p) {
    P[p] = P0[p];
    P[p].w.a *= M->wscale;
    P[p].w.b *= M->wscale;
  }
  n_syn = 0;
  draw_network();
  /* State: the model's defaults, the settings and V_m drawn as documented in engine.h, pre_run. */
  void *fp[64];
  uint32_t nch = 0;
  for (int c = 0; c < m->n_channel_groups; ++c)
    nch += (uint32_t)m->channels[c].count;
  if (m->n_fields > 64 || m->has_receptors || nch > 16) {
    fprintf(stderr, "FAIL: %s: the reference handles scalar fields and fixed channels only\n", M->label);
    return 1;
  }
  for (int f = 0; f < m->n_fields; ++f) {
    if (m->fields[f].array_len != 0) {
      fprintf(stderr, "FAIL: %s: field %s is an array\n", M->label, m->fields[f].member);
      return 1;
    }
    fp[f] = calloc(N, nestcl_field_type_size(m->fields[f].type));
  }
  for (uint32_t i = 0; i < N; ++i) {
    m->set_defaults(fp, N, i, 0);
    int k = 0;
    for (; k < M->n_settings; ++k)
      m->set_status(fp, N, i, 0, M->names[k], M->values[k]);
    nestcl_value vm = {NESTCL_DIST_NORMAL, 10.0, 5.0, 0, 0};
    m->set_status(fp, N, i, 0, "V_m", draw(&vm, NESTCL_RNG_PURPOSE_INIT, i, (uint64_t)k));
    if (m->init_buffers)
      m->init_buffers(fp, N, i, 0, H);
    m->pre_run(fp, N, i, 0, H);
  }
  int64_t *in = calloc((size_t)(STEPS + 64) * nch * N, sizeof *in);
#define IN(s, ch, i) in[((size_t)(s)*nch + (ch)) * N + (i)]
  uint64_t *rg = malloc(N * STEPS * sizeof *rg);
  int64_t *rs = malloc(N * STEPS * sizeof *rs);
  char *fired = calloc(N, 1);
  size_t nref = 0;
  const struct {
    uint32_t first, n;
    double rate, w;
    int d;
    uint32_t gen;
  } gens[2] = {{0, NA, 14000.0, 60.0 * M->wscale, 15, 0}, {NA, NB, 15000.0, 60.0 * M->wscale, 10, 1}};
  for (int s = 0; s < STEPS; ++s) {
    for (uint32_t i = 0; i < N; ++i) {
      /* Neuron i alone: its fields, and a one-slot ring holding this step's input. */
      void *fi[64];
      for (int f = 0; f < m->n_fields; ++f)
        fi[f] = (char *)fp[f] + i * nestcl_field_type_size(m->fields[f].type);
      int64_t ring[16];
      for (uint32_t ch = 0; ch < nch; ++ch)
        ring[ch] = IN(s, ch, i);
      uint32_t count[NESTCL_COUNT_WORDS] = {0};
      nestcl_spike sp[1];
      /* neuron i alone: id i, as in the engine's one-thread block (the models here draw nothing) */
      nestcl_update_args a = {1, 0, s,    0,  1,           H, 1,    nch,  ring, count, sp,
                              1, 0, NULL, 0u, (uint64_t)i, 1, NULL, NULL, NULL, NULL,  NULL};
      m->update_cpu(&a, fi);
      if (count[1]) {
        fprintf(stderr, "FAIL: %s: the reference's neuron %u failed at step %d (%u, status %d)\n", M->label, i, s,
                count[1], (int)count[4]);
        return 1;
      }
      fired[i] = count[0] > 0;
      if (fired[i]) {
        rg[nref] = i;
        rs[nref++] = s;
      }
    }
    for (int k = 0; k < 2; ++k) {
      nestcl_poisson_param pp;
      int ch;
      double value;
      if (nestcl_poisson_setup(gens[k].rate * H * 1e-3, &pp) != 0 || m->route_spike(gens[k].w, 0, 0, &ch, &value)) {
        return 1;
      }
      for (uint32_t i = gens[k].first; i < gens[k].first + gens[k].n; ++i) {
        uint32_t cnt = nestcl_rng_poisson(nestcl_rng_key(SEED, NESTCL_RNG_PURPOSE_POISSON),
                                          nestcl_rng_counter(i | ((uint64_t)gens[k].gen << 40), (uint64_t)s), pp.mu,
                                          pp.exp_neg_mu, pp.chunks);
        IN(s + gens[k].d, ch, i) += (int64_t)cnt * nestcl_fixed_from_double(value);
      }
    }
    for (size_t k = 0; k < n_syn; ++k) {
      if (fired[syns[k].src]) {
        IN(s + syns[k].d, syns[k].ch, syns[k].tgt) += nestcl_fixed_from_double(syns[k].w);
      }
    }
  }
#undef IN
  printf("%s reference: %zu synapses, %zu spikes (%.1f Hz)\n", M->label, n_syn, nref,
         nref / (double)N / (STEPS * H * 1e-3));
  int fails = 0;
  if (nref < 200) {
    fprintf(stderr, "FAIL: the %s reference network is too quiet to test anything\n", M->label);
    fails++;
  }
  struct {
    const char *name;
    int t, s;
    double a;
  } runs[] = {{"1 thread", 1, 0, 0.0}, {"2 threads", 2, 0, 0.0}, {"1 thread + 1 stream", 1, 1, 0.5}};
  for (int r = 0; r < 3; ++r) {
    uint64_t *g = NULL;
    int64_t *st = NULL;
    size_t n = 0;
    int rc = engine_run(runs[r].t, runs[r].s, runs[r].a, &g, &st, &n);
    if (rc == NESTCL_ENODEV) {
      printf("skip %s, %s: %s\n", M->label, runs[r].name, nestcl_last_error());
      continue;
    }
    if (rc) {
      fprintf(stderr, "FAIL %s, %s: %s\n", M->label, runs[r].name, nestcl_last_error());
      fails++;
      continue;
    }
    size_t k = 0;
    while (k < n && k < nref && g[k] == rg[k] && st[k] == rs[k])
      ++k;
    if (k < n || k < nref) {
      fprintf(
        stderr, "FAIL %s, %s: %zu spikes vs reference %zu; first difference at %zu: (%llu, %lld) vs (%llu, %lld)\n",
        M->label, runs[r].name, n, nref, k, k < n ? (unsigned long long)g[k] : 0ULL, k < n ? (long long)st[k] : -1LL,
        k < nref ? (unsigned long long)rg[k] : 0ULL, k < nref ? (long long)rs[k] : -1LL);
      fails++;
    } else {
      printf("%s, %s: %zu spikes, identical to the reference\n", M->label, runs[r].name, n);
    }
    free(g);
    free(st);
  }
  for (int f = 0; f < m->n_fields; ++f)
    free(fp[f]);
  free(in);
  free(rg);
  free(rs);
  free(fired);
  return fails ? 1 : 0;
}

int main(void)
{
  int fails = 0;
#ifdef NESTCL_TEST_HAVE_BUILTIN_MODELS
  /* brunel.c's iaf_psc_alpha settings; alpha currents carry e times the charge of test_lif's
     exponential ones for the same tau_syn, so weights are scaled by 3/8 (~1/e, exact in float). */
  brunel_net alpha = brunel_iaf_psc_alpha();
  const nestcl_model *iaf = NULL;
  for (int k = 0; k < nestcl_builtin_model_count; ++k) {
    if (strcmp(nestcl_builtin_models[k]->name, "iaf_psc_alpha") == 0)
      iaf = nestcl_builtin_models[k];
  }
  if (!iaf) {
    fprintf(stderr, "FAIL: nestcl_builtin_models has no iaf_psc_alpha\n");
    return 1;
  }
  ref_model ma = {"iaf_psc_alpha", nestcl_builtin_models, nestcl_builtin_model_count, iaf,
                  alpha.names,     alpha.values,          alpha.n_settings,           0.375};
  fails += check_model(&ma);
#else
  printf("note: nestcl_models not built; only test_lif is checked\n");
#endif
  ref_model ml = {"test_lif", test_lif_models, 1, &test_lif_model, NULL, NULL, 0, 1.0};
  fails += check_model(&ml);
  free(syns);
  return fails ? 1 : 0;
}
