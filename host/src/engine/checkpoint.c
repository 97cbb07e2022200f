/*
 * Checkpoint and restart (docs/architecture.md, "Checkpoints", issue 13): one file per MPI rank,
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
 *
 * The code is in four files, one role each: checkpoint.c (this one: the
 * CRC, the network hash, record sizes and a block's state in host memory,
 * which writing and restoring share), checkpoint_write.c,
 * checkpoint_read.c (reading and checking the files) and
 * checkpoint_restore.c (applying them); checkpoint_internal.h declares what
 * they share.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint_internal.h"
#include "core/nestcl_core.h"

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
  nh_f64(&s, e->desc.cfg.resolution_ms);
  nh_f64(&s, e->desc.cfg.min_delay_ms);
  nh_f64(&s, e->desc.cfg.max_delay_ms);
  nh_u64(&s, e->desc.cfg.seed);
  nh_u64(&s, (uint64_t)e->desc.cfg.weight_type);
  nh_u64(&s, (uint64_t)e->desc.n_pops);
  for (int p = 0; p < e->desc.n_pops; ++p) {
    const eng_population *pop = &e->desc.pops[p];
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
  nh_u64(&s, (uint64_t)e->desc.n_projs);
  for (int p = 0; p < e->desc.n_projs; ++p) {
    const eng_projection *pr = &e->desc.projs[p];
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
  nh_u64(&s, (uint64_t)e->desc.n_drives);
  for (int k = 0; k < e->desc.n_drives; ++k) {
    const eng_drive *d = &e->desc.drives[k];
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
size_t eng_ck_neuron_bytes(const eng_population *p)
{
  size_t b = 0;
  for (int f = 0; f < p->model->n_fields; ++f) {
    b += nestcl_field_type_size(p->model->fields[f].type) * nestcl_field_len(&p->model->fields[f], p->K);
  }
  return b;
}

int eng_ck_pop_has_history(const nestcl_engine *e, int p)
{
  for (int j = 0; j < e->desc.n_projs; ++j) {
    if (e->desc.projs[j].tgt == p && e->desc.projs[j].sm && e->desc.projs[j].sm->uses_history) {
      return 1;
    }
  }
  return 0;
}

size_t eng_ck_plas_rec_bytes(const eng_projection *pr)
{
  return 24 + pr->lay.state_bytes;
}

size_t eng_ck_psrc_rec_bytes(const eng_projection *pr)
{
  return 8 + pr->lay.src_bytes;
}

/* ---- a block's state in host memory ------------------------------------- */

static void *alloc_bytes(size_t n)
{
  return malloc(n ? n : 1);
}

void eng_ck_view_free(const nestcl_engine *e, const eng_block *b, blk_view *v)
{
  const nestcl_model *m = e->desc.pops[b->pop].model;
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
  const eng_population *p = &e->desc.pops[b->pop];
  const nestcl_model *m = p->model;
  size_t ring_bytes = (size_t)e->clock.ring_slots * b->n_channels * b->n * 8;
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
  size_t wsize = e->desc.cfg.weight_type == NESTCL_WEIGHT_DOUBLE ? 8 : 4;
  size_t rp = (size_t)(e->desc.n_global + 1) * 8;
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
    if (*err == CL_SUCCESS)
      *err = clEnqueueReadBuffer(q, b->b_weight.mem, CL_TRUE, 0, b->nnz * wsize, v->weight, 0, NULL, NULL);
    if (*err == CL_SUCCESS && v->delay) {
      *err = clEnqueueReadBuffer(q, b->b_delay.mem, CL_TRUE, 0, b->nnz * 2, v->delay, 0, NULL, NULL);
    }
  }
  return 0;
}

/* A stream's plastic set pl: read back into copies of w, or aliased when batched (kept in host memory). */
static int view_read_plastic(nestcl_engine *e, cl_command_queue q, eng_plastic *pl, pl_view *w, cl_int *err)
{
  const eng_syn_layout *L = &e->desc.projs[pl->proj].lay;
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
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory for %llu plastic synapses", (unsigned long long)pl->nnz);
  }
  if (pl->nnz) {
    *err = clEnqueueReadBuffer(q, pl->b_target.mem, CL_TRUE, 0, pl->nnz * 4, w->target, 0, NULL, NULL);
    if (*err == CL_SUCCESS && per_syn) {
      *err = clEnqueueReadBuffer(q, pl->b_delay.mem, CL_TRUE, 0, pl->nnz * 2, w->delay, 0, NULL, NULL);
    }
    if (*err == CL_SUCCESS && sb)
      *err = clEnqueueReadBuffer(q, pl->b_state.mem, CL_TRUE, 0, sb, w->state, 0, NULL, NULL);
  }
  if (*err == CL_SUCCESS && rb) {
    *err = clEnqueueReadBuffer(q, pl->b_src_state.mem, CL_TRUE, 0, rb, w->src_state, 0, NULL, NULL);
  }
  return 0;
}

/* csr: the static CSR too (a checkpoint writes it; a restore verifies it). */
int eng_ck_view_open(nestcl_engine *e, eng_vp *vp, eng_block *b, int csr, blk_view *v)
{
  memset(v, 0, sizeof *v);
  v->pl = calloc((size_t)(b->n_plastic ? b->n_plastic : 1), sizeof *v->pl);
  if (!v->pl) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  return vp->ops->ck_open(e, vp, b, csr, v);
}

/* A thread's block is its own view (eng_vp_ops.ck_open): nothing to read, nothing to write back. */
int eng_ck_view_alias(nestcl_engine *e, eng_vp *vp, eng_block *b, int csr, blk_view *v)
{
  (void)e;
  (void)vp;
  (void)csr;
  view_alias(b, v);
  return 0;
}

/* A stream's block read back into arrays of the view's own (eng_vp_ops.ck_open). */
int eng_ck_view_read(nestcl_engine *e, eng_vp *vp, eng_block *b, int csr, blk_view *v)
{
  v->owned = 1;
  cl_command_queue q = nestcl_device_queue(e->device.dev, vp->queue);
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
    return eng_hist_download(&b->hist, e->device.dev, vp->queue);
  }
  return eng_cl_check(err, "reading a stream's state back for a checkpoint");
}

/* Restored arrays back to where the block lives; a thread's view was its block (no ck_write_back). */
int eng_ck_view_write_back(nestcl_engine *e, eng_vp *vp, eng_block *b, blk_view *v)
{
  return vp->ops->ck_write_back ? vp->ops->ck_write_back(e, vp, b, v) : 0;
}

/* A stream's restored arrays back to the device (fields, ring, plastic state, history; eng_vp_ops.ck_write_back). */
int eng_ck_view_write_device(nestcl_engine *e, eng_vp *vp, eng_block *b, blk_view *v)
{
  const eng_population *p = &e->desc.pops[b->pop];
  const nestcl_model *m = p->model;
  cl_command_queue q = nestcl_device_queue(e->device.dev, vp->queue);
  cl_int err = CL_SUCCESS;
  for (int f = 0; f < m->n_fields && err == CL_SUCCESS; ++f) {
    size_t bytes = nestcl_field_type_size(m->fields[f].type) * nestcl_field_len(&m->fields[f], p->K) * b->n;
    if (bytes) {
      err = clEnqueueWriteBuffer(q, b->b_fields[f].mem, CL_TRUE, 0, bytes, v->fields[f], 0, NULL, NULL);
    }
  }
  size_t ring_bytes = (size_t)e->clock.ring_slots * b->n_channels * b->n * 8;
  if (ring_bytes && err == CL_SUCCESS) {
    err = clEnqueueWriteBuffer(q, b->b_ring.mem, CL_TRUE, 0, ring_bytes, v->ring, 0, NULL, NULL);
  }
  for (int j = 0; j < b->n_plastic && err == CL_SUCCESS; ++j) {
    eng_plastic *pl = &b->plastic[j];
    const eng_syn_layout *L = &e->desc.projs[pl->proj].lay;
    if (!v->pl[j].owned) {
      continue;
    }
    size_t sb = pl->nnz * L->state_bytes, rb = (size_t)pl->n_rows * L->src_bytes;
    if (sb)
      err = clEnqueueWriteBuffer(q, pl->b_state.mem, CL_TRUE, 0, sb, v->pl[j].state, 0, NULL, NULL);
    if (rb && err == CL_SUCCESS) {
      err = clEnqueueWriteBuffer(q, pl->b_src_state.mem, CL_TRUE, 0, rb, v->pl[j].src_state, 0, NULL, NULL);
    }
  }
  int rc = eng_cl_check(err, "writing a restored state to the device");
  if (!rc && v->hist_downloaded) {
    rc = eng_hist_replace_device(&b->hist, e->device.dev);
    v->hist_downloaded = 0;
    /* The device loop's kernels (and its recorded super step) follow the new buffers. */
    if (!rc && e->device.res.on && vp == &e->vps[e->device.res.vp]) {
      rc = eng_resident_repoint(e, vp, b->pop);
    }
  }
  return rc;
}

/* Drops a stream's downloaded history copy (the device keeps its own). */
void eng_ck_view_drop_history(eng_block *b, blk_view *v)
{
  if (v->hist_downloaded) {
    for (int a = 0; a < ENG_H_ARRAYS; ++a) {
      free(b->hist.a[a]);
      b->hist.a[a] = NULL;
    }
    v->hist_downloaded = 0;
  }
}

/* The rank's neurons of population p: its blocks are contiguous in gid, VP after VP. */
void eng_ck_rank_range(const nestcl_engine *e, int p, uint64_t *first, uint64_t *n)
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
    *first = e->desc.pops[p].first;
  }
}

void eng_ck_file_name(char *out, size_t cap, const char *dir, int rank, int ranks)
{
  snprintf(out, cap, "%s/rank-%d-of-%d.nestcl-ckpt", dir, rank, ranks);
}
