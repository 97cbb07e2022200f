/*
 * Checkpoint and restart (DESIGN.md §10, issue 13): one file per MPI rank,
 * DIR/rank-<r>-of-<R>.nestcl-ckpt, written under a temporary name and renamed,
 * with a versioned header (format version, network hash, step, partition), a
 * section table and CRC-32 checksums; the layout is docs/checkpoint-format.md.
 * Everything is stored by global ids (neurons by gid, synapses as (source gid,
 * target gid) records), so a checkpoint restores into any split: other thread,
 * stream and rank counts. A restore rebuilds the network from its description
 * (connectivity is drawn by Philox keyed by global ids, so the same
 * description and seed give the same synapses), checks that the description's
 * hash and the rebuilt synapses match the files, and then overwrites the
 * dynamic state: the clock, every neuron's fields, the ring buffers, the
 * plastic synapses' per-synapse and per-source state and the postsynaptic
 * spike histories. That is all a super step carries into the next: spike
 * lists are consumed within their super step, Poisson and DC drives are pure
 * functions of (seed, gid, step), and recorders restart empty. Files are read
 * and validated whole (size, magic, version, checksums, hash, coverage of
 * every neuron) before anything is built; a failure later leaves the engine
 * unbuilt, so a checkpoint is never loaded in part.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef NESTCL_WITH_MPI
#include <mpi.h>
#endif

#include "engine_internal.h"
#include "core/nestcl_core.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the checkpoint format is little-endian; this host is not"
#endif

#define CK_MAGIC "NESTCLCK"
#define CK_VERSION 1u
#define CK_HEADER 128u
#define CK_ENTRY 32u

/* Section tags (four characters, little-endian u32). */
#define CK_TAG(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
#define TAG_NEUR CK_TAG('N', 'E', 'U', 'R')
#define TAG_RING CK_TAG('R', 'I', 'N', 'G')
#define TAG_HIST CK_TAG('H', 'I', 'S', 'T')
#define TAG_CSRS CK_TAG('C', 'S', 'R', 'S')
#define TAG_PLAS CK_TAG('P', 'L', 'A', 'S')
#define TAG_PSRC CK_TAG('P', 'S', 'R', 'C')

/* Static synapse record: source gid, target gid, channel, delay (steps), weight (as delivered, double). */
#define CSR_REC 32u

/* ---- CRC-32 (IEEE 802.3, reflected 0xEDB88320), table per use ------------ */

void eng_crc32_table(uint32_t t[256])
{
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) {
      c = c & 1u ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    t[i] = c;
  }
}

uint32_t eng_crc32_update(const uint32_t t[256], uint32_t crc, const void *p, size_t n)
{
  const unsigned char *b = p;
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) {
    crc = t[(crc ^ b[i]) & 0xffu] ^ (crc >> 8);
  }
  return ~crc;
}

/* ---- network hash (FNV-1a 64 over a canonical description) -------------- */

typedef struct nhash {
  uint64_t h;
} nhash;

static void nh_bytes(nhash *s, const void *p, size_t n)
{
  const unsigned char *b = p;
  for (size_t i = 0; i < n; ++i) {
    s->h ^= b[i];
    s->h *= 0x100000001b3ull;
  }
}
static void nh_u64(nhash *s, uint64_t v)
{
  nh_bytes(s, &v, sizeof v);
}
static void nh_f64(nhash *s, double v)
{
  nh_bytes(s, &v, sizeof v);
}
static void nh_str(nhash *s, const char *str)
{
  str = str ? str : "";
  nh_u64(s, strlen(str));
  nh_bytes(s, str, strlen(str));
}
static void nh_value(nhash *s, const nestcl_value *v)
{
  nh_u64(s, (uint64_t)v->kind);
  nh_f64(s, v->a);
  nh_f64(s, v->b);
  nh_f64(s, v->lo);
  nh_f64(s, v->hi);
}

/*
 * What determines the network and its dynamics, not how it is split: the
 * resolution, the delay overrides, the seed, the weight type, the populations
 * (model and its field layout, size, K, settings, tau_minus), the projections
 * (rule and spec, weight and delay distributions, receptor, synapse model with
 * its field layout and the parameters applied: the template and common
 * properties as bytes) and the generators. Threads, streams, gpu_fraction,
 * ranks, devices, memory budgets, history capacities and recorders are not.
 */
uint64_t eng_network_hash(const nestcl_engine *e)
{
  nhash s = {0xcbf29ce484222325ull};
  nh_str(&s, "nestcl-network/1");
  nh_f64(&s, e->cfg.resolution_ms);
  nh_f64(&s, e->cfg.min_delay_ms);
  nh_f64(&s, e->cfg.max_delay_ms);
  nh_u64(&s, e->cfg.seed);
  nh_u64(&s, (uint64_t)e->cfg.weight_type);
  nh_u64(&s, (uint64_t)e->n_pops);
  for (int p = 0; p < e->n_pops; ++p) {
    const eng_population *pop = &e->pops[p];
    const nestcl_model *m = pop->model;
    nh_str(&s, m->name);
    nh_u64(&s, (uint64_t)m->n_fields);
    for (int f = 0; f < m->n_fields; ++f) {
      nh_str(&s, m->fields[f].member);
      nh_str(&s, m->fields[f].struct_name);
      nh_u64(&s, (uint64_t)m->fields[f].type);
      nh_u64(&s, (uint64_t)(int64_t)m->fields[f].array_len);
      nh_u64(&s, (uint64_t)(int64_t)m->fields[f].array_base);
    }
    nh_u64(&s, pop->n);
    nh_u64(&s, pop->K);
    nh_u64(&s, pop->n_channels);
    nh_f64(&s, pop->tau_minus);
    nh_f64(&s, pop->tau_minus_triplet);
    nh_u64(&s, (uint64_t)pop->n_settings);
    for (int k = 0; k < pop->n_settings; ++k) {
      nh_str(&s, pop->settings[k].name);
      nh_value(&s, &pop->settings[k].v);
    }
  }
  nh_u64(&s, (uint64_t)e->n_projs);
  for (int p = 0; p < e->n_projs; ++p) {
    const eng_projection *pr = &e->projs[p];
    nh_u64(&s, (uint64_t)pr->src);
    nh_u64(&s, (uint64_t)pr->tgt);
    nh_u64(&s, (uint64_t)pr->conn.rule);
    nh_u64(&s, pr->conn.degree);
    nh_u64(&s, (uint64_t)pr->conn.allow_autapses);
    nh_u64(&s, (uint64_t)pr->conn.allow_multapses);
    nh_u64(&s, pr->conn.N);
    nh_f64(&s, pr->conn.p);
    nh_value(&s, &pr->syn.weight);
    nh_value(&s, &pr->syn.delay_ms);
    nh_u64(&s, (uint64_t)(int64_t)pr->syn.rport);
    nh_str(&s, pr->sm ? pr->sm->name : "static_synapse");
    if (pr->sm) {
      const nestcl_synapse_model *sm = pr->sm;
      nh_u64(&s, (uint64_t)sm->n_fields);
      for (int f = 0; f < sm->n_fields; ++f) {
        nh_str(&s, sm->fields[f].member);
        nh_u64(&s, (uint64_t)sm->fields[f].role);
        nh_u64(&s, (uint64_t)sm->fields[f].type);
        nh_u64(&s, sm->fields[f].offset);
      }
      nh_u64(&s, sm->syn_size);
      nh_u64(&s, sm->cp_size);
      nh_bytes(&s, pr->tmpl, sm->syn_size);
      nh_bytes(&s, pr->cp, sm->cp_size);
    }
  }
  nh_u64(&s, (uint64_t)e->n_drives);
  for (int k = 0; k < e->n_drives; ++k) {
    const eng_drive *d = &e->drives[k];
    nh_u64(&s, (uint64_t)d->pop);
    nh_u64(&s, (uint64_t)d->is_poisson);
    nh_f64(&s, d->rate_hz);
    nh_f64(&s, d->amplitude);
    nh_f64(&s, d->weight);
    nh_f64(&s, d->delay_ms);
    nh_u64(&s, (uint64_t)(int64_t)d->rport);
    nh_u64(&s, d->gen);
    nh_f64(&s, d->start_ms);
    nh_f64(&s, d->stop_ms);
  }
  return s.h;
}

/* ---- sizes of the per-neuron and per-synapse data ------------------------ */

/* Bytes of one neuron's fields (all of them, arrays expanded). */
static size_t neuron_bytes(const eng_population *p)
{
  size_t b = 0;
  for (int f = 0; f < p->model->n_fields; ++f) {
    b += nestcl_field_type_size(p->model->fields[f].type) * nestcl_field_len(&p->model->fields[f], p->K);
  }
  return b;
}

static int pop_has_history(const nestcl_engine *e, int p)
{
  for (int j = 0; j < e->n_projs; ++j) {
    if (e->projs[j].tgt == p && e->projs[j].sm && e->projs[j].sm->uses_history) {
      return 1;
    }
  }
  return 0;
}

static size_t plas_rec_bytes(const eng_projection *pr)
{
  return 24 + pr->lay.state_bytes;
}

static size_t psrc_rec_bytes(const eng_projection *pr)
{
  return 8 + pr->lay.src_bytes;
}

/* ---- a block's state in host memory ------------------------------------- */

/*
 * The arrays of one block that a checkpoint reads and a restore writes: a CPU
 * VP's own (aliased), or for a stream copies read back from the device (its
 * host copies went at the upload), written back by view_close. Batched
 * plastic sets keep their synapses in host memory: aliased too.
 */
typedef struct pl_view {
  uint32_t *target;
  uint16_t *delay;
  unsigned char *state, *src_state;
  int owned;
} pl_view;

typedef struct blk_view {
  void **fields;
  int64_t *ring;
  uint64_t *row_ptr;
  uint32_t *target;
  void *weight;
  uint16_t *delay;
  pl_view *pl;
  int owned;
  int hist_downloaded;
} blk_view;

static void *alloc_bytes(size_t n)
{
  return malloc(n ? n : 1);
}

static void view_free(const nestcl_engine *e, const eng_block *b, blk_view *v)
{
  const nestcl_model *m = e->pops[b->pop].model;
  if (v->owned) {
    for (int f = 0; v->fields && f < m->n_fields; ++f) {
      free(v->fields[f]);
    }
    free(v->fields);
    free(v->ring);
    free(v->row_ptr);
    free(v->target);
    free(v->weight);
    free(v->delay);
  }
  for (int j = 0; v->pl && j < b->n_plastic; ++j) {
    if (v->pl[j].owned) {
      free(v->pl[j].target);
      free(v->pl[j].delay);
      free(v->pl[j].state);
      free(v->pl[j].src_state);
    }
  }
  free(v->pl);
  memset(v, 0, sizeof *v);
}

/* A CPU VP's block: its own arrays, aliased. */
static void view_alias(eng_block *b, blk_view *v)
{
  v->fields = b->fields;
  v->ring = b->ring;
  v->row_ptr = b->row_ptr;
  v->target = b->target;
  v->weight = b->weight;
  v->delay = b->delay;
  for (int j = 0; j < b->n_plastic; ++j) {
    eng_plastic *pl = &b->plastic[j];
    v->pl[j] = (pl_view){pl->target, pl->delay, pl->state, pl->src_state, 0};
  }
}

/* A stream's fields and ring, read back into copies of v. */
static int view_read_state(nestcl_engine *e, cl_command_queue q, eng_block *b, blk_view *v, cl_int *err)
{
  const eng_population *p = &e->pops[b->pop];
  const nestcl_model *m = p->model;
  size_t ring_bytes = (size_t)e->ring_slots * b->n_channels * b->n * 8;
  v->fields = calloc((size_t)m->n_fields, sizeof *v->fields);
  if (!v->fields) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  for (int f = 0; f < m->n_fields && *err == CL_SUCCESS; ++f) {
    size_t bytes = nestcl_field_type_size(m->fields[f].type) * nestcl_field_len(&m->fields[f], p->K) * b->n;
    if (!(v->fields[f] = alloc_bytes(bytes))) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
    if (bytes) {
      *err = clEnqueueReadBuffer(q, b->b_fields[f].mem, CL_TRUE, 0, bytes, v->fields[f], 0, NULL, NULL);
    }
  }
  if (!(v->ring = alloc_bytes(ring_bytes))) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  if (ring_bytes && *err == CL_SUCCESS) {
    *err = clEnqueueReadBuffer(q, b->b_ring.mem, CL_TRUE, 0, ring_bytes, v->ring, 0, NULL, NULL);
  }
  return 0;
}

/* A stream's static CSR, read back into copies of v. */
static int view_read_csr(nestcl_engine *e, cl_command_queue q, eng_block *b, blk_view *v, cl_int *err)
{
  size_t wsize = e->cfg.weight_type == NESTCL_WEIGHT_DOUBLE ? 8 : 4;
  size_t rp = (size_t)(e->n_global + 1) * 8;
  v->row_ptr = alloc_bytes(rp);
  v->target = alloc_bytes(b->nnz * 4);
  v->weight = alloc_bytes(b->nnz * wsize);
  v->delay = b->delay_hom == NESTCL_DELAY_PER_SYNAPSE ? alloc_bytes(b->nnz * 2) : NULL;
  if (!v->row_ptr || !v->target || !v->weight || (b->delay_hom == NESTCL_DELAY_PER_SYNAPSE && !v->delay)) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory for the CSR of %llu synapses",
                            (unsigned long long)b->nnz);
  }
  *err = clEnqueueReadBuffer(q, b->b_row.mem, CL_TRUE, 0, rp, v->row_ptr, 0, NULL, NULL);
  if (b->nnz && *err == CL_SUCCESS) {
    *err = clEnqueueReadBuffer(q, b->b_target.mem, CL_TRUE, 0, b->nnz * 4, v->target, 0, NULL, NULL);
    if (*err == CL_SUCCESS) *err = clEnqueueReadBuffer(q, b->b_weight.mem, CL_TRUE, 0, b->nnz * wsize, v->weight, 0, NULL, NULL);
    if (*err == CL_SUCCESS && v->delay) {
      *err = clEnqueueReadBuffer(q, b->b_delay.mem, CL_TRUE, 0, b->nnz * 2, v->delay, 0, NULL, NULL);
    }
  }
  return 0;
}

/* A stream's plastic set pl: read back into copies of w, or aliased when batched (kept in host memory). */
static int view_read_plastic(nestcl_engine *e, cl_command_queue q, eng_plastic *pl, pl_view *w, cl_int *err)
{
  const eng_syn_layout *L = &e->projs[pl->proj].lay;
  if (pl->batch_cap) {
    *w = (pl_view){pl->target, pl->delay, pl->state, pl->src_state, 0};
    return 0;
  }
  w->owned = 1;
  int per_syn = pl->delay_hom == NESTCL_DELAY_PER_SYNAPSE;
  size_t sb = pl->nnz * L->state_bytes, rb = (size_t)pl->n_rows * L->src_bytes;
  w->target = alloc_bytes(pl->nnz * 4);
  w->delay = per_syn ? alloc_bytes(pl->nnz * 2) : NULL;
  w->state = alloc_bytes(sb);
  w->src_state = alloc_bytes(rb);
  if (!w->target || (per_syn && !w->delay) || !w->state || !w->src_state) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory for %llu plastic synapses",
                            (unsigned long long)pl->nnz);
  }
  if (pl->nnz) {
    *err = clEnqueueReadBuffer(q, pl->b_target.mem, CL_TRUE, 0, pl->nnz * 4, w->target, 0, NULL, NULL);
    if (*err == CL_SUCCESS && per_syn) {
      *err = clEnqueueReadBuffer(q, pl->b_delay.mem, CL_TRUE, 0, pl->nnz * 2, w->delay, 0, NULL, NULL);
    }
    if (*err == CL_SUCCESS && sb) *err = clEnqueueReadBuffer(q, pl->b_state.mem, CL_TRUE, 0, sb, w->state, 0, NULL, NULL);
  }
  if (*err == CL_SUCCESS && rb) {
    *err = clEnqueueReadBuffer(q, pl->b_src_state.mem, CL_TRUE, 0, rb, w->src_state, 0, NULL, NULL);
  }
  return 0;
}

/* csr: the static CSR too (a checkpoint writes it; a restore verifies it). */
static int view_open(nestcl_engine *e, eng_vp *vp, eng_block *b, int csr, blk_view *v)
{
  memset(v, 0, sizeof *v);
  v->pl = calloc((size_t)(b->n_plastic ? b->n_plastic : 1), sizeof *v->pl);
  if (!v->pl) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  if (!vp->is_gpu) {
    view_alias(b, v);
    return 0;
  }
  v->owned = 1;
  cl_command_queue q = nestcl_device_queue(e->dev, vp->queue);
  cl_int err = CL_SUCCESS;
  int rc = view_read_state(e, q, b, v, &err);
  if (!rc && csr && err == CL_SUCCESS) {
    rc = view_read_csr(e, q, b, v, &err);
  }
  for (int j = 0; !rc && j < b->n_plastic && err == CL_SUCCESS; ++j) {
    rc = view_read_plastic(e, q, &b->plastic[j], &v->pl[j], &err);
  }
  if (rc) {
    return rc;
  }
  if (err == CL_SUCCESS && b->hist.cap && b->n) {
    v->hist_downloaded = 1;
    return eng_hist_download(&b->hist, e->dev, vp->queue);
  }
  return eng_cl_check(err, "reading a stream's state back for a checkpoint");
}

/* A stream's restored arrays back to the device (fields, ring, plastic state, history). */
static int view_write_back(nestcl_engine *e, eng_vp *vp, eng_block *b, blk_view *v)
{
  if (!vp->is_gpu) {
    return 0;
  }
  const eng_population *p = &e->pops[b->pop];
  const nestcl_model *m = p->model;
  cl_command_queue q = nestcl_device_queue(e->dev, vp->queue);
  cl_int err = CL_SUCCESS;
  for (int f = 0; f < m->n_fields && err == CL_SUCCESS; ++f) {
    size_t bytes = nestcl_field_type_size(m->fields[f].type) * nestcl_field_len(&m->fields[f], p->K) * b->n;
    if (bytes) {
      err = clEnqueueWriteBuffer(q, b->b_fields[f].mem, CL_TRUE, 0, bytes, v->fields[f], 0, NULL, NULL);
    }
  }
  size_t ring_bytes = (size_t)e->ring_slots * b->n_channels * b->n * 8;
  if (ring_bytes && err == CL_SUCCESS) {
    err = clEnqueueWriteBuffer(q, b->b_ring.mem, CL_TRUE, 0, ring_bytes, v->ring, 0, NULL, NULL);
  }
  for (int j = 0; j < b->n_plastic && err == CL_SUCCESS; ++j) {
    eng_plastic *pl = &b->plastic[j];
    const eng_syn_layout *L = &e->projs[pl->proj].lay;
    if (!v->pl[j].owned) {
      continue;
    }
    size_t sb = pl->nnz * L->state_bytes, rb = (size_t)pl->n_rows * L->src_bytes;
    if (sb) err = clEnqueueWriteBuffer(q, pl->b_state.mem, CL_TRUE, 0, sb, v->pl[j].state, 0, NULL, NULL);
    if (rb && err == CL_SUCCESS) {
      err = clEnqueueWriteBuffer(q, pl->b_src_state.mem, CL_TRUE, 0, rb, v->pl[j].src_state, 0, NULL, NULL);
    }
  }
  int rc = eng_cl_check(err, "writing a restored state to the device");
  if (!rc && v->hist_downloaded) {
    cl_kernel users[64];
    int nu = 0;
    for (int j = 0; j < b->n_plastic && nu < 64; ++j) {
      users[nu++] = b->plastic[j].k;
    }
    rc = eng_hist_replace_device(&b->hist, e->dev, users, nu);
    v->hist_downloaded = 0;
    /* The device loop's kernels (and its recorded super step) follow the new buffers. */
    if (!rc && e->res.on && vp == &e->vps[e->res.vp]) {
      rc = eng_resident_plastic_repoint(e, vp, b->pop);
    }
  }
  return rc;
}

/* Drops a stream's downloaded history copy (the device keeps its own). */
static void view_drop_history(eng_block *b, blk_view *v)
{
  if (v->hist_downloaded) {
    for (int a = 0; a < ENG_H_ARRAYS; ++a) {
      free(b->hist.a[a]);
      b->hist.a[a] = NULL;
    }
    v->hist_downloaded = 0;
  }
}

/* ---- writing ------------------------------------------------------------ */

typedef struct ck_section {
  uint32_t tag, index;
  uint64_t offset, bytes, count;
} ck_section;

typedef struct ck_writer {
  FILE *f;
  uint32_t crc_t[256];
  uint32_t crc;
  uint64_t pos;
  int err;
  ck_section *sec;
  int n_sec, cap_sec;
} ck_writer;

static void w_bytes(ck_writer *w, const void *p, size_t n)
{
  if (w->err || n == 0) {
    return;
  }
  if (fwrite(p, 1, n, w->f) != n) {
    w->err = errno ? errno : EIO;
    return;
  }
  w->crc = eng_crc32_update(w->crc_t, w->crc, p, n);
  w->pos += n;
}
static void w_u64(ck_writer *w, uint64_t v)
{
  w_bytes(w, &v, 8);
}
static void w_u32(ck_writer *w, uint32_t v)
{
  w_bytes(w, &v, 4);
}
static void w_f64(ck_writer *w, double v)
{
  w_bytes(w, &v, 8);
}

static int sec_begin(ck_writer *w, uint32_t tag, uint32_t index, uint64_t count)
{
  if (w->n_sec == w->cap_sec) {
    int cap = w->cap_sec ? 2 * w->cap_sec : 16;
    ck_section *s = realloc(w->sec, (size_t)cap * sizeof *s);
    if (!s) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
    w->sec = s;
    w->cap_sec = cap;
  }
  ck_section *s = &w->sec[w->n_sec++];
  s->tag = tag;
  s->index = index;
  s->offset = w->pos;
  s->count = count;
  s->bytes = 0;
  return 0;
}

static void sec_end(ck_writer *w)
{
  ck_section *s = &w->sec[w->n_sec - 1];
  s->bytes = w->pos - s->offset;
}

/* The rank's neurons of population p: its blocks are contiguous in gid, VP after VP. */
static void rank_range(const nestcl_engine *e, int p, uint64_t *first, uint64_t *n)
{
  *first = 0;
  *n = 0;
  for (int v = 0; v < e->n_vps; ++v) {
    const eng_block *b = &e->vps[v].blocks[p];
    if (b->n && *n == 0) {
      *first = b->first_gid;
    }
    *n += b->n;
  }
  if (*n == 0) {
    *first = e->pops[p].first;
  }
}

/* NEUR of population p: the rank's neurons (first gid, count), then field after field, [element][neuron]. */
static int write_neur(nestcl_engine *e, ck_writer *w, const blk_view *views, int p)
{
  const int P = e->n_pops;
  const eng_population *pop = &e->pops[p];
  const nestcl_model *m = pop->model;
  uint64_t first, n;
  rank_range(e, p, &first, &n);
  int rc = sec_begin(w, TAG_NEUR, (uint32_t)p, n);
  if (rc) {
    return rc;
  }
  w_u64(w, first);
  w_u64(w, n);
  for (int f = 0; f < m->n_fields; ++f) {
    size_t z = nestcl_field_type_size(m->fields[f].type), L = nestcl_field_len(&m->fields[f], pop->K);
    for (size_t k = 0; k < L; ++k) {
      for (int v = 0; v < e->n_vps; ++v) {
        const eng_block *b = &e->vps[v].blocks[p];
        if (b->n) {
          w_bytes(w, (const char *)views[v * P + p].fields[f] + k * b->n * z, b->n * z);
        }
      }
    }
  }
  sec_end(w);
  return 0;
}

/* RING of population p: [k][channel][neuron] for the steps origin + k, k = 0 .. ring_slots - 1. */
static int write_ring(nestcl_engine *e, ck_writer *w, const blk_view *views, int p)
{
  const int P = e->n_pops;
  const int64_t step = e->origin;
  uint64_t first, n;
  rank_range(e, p, &first, &n);
  int rc = sec_begin(w, TAG_RING, (uint32_t)p, n);
  if (rc) {
    return rc;
  }
  w_u64(w, first);
  w_u64(w, n);
  for (int k = 0; k < e->ring_slots; ++k) {
    uint32_t slot = (uint32_t)((step + k) % e->ring_slots);
    for (uint32_t ch = 0; ch < e->pops[p].n_channels; ++ch) {
      for (int v = 0; v < e->n_vps; ++v) {
        const eng_block *b = &e->vps[v].blocks[p];
        if (b->n) {
          w_bytes(w, views[v * P + p].ring + ((size_t)slot * b->n_channels + ch) * b->n, (size_t)b->n * 8);
        }
      }
    }
  }
  sec_end(w);
  return 0;
}

/* HIST of population p (one with a spike history): per-neuron arrays, then the entries oldest first. */
static int write_hist(nestcl_engine *e, ck_writer *w, int p)
{
  uint64_t first, n, entries = 0;
  rank_range(e, p, &first, &n);
  for (int v = 0; v < e->n_vps; ++v) {
    const eng_block *b = &e->vps[v].blocks[p];
    for (uint32_t i = 0; i < b->n; ++i) {
      entries += ((const uint32_t *)b->hist.a[ENG_H_LEN])[i];
    }
  }
  int rc = sec_begin(w, TAG_HIST, (uint32_t)p, n);
  if (rc) {
    return rc;
  }
  w_u64(w, first);
  w_u64(w, n);
  w_u64(w, entries);
  static const int per_neuron[] = {ENG_H_LEN, ENG_H_NIN, ENG_H_KM, ENG_H_KMT, ENG_H_LAST, ENG_H_MAXD};
  for (size_t a = 0; a < sizeof per_neuron / sizeof *per_neuron; ++a) {
    int arr = per_neuron[a];
    size_t z = arr == ENG_H_LEN || arr == ENG_H_NIN ? 4 : 8;
    for (int v = 0; v < e->n_vps; ++v) {
      const eng_block *b = &e->vps[v].blocks[p];
      if (b->n) {
        w_bytes(w, b->hist.a[arr], (size_t)b->n * z);
      }
    }
  }
  static const int per_entry[] = {ENG_H_T, ENG_H_KMINUS, ENG_H_KMINUS_TRIPLET, ENG_H_ACCESS};
  for (size_t a = 0; a < sizeof per_entry / sizeof *per_entry; ++a) {
    int arr = per_entry[a];
    size_t z = arr == ENG_H_ACCESS ? 4 : 8;
    for (int v = 0; v < e->n_vps; ++v) {
      eng_block *b = &e->vps[v].blocks[p];
      nestcl_history hv = eng_hist_view(&b->hist);
      for (uint32_t i = 0; i < b->n; ++i) {
        for (uint32_t k = 0; k < hv.len[i]; ++k) {
          w_bytes(w, (const char *)b->hist.a[arr] + nestcl_hist_slot(&hv, i, k) * z, z);
        }
      }
    }
  }
  sec_end(w);
  return 0;
}

/* CSRS: the static synapses onto the rank's neurons, block by block, row by row. */
static int write_csrs(nestcl_engine *e, ck_writer *w, const blk_view *views)
{
  const int P = e->n_pops;
  uint64_t count = 0;
  for (int v = 0; v < e->n_vps; ++v) {
    for (int p = 0; p < P; ++p) {
      count += e->vps[v].blocks[p].nnz;
    }
  }
  int rc = sec_begin(w, TAG_CSRS, 0, count);
  if (rc) {
    return rc;
  }
  int wd = e->cfg.weight_type == NESTCL_WEIGHT_DOUBLE;
  for (int v = 0; v < e->n_vps; ++v) {
    for (int p = 0; p < P; ++p) {
      const eng_block *b = &e->vps[v].blocks[p];
      const blk_view *bv = &views[v * P + p];
      if (b->nnz == 0) {
        continue;
      }
      for (uint64_t s = 0; s < e->n_global; ++s) {
        for (uint64_t k = bv->row_ptr[s]; k < bv->row_ptr[s + 1]; ++k) {
          uint32_t t = bv->target[k];
          double wt = wd ? ((const double *)bv->weight)[k] : (double)((const float *)bv->weight)[k];
          w_u64(w, s);
          w_u64(w, b->first_gid + (t & NESTCL_TARGET_INDEX_MASK));
          w_u32(w, t >> NESTCL_TARGET_INDEX_BITS);
          w_u32(w, bv->delay ? bv->delay[k] : b->delay_hom);
          w_f64(w, wt);
        }
      }
    }
  }
  sec_end(w);
  return 0;
}

/* PLAS of projection j (translated synapses): each synapse's (source, target, delay) and its state. */
static int write_plas(nestcl_engine *e, ck_writer *w, const blk_view *views, int j)
{
  const int P = e->n_pops;
  const eng_projection *pr = &e->projs[j];
  const eng_syn_layout *L = &pr->lay;
  uint64_t count = 0;
  for (int v = 0; v < e->n_vps; ++v) {
    const eng_block *b = &e->vps[v].blocks[pr->tgt];
    for (int q = 0; q < b->n_plastic; ++q) {
      count += b->plastic[q].proj == j ? b->plastic[q].nnz : 0;
    }
  }
  int rc = sec_begin(w, TAG_PLAS, (uint32_t)j, count);
  if (rc) {
    return rc;
  }
  for (int v = 0; v < e->n_vps; ++v) {
    const eng_block *b = &e->vps[v].blocks[pr->tgt];
    for (int q = 0; q < b->n_plastic; ++q) {
      const eng_plastic *pl = &b->plastic[q];
      const pl_view *pv = &views[v * P + pr->tgt].pl[q];
      if (pl->proj != j) {
        continue;
      }
      for (uint32_t r = 0; r < pl->n_rows; ++r) {
        for (uint64_t k = pl->row_ptr[r]; k < pl->row_ptr[r + 1]; ++k) {
          w_u64(w, pl->src_first + r);
          w_u64(w, b->first_gid + pv->target[k]);
          w_u32(w, pv->delay ? pv->delay[k] : pl->delay_hom);
          w_u32(w, 0);
          for (int f = 0; f < L->n_state; ++f) {
            size_t z = eng_syn_field_size(&pr->sm->fields[L->state_f[f]]);
            w_bytes(w, pv->state + L->state_off[f] * pl->nnz + k * z, z);
          }
        }
      }
    }
  }
  sec_end(w);
  return 0;
}

/* The source rows of projection j that have synapses on this rank, marked in seen; returns their count. */
static uint64_t mark_source_rows(const nestcl_engine *e, int j, unsigned char *seen)
{
  const eng_projection *pr = &e->projs[j];
  uint64_t rows = 0;
  for (int v = 0; v < e->n_vps; ++v) {
    const eng_block *b = &e->vps[v].blocks[pr->tgt];
    for (int q = 0; q < b->n_plastic; ++q) {
      const eng_plastic *pl = &b->plastic[q];
      for (uint32_t r = 0; pl->proj == j && r < pl->n_rows; ++r) {
        if (pl->row_ptr[r + 1] > pl->row_ptr[r] && !seen[r]) {
          seen[r] = 1;
          rows++;
        }
      }
    }
  }
  return rows;
}

/* PSRC of projection j: the per-source state, each source row once, from the first block that holds synapses of it. */
static int write_psrc(nestcl_engine *e, ck_writer *w, const blk_view *views, int j)
{
  const int P = e->n_pops;
  const eng_projection *pr = &e->projs[j];
  const eng_syn_layout *L = &pr->lay;
  uint32_t n_rows = e->pops[pr->src].n;
  unsigned char *seen = calloc(n_rows ? n_rows : 1, 1);
  if (!seen) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  uint64_t rows = mark_source_rows(e, j, seen);
  memset(seen, 0, n_rows ? n_rows : 1);
  int rc = sec_begin(w, TAG_PSRC, (uint32_t)j, rows);
  for (int v = 0; v < e->n_vps && !rc; ++v) {
    const eng_block *b = &e->vps[v].blocks[pr->tgt];
    for (int q = 0; q < b->n_plastic; ++q) {
      const eng_plastic *pl = &b->plastic[q];
      const pl_view *pv = &views[v * P + pr->tgt].pl[q];
      for (uint32_t r = 0; pl->proj == j && r < pl->n_rows; ++r) {
        if (pl->row_ptr[r + 1] == pl->row_ptr[r] || seen[r]) {
          continue;
        }
        seen[r] = 1;
        w_u64(w, pl->src_first + r);
        for (int f = 0; f < L->n_src; ++f) {
          size_t z = eng_syn_field_size(&pr->sm->fields[L->src_f[f]]);
          w_bytes(w, pv->src_state + L->src_off[f] * pl->n_rows + (size_t)r * z, z);
        }
      }
    }
  }
  free(seen);
  if (!rc) sec_end(w);
  return rc;
}

/* The sections of this rank into w, in the order of the format: views[v * n_pops + p] are the blocks' open views. */
static int write_sections(nestcl_engine *e, ck_writer *w, blk_view *views)
{
  int rc = 0;
  for (int p = 0; p < e->n_pops && !rc; ++p) {
    rc = write_neur(e, w, views, p);
  }
  for (int p = 0; p < e->n_pops && !rc; ++p) {
    rc = write_ring(e, w, views, p);
  }
  for (int p = 0; p < e->n_pops && !rc; ++p) {
    if (pop_has_history(e, p)) {
      rc = write_hist(e, w, p);
    }
  }
  if (!rc) {
    rc = write_csrs(e, w, views);
  }
  for (int j = 0; j < e->n_projs && !rc; ++j) {
    if (e->projs[j].sm) {
      rc = write_plas(e, w, views, j);
      if (!rc) rc = write_psrc(e, w, views, j);
    }
  }
  return rc;
}

static void put_u32(unsigned char *p, uint32_t v)
{
  memcpy(p, &v, 4);
}
static void put_u64(unsigned char *p, uint64_t v)
{
  memcpy(p, &v, 8);
}
static void put_f64(unsigned char *p, double v)
{
  memcpy(p, &v, 8);
}
static uint32_t get_u32(const unsigned char *p)
{
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static uint64_t get_u64(const unsigned char *p)
{
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}
static double get_f64(const unsigned char *p)
{
  double v;
  memcpy(&v, p, 8);
  return v;
}

/* The header and section table (docs/checkpoint-format.md) into buf of CK_HEADER + n_sec * CK_ENTRY bytes. */
static void make_header(const nestcl_engine *e, const ck_writer *w, uint64_t hash, uint64_t payload,
                        uint32_t payload_crc, unsigned char *buf)
{
  size_t hb = CK_HEADER + (size_t)w->n_sec * CK_ENTRY;
  memset(buf, 0, hb);
  memcpy(buf, CK_MAGIC, 8);
  put_u32(buf + 8, CK_VERSION);
  put_u32(buf + 12, (uint32_t)hb);
  put_u64(buf + 16, hash);
  put_u64(buf + 24, (uint64_t)e->origin);
  put_f64(buf + 32, e->cfg.resolution_ms);
  put_u32(buf + 40, (uint32_t)e->rank);
  put_u32(buf + 44, (uint32_t)e->n_ranks);
  put_u32(buf + 48, (uint32_t)e->cfg.cpu_threads);
  put_u32(buf + 52, (uint32_t)e->cfg.gpu_streams);
  put_f64(buf + 56, e->cfg.gpu_fraction);
  put_u64(buf + 64, e->n_global);
  put_u32(buf + 72, (uint32_t)e->n_pops);
  put_u32(buf + 76, (uint32_t)e->n_projs);
  put_u32(buf + 80, (uint32_t)e->min_delay);
  put_u32(buf + 84, (uint32_t)e->max_delay);
  put_u32(buf + 88, (uint32_t)e->ring_slots);
  put_u32(buf + 92, (uint32_t)w->n_sec);
  put_u64(buf + 96, payload);
  put_u64(buf + 104, e->spikes_total);
  put_u64(buf + 112, e->events_total);
  put_u32(buf + 120, payload_crc);
  for (int s = 0; s < w->n_sec; ++s) {
    unsigned char *t = buf + CK_HEADER + (size_t)s * CK_ENTRY;
    put_u32(t, w->sec[s].tag);
    put_u32(t + 4, w->sec[s].index);
    put_u64(t + 8, w->sec[s].offset);
    put_u64(t + 16, w->sec[s].bytes);
    put_u64(t + 24, w->sec[s].count);
  }
  uint32_t ct[256];
  eng_crc32_table(ct);
  uint32_t hc = eng_crc32_update(ct, 0, buf, 124);
  hc = eng_crc32_update(ct, hc, buf + CK_HEADER, hb - CK_HEADER);
  put_u32(buf + 124, hc);
}

static void file_name(char *out, size_t cap, const char *dir, int rank, int ranks)
{
  snprintf(out, cap, "%s/rank-%d-of-%d.nestcl-ckpt", dir, rank, ranks);
}

static int write_file(nestcl_engine *e, const char *dir)
{
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    return nestcl_set_error(NESTCL_EIO, "checkpoint: cannot create %s: %s", dir, strerror(errno));
  }
  char path[4096], tmp[4200];
  file_name(path, sizeof path, dir, e->rank, e->n_ranks);
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  const int P = e->n_pops;
  blk_view *views = calloc((size_t)e->n_vps * (size_t)P, sizeof *views);
  if (!views) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  int rc = 0;
  for (int v = 0; v < e->n_vps && !rc; ++v) {
    for (int p = 0; p < P && !rc; ++p) {
      rc = view_open(e, &e->vps[v], &e->vps[v].blocks[p], 1, &views[v * P + p]);
    }
  }
  ck_writer w;
  memset(&w, 0, sizeof w);
  eng_crc32_table(w.crc_t);
  /* Sections: neurons and ring per population, histories, the static CSR, two per plastic projection. */
  int n_sec = 2 * P + 1;
  for (int p = 0; p < P; ++p) {
    n_sec += pop_has_history(e, p);
  }
  for (int j = 0; j < e->n_projs; ++j) {
    n_sec += e->projs[j].sm ? 2 : 0;
  }
  size_t hb = CK_HEADER + (size_t)n_sec * CK_ENTRY;
  if (!rc) {
    w.f = fopen(tmp, "wb");
    unsigned char zero[CK_ENTRY] = {0};
    for (size_t k = 0; w.f && k < hb; k += CK_ENTRY) {
      if (fwrite(zero, 1, CK_ENTRY, w.f) != CK_ENTRY) {
        w.err = errno ? errno : EIO;
      }
    }
    w.pos = hb;
    if (!w.f) {
      rc = nestcl_set_error(NESTCL_EIO, "checkpoint: cannot write %s: %s", tmp, strerror(errno));
    }
  }
  if (!rc) {
    rc = write_sections(e, &w, views);
  }
  for (int v = 0; v < e->n_vps; ++v) {
    for (int p = 0; p < P; ++p) {
      view_drop_history(&e->vps[v].blocks[p], &views[v * P + p]);
      view_free(e, &e->vps[v].blocks[p], &views[v * P + p]);
    }
  }
  free(views);
  if (!rc && !w.err) {
    /* The header holds the sizes and checksums: written last, over the room left for it. */
    unsigned char *head = malloc(hb);
    if (!head) {
      rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    } else if (w.n_sec != n_sec) {
      rc = nestcl_set_error(NESTCL_ERUNTIME, "internal: checkpoint of %d sections, %d expected", w.n_sec, n_sec);
    } else {
      make_header(e, &w, eng_network_hash(e), w.pos - hb, w.crc, head);
      if (fseek(w.f, 0, SEEK_SET) != 0 || fwrite(head, 1, hb, w.f) != hb || fflush(w.f) != 0 ||
          fsync(fileno(w.f)) != 0) {
        w.err = errno ? errno : EIO;
      }
    }
    free(head);
  }
  if (w.f) {
    if (fclose(w.f) != 0 && !w.err) {
      w.err = errno ? errno : EIO;
    }
    w.f = NULL;
    if (!rc && !w.err && rename(tmp, path) != 0) {
      w.err = errno ? errno : EIO;
    }
    if (rc || w.err) {
      remove(tmp);
    }
  }

  if (!rc && w.err) {
    rc = nestcl_set_error(NESTCL_EIO, "checkpoint: cannot write %s: %s", path, strerror(w.err));
  }
  free(w.sec);
  return rc;
}

/* Removes rank files of other rank counts (an older checkpoint in the same folder). */
static void remove_stale(const char *dir, int ranks)
{
  DIR *d = opendir(dir);
  if (!d) {
    return;
  }
  struct dirent *de;
  char path[4400];
  while ((de = readdir(d)) != NULL) {
    int r, R, end = 0;
    if (sscanf(de->d_name, "rank-%d-of-%d.nestcl-ckpt%n", &r, &R, &end) == 2 && de->d_name[end] == 0 &&
        R != ranks) {
      snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
      remove(path);
    }
  }
  closedir(d);
}

int nestcl_engine_checkpoint(nestcl_engine *e, const char *dir)
{
  if (!e || !dir || !*dir) {
    return nestcl_set_error(NESTCL_EINVAL, "checkpoint: no folder given");
  }
  if (!e->built) {
    return nestcl_set_error(NESTCL_EINVAL, "checkpoint before the network is built (simulate or prepare first)");
  }
  if (e->lag != 0) {
    return nestcl_set_error(NESTCL_EINVAL,
                            "checkpoint at t = %.10g ms: not the end of a super step; checkpoints are taken at "
                            "multiples of the min delay %.10g ms",
                            nestcl_engine_time_ms(e), (double)e->min_delay * e->cfg.resolution_ms);
  }
  int rc = eng_agree(e, write_file(e, dir));
  if (!rc && e->rank == 0) {
    remove_stale(dir, e->n_ranks);
  }
#ifdef NESTCL_WITH_MPI
  if (e->n_ranks > 1) {
    MPI_Barrier(MPI_COMM_WORLD);
  }
#endif
  return rc;
}

/* ---- reading ------------------------------------------------------------ */

typedef struct ck_file {
  char path[4400];
  unsigned char *data;
  size_t size;
  uint64_t step, spikes_total, events_total;
  int n_sec;
  ck_section *sec;
} ck_file;

typedef struct ck_set {
  ck_file *f;
  int n;
} ck_set;

static void set_free(ck_set *s)
{
  for (int k = 0; s->f && k < s->n; ++k) {
    free(s->f[k].data);
    free(s->f[k].sec);
  }
  free(s->f);
  memset(s, 0, sizeof *s);
}

static int bad_file(const ck_file *f, const char *what)
{
  return nestcl_set_error(NESTCL_EINVAL, "%s: %s; the checkpoint is refused", f->path, what);
}

/* The whole file into f->data (f->size bytes). */
static int slurp_file(ck_file *f)
{
  FILE *in = fopen(f->path, "rb");
  if (!in) {
    return nestcl_set_error(NESTCL_EIO, "%s: cannot read: %s", f->path, strerror(errno));
  }
  struct stat st;
  if (fstat(fileno(in), &st) != 0) {
    fclose(in);
    return nestcl_set_error(NESTCL_EIO, "%s: cannot read: %s", f->path, strerror(errno));
  }
  f->size = (size_t)st.st_size;
  f->data = malloc(f->size ? f->size : 1);
  if (!f->data) {
    fclose(in);
    return nestcl_set_error(NESTCL_ENOMEM, "%s: out of host memory for %zu bytes", f->path, f->size);
  }
  size_t got = fread(f->data, 1, f->size, in);
  int err = ferror(in);
  fclose(in);
  if (got != f->size || err) {
    return nestcl_set_error(NESTCL_EIO, "%s: cannot read: %s", f->path, strerror(errno ? errno : EIO));
  }
  return 0;
}

/*
 * The file's framing: magic, version, the header's and the payload's sizes and
 * checksums; *hb is the size of the header with its section table.
 */
static int check_framing(const ck_file *f, uint32_t *hb)
{
  const unsigned char *d = f->data;
  if (f->size < CK_HEADER) {
    if (f->size >= 8 && memcmp(d, CK_MAGIC, 8) != 0) {
      return bad_file(f, "not a nestcl checkpoint (wrong magic)");
    }
    char msg[160];
    snprintf(msg, sizeof msg, "truncated (%zu bytes, shorter than the %u-byte header)", f->size, CK_HEADER);
    return bad_file(f, msg);
  }
  if (memcmp(d, CK_MAGIC, 8) != 0) {
    return bad_file(f, "not a nestcl checkpoint (wrong magic)");
  }
  uint32_t version = get_u32(d + 8);
  if (version != CK_VERSION) {
    char msg[160];
    snprintf(msg, sizeof msg, "format version %u; this nestcl reads version %u", version, CK_VERSION);
    return bad_file(f, msg);
  }
  uint32_t n_sec = get_u32(d + 92);
  uint64_t payload = get_u64(d + 96);
  *hb = get_u32(d + 12);
  if (*hb != CK_HEADER + (uint64_t)n_sec * CK_ENTRY || n_sec > 1000000u) {
    return bad_file(f, "corrupt header (section table size)");
  }
  if (f->size < *hb || f->size - *hb < payload) {
    char msg[200];
    snprintf(msg, sizeof msg, "truncated (%zu bytes of %llu)", f->size, (unsigned long long)*hb + payload);
    return bad_file(f, msg);
  }
  uint32_t ct[256];
  eng_crc32_table(ct);
  uint32_t hc = eng_crc32_update(ct, 0, d, 124);
  hc = eng_crc32_update(ct, hc, d + CK_HEADER, *hb - CK_HEADER);
  if (hc != get_u32(d + 124)) {
    return bad_file(f, "corrupt header (checksum mismatch)");
  }
  if (f->size - *hb != payload) {
    char msg[200];
    snprintf(msg, sizeof msg, "%zu bytes where the header announces %llu", f->size, (unsigned long long)*hb + payload);
    return bad_file(f, msg);
  }
  uint32_t pc = eng_crc32_update(ct, 0, d + *hb, payload);
  if (pc != get_u32(d + 120)) {
    char msg[200];
    snprintf(msg, sizeof msg, "corrupt (checksum mismatch: stored %08x, computed %08x)", get_u32(d + 120), pc);
    return bad_file(f, msg);
  }
  return 0;
}

/* The header names this network (hash and description), this rank of ranks, and a usable step. */
static int check_identity(const nestcl_engine *e, const ck_file *f, int rank, int ranks, uint64_t hash)
{
  const unsigned char *d = f->data;
  uint64_t fh = get_u64(d + 16);
  if (fh != hash) {
    return nestcl_set_error(NESTCL_EINVAL,
                            "%s: the checkpoint was written for another network (its network hash %016llx, this "
                            "network's %016llx): restore needs the same populations, parameters, connections, "
                            "inputs, resolution, delays, weight type and seed",
                            f->path, (unsigned long long)fh, (unsigned long long)hash);
  }
  if ((int)get_u32(d + 40) != rank || (int)get_u32(d + 44) != ranks) {
    return bad_file(f, "its header names another rank than its file name");
  }
  int64_t lo, hi;
  eng_delay_steps(e, &lo, &hi);
  if (get_u64(d + 64) != e->n_global || (int)get_u32(d + 72) != e->n_pops || (int)get_u32(d + 76) != e->n_projs ||
      get_f64(d + 32) != e->cfg.resolution_ms || get_u32(d + 80) != (uint64_t)lo || get_u32(d + 84) != (uint64_t)hi ||
      get_u32(d + 88) != (uint64_t)(lo + hi)) {
    return bad_file(f, "it describes another network than its hash says (corrupt)");
  }
  /* the clock the restore sets: a negative (or absurd) step would place ring slots outside the ring */
  if (get_u64(d + 24) > (uint64_t)INT64_MAX / 4) {
    return bad_file(f, "its step is negative or out of range (corrupt)");
  }
  return 0;
}

/* The section table (after the header, hb bytes with it): sections back to back, filling the file. */
static int read_section_table(ck_file *f, uint32_t hb)
{
  const unsigned char *d = f->data;
  uint32_t n_sec = get_u32(d + 92);
  f->n_sec = (int)n_sec;
  f->sec = calloc(n_sec ? n_sec : 1, sizeof *f->sec);
  if (!f->sec) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  uint64_t at = hb;
  for (uint32_t s = 0; s < n_sec; ++s) {
    const unsigned char *t = d + CK_HEADER + (size_t)s * CK_ENTRY;
    ck_section *c = &f->sec[s];
    c->tag = get_u32(t);
    c->index = get_u32(t + 4);
    c->offset = get_u64(t + 8);
    c->bytes = get_u64(t + 16);
    c->count = get_u64(t + 24);
    if (c->offset != at || c->bytes > f->size - at) {
      return bad_file(f, "corrupt section table");
    }
    at += c->bytes;
  }
  if (at != f->size) {
    return bad_file(f, "corrupt section table (sections do not fill the file)");
  }
  return 0;
}

/* Reads and checks one rank file whole: size, magic, version, checksums, hash, partition, section table. */
static int read_file(const nestcl_engine *e, ck_file *f, int rank, int ranks, uint64_t hash)
{
  uint32_t hb = 0;
  int rc = slurp_file(f);
  if (!rc) rc = check_framing(f, &hb);
  if (!rc) rc = check_identity(e, f, rank, ranks, hash);
  if (rc) {
    return rc;
  }
  f->step = get_u64(f->data + 24);
  f->spikes_total = get_u64(f->data + 104);
  f->events_total = get_u64(f->data + 112);
  return read_section_table(f, hb);
}

static const ck_section *find_section(const ck_file *f, uint32_t tag, uint32_t index)
{
  for (int s = 0; s < f->n_sec; ++s) {
    if (f->sec[s].tag == tag && f->sec[s].index == index) {
      return &f->sec[s];
    }
  }
  return NULL;
}

static int missing_section(const ck_file *f, const char *what, int index)
{
  char msg[200];
  snprintf(msg, sizeof msg, "no %s section for %d, or one of the wrong size (corrupt)", what, index);
  return bad_file(f, msg);
}

/*
 * The per-neuron sections (NEUR, RING, HIST) of population p: sizes, and that
 * the files' ranges tile the population exactly.
 */
static int check_tiling(const nestcl_engine *e, const ck_set *s, uint32_t tag, const char *what, int p)
{
  const eng_population *pop = &e->pops[p];
  uint64_t covered = 0;
  /* Ranks hold contiguous, increasing ranges: file k's must start where file k - 1's ended. */
  for (int k = 0; k < s->n; ++k) {
    const ck_file *f = &s->f[k];
    const ck_section *c = find_section(f, tag, (uint32_t)p);
    if (!c || c->bytes < 16) {
      return missing_section(f, what, p);
    }
    const unsigned char *d = f->data + c->offset;
    uint64_t first = get_u64(d), n = get_u64(d + 8);
    size_t want = 16;
    if (tag == TAG_NEUR) {
      want += n * neuron_bytes(pop);
    } else if (tag == TAG_RING) {
      int64_t lo, hi;
      eng_delay_steps(e, &lo, &hi); /* the ring's slots as the build will make them */
      want += n * (uint64_t)pop->n_channels * (uint64_t)(lo + hi) * 8;
    } else {
      if (c->bytes < 24) {
        return missing_section(f, what, p);
      }
      uint64_t entries = get_u64(d + 16);
      want += 8 + n * 40 + entries * 28;
    }
    if (c->bytes != want || n > pop->n) {
      return missing_section(f, what, p);
    }
    if (n && first != pop->first + covered) {
      return bad_file(f, "its neurons do not continue the previous rank's (corrupt)");
    }
    covered += n;
  }
  if (covered != pop->n) {
    return nestcl_set_error(NESTCL_EINVAL, "checkpoint: the files hold %llu of the %u neurons of population %d",
                            (unsigned long long)covered, pop->n, p);
  }
  return 0;
}

/* Lists DIR's rank files (one rank count), reads and checks them all. */
static int load_set(const nestcl_engine *e, const char *dir, ck_set *s)
{
  memset(s, 0, sizeof *s);
  DIR *d = opendir(dir);
  if (!d) {
    return nestcl_set_error(NESTCL_EIO, "restore: cannot open the checkpoint folder %s: %s", dir, strerror(errno));
  }
  int R = 0, other = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    int r, n, end = 0;
    if (sscanf(de->d_name, "rank-%d-of-%d.nestcl-ckpt%n", &r, &n, &end) == 2 && de->d_name[end] == 0 && n > 0 &&
        r >= 0 && r < n) {
      if (R && n != R) {
        other = n;
      }
      R = R ? R : n;
    }
  }
  closedir(d);
  if (!R) {
    return nestcl_set_error(NESTCL_EINVAL, "restore: no checkpoint in %s (no rank-<r>-of-<R>.nestcl-ckpt files)", dir);
  }
  if (other) {
    return nestcl_set_error(NESTCL_EINVAL, "restore: %s holds checkpoints of %d and of %d ranks; keep one", dir, R,
                            other);
  }
  if (R > 65536) {
    return nestcl_set_error(NESTCL_EINVAL, "restore: %d rank files", R);
  }
  s->f = calloc((size_t)R, sizeof *s->f);
  if (!s->f) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  s->n = R;
  uint64_t hash = eng_network_hash(e);
  for (int r = 0; r < R; ++r) {
    file_name(s->f[r].path, sizeof s->f[r].path, dir, r, R);
    if (access(s->f[r].path, F_OK) != 0) {
      return nestcl_set_error(NESTCL_EINVAL, "restore: the checkpoint in %s is incomplete: %s is missing", dir,
                              s->f[r].path);
    }
  }
  for (int r = 0; r < R; ++r) {
    ck_file *f = &s->f[r];
    int rc = read_file(e, f, r, R, hash);
    if (rc) {
      return rc;
    }
    if (f->step != s->f[0].step) {
      return nestcl_set_error(NESTCL_EINVAL, "restore: %s is of step %llu, %s of step %llu: not one checkpoint",
                              f->path, (unsigned long long)f->step, s->f[0].path, (unsigned long long)s->f[0].step);
    }
  }
  for (int p = 0; p < e->n_pops; ++p) {
    int rc = check_tiling(e, s, TAG_NEUR, "neuron", p);
    if (!rc) rc = check_tiling(e, s, TAG_RING, "ring", p);
    if (!rc && pop_has_history(e, p)) rc = check_tiling(e, s, TAG_HIST, "spike history", p);
    if (rc) {
      return rc;
    }
  }
  for (int k = 0; k < R; ++k) {
    const ck_file *f = &s->f[k];
    const ck_section *c = find_section(f, TAG_CSRS, 0);
    if (!c || c->bytes != c->count * CSR_REC) {
      return missing_section(f, "static synapse", 0);
    }
    for (int j = 0; j < e->n_projs; ++j) {
      const eng_projection *pr = &e->projs[j];
      if (!pr->sm) {
        continue;
      }
      c = find_section(f, TAG_PLAS, (uint32_t)j);
      if (!c || c->bytes != c->count * plas_rec_bytes(pr)) {
        return missing_section(f, "plastic synapse", j);
      }
      c = find_section(f, TAG_PSRC, (uint32_t)j);
      if (!c || c->bytes != c->count * psrc_rec_bytes(pr)) {
        return missing_section(f, "per-source state", j);
      }
    }
  }
  return 0;
}

/* ---- applying ----------------------------------------------------------- */

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
  const int P = e->n_pops;
  uint64_t n_built = 0, h_built = 0, n_file = 0, h_file = 0;
  int wd = e->cfg.weight_type == NESTCL_WEIGHT_DOUBLE;
  for (int v = 0; v < e->n_vps; ++v) {
    for (int p = 0; p < P; ++p) {
      const eng_block *b = &e->vps[v].blocks[p];
      const blk_view *bv = &views[v * P + p];
      if (b->nnz == 0) {
        continue;
      }
      for (uint64_t src = 0; src < e->n_global; ++src) {
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
    const ck_section *c = find_section(f, TAG_CSRS, 0);
    const unsigned char *d = f->data + c->offset;
    for (uint64_t q = 0; q < c->count; ++q, d += CSR_REC) {
      uint64_t tgt = get_u64(d + 8);
      int local = 0;
      for (int p = 0; p < P && !local; ++p) {
        uint64_t first, n;
        rank_range(e, p, &first, &n);
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
  uint64_t key;  /* source gid << 32 | target gid */
  uint64_t a, b; /* tie-break and payload */
} keyed;

static int cmp_keyed(const void *x, const void *y)
{
  const keyed *p = x, *q = y;
  if (p->key != q->key) return p->key < q->key ? -1 : 1;
  if (p->a != q->a) return p->a < q->a ? -1 : 1;
  return p->b < q->b ? -1 : (p->b > q->b);
}

/* The files' PLAS records of projection j whose target is one of the rank's neurons [first, first + n), keyed into
   fk when fk is not NULL; returns their count. */
static size_t plas_file_keys(const ck_set *s, int j, size_t rec, uint64_t first, uint64_t n, keyed *fk)
{
  size_t m = 0;
  for (int k = 0; k < s->n; ++k) {
    const ck_section *c = find_section(&s->f[k], TAG_PLAS, (uint32_t)j);
    const unsigned char *d = s->f[k].data + c->offset;
    for (uint64_t q = 0; q < c->count; ++q, d += rec) {
      uint64_t src = get_u64(d), tgt = get_u64(d + 8);
      if (tgt >= first && tgt < first + n) {
        if (fk) fk[m] = (keyed){src << 32 | tgt, (uint64_t)k << 40 | q, (uint64_t)(uintptr_t)d};
        m++;
      }
    }
  }
  return m;
}

/* The rebuilt synapses of projection j on this rank, keyed into bk when bk is not NULL; returns their count. */
static size_t plas_built_keys(const nestcl_engine *e, const blk_view *views, int j, keyed *bk)
{
  const int P = e->n_pops;
  const eng_projection *pr = &e->projs[j];
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
          bk[m++] = (keyed){(pl->src_first + r) << 32 | (b->first_gid + pv->target[k]), (uint64_t)q << 40 | k,
                            (uint64_t)v};
        }
      }
    }
  }
  return m;
}

/* The sorted keys pair up one to one with equal delays: each rebuilt synapse takes its record's state. */
static int plas_pair(nestcl_engine *e, blk_view *views, int j, const keyed *fk, const keyed *bk, size_t n_built)
{
  const int P = e->n_pops;
  const eng_projection *pr = &e->projs[j];
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
  const eng_projection *pr = &e->projs[j];
  size_t rec = plas_rec_bytes(pr);
  uint64_t first, n;
  rank_range(e, pr->tgt, &first, &n);
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
  const int P = e->n_pops;
  const eng_projection *pr = &e->projs[j];
  const eng_syn_layout *L = &pr->lay;
  int rc = 0;
  uint32_t n_rows = e->pops[pr->src].n;
  const unsigned char **row = calloc(n_rows ? n_rows : 1, sizeof *row);
  if (!row) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  size_t srec = psrc_rec_bytes(pr);
  uint64_t src_first = e->pops[pr->src].first;
  for (int k = 0; k < s->n && !rc; ++k) {
    const ck_section *c = find_section(&s->f[k], TAG_PSRC, (uint32_t)j);
    const unsigned char *d = s->f[k].data + c->offset;
    for (uint64_t q = 0; q < c->count; ++q, d += srec) {
      uint64_t g = get_u64(d);
      if (g < src_first || g - src_first >= n_rows) {
        rc = bad_file(&s->f[k], "a per-source record names a neuron outside its population (corrupt)");
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
    const ck_section *c = find_section(&s->f[k], TAG_HIST, (uint32_t)b->pop);
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
                            "(raise it)", need, h->max_cap);
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
  const eng_population *pop = &e->pops[b->pop];
  const nestcl_model *m = pop->model;
  uint64_t lo = b->first_gid, hi = b->first_gid + b->n;
  const ck_section *c = find_section(f, TAG_NEUR, (uint32_t)b->pop);
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
  c = find_section(f, TAG_RING, (uint32_t)b->pop);
  d = f->data + c->offset;
  for (int r = 0; r < e->ring_slots; ++r) {
    uint32_t slot = (uint32_t)((e->origin + r) % e->ring_slots);
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
  const ck_section *c = find_section(f, TAG_HIST, (uint32_t)b->pop);
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
      return bad_file(f, "its spike history has more entries than it announces (corrupt)");
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
    return bad_file(f, "its spike history has fewer entries than it announces (corrupt)");
  }
  return 0;
}

/* Neuron fields, ring and history of one block from the files' per-neuron sections. */
static int restore_block(nestcl_engine *e, const ck_set *s, eng_block *b, blk_view *bv)
{
  int hist = pop_has_history(e, b->pop);
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
  const int P = e->n_pops;
  blk_view *views = calloc((size_t)e->n_vps * (size_t)P, sizeof *views);
  if (!views) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  /* The clock first: the ring's slots are placed by it. */
  e->origin = (int64_t)s->f[0].step;
  e->lag = 0;
  int rc = 0;
  for (int v = 0; v < e->n_vps && !rc; ++v) {
    for (int p = 0; p < P && !rc; ++p) {
      rc = view_open(e, &e->vps[v], &e->vps[v].blocks[p], 1, &views[v * P + p]);
    }
  }
  if (!rc) rc = verify_static(e, s, views);
  for (int j = 0; j < e->n_projs && !rc; ++j) {
    if (e->projs[j].sm) {
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
      rc = view_write_back(e, &e->vps[v], &e->vps[v].blocks[p], &views[v * P + p]);
    }
  }
  for (int v = 0; v < e->n_vps; ++v) {
    for (int p = 0; p < P; ++p) {
      view_drop_history(&e->vps[v].blocks[p], &views[v * P + p]);
      view_free(e, &e->vps[v].blocks[p], &views[v * P + p]);
    }
  }
  free(views);
  if (!rc) {
    e->steps_done = e->origin;
    e->spikes_total = s->f[0].spikes_total;
    e->events_total = s->f[0].events_total;
  }
  return rc;
}

int nestcl_engine_restore(nestcl_engine *e, const char *dir)
{
  if (!e || !dir || !*dir) {
    return nestcl_set_error(NESTCL_EINVAL, "restore: no folder given");
  }
  if (e->built && (e->steps_done || e->origin || e->lag)) {
    return nestcl_set_error(NESTCL_EINVAL, "restore after simulate(): a checkpoint restores into a network that has "
                            "not run yet");
  }
  if (e->n_pops == 0) {
    return nestcl_set_error(NESTCL_EINVAL, "restore: no neurons (describe the network first)");
  }
  /* Rank and size as the build will see them, for the collective decisions before it. */
  int rank, ranks;
  eng_world(e, &rank, &ranks);
  e->rank = rank;
  e->n_ranks = ranks;
  ck_set s;
  int rc = eng_agree(e, load_set(e, dir, &s));
  if (!rc) {
    rc = nestcl_engine_prepare(e);
    rc = eng_agree(e, rc);
  }
  if (!rc) {
    rc = eng_agree(e, apply_set(e, &s));
  }
  set_free(&s);
  if (rc && e->built) {
    /* Nothing half-loaded: the engine goes back to unbuilt (the next simulate() or restore() builds afresh). */
    eng_free_built(e);
    e->origin = 0;
    e->lag = 0;
    e->steps_done = 0;
    e->spikes_total = e->events_total = 0;
  }
  return rc;
}
