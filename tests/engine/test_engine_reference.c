/*
 * An independent, deliberately simple serial reference for the engine: no
 * CSR, no ring, no VPs. Synapses are one flat list drawn by re-implementing
 * the keying documented in engine.h; each step updates every neuron, then
 * walks the whole synapse list for the step's spikes and adds weights into an
 * absolute-time input table [step][channel][neuron], with the same fixed-point
 * conversion (weights rounded to float first, as the engine stores them) and
 * the same Philox streams. The engine (1 thread, 2 threads, thread + stream)
 * must agree spike for spike, on a network that uses every connection rule,
 * drawn weights, drawn (heterogeneous) delays and two Poisson generators.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestcl/engine.h"
#include "nestcl_fixed.h"
#include "nestcl_philox.h"
#include "test_lif.h"

#define NA 240u
#define NB 60u
#define N (NA + NB)
#define STEPS 1000
#define H 0.1
#define SEED 777u

typedef struct syn { uint32_t src, tgt; int ch; double w; int d; } syn;

typedef struct proj_desc {
  int src_first, src_n, tgt_first, tgt_n;
  nestcl_rule rule;
  uint32_t degree;
  int autapses, multapses;
  nestcl_value w, d;
} proj_desc;

static const proj_desc P[4] = {
    {0, NA, 0, NA, NESTCL_RULE_FIXED_INDEGREE, 20, 0, 1, {NESTCL_DIST_CONSTANT, 60.0, 0, 0, 0}, {NESTCL_DIST_CONSTANT, 1.5, 0, 0, 0}},
    {0, NA, NA, NB, NESTCL_RULE_FIXED_INDEGREE, 20, 1, 0, {NESTCL_DIST_NORMAL, 60.0, 30.0, 0, 0}, {NESTCL_DIST_UNIFORM, 1.0, 3.0, 1.0, 3.0}},
    {NA, NB, 0, NA, NESTCL_RULE_FIXED_OUTDEGREE, 50, 1, 1, {NESTCL_DIST_CONSTANT, -300.0, 0, 0, 0}, {NESTCL_DIST_CONSTANT, 1.0, 0, 0, 0}},
    {NA, NB, NA, NB, NESTCL_RULE_ONE_TO_ONE, 0, 1, 1, {NESTCL_DIST_CONSTANT, -50.0, 0, 0, 0}, {NESTCL_DIST_CONSTANT, 2.0, 0, 0, 0}},
};

static double draw(const nestcl_value *v, uint32_t purpose, uint64_t id, uint64_t step)
{
  if (v->kind == NESTCL_DIST_CONSTANT) return v->a;
  nestcl_rng_stream s = nestcl_stream_init(nestcl_rng_key(SEED, purpose), nestcl_rng_counter(id, step));
  if (v->kind == NESTCL_DIST_UNIFORM) return v->a + (v->b - v->a) * nestcl_stream_uniform(&s);
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
  syns[n_syn].ch = w >= 0.0 ? 0 : 1;
  syns[n_syn].w = (double)(float)w;
  /* ms -> tics (1 us, nearest) -> steps (nearest), as NEST rounds delays */
  syns[n_syn].d = (int)((llround(d * 1000.0) + llround(H * 1000.0) / 2) / llround(H * 1000.0));
  n_syn++;
}

/* Is x among the first k entries of v? (quadratic, on purpose: no marks, no hashing) */
static int among(const uint32_t *v, uint32_t k, uint32_t x)
{
  for (uint32_t i = 0; i < k; ++i) if (v[i] == x) return 1;
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
          if ((!d->autapses && same && s == (uint32_t)t) || (!d->multapses && among(chosen, j, s))) continue;
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
          if ((!d->autapses && same && t == (uint32_t)s) || (!d->multapses && among(chosen, j, t))) continue;
          chosen[j < 64 ? j : 63] = t;
          add(p, s, j, s, t);
          ++j;
        }
      }
    } else {
      for (int k = 0; k < d->tgt_n; ++k) add(p, d->tgt_first + k, 0, d->src_first + k, d->tgt_first + k);
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
  int rc = nestcl_engine_create(&c, &e), pa, pb, rec;
  if (rc) return rc;
  nestcl_engine_set_models(e, test_lif_models, 1);
  nestcl_engine_create_population(e, "test_lif", NA, 0, &pa);
  nestcl_engine_create_population(e, "test_lif", NB, 0, &pb);
  nestcl_engine_set(e, pa, "V_m", nestcl_normal(10.0, 5.0));
  nestcl_engine_set(e, pb, "V_m", nestcl_normal(10.0, 5.0));
  for (int p = 0; p < 4 && !rc; ++p) {
    nestcl_conn_spec cs = {P[p].rule, P[p].degree, P[p].autapses, P[p].multapses};
    nestcl_syn_spec ss = {P[p].w, P[p].d, 0};
    rc = nestcl_engine_connect(e, P[p].src_first ? pb : pa, P[p].tgt_first ? pb : pa, &cs, &ss);
  }
  if (!rc) rc = nestcl_engine_add_poisson(e, pa, 14000.0, 60.0, 1.5, 0);
  if (!rc) rc = nestcl_engine_add_poisson(e, pb, 15000.0, 60.0, 1.0, 0);
  int rec_b;
  if (!rc) rc = nestcl_engine_add_spike_recorder(e, pa, 0, NA, &rec);
  if (!rc) rc = nestcl_engine_add_spike_recorder(e, pb, 0, NB, &rec_b);
  if (!rc) rc = nestcl_engine_simulate(e, STEPS * H);
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

int main(void)
{
  draw_network();
  /* State: the model's own defaults and pre_run (initialisation is not under test), V_m drawn as documented. */
  const nestcl_model *m = &test_lif_model;
  void *fp[32];
  for (int f = 0; f < m->n_fields; ++f) fp[f] = calloc(N, 8);
  for (uint32_t i = 0; i < N; ++i) {
    m->set_defaults(fp, N, i, 0);
    nestcl_value vm = {NESTCL_DIST_NORMAL, 10.0, 5.0, 0, 0};
    m->set_status(fp, N, i, 0, "V_m", draw(&vm, NESTCL_RNG_PURPOSE_INIT, i, 0));
    m->pre_run(fp, N, i, 0, H);
  }
  double *V = fp[0], *Iex = fp[1], *Iin = fp[2], *E_L = fp[11], *I_e = fp[12], *Pm = fp[13], *Pex = fp[14];
  double *Pin = fp[15], *PmI = fp[16], *Vth = fp[9], *Vreset = fp[10];
  int32_t *refr = fp[3], *refc = fp[17];
  int64_t(*in)[3][N] = calloc(STEPS + 64, sizeof *in);
  uint64_t *rg = malloc(N * STEPS * sizeof *rg);
  int64_t *rs = malloc(N * STEPS * sizeof *rs);
  char *fired = calloc(N, 1);
  size_t nref = 0;
  const struct { uint32_t first, n; double rate, w; int d; uint32_t gen; } gens[2] = {
      {0, NA, 14000.0, 60.0, 15, 0}, {NA, NB, 15000.0, 60.0, 10, 1}};
  for (int s = 0; s < STEPS; ++s) {
    for (uint32_t i = 0; i < N; ++i) {
      Iex[i] = Iex[i] * Pex[i] + nestcl_fixed_to_double(in[s][0][i]);
      Iin[i] = Iin[i] * Pin[i] + nestcl_fixed_to_double(in[s][1][i]);
      double Idc = nestcl_fixed_to_double(in[s][2][i]);
      if (refr[i] > 0) {
        refr[i] -= 1;
      } else {
        V[i] = E_L[i] + (V[i] - E_L[i]) * Pm[i] + (Iex[i] + Iin[i] + I_e[i] + Idc) * PmI[i];
      }
      fired[i] = V[i] >= Vth[i];
      if (fired[i]) {
        V[i] = Vreset[i];
        refr[i] = refc[i];
        rg[nref] = i;
        rs[nref++] = s;
      }
    }
    for (int k = 0; k < 2; ++k) {
      nestcl_poisson_param pp;
      if (nestcl_poisson_setup(gens[k].rate * H * 1e-3, &pp) != 0) {
        return 1;
      }
      for (uint32_t i = gens[k].first; i < gens[k].first + gens[k].n; ++i) {
        uint32_t cnt = nestcl_rng_poisson(nestcl_rng_key(SEED, NESTCL_RNG_PURPOSE_POISSON),
                                          nestcl_rng_counter(i | ((uint64_t)gens[k].gen << 40), (uint64_t)s), pp.mu,
                                          pp.exp_neg_mu, pp.chunks);
        in[s + gens[k].d][0][i] += (int64_t)cnt * nestcl_fixed_from_double(gens[k].w);
      }
    }
    for (size_t k = 0; k < n_syn; ++k) {
      if (fired[syns[k].src]) {
        in[s + syns[k].d][syns[k].ch][syns[k].tgt] += nestcl_fixed_from_double(syns[k].w);
      }
    }
  }
  printf("reference: %zu synapses, %zu spikes (%.1f Hz)\n", n_syn, nref, nref / (double)N / (STEPS * H * 1e-3));
  int fails = 0;
  if (nref < 200) {
    fprintf(stderr, "FAIL: the reference network is too quiet to test anything\n");
    fails++;
  }
  struct { const char *name; int t, s; double a; } runs[] = {
      {"1 thread", 1, 0, 0.0}, {"2 threads", 2, 0, 0.0}, {"1 thread + 1 stream", 1, 1, 0.5}};
  for (int r = 0; r < 3; ++r) {
    uint64_t *g = NULL;
    int64_t *st = NULL;
    size_t n = 0;
    int rc = engine_run(runs[r].t, runs[r].s, runs[r].a, &g, &st, &n);
    if (rc == NESTCL_ENODEV) {
      printf("skip %s: %s\n", runs[r].name, nestcl_last_error());
      continue;
    }
    if (rc) {
      fprintf(stderr, "FAIL %s: %s\n", runs[r].name, nestcl_last_error());
      fails++;
      continue;
    }
    size_t k = 0;
    while (k < n && k < nref && g[k] == rg[k] && st[k] == rs[k]) ++k;
    if (k < n || k < nref) {
      fprintf(stderr, "FAIL %s: %zu spikes vs reference %zu; first difference at %zu: (%llu, %lld) vs (%llu, %lld)\n",
              runs[r].name, n, nref, k, k < n ? (unsigned long long)g[k] : 0ULL, k < n ? (long long)st[k] : -1LL,
              k < nref ? (unsigned long long)rg[k] : 0ULL, k < nref ? (long long)rs[k] : -1LL);
      fails++;
    } else {
      printf("%s: %zu spikes, identical to the reference\n", runs[r].name, n);
    }
    free(g);
    free(st);
  }
  return fails ? 1 : 0;
}
