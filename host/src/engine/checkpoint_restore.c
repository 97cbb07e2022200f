/*
 * Applying a checkpoint (nestcl_engine_restore; checkpoint.c describes the
 * whole): the network rebuilt from its description, its synapses checked
 * against the files, then the clock, the neurons' fields, the rings, the
 * plastic synapses' state and the spike histories overwritten.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint_internal.h"
#include "core/nestcl_core.h"

static int mismatch(const char *what)
{
  return nestcl_set_error(NESTCL_EINVAL,
                          "restore: the rebuilt network's %s do not match the checkpoint's (another nestcl version "
                          "or a corrupt file?); the checkpoint is refused",
                          what);
}

static uint64_t mix64(uint64_t x)
{
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static uint64_t syn_hash(uint64_t src, uint64_t tgt, uint32_t ch, uint32_t delay, double w)
{
  uint64_t bits;
  memcpy(&bits, &w, 8);
  return mix64(mix64(mix64(src * 0x9e3779b97f4a7c15ull ^ tgt) ^ ((uint64_t)ch << 32 | delay)) ^ bits);
}

/* The static synapses onto this rank's neurons: the files' against the rebuilt CSR, as multisets. */
static int verify_static(nestcl_engine *e, const ck_set *s, blk_view *views)
{
  const int P = e->desc.n_pops;
  uint64_t n_built = 0, h_built = 0, n_file = 0, h_file = 0;
  int wd = e->desc.cfg.weight_type == NESTCL_WEIGHT_DOUBLE;
  for (int v = 0; v < e->n_vps; ++v) {
    for (int p = 0; p < P; ++p) {
      const eng_block *b = &e->vps[v].blocks[p];
      const blk_view *bv = &views[v * P + p];
      if (b->nnz == 0) {
        continue;
      }
      for (uint64_t src = 0; src < e->desc.n_global; ++src) {
        for (uint64_t k = bv->row_ptr[src]; k < bv->row_ptr[src + 1]; ++k) {
          uint32_t t = bv->target[k];
          double w = wd ? ((const double *)bv->weight)[k] : (double)((const float *)bv->weight)[k];
          h_built += syn_hash(src, b->first_gid + (t & NESTCL_TARGET_INDEX_MASK), t >> NESTCL_TARGET_INDEX_BITS,
                              bv->delay ? bv->delay[k] : b->delay_hom, w);
          n_built++;
        }
      }
    }
  }
  /* Local targets: the rank's range of each population. */
  for (int k = 0; k < s->n; ++k) {
    const ck_file *f = &s->f[k];
    const ck_section *c = eng_ck_find_section(f, TAG_CSRS, 0);
    const unsigned char *d = f->data + c->offset;
    for (uint64_t q = 0; q < c->count; ++q, d += CSR_REC) {
      uint64_t tgt = get_u64(d + 8);
      int local = 0;
      for (int p = 0; p < P && !local; ++p) {
        uint64_t first, n;
        eng_ck_rank_range(e, p, &first, &n);
        local = tgt >= first && tgt < first + n;
      }
      if (local) {
        h_file += syn_hash(get_u64(d), tgt, get_u32(d + 16), get_u32(d + 20), get_f64(d + 24));
        n_file++;
      }
    }
  }
  if (n_built != n_file || h_built != h_file) {
    char what[200];
    snprintf(what, sizeof what, "static synapses (%llu rebuilt, %llu in the checkpoint)", (unsigned long long)n_built,
             (unsigned long long)n_file);
    return mismatch(what);
  }
  return 0;
}

typedef struct keyed {
  uint64_t key; /* source gid << 32 | target gid */
  uint64_t a, b; /* tie-break and payload */
} keyed;

static int cmp_keyed(const void *x, const void *y)
{
  const keyed *p = x, *q = y;
  if (p->key != q->key)
    return p->key < q->key ? -1 : 1;
  if (p->a != q->a)
    return p->a < q->a ? -1 : 1;
  return p->b < q->b ? -1 : (p->b > q->b);
}

/* The files' PLAS records of projection j whose target is one of the rank's neurons [first, first + n), keyed into
   fk when fk is not NULL; returns their count. */
static size_t plas_file_keys(const ck_set *s, int j, size_t rec, uint64_t first, uint64_t n, keyed *fk)
{
  size_t m = 0;
  for (int k = 0; k < s->n; ++k) {
    const ck_section *c = eng_ck_find_section(&s->f[k], TAG_PLAS, (uint32_t)j);
    const unsigned char *d = s->f[k].data + c->offset;
    for (uint64_t q = 0; q < c->count; ++q, d += rec) {
      uint64_t src = get_u64(d), tgt = get_u64(d + 8);
      if (tgt >= first && tgt < first + n) {
        if (fk)
          fk[m] = (keyed){src << 32 | tgt, (uint64_t)k << 40 | q, (uint64_t)(uintptr_t)d};
        m++;
      }
    }
  }
  return m;
}

/* The rebuilt synapses of projection j on this rank, keyed into bk when bk is not NULL; returns their count. */
static size_t plas_built_keys(const nestcl_engine *e, const blk_view *views, int j, keyed *bk)
{
  const int P = e->desc.n_pops;
  const eng_projection *pr = &e->desc.projs[j];
  size_t m = 0;
  for (int v = 0; v < e->n_vps; ++v) {
    const eng_block *b = &e->vps[v].blocks[pr->tgt];
    for (int q = 0; q < b->n_plastic; ++q) {
      const eng_plastic *pl = &b->plastic[q];
      if (pl->proj != j) {
        continue;
      }
      if (!bk) {
        m += pl->nnz;
        continue;
      }
      const pl_view *pv = &views[v * P + pr->tgt].pl[q];
      for (uint32_t r = 0; r < pl->n_rows; ++r) {
        for (uint64_t k = pl->row_ptr[r]; k < pl->row_ptr[r + 1]; ++k) {
          bk[m++] =
            (keyed){(pl->src_first + r) << 32 | (b->first_gid + pv->target[k]), (uint64_t)q << 40 | k, (uint64_t)v};
        }
      }
    }
  }
  return m;
}

/* The sorted keys pair up one to one with equal delays: each rebuilt synapse takes its record's state. */
static int plas_pair(nestcl_engine *e, blk_view *views, int j, const keyed *fk, const keyed *bk, size_t n_built)
{
  const int P = e->desc.n_pops;
  const eng_projection *pr = &e->desc.projs[j];
  const eng_syn_layout *L = &pr->lay;
  for (size_t i = 0; i < n_built; ++i) {
    const unsigned char *d = (const unsigned char *)(uintptr_t)fk[i].b;
    int v = (int)bk[i].b, q = (int)(bk[i].a >> 40);
    uint64_t k = bk[i].a & ((1ull << 40) - 1);
    const eng_plastic *pl = &e->vps[v].blocks[pr->tgt].plastic[q];
    pl_view *pv = &views[v * P + pr->tgt].pl[q];
    uint32_t delay = pv->delay ? pv->delay[k] : pl->delay_hom;
    if (fk[i].key != bk[i].key || get_u32(d + 16) != delay) {
      char what[200];
      snprintf(what, sizeof what, "synapses of projection %d (source %llu, target %llu)", j,
               (unsigned long long)(bk[i].key >> 32), (unsigned long long)(bk[i].key & 0xffffffffu));
      return mismatch(what);
    }
    size_t at = 24;
    for (int f = 0; f < L->n_state; ++f) {
      size_t z = eng_syn_field_size(&pr->sm->fields[L->state_f[f]]);
      memcpy(pv->state + L->state_off[f] * pl->nnz + k * z, d + at, z);
      at += z;
    }
  }
  return 0;
}

/*
 * The per-synapse state of projection j onto this rank: the files' records of
 * its targets and the rebuilt synapses, both sorted by (source, target, k-th
 * occurrence in build order: multapses keep their draw order in every split),
 * must pair up one to one with equal delays; each synapse then takes its
 * record's state.
 */
static int restore_syn_state(nestcl_engine *e, const ck_set *s, blk_view *views, int j)
{
  const eng_projection *pr = &e->desc.projs[j];
  size_t rec = eng_ck_plas_rec_bytes(pr);
  uint64_t first, n;
  eng_ck_rank_range(e, pr->tgt, &first, &n);
  size_t n_file = plas_file_keys(s, j, rec, first, n, NULL), n_built = plas_built_keys(e, views, j, NULL);
  if (n_file != n_built) {
    char what[200];
    snprintf(what, sizeof what, "synapses of projection %d (%zu rebuilt, %zu in the checkpoint)", j, n_built, n_file);
    return mismatch(what);
  }
  keyed *fk = malloc((n_file ? n_file : 1) * sizeof *fk), *bk = malloc((n_built ? n_built : 1) * sizeof *bk);
  if (!fk || !bk) {
    free(fk);
    free(bk);
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  plas_file_keys(s, j, rec, first, n, fk);
  plas_built_keys(e, views, j, bk);
  qsort(fk, n_file, sizeof *fk, cmp_keyed);
  qsort(bk, n_built, sizeof *bk, cmp_keyed);
  int rc = plas_pair(e, views, j, fk, bk, n_built);
  free(fk);
  free(bk);
  return rc;
}

/* The per-source state of projection j by source row: from any file's record of the row. */
static int restore_src_state(nestcl_engine *e, const ck_set *s, blk_view *views, int j)
{
  const int P = e->desc.n_pops;
  const eng_projection *pr = &e->desc.projs[j];
  const eng_syn_layout *L = &pr->lay;
  int rc = 0;
  uint32_t n_rows = e->desc.pops[pr->src].n;
  const unsigned char **row = calloc(n_rows ? n_rows : 1, sizeof *row);
  if (!row) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  size_t srec = eng_ck_psrc_rec_bytes(pr);
  uint64_t src_first = e->desc.pops[pr->src].first;
  for (int k = 0; k < s->n && !rc; ++k) {
    const ck_section *c = eng_ck_find_section(&s->f[k], TAG_PSRC, (uint32_t)j);
    const unsigned char *d = s->f[k].data + c->offset;
    for (uint64_t q = 0; q < c->count; ++q, d += srec) {
      uint64_t g = get_u64(d);
      if (g < src_first || g - src_first >= n_rows) {
        rc = eng_ck_bad_file(&s->f[k], "a per-source record names a neuron outside its population (corrupt)");
        break;
      }
      if (!row[g - src_first]) {
        row[g - src_first] = d + 8;
      }
    }
  }
  for (int v = 0; v < e->n_vps && !rc; ++v) {
    const eng_block *b = &e->vps[v].blocks[pr->tgt];
    for (int q = 0; q < b->n_plastic && !rc; ++q) {
      const eng_plastic *pl = &b->plastic[q];
      pl_view *pv = &views[v * P + pr->tgt].pl[q];
      for (uint32_t r = 0; pl->proj == j && r < pl->n_rows && !rc; ++r) {
        if (pl->row_ptr[r + 1] == pl->row_ptr[r]) {
          continue;
        }
        if (!row[r]) {
          rc = mismatch("per-source synapse state (a source row without its record)");
          break;
        }
        size_t at = 0;
        for (int f = 0; f < L->n_src; ++f) {
          size_t z = eng_syn_field_size(&pr->sm->fields[L->src_f[f]]);
          memcpy(pv->src_state + L->src_off[f] * pl->n_rows + (size_t)r * z, row[r] + at, z);
          at += z;
        }
      }
    }
  }
  free(row);
  return rc;
}

/* The plastic synapses of projection j onto this rank: per-synapse, then per-source state. */
static int restore_plastic(nestcl_engine *e, const ck_set *s, blk_view *views, int j)
{
  int rc = restore_syn_state(e, s, views, j);
  return rc ? rc : restore_src_state(e, s, views, j);
}

/* The room of block b's spike history for the files' histories: the longest restored history decides its cap. */
static int reserve_history(const ck_set *s, eng_block *b)
{
  uint64_t lo = b->first_gid, hi = b->first_gid + b->n;
  uint32_t need = 0;
  for (int k = 0; k < s->n; ++k) {
    const ck_section *c = eng_ck_find_section(&s->f[k], TAG_HIST, (uint32_t)b->pop);
    const unsigned char *d = s->f[k].data + c->offset;
    uint64_t first = get_u64(d), n = get_u64(d + 8);
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t g = first + i;
      uint32_t len = get_u32(d + 24 + i * 4);
      if (g >= lo && g < hi && len > need) {
        need = len;
      }
    }
  }
  if (!b->n) {
    return 0;
  }
  eng_history *h = &b->hist;
  if (need > h->max_cap) {
    return nestcl_set_error(NESTCL_EINVAL,
                            "restore: a spike history of the checkpoint holds %u entries, more than history_max %u "
                            "(raise it)",
                            need, h->max_cap);
  }
  uint32_t cap = h->cap;
  while (cap < need) {
    cap = cap * 2 > h->max_cap ? h->max_cap : cap * 2;
  }
  return eng_hist_reserve(h, cap);
}

/* Block b's neurons among file f's: their fields, and their ring with relative step k to the slot the engine's
   clock maps it to. */
static void restore_neur_ring(const nestcl_engine *e, const ck_file *f, const eng_block *b, blk_view *bv)
{
  const eng_population *pop = &e->desc.pops[b->pop];
  const nestcl_model *m = pop->model;
  uint64_t lo = b->first_gid, hi = b->first_gid + b->n;
  const ck_section *c = eng_ck_find_section(f, TAG_NEUR, (uint32_t)b->pop);
  const unsigned char *d = f->data + c->offset;
  uint64_t first = get_u64(d), n = get_u64(d + 8);
  uint64_t a = first > lo ? first : lo, z_end = first + n < hi ? first + n : hi;
  if (a >= z_end) {
    return;
  }
  size_t off = 16;
  for (int fi = 0; fi < m->n_fields; ++fi) {
    size_t z = nestcl_field_type_size(m->fields[fi].type), L = nestcl_field_len(&m->fields[fi], pop->K);
    for (size_t el = 0; el < L; ++el) {
      memcpy((char *)bv->fields[fi] + (el * b->n + (a - lo)) * z, d + off + (el * n + (a - first)) * z,
             (z_end - a) * z);
    }
    off += L * n * z;
  }
  c = eng_ck_find_section(f, TAG_RING, (uint32_t)b->pop);
  d = f->data + c->offset;
  for (int r = 0; r < e->clock.ring_slots; ++r) {
    uint32_t slot = (uint32_t)((e->clock.origin + r) % e->clock.ring_slots);
    for (uint32_t ch = 0; ch < pop->n_channels; ++ch) {
      memcpy(bv->ring + ((size_t)slot * b->n_channels + ch) * b->n + (a - lo),
             d + 16 + (((size_t)r * pop->n_channels + ch) * n + (a - first)) * 8, (z_end - a) * 8);
    }
  }
}

/* Block b's neurons' spike histories among file f's: per-neuron arrays, then entries (offsets by a prefix over the
   section's neurons). */
static int restore_history(const ck_file *f, eng_block *b)
{
  uint64_t lo = b->first_gid, hi = b->first_gid + b->n;
  const ck_section *c = eng_ck_find_section(f, TAG_HIST, (uint32_t)b->pop);
  const unsigned char *d = f->data + c->offset;
  uint64_t first = get_u64(d), n = get_u64(d + 8), entries = get_u64(d + 16);
  const unsigned char *len = d + 24, *nin = len + n * 4, *km = nin + n * 4, *kmt = km + n * 8, *last = kmt + n * 8,
                      *maxd = last + n * 8, *et = maxd + n * 8, *ekm = et + entries * 8, *ekmt = ekm + entries * 8,
                      *eacc = ekmt + entries * 8;
  eng_history *h = &b->hist;
  nestcl_history hv = eng_hist_view(h);
  uint64_t at = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t g = first + i;
    uint32_t ln = get_u32(len + i * 4);
    if (at + ln > entries) {
      return eng_ck_bad_file(f, "its spike history has more entries than it announces (corrupt)");
    }
    if (g >= lo && g < hi) {
      uint32_t li = (uint32_t)(g - lo);
      if (hv.n_incoming[li] != get_u32(nin + i * 4) || hv.max_delay[li] != get_f64(maxd + i * 8)) {
        return mismatch("STDP in-degrees or delays of the spike histories");
      }
      hv.head[li] = 0;
      hv.len[li] = ln;
      hv.Kminus[li] = get_f64(km + i * 8);
      hv.Kminus_triplet[li] = get_f64(kmt + i * 8);
      hv.last_spike[li] = get_f64(last + i * 8);
      for (uint32_t q = 0; q < ln; ++q) {
        size_t slot = (size_t)li * h->cap + q;
        hv.t[slot] = get_f64(et + (at + q) * 8);
        hv.kminus[slot] = get_f64(ekm + (at + q) * 8);
        hv.kminus_triplet[slot] = get_f64(ekmt + (at + q) * 8);
        hv.access[slot] = get_u32(eacc + (at + q) * 4);
      }
    }
    at += ln;
  }
  if (at != entries) {
    return eng_ck_bad_file(f, "its spike history has fewer entries than it announces (corrupt)");
  }
  return 0;
}

/* Neuron fields, ring and history of one block from the files' per-neuron sections. */
static int restore_block(nestcl_engine *e, const ck_set *s, eng_block *b, blk_view *bv)
{
  int hist = eng_ck_pop_has_history(e, b->pop);
  if (hist) {
    int rc = reserve_history(s, b);
    if (rc) {
      return rc;
    }
  }
  for (int k = 0; k < s->n; ++k) {
    restore_neur_ring(e, &s->f[k], b, bv);
    if (hist && b->n) {
      int rc = restore_history(&s->f[k], b);
      if (rc) {
        return rc;
      }
    }
  }
  return 0;
}

static int apply_set(nestcl_engine *e, const ck_set *s)
{
  const int P = e->desc.n_pops;
  blk_view *views = calloc((size_t)e->n_vps * (size_t)P, sizeof *views);
  if (!views) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  /* The clock first: the ring's slots are placed by it. */
  e->clock.origin = (int64_t)s->f[0].step;
  e->clock.lag = 0;
  int rc = 0;
  for (int v = 0; v < e->n_vps && !rc; ++v) {
    for (int p = 0; p < P && !rc; ++p) {
      rc = eng_ck_view_open(e, &e->vps[v], &e->vps[v].blocks[p], 1, &views[v * P + p]);
    }
  }
  if (!rc)
    rc = verify_static(e, s, views);
  for (int j = 0; j < e->desc.n_projs && !rc; ++j) {
    if (e->desc.projs[j].sm) {
      rc = restore_plastic(e, s, views, j);
    }
  }
  for (int v = 0; v < e->n_vps && !rc; ++v) {
    for (int p = 0; p < P && !rc; ++p) {
      rc = restore_block(e, s, &e->vps[v].blocks[p], &views[v * P + p]);
    }
  }
  for (int v = 0; v < e->n_vps && !rc; ++v) {
    for (int p = 0; p < P && !rc; ++p) {
      rc = eng_ck_view_write_back(e, &e->vps[v], &e->vps[v].blocks[p], &views[v * P + p]);
    }
  }
  for (int v = 0; v < e->n_vps; ++v) {
    for (int p = 0; p < P; ++p) {
      eng_ck_view_drop_history(&e->vps[v].blocks[p], &views[v * P + p]);
      eng_ck_view_free(e, &e->vps[v].blocks[p], &views[v * P + p]);
    }
  }
  free(views);
  if (!rc) {
    e->clock.steps_done = e->clock.origin;
    e->stats.spikes_total = s->f[0].spikes_total;
    e->stats.events_total = s->f[0].events_total;
  }
  return rc;
}

int nestcl_engine_restore(nestcl_engine *e, const char *dir)
{
  if (!e || !dir || !*dir) {
    return nestcl_set_error(NESTCL_EINVAL, "restore: no folder given");
  }
  if (e->built && (e->clock.steps_done || e->clock.origin || e->clock.lag)) {
    return nestcl_set_error(NESTCL_EINVAL,
                            "restore after simulate(): a checkpoint restores into a network that has "
                            "not run yet");
  }
  if (e->desc.n_pops == 0) {
    return nestcl_set_error(NESTCL_EINVAL, "restore: no neurons (describe the network first)");
  }
  /* Rank and size as the build will see them, for the collective decisions before it. */
  int rank, ranks;
  eng_world(e, &rank, &ranks);
  e->exchange.rank = rank;
  e->exchange.n_ranks = ranks;
  ck_set s;
  int rc = eng_agree(e, eng_ck_load_set(e, dir, &s));
  if (!rc) {
    rc = nestcl_engine_prepare(e);
    rc = eng_agree(e, rc);
  }
  if (!rc) {
    rc = eng_agree(e, apply_set(e, &s));
  }
  eng_ck_set_free(&s);
  if (rc && e->built) {
    /* Nothing half-loaded: the engine goes back to unbuilt (the next simulate() or restore() builds afresh). */
    eng_free_built(e);
    e->clock.origin = 0;
    e->clock.lag = 0;
    e->clock.steps_done = 0;
    e->stats.spikes_total = e->stats.events_total = 0;
  }
  return rc;
}
