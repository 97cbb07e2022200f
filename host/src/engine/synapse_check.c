/*
 * Checksums of the built synapses (nestcl_engine_synapse_checksums, issue 40):
 * what shows that a build drew the same network on any number of build
 * threads, on the host or on the device, and on any split. Each sum runs over
 * the synapses as a multiset, keyed by global ids, so it does not depend on
 * which VP, block or row slot holds a synapse; the layout hash follows the
 * arrays in their order and so compares builds of one split. The arrays come
 * through the checkpoint's views (checkpoint.c): a thread's own, a stream's
 * read back from its device.
 */
#include <stdlib.h>
#include <string.h>

#include "checkpoint_internal.h"
#include "engine_internal.h"
#include "core/nestcl_core.h"

static uint64_t mix64(uint64_t x)
{
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* One synapse into an entry: its source, (target, channel), weight and delay, each keyed by the pair. */
static void add_synapse(nestcl_synapse_checksum *c, uint64_t src, uint64_t tgt, uint32_t channel, double w,
                        uint32_t delay)
{
  uint64_t bits;
  memcpy(&bits, &w, sizeof bits);
  uint64_t pair = mix64(src << 32 ^ tgt);
  c->synapses++;
  c->sources += mix64(src ^ 0x5bd1e995u);
  c->targets += mix64(((uint64_t)channel << 40 | tgt) ^ mix64(src));
  c->weights += mix64(bits ^ pair);
  c->delays += mix64((uint64_t)delay ^ mix64(pair ^ 0x9e3779b97f4a7c15ull));
  c->layout = mix64(c->layout ^ mix64(tgt ^ (uint64_t)channel << 40) ^ bits ^ ((uint64_t)delay << 48));
}

/* The population of global id g. */
static int pop_of(const nestcl_engine *e, uint64_t g)
{
  for (int p = 0; p < e->desc.n_pops; ++p) {
    if (g >= e->desc.pops[p].first && g < e->desc.pops[p].first + e->desc.pops[p].n) {
      return p;
    }
  }
  return -1;
}

/* The entries: one per (source, target) population pair of static synapses, then one per plastic projection. */
static int make_entries(const nestcl_engine *e, nestcl_synapse_checksum *all, int *pair_entry)
{
  int n = 0, P = e->desc.n_pops;
  for (int k = 0; k < P * P; ++k) {
    pair_entry[k] = -1;
  }
  for (int q = 0; q < e->desc.n_projs; ++q) {
    const eng_projection *pr = &e->desc.projs[q];
    if (!pr->sm && pair_entry[pr->src * P + pr->tgt] >= 0) {
      continue;
    }
    nestcl_synapse_checksum *c = &all[n];
    memset(c, 0, sizeof *c);
    c->proj = pr->sm ? q : -1;
    c->source_pop = pr->src;
    c->target_pop = pr->tgt;
    if (!pr->sm) {
      pair_entry[pr->src * P + pr->tgt] = n;
    }
    n++;
  }
  return n;
}

/* Block b's synapses (its view v) into the entries. */
static void add_block(const nestcl_engine *e, const eng_block *b, const blk_view *v, nestcl_synapse_checksum *all,
                      const int *pair_entry)
{
  int wd = e->desc.cfg.weight_type == NESTCL_WEIGHT_DOUBLE;
  for (uint64_t s = 0; b->nnz && s < e->desc.n_global; ++s) {
    if (v->row_ptr[s] == v->row_ptr[s + 1]) {
      continue;
    }
    int sp = pop_of(e, s);
    int k = sp >= 0 ? pair_entry[sp * e->desc.n_pops + b->pop] : -1;
    nestcl_synapse_checksum *c = k >= 0 ? &all[k] : NULL;
    for (uint64_t at = v->row_ptr[s]; c && at < v->row_ptr[s + 1]; ++at) {
      uint32_t t = v->target[at];
      double w = wd ? ((const double *)v->weight)[at] : (double)((const float *)v->weight)[at];
      add_synapse(c, s, b->first_gid + (t & NESTCL_TARGET_INDEX_MASK), t >> NESTCL_TARGET_INDEX_BITS, w,
                  v->delay ? v->delay[at] : b->delay_hom);
    }
  }
  for (int j = 0; j < b->n_plastic; ++j) {
    const eng_plastic *pl = &b->plastic[j];
    const pl_view *pv = &v->pl[j];
    const eng_syn_layout *L = &e->desc.projs[pl->proj].lay;
    int k = 0;
    while (all[k].proj != pl->proj) {
      k++; /* make_entries gave every plastic projection one */
    }
    nestcl_synapse_checksum *c = &all[k];
    for (uint32_t r = 0; r < pl->n_rows; ++r) {
      for (uint64_t at = pl->row_ptr[r]; at < pl->row_ptr[r + 1]; ++at) {
        double w;
        memcpy(&w, pv->state + L->weight_off * pl->nnz + at * sizeof w, sizeof w);
        add_synapse(c, pl->src_first + r, b->first_gid + pv->target[at], 0, w,
                    pv->delay ? pv->delay[at] : pl->delay_hom);
      }
    }
  }
}

int nestcl_engine_synapse_checksums(nestcl_engine *e, nestcl_synapse_checksum *out, int cap, int *n)
{
  if (!e || !n || (cap > 0 && !out)) {
    return nestcl_set_error(NESTCL_EINVAL, "null argument");
  }
  if (!e->built) {
    return nestcl_set_error(NESTCL_EINVAL,
                            "synapse_checksums: the network is not built yet (simulate or prepare first)");
  }
  int P = e->desc.n_pops;
  nestcl_synapse_checksum *all = calloc((size_t)e->desc.n_projs + 1, sizeof *all);
  int *pair_entry = malloc((size_t)P * (size_t)P * sizeof *pair_entry);
  if (!all || !pair_entry) {
    free(all);
    free(pair_entry);
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  int count = make_entries(e, all, pair_entry), rc = 0;
  for (int v = 0; v < e->n_vps && !rc; ++v) {
    for (int p = 0; p < P && !rc; ++p) {
      eng_block *b = &e->vps[v].blocks[p];
      blk_view view;
      rc = eng_ck_view_open(e, &e->vps[v], b, 1, &view);
      if (!rc) {
        add_block(e, b, &view, all, pair_entry);
      }
      eng_ck_view_drop_history(b, &view);
      eng_ck_view_free(e, b, &view);
    }
  }
  /* Over every rank: the multisets add up; the layouts are combined in rank order. */
  rc = eng_agree(e, rc);
  for (int k = 0; k < count && !rc; ++k) {
    uint64_t sums[5] = {all[k].synapses, all[k].sources, all[k].targets, all[k].weights, all[k].delays};
    eng_mpi_allreduce(e, sums, 5, ENG_MPI_U64, ENG_MPI_SUM);
    uint64_t layout = mix64(all[k].layout + (uint64_t)e->exchange.rank);
    eng_mpi_allreduce(e, &layout, 1, ENG_MPI_U64, ENG_MPI_SUM);
    all[k].synapses = sums[0];
    all[k].sources = sums[1];
    all[k].targets = sums[2];
    all[k].weights = sums[3];
    all[k].delays = sums[4];
    all[k].layout = layout;
  }
  for (int k = 0; k < count && k < cap && !rc; ++k) {
    out[k] = all[k];
  }
  *n = count;
  free(all);
  free(pair_entry);
  return rc;
}
