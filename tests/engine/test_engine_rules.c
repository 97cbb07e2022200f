/*
 * The connection rules that the microcircuit needs (issue 12), on the CPU
 * VPs' host CSR (read through the engine's internal layout, which the public
 * API does not expose for static synapses): fixed_total_number gives exactly
 * N synapses, spread over the targets as N uniform draws (in-degree variance
 * over mean near 1), autapses off means none; pairwise_bernoulli gives
 * p n_s n_t synapses within 4 standard deviations, no multapses, no
 * autapses; weights and delays from normals redrawn into [lo, hi] (NEST's
 * redraw) stay there, including an upper bound of infinity; and every
 * synapse (source, target, weight, delay) is the same for 1, 2 and 3 CPU VPs.
 * Bad specs are refused: fixed_total_number without multapses, p outside
 * [0, 1], a redraw range the normal cannot reach, and one it reaches too
 * rarely (1000 draws outside: NEST's limit) fails the build with a message.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "nestcl_core.h"

#define NA 1000u
#define NB 700u
#define N_AB 50000u
#define N_BB 20000u
#define P_AA 0.05

typedef struct syn {
  uint64_t src, tgt;
  double w;
  uint32_t d, ch;
} syn;

static int cmp_syn(const void *a, const void *b)
{
  const syn *x = a, *y = b;
  if (x->src != y->src)
    return x->src < y->src ? -1 : 1;
  if (x->tgt != y->tgt)
    return x->tgt < y->tgt ? -1 : 1;
  if (x->w != y->w)
    return x->w < y->w ? -1 : 1;
  if (x->d != y->d)
    return x->d < y->d ? -1 : 1;
  return x->ch < y->ch ? -1 : x->ch > y->ch;
}

static int failures;
#define CHECK(c, ...)                                                                                                  \
  do {                                                                                                                 \
    if (!(c)) {                                                                                                        \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                             \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fputc('\n', stderr);                                                                                             \
      failures++;                                                                                                      \
    }                                                                                                                  \
  } while (0)

static int describe(nestcl_engine *e, int *a, int *b)
{
  int rc = nestcl_engine_set_models(e, nestcl_builtin_models, nestcl_builtin_model_count);
  if (!rc)
    rc = nestcl_engine_create_population(e, "iaf_psc_alpha", NA, 0, a);
  if (!rc)
    rc = nestcl_engine_create_population(e, "iaf_psc_alpha", NB, 0, b);
  nestcl_conn_spec ab = {NESTCL_RULE_FIXED_TOTAL_NUMBER, 0, 1, 1, N_AB, 0.0};
  nestcl_conn_spec bb = {NESTCL_RULE_FIXED_TOTAL_NUMBER, 0, 0, 1, N_BB, 0.0};
  nestcl_conn_spec aa = {NESTCL_RULE_PAIRWISE_BERNOULLI, 0, 0, 0, 0, P_AA};
  /* Weights tell the projections apart: A->B positive, B->B negative, A->A exactly 3. */
  nestcl_syn_spec sab = {nestcl_normal_clipped(10.0, 5.0, 0.0, INFINITY),
                         nestcl_normal_clipped(1.5, 0.75, 0.05, INFINITY), 0};
  nestcl_syn_spec sbb = {nestcl_normal_clipped(-40.0, 4.0, -INFINITY, 0.0),
                         nestcl_normal_clipped(0.75, 0.375, 0.05, INFINITY), 0};
  nestcl_syn_spec saa = {nestcl_constant(3.0), nestcl_constant(1.0), 0};
  if (!rc)
    rc = nestcl_engine_connect(e, *a, *b, &ab, &sab);
  if (!rc)
    rc = nestcl_engine_connect(e, *b, *b, &bb, &sbb);
  if (!rc)
    rc = nestcl_engine_connect(e, *a, *a, &aa, &saa);
  return rc;
}

/* Every synapse of the network built with `threads` CPU VPs, sorted. */
static syn *collect(int threads, size_t *n, int *max_delay)
{
  nestcl_engine_config cfg;
  nestcl_engine_config_defaults(&cfg);
  cfg.seed = 777;
  cfg.cpu_threads = threads;
  cfg.gpu_streams = 0;
  cfg.gpu_fraction = 0.0;
  nestcl_engine *e = NULL;
  int a, b;
  int rc = nestcl_engine_create(&cfg, &e);
  if (!rc)
    rc = describe(e, &a, &b);
  if (!rc)
    rc = nestcl_engine_prepare(e);
  if (rc) {
    fprintf(stderr, "FAIL: build with %d threads: %s\n", threads, nestcl_last_error());
    nestcl_engine_destroy(e);
    failures++;
    return NULL;
  }
  nestcl_engine_stats st;
  nestcl_engine_get_stats(e, &st);
  *max_delay = st.max_delay_steps;
  syn *out = calloc((size_t)st.synapses + 1, sizeof *out); /* calloc: no padding bytes left to memcmp */
  size_t k = 0;
  for (int v = 0; v < e->n_vps && out; ++v) {
    for (int p = 0; p < e->desc.n_pops; ++p) {
      const eng_block *bl = &e->vps[v].blocks[p];
      for (uint64_t s = 0; s < e->desc.n_global && bl->row_ptr; ++s) {
        for (uint64_t q = bl->row_ptr[s]; q < bl->row_ptr[s + 1]; ++q) {
          out[k].src = s;
          out[k].tgt = bl->first_gid + (bl->target[q] & NESTCL_TARGET_INDEX_MASK);
          out[k].w =
            cfg.weight_type == NESTCL_WEIGHT_DOUBLE ? ((const double *)bl->weight)[q] : ((const float *)bl->weight)[q];
          out[k].ch =
            bl->target[q] >> NESTCL_TARGET_INDEX_BITS; /* iaf_psc_alpha: 1 excitatory, 0 inhibitory (signed) */
          out[k].d = bl->delay ? bl->delay[q] : bl->delay_hom;
          k++;
        }
      }
    }
  }
  CHECK(k == st.synapses, "%zu synapses walked, the engine counts %llu", k, (unsigned long long)st.synapses);
  nestcl_engine_destroy(e);
  qsort(out, k, sizeof *out, cmp_syn);
  *n = k;
  return out;
}

static void check_counts(const syn *s, size_t n)
{
  size_t ab = 0, bb = 0, aa = 0, auto_bb = 0, auto_aa = 0, multi_aa = 0, neg_ab = 0, pos_bb = 0, short_d = 0;
  double wsum = 0.0;
  uint32_t indeg[NB] = {0};
  for (size_t k = 0; k < n; ++k) {
    int src_a = s[k].src < NA, tgt_a = s[k].tgt < NA;
    short_d += s[k].d < 1;
    if (src_a && !tgt_a) {
      ab++;
      wsum += s[k].w;
      neg_ab += s[k].w < 0.0 || s[k].ch != 1;
      indeg[s[k].tgt - NA]++;
    } else if (!src_a && !tgt_a) {
      bb++;
      auto_bb += s[k].src == s[k].tgt;
      pos_bb += s[k].w > 0.0 || s[k].ch != 0;
    } else if (src_a && tgt_a) {
      aa++;
      auto_aa += s[k].src == s[k].tgt;
      multi_aa += k > 0 && s[k - 1].src == s[k].src && s[k - 1].tgt == s[k].tgt;
    }
  }
  CHECK(ab == N_AB, "fixed_total_number A->B: %zu synapses, want exactly %u", ab, N_AB);
  CHECK(bb == N_BB, "fixed_total_number B->B: %zu synapses, want exactly %u", bb, N_BB);
  CHECK(auto_bb == 0, "fixed_total_number B->B with autapses off: %zu autapses", auto_bb);
  double mean = (double)N_AB / NB, var = 0.0;
  for (uint32_t i = 0; i < NB; ++i)
    var += ((double)indeg[i] - mean) * ((double)indeg[i] - mean);
  var /= NB - 1;
  /* N uniform targets: multinomial in-degrees, variance / mean = 1 - 1/NB; sd of the ratio about sqrt(2/NB). */
  CHECK(var / mean > 0.8 && var / mean < 1.2, "fixed_total_number in-degrees: variance/mean %.3f, want near 1",
        var / mean);
  double expect = P_AA * NA * (NA - 1.0), sd = sqrt(expect * (1.0 - P_AA));
  CHECK(fabs((double)aa - expect) <= 4.0 * sd, "pairwise_bernoulli: %zu synapses, expected %.0f +- 4 x %.1f", aa,
        expect, sd);
  CHECK(auto_aa == 0 && multi_aa == 0, "pairwise_bernoulli: %zu autapses, %zu multapses", auto_aa, multi_aa);
  /* normal(10, 5) redrawn into [0, inf): mean 10 + 5 phi(2) / Phi(2) = 10.28. */
  CHECK(neg_ab == 0 && pos_bb == 0, "redraw: %zu negative A->B and %zu positive B->B weights", neg_ab, pos_bb);
  CHECK(fabs(wsum / (double)ab - 10.28) < 0.1, "redrawn A->B weights: mean %.3f, want 10.28", wsum / (double)ab);
  CHECK(short_d == 0, "%zu delays below one step", short_d);
  fprintf(stderr, "rules: A->B %zu, B->B %zu, A->A %zu (expected %.0f +- %.0f), in-degree var/mean %.3f\n", ab, bb, aa,
          expect, sd, var / mean);
}

static void check_refused(void)
{
  nestcl_engine_config cfg;
  nestcl_engine_config_defaults(&cfg);
  nestcl_engine *e = NULL;
  int a;
  if (nestcl_engine_create(&cfg, &e) ||
      nestcl_engine_set_models(e, nestcl_builtin_models, nestcl_builtin_model_count) ||
      nestcl_engine_create_population(e, "iaf_psc_alpha", 100, 0, &a)) {
    CHECK(0, "setup: %s", nestcl_last_error());
    nestcl_engine_destroy(e);
    return;
  }
  nestcl_syn_spec s = {nestcl_constant(1.0), nestcl_constant(1.0), 0};
  nestcl_conn_spec c = {NESTCL_RULE_FIXED_TOTAL_NUMBER, 0, 1, 0, 10, 0.0};
  CHECK(nestcl_engine_connect(e, a, a, &c, &s) == NESTCL_EINVAL && strstr(nestcl_last_error(), "multapses"),
        "fixed_total_number without multapses accepted");
  nestcl_conn_spec pb = {NESTCL_RULE_PAIRWISE_BERNOULLI, 0, 1, 0, 0, 1.5};
  CHECK(nestcl_engine_connect(e, a, a, &pb, &s) == NESTCL_EINVAL && strstr(nestcl_last_error(), "p = 1.5"),
        "pairwise_bernoulli p = 1.5 accepted");
  nestcl_conn_spec ok = {NESTCL_RULE_PAIRWISE_BERNOULLI, 0, 1, 0, 0, 0.1};
  nestcl_syn_spec never = {nestcl_normal_clipped(0.0, 1.0, 50.0, 60.0), nestcl_constant(1.0), 0};
  CHECK(nestcl_engine_connect(e, a, a, &ok, &never) == NESTCL_EINVAL && strstr(nestcl_last_error(), "never draws"),
        "a redraw range out of the normal's reach accepted");
  nestcl_syn_spec negd = {nestcl_constant(1.0), nestcl_normal_clipped(1.0, 0.5, -1.0, INFINITY), 0};
  CHECK(nestcl_engine_connect(e, a, a, &ok, &negd) == NESTCL_EINVAL && strstr(nestcl_last_error(), "negative"),
        "a delay that can be negative accepted");
  /* Reachable (|z| < 12) but rarer than 1e-15: NEST's redraw gives up after 1000 draws, so does the build. */
  nestcl_syn_spec rare = {nestcl_normal_clipped(0.0, 1.0, 8.5, 9.0), nestcl_constant(1.0), 0};
  CHECK(nestcl_engine_connect(e, a, a, &ok, &rare) == 0, "rare redraw range refused: %s", nestcl_last_error());
  int rc = nestcl_engine_prepare(e);
  CHECK(rc == NESTCL_EINVAL && strstr(nestcl_last_error(), "1000 draws"), "redraw limit: rc %d, '%s'", rc,
        nestcl_last_error());
  nestcl_engine_destroy(e);
}

/*
 * A connection's delay is rounded as NEST's Time::delay_ms_to_steps does, floor(ms * 10 + 0.5) at 0.1 ms,
 * not through tics first (which takes [x.x4995, x.x5) ms one step up), and a drawn delay is what the
 * synapse gets: of the delays the microcircuit's normal draws, about 0.5 % lie in such a band.
 */
static void check_delay_rounding(void)
{
  static const struct {
    double ms;
    int64_t nest;
  } cases[] = {{0.14996, 1}, {1.04999, 10}, {1.5, 15}, {0.05, 1}, {0.04999, 0}, {0.15, 2}, {0.25, 3}, {2.34995, 23}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    int64_t got = eng_delay_ms_to_steps(cases[i].ms, 0.1);
    double want = floor(cases[i].ms * (1.0 / 0.1) + 0.5);
    CHECK(got == cases[i].nest && (double)got == want, "delay %.5f ms: %lld steps, NEST %lld", cases[i].ms,
          (long long)got, (long long)cases[i].nest);
  }
  /* The tics route differs there: the check above could fail. */
  CHECK(eng_ms_to_steps(0.14996, 0.1) == 2, "Time(ms) of 0.14996: %lld steps",
        (long long)eng_ms_to_steps(0.14996, 0.1));
}

int main(void)
{
  check_delay_rounding();
  size_t n1 = 0, n2 = 0, n3 = 0;
  int d1 = 0, d2 = 0, d3 = 0;
  syn *s1 = collect(1, &n1, &d1);
  syn *s2 = collect(2, &n2, &d2);
  syn *s3 = collect(3, &n3, &d3);
  if (s1)
    check_counts(s1, n1);
  CHECK(s1 && s2 && s3 && n1 == n2 && n1 == n3 && memcmp(s1, s2, n1 * sizeof *s1) == 0 &&
          memcmp(s1, s3, n1 * sizeof *s1) == 0,
        "the synapses differ between 1, 2 and 3 VPs (%zu, %zu, %zu)", n1, n2, n3);
  /* The ring reaches the furthest delay the clipped normal can draw: 1.5 + 12.01 x 0.75 ms. */
  CHECK(d1 == 105 && d2 == 105 && d3 == 105, "max_delay %d %d %d steps, want 105", d1, d2, d3);
  free(s1);
  free(s2);
  free(s3);
  check_refused();
  if (failures) {
    fprintf(stderr, "%d failure(s)\n", failures);
    return 1;
  }
  fprintf(stderr, "engine_rules: ok\n");
  return 0;
}
