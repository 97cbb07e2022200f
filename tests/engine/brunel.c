/* The engine tests' Brunel network (see brunel.h). */
#include <stdio.h>
#include <string.h>

#include "brunel.h"
#include "test_lif.h"

int brunel_run(const nestcl_engine_config *cfg, uint32_t n_neurons, uint32_t indegree, const double *pieces,
               int n_pieces, brunel_result *out)
{
  memset(out, 0, sizeof *out);
  nestcl_engine *e;
  int rc = nestcl_engine_create(cfg, &e);
  if (rc) {
    return rc;
  }
  uint32_t NE = n_neurons * 4 / 5, NI = n_neurons - NE;
  uint32_t CE = indegree * 4 / 5, CI = indegree - CE;
  int pe, pi, rec;
  nestcl_engine_set_models(e, test_lif_models, 1);
  rc = nestcl_engine_create_population(e, "test_lif", NE, 0, &pe);
  if (!rc) rc = nestcl_engine_create_population(e, "test_lif", NI, 0, &pi);
  for (int k = 0; k < 2 && !rc; ++k) {
    int p = k ? pi : pe;
    rc = nestcl_engine_set(e, p, "V_m", nestcl_normal(10.0, 5.0));
  }
  nestcl_conn_spec c = {NESTCL_RULE_FIXED_INDEGREE, CE, 0, 1};
  nestcl_syn_spec se = {nestcl_constant(60.0), nestcl_constant(1.5), 0};
  nestcl_syn_spec si = {nestcl_constant(-5.0 * 60.0), nestcl_constant(1.5), 0};
  if (!rc) rc = nestcl_engine_connect(e, pe, pe, &c, &se);
  if (!rc) rc = nestcl_engine_connect(e, pe, pi, &c, &se);
  c.degree = CI;
  if (!rc) rc = nestcl_engine_connect(e, pi, pe, &c, &si);
  if (!rc) rc = nestcl_engine_connect(e, pi, pi, &c, &si);
  if (!rc) rc = nestcl_engine_add_poisson(e, pe, 14000.0, 60.0, 1.5, 0);
  if (!rc) rc = nestcl_engine_add_poisson(e, pi, 14000.0, 60.0, 1.5, 0);
  if (!rc) rc = nestcl_engine_add_spike_recorder(e, pe, 0, NE, &rec);
  int rec_i;
  if (!rc) rc = nestcl_engine_add_spike_recorder(e, pi, 0, NI, &rec_i);
  for (int k = 0; k < n_pieces && !rc; ++k) {
    rc = nestcl_engine_simulate(e, pieces[k]);
  }
  if (!rc) {
    const uint64_t *g, *g2;
    const int64_t *s, *s2;
    size_t n, n2;
    nestcl_engine_spikes(e, rec, &g, &s, &n);
    nestcl_engine_spikes(e, rec_i, &g2, &s2, &n2);
    out->gids = malloc((n + n2 + 1) * sizeof *out->gids);
    out->steps = malloc((n + n2 + 1) * sizeof *out->steps);
    /* Merge E and I trains by (step, gid), as one network-wide train. */
    size_t a = 0, b = 0;
    while (a < n || b < n2) {
      int take_a = b >= n2 || (a < n && (s[a] < s2[b] || (s[a] == s2[b] && g[a] < g2[b])));
      out->gids[out->n] = take_a ? g[a] : g2[b];
      out->steps[out->n] = take_a ? s[a] : s2[b];
      out->n++;
      if (take_a) a++; else b++;
    }
    nestcl_engine_get_stats(e, &out->st);
    out->st.vps = NULL;
  }
  nestcl_engine_destroy(e);
  return rc;
}

void brunel_free(brunel_result *r)
{
  free(r->gids);
  free(r->steps);
  memset(r, 0, sizeof *r);
}

int brunel_compare(const char *what, const brunel_result *a, const brunel_result *b)
{
  size_t n = a->n < b->n ? a->n : b->n;
  for (size_t k = 0; k < n; ++k) {
    if (a->gids[k] != b->gids[k] || a->steps[k] != b->steps[k]) {
      fprintf(stderr, "FAIL %s: spike %zu differs: (%llu, %lld) vs (%llu, %lld)\n", what, k,
              (unsigned long long)a->gids[k], (long long)a->steps[k], (unsigned long long)b->gids[k],
              (long long)b->steps[k]);
      return 1;
    }
  }
  if (a->n != b->n) {
    fprintf(stderr, "FAIL %s: %zu vs %zu spikes\n", what, a->n, b->n);
    return 1;
  }
  return 0;
}
