/*
 * nestcl_block_set (nestcl/block_set.h): the blocks of one queue updated
 * together. A NEST stream VP runs one block per model (and run of node ids);
 * slice by slice each block cost its own launches and transfers (delivery,
 * plastic, staging, update, Poisson, counts), so a VP's cost per slice grew
 * with its number of models, and on a GPU each launch costs microseconds of
 * host time whatever it does. Here the blocks' buffers become parts of a few
 * (as the engine's device loop does with its populations'), so that one
 * generated kernel updates every block (block_set_source.c) and another
 * delivers the received rows into every block and draws every block's
 * Poisson generators; the staging of all blocks is one host array and one
 * transfer, the count words one read. The device loop (block_loop.c) runs on
 * the same parts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block_set_internal.h"

static int set_fail(cl_int err, const char *what)
{
  return nestcl_set_error(NESTCL_ECL, "block set: %s failed: %s", what, nestcl_cl_error_name(err));
}

static size_t align_up(size_t x, size_t a)
{
  return (x + a - 1) / a * a;
}

/* The device's alignment of a sub-buffer's origin, in bytes. */
static size_t base_align(nestcl_device *dev)
{
  cl_uint bits = 1024;
  clGetDeviceInfo(nestcl_device_id(dev), CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL);
  return bits / 8 > 8 ? bits / 8 : 8;
}

/*
 * Moves the device buffers *bufs[0..nb) (bytes[j] each) into one new buffer,
 * each at an aligned offset (offs[j], bytes), and replaces each by a
 * sub-buffer of it. The contents go through a host image, so that the new
 * buffer is created initialised (oclgrind counts CL_MEM_COPY_HOST_PTR as
 * initialising, not every copy). A part keeps 0 as its bytes: the parent
 * counts them (nestcl_buffer_alloc's accounting).
 */
static int rehome(nestcl_block_set *s, nestcl_mem_class cls, const char *what, int nb, nestcl_buffer **bufs,
                  const size_t *bytes, nestcl_buffer *parent, size_t *offs)
{
  const size_t align = base_align(s->dev);
  size_t total = 0;
  for (int j = 0; j < nb; ++j) {
    offs[j] = total;
    total += align_up(bytes[j] ? bytes[j] : 1, align);
  }
  total = total ? total : align; /* no blocks: a buffer all the same (kernels take it) */
  unsigned char *img = calloc(total, 1);
  if (!img) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  cl_command_queue q = nestcl_device_queue(s->dev, s->queue);
  cl_int err = CL_SUCCESS;
  for (int j = 0; j < nb && err == CL_SUCCESS; ++j) {
    if (bytes[j] && bufs[j]->mem) {
      err = clEnqueueReadBuffer(q, bufs[j]->mem, CL_TRUE, 0, bytes[j], img + offs[j], 0, NULL, NULL);
    }
  }
  int rc = err == CL_SUCCESS ? 0 : set_fail(err, "reading a block's buffer");
  if (!rc)
    rc = nestcl_buffer_alloc(s->dev, cls, what, total, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, img, parent);
  free(img);
  for (int j = 0; j < nb && !rc; ++j) {
    if (!bytes[j] || !bufs[j]->mem) {
      continue;
    }
    cl_buffer_region region = {offs[j], bytes[j]};
    cl_mem m = clCreateSubBuffer(parent->mem, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    if (err != CL_SUCCESS) {
      rc = set_fail(err, "clCreateSubBuffer");
      break;
    }
    nestcl_buffer_free(s->dev, bufs[j]);
    bufs[j]->mem = m;
    bufs[j]->bytes = 0;
    bufs[j]->cls = cls;
  }
  return rc;
}

/* One kind of buffer of every block into one (its offsets in elements of elem bytes, per block). */
static int rehome_kind(nestcl_block_set *s, nestcl_mem_class cls, const char *what, size_t elem,
                       nestcl_buffer *(*pick)(nestcl_block *, size_t *), nestcl_buffer *parent, size_t **off_out)
{
  nestcl_buffer **bufs = calloc((size_t)s->n + 1, sizeof *bufs);
  size_t *bytes = calloc((size_t)s->n + 1, sizeof *bytes), *offs = calloc((size_t)s->n + 1, sizeof *offs);
  *off_out = calloc((size_t)s->n + 1, sizeof **off_out);
  int rc = bufs && bytes && offs && *off_out ? 0 : nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  for (int j = 0; j < s->n && !rc; ++j) {
    bufs[j] = pick(s->blocks[j], &bytes[j]);
  }
  if (!rc)
    rc = rehome(s, cls, what, s->n, bufs, bytes, parent, offs);
  for (int j = 0; j < s->n && !rc; ++j) {
    (*off_out)[j] = offs[j] / elem;
  }
  free(bufs);
  free(bytes);
  free(offs);
  return rc;
}

static nestcl_buffer *pick_ring(nestcl_block *b, size_t *bytes)
{
  *bytes = (size_t)b->c.ring_slots * b->n_channels * b->c.n * 8;
  return &b->b_ring;
}
static nestcl_buffer *pick_count(nestcl_block *b, size_t *bytes)
{
  *bytes = sizeof b->count;
  return &b->b_count;
}
static nestcl_buffer *pick_spikes(nestcl_block *b, size_t *bytes)
{
  *bytes = (size_t)b->spike_cap * 8;
  return &b->b_spikes;
}
static nestcl_buffer *pick_rec(nestcl_block *b, size_t *bytes)
{
  *bytes = b->rec_elems * 8;
  return &b->b_rec;
}
static nestcl_buffer *pick_stage(nestcl_block *b, size_t *bytes)
{
  *bytes = b->stage_elems * 8;
  return &b->b_stage;
}

/* Every field of every merged block into the one state buffer: the table's byte offsets (tab_fields[j][f]). */
static int rehome_fields(nestcl_block_set *s, uint64_t **field_off)
{
  int nb = 0;
  for (int j = 0; j < s->n; ++j) {
    nb += s->merged[j] ? s->blocks[j]->c.model->n_fields : 0;
  }
  nestcl_buffer **bufs = calloc((size_t)nb + 1, sizeof *bufs);
  size_t *bytes = calloc((size_t)nb + 1, sizeof *bytes), *offs = calloc((size_t)nb + 1, sizeof *offs);
  int rc = bufs && bytes && offs ? 0 : nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  int at = 0;
  for (int j = 0; j < s->n && !rc; ++j) {
    nestcl_block *b = s->blocks[j];
    for (int f = 0; s->merged[j] && f < b->c.model->n_fields; ++f, ++at) {
      bufs[at] = &b->b_fields[f];
      bytes[at] = b->field_bytes[f];
    }
  }
  if (!rc)
    rc = rehome(s, NESTCL_MEM_STATE, "merged state", nb, bufs, bytes, &s->b_state, offs);
  at = 0;
  for (int j = 0; j < s->n && !rc; ++j) {
    for (int f = 0; s->merged[j] && f < s->blocks[j]->c.model->n_fields; ++f, ++at) {
      field_off[j][f] = offs[at];
    }
  }
  free(bufs);
  free(bytes);
  free(offs);
  return rc;
}

/* The blocks' host staging as parts of one array, so that a slice's staging is one transfer. */
static int share_staging(nestcl_block_set *s)
{
  s->stage_elems = 0;
  for (int j = 0; j < s->n; ++j) {
    s->stage_elems = s->stage_off[j] + s->blocks[j]->stage_elems > s->stage_elems
      ? s->stage_off[j] + s->blocks[j]->stage_elems
      : s->stage_elems;
  }
  s->stage_host = calloc(s->stage_elems + 1, sizeof *s->stage_host);
  if (!s->stage_host) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  for (int j = 0; j < s->n; ++j) {
    nestcl_block *b = s->blocks[j];
    memcpy(s->stage_host + s->stage_off[j], b->stage, b->stage_elems * 8);
    if (!b->stage_shared)
      free(b->stage);
    b->stage = s->stage_host + s->stage_off[j];
    b->stage_shared = 1;
  }
  return 0;
}

/* The blocks must be one queue's device blocks with one clock and seed. */
static int check_blocks(nestcl_block *const *blocks, int n)
{
  for (int j = 0; j < n; ++j) {
    const nestcl_block *b = blocks[j], *b0 = blocks[0];
    if (!b || b->c.on_host || (b->c.n && !b->k_update)) {
      return nestcl_set_error(NESTCL_EINVAL, "block set: block %d is %s", j,
                              !b ? "missing" : (b->c.on_host ? "a host block" : "not uploaded"));
    }
    if (b->c.queue != b0->c.queue || b->c.min_delay_steps != b0->c.min_delay_steps ||
        b->c.ring_slots != b0->c.ring_slots || b->c.resolution_ms != b0->c.resolution_ms ||
        b->c.rng_seed != b0->c.rng_seed) {
      return nestcl_set_error(NESTCL_EINVAL,
                              "block set: block %d (%s) differs from block 0 in its queue, min delay, ring, "
                              "resolution or seed",
                              j, b->c.model->name);
    }
  }
  return 0;
}

/* Whether block b's update can be a case of the merged kernel: a model without spike offsets and events. */
static int mergeable(const nestcl_block *b)
{
  return !b->c.model->spike_offsets && !b->c.model->event_queue;
}

static int set_parts(nestcl_block_set *s, uint64_t ***field_off)
{
  int rc = rehome_kind(s, NESTCL_MEM_RING, "merged rings", 8, pick_ring, &s->b_ring, &s->ring_off);
  if (!rc)
    rc = rehome_kind(s, NESTCL_MEM_OTHER, "merged spike counts", 4, pick_count, &s->b_counts, &s->count_off);
  if (!rc)
    rc = rehome_kind(s, NESTCL_MEM_OTHER, "merged spike lists", 8, pick_spikes, &s->b_spikes, &s->spike_off);
  if (!rc)
    rc = rehome_kind(s, NESTCL_MEM_RECORDING, "merged records", 8, pick_rec, &s->b_rec, &s->rec_off);
  if (!rc)
    rc = rehome_kind(s, NESTCL_MEM_RING, "merged staging", 8, pick_stage, &s->b_stage, &s->stage_off);
  *field_off = calloc((size_t)s->n + 1, sizeof **field_off);
  if (!rc && !*field_off)
    rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  for (int j = 0; j < s->n && !rc; ++j) {
    (*field_off)[j] = calloc((size_t)s->blocks[j]->c.model->n_fields + 1, sizeof ***field_off);
    if (!(*field_off)[j])
      rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  if (!rc)
    rc = rehome_fields(s, *field_off);
  if (!rc)
    rc = share_staging(s);
  for (int j = 0; j < s->n && !rc; ++j) {
    rc = nestcl_block_repoint(s->blocks[j]);
  }
  if (!rc) {
    s->count_words = s->n ? s->count_off[s->n - 1] + NESTCL_COUNT_WORDS : 0;
    s->counts_host = calloc(s->count_words + 1, sizeof *s->counts_host);
    s->counts_zero = calloc(s->count_words + 1, sizeof *s->counts_zero);
    if (!s->counts_host || !s->counts_zero)
      rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  return rc;
}

/* The merged update's table: per block its sizes and the offsets of its parts. */
static int set_table(nestcl_block_set *s, uint64_t **field_off)
{
  int max_fields = 0;
  for (int j = 0; j < s->n; ++j) {
    max_fields = s->blocks[j]->c.model->n_fields > max_fields ? s->blocks[j]->c.model->n_fields : max_fields;
  }
  const size_t stride = SET_TAB_FIXED + (size_t)max_fields;
  uint64_t *tab = calloc((size_t)(s->n ? s->n : 1) * stride, sizeof *tab);
  if (!tab) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  for (int j = 0; j < s->n; ++j) {
    const nestcl_block *b = s->blocks[j];
    uint64_t *t = tab + (size_t)j * stride;
    /* A block that is not merged has no case in the kernel (all ones) and no neurons there. */
    const int mi = set_model_index(s, j);
    t[SET_TAB_MODEL] = mi < 0 ? ~(uint64_t)0 : (uint64_t)mi;
    t[SET_TAB_N] = mi < 0 ? 0 : b->c.n;
    t[SET_TAB_K] = b->c.K;
    t[SET_TAB_CHANNELS] = b->n_channels;
    t[SET_TAB_CAP] = b->spike_cap;
    t[SET_TAB_RING] = s->ring_off[j];
    t[SET_TAB_COUNT] = s->count_off[j];
    t[SET_TAB_SPIKES] = s->spike_off[j];
    t[SET_TAB_REC] = s->rec_off[j];
    t[SET_TAB_STAGE] = s->stage_off[j];
    t[SET_TAB_ID_FIRST] = b->c.id_first;
    t[SET_TAB_ID_STRIDE] = b->c.id_stride ? b->c.id_stride : 1;
    t[SET_TAB_REC_INTERVAL] = b->c.record ? 1 : 0;
    for (int f = 0; f < b->c.model->n_fields; ++f) {
      t[SET_TAB_FIXED + f] = field_off[j][f];
    }
  }
  int rc = nestcl_buffer_alloc(s->dev, NESTCL_MEM_OTHER, "merged update table", (size_t)(s->n ? s->n : 1) * stride * 8,
                               CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, tab, &s->b_tab);
  free(tab);
  return rc;
}

int nestcl_block_set_create(nestcl_device *dev, nestcl_block *const *blocks, int n, nestcl_block_set **out)
{
  *out = NULL;
  int rc = n < 0 || (n && !blocks) ? nestcl_set_error(NESTCL_EINVAL, "block set: %d blocks", n) : 0;
  if (!rc)
    rc = check_blocks(blocks, n);
  nestcl_block_set *s = rc ? NULL : calloc(1, sizeof *s);
  if (!rc && !s)
    rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  if (rc) {
    return rc;
  }
  s->dev = dev;
  s->n = n;
  s->blocks = calloc((size_t)n + 1, sizeof *s->blocks);
  s->merged = calloc((size_t)n + 1, sizeof *s->merged);
  s->loop.failed_block = -1;
  if (!s->blocks || !s->merged) {
    nestcl_block_set_destroy(s);
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  s->merged_all = 1;
  for (int j = 0; j < n; ++j) {
    s->blocks[j] = blocks[j];
    s->merged[j] = mergeable(blocks[j]);
    s->merged_all = s->merged_all && s->merged[j];
  }
  if (n) {
    s->queue = blocks[0]->c.queue;
    s->min_delay = blocks[0]->c.min_delay_steps;
    s->ring_slots = blocks[0]->c.ring_slots;
    s->resolution_ms = blocks[0]->c.resolution_ms;
    s->rng_seed = blocks[0]->c.rng_seed;
    s->contiguous = blocks[0]->contiguous;
  }
  uint64_t **field_off = NULL;
  rc = set_parts(s, &field_off);
  if (!rc)
    rc = set_table(s, field_off);
  for (int j = 0; field_off && j < n; ++j) {
    free(field_off[j]);
  }
  free(field_off);
  if (!rc && n)
    rc = set_update_build(s);
  if (!rc && n)
    rc = set_deliver_build(s);
  if (rc) {
    nestcl_block_set_destroy(s);
    return rc;
  }
  *out = s;
  return 0;
}

int nestcl_block_set_refresh(nestcl_block_set *s)
{
  if (!s) {
    return nestcl_set_error(NESTCL_EINVAL, "block set refresh: no set");
  }
  if (s->loop.on) {
    return nestcl_set_error(NESTCL_EINVAL, "block set refresh: the device loop runs");
  }
  set_loop_free(s); /* a kept loop is made again for the blocks as they are now */
  return s->n ? set_update_build(s) : 0;
}

void nestcl_block_set_destroy(nestcl_block_set *s)
{
  if (!s) {
    return;
  }
  set_loop_free(s);
  if (s->k_update)
    clReleaseKernel(s->k_update);
  if (s->prog_update)
    clReleaseProgram(s->prog_update);
  for (int k = 0; k < s->n_launches; ++k) {
    if (s->launches[k].k)
      clReleaseKernel(s->launches[k].k);
  }
  if (s->prog_deliver)
    clReleaseProgram(s->prog_deliver);
  nestcl_buffer *bufs[] = {&s->b_ring,  &s->b_counts, &s->b_spikes, &s->b_rec,
                           &s->b_stage, &s->b_state,  &s->b_tab,    &s->b_list};
  for (size_t k = 0; k < sizeof bufs / sizeof *bufs; ++k) {
    nestcl_buffer_free(s->dev, bufs[k]);
  }
  /* The blocks' staging is part of ours: each block gets its own copy back, so it outlives the set. */
  for (int j = 0; s->stage_host && j < s->n; ++j) {
    nestcl_block *b = s->blocks[j];
    int64_t *own = calloc(b->stage_elems + 1, sizeof *own);
    if (own) {
      memcpy(own, b->stage, b->stage_elems * 8);
    }
    b->stage = own;
    b->stage_shared = 0;
  }
  free(s->stage_host);
  free(s->counts_host);
  free(s->counts_zero);
  free(s->ring_off);
  free(s->count_off);
  free(s->spike_off);
  free(s->rec_off);
  free(s->stage_off);
  free(s->items);
  free(s->launches);
  free(s->list);
  free(s->blocks);
  free(s->merged);
  free(s);
}

void nestcl_block_set_enqueued(const nestcl_block_set *s, uint64_t *launches, uint64_t *waits)
{
  if (launches)
    *launches = s ? s->enq.launches : 0;
  if (waits)
    *waits = s ? s->enq.waits : 0;
}

size_t nestcl_block_set_device_bytes(const nestcl_block_set *s)
{
  if (!s) {
    return 0;
  }
  size_t b = s->b_ring.bytes + s->b_counts.bytes + s->b_spikes.bytes + s->b_rec.bytes + s->b_stage.bytes +
    s->b_state.bytes + s->b_tab.bytes + s->b_list.bytes;
  const set_loop *l = &s->loop;
  const nestcl_buffer *lb[] = {&l->b_table,       &l->b_gids,       &l->b_degree,     &l->b_marks,
                               &l->b_status,      &l->b_errs,       &l->b_rec,        &l->b_global,
                               &l->b_bucket_word, &l->b_bucket_src, &l->b_bucket_lags};
  for (size_t k = 0; k < sizeof lb / sizeof *lb; ++k) {
    b += lb[k]->bytes;
  }
  return b;
}

/* ---- slice by slice ---------------------------------------------------- */

int nestcl_block_set_deliver(nestcl_block_set *s, int64_t emit_origin, const uint32_t *rows, const uint32_t *lags,
                             uint32_t n)
{
  if (n == 0) {
    return 0;
  }
  if (s->n_list && emit_origin != s->list_origin) {
    return nestcl_set_error(NESTCL_EINVAL, "block set: spikes of two slices (origins %lld and %lld) before one update",
                            (long long)s->list_origin, (long long)emit_origin);
  }
  for (uint32_t k = 0; k < n; ++k) {
    for (int j = 0; j < s->n; ++j) {
      if (rows[k] >= s->blocks[j]->n_rows && s->blocks[j]->nnz) {
        return nestcl_set_error(NESTCL_EINVAL, "block set: a spike of row %u, but block %d has %u rows", rows[k], j,
                                s->blocks[j]->n_rows);
      }
    }
    if (lags[k] >= s->min_delay) {
      return nestcl_set_error(NESTCL_EINVAL, "block set: a spike at lag %u of a slice of %u", lags[k], s->min_delay);
    }
  }
  if ((uint64_t)s->n_list + n > s->list_cap) {
    uint64_t cap = s->list_cap ? s->list_cap : 1024;
    while (cap < (uint64_t)s->n_list + n)
      cap *= 2;
    uint32_t *t = cap <= UINT32_MAX / 2 ? realloc(s->list, (size_t)cap * 8) : NULL;
    if (!t) {
      return nestcl_set_error(NESTCL_ENOMEM, "block set: no room for %llu received spikes",
                              (unsigned long long)s->n_list + n);
    }
    s->list = t;
    s->list_cap = (uint32_t)cap;
  }
  for (uint32_t k = 0; k < n; ++k) {
    s->list[2 * ((size_t)s->n_list + k)] = rows[k];
    s->list[2 * ((size_t)s->n_list + k) + 1] = lags[k];
  }
  s->n_list += n;
  s->list_origin = emit_origin;
  return 0;
}

/* The received rows to the device (the list buffer grown to their number); mode 0 of the merged delivery. */
static cl_int write_list(nestcl_block_set *s, cl_command_queue q)
{
  const size_t bytes = (size_t)s->n_list * 8;
  if (s->b_list.bytes < bytes) {
    nestcl_buffer_free(s->dev, &s->b_list);
    if (nestcl_buffer_alloc(s->dev, NESTCL_MEM_OTHER, "received spikes", (size_t)s->list_cap * 8, CL_MEM_READ_ONLY,
                            NULL, &s->b_list)) {
      return CL_OUT_OF_RESOURCES;
    }
  }
  return bytes ? nestcl_enq_write(&s->enq, q, s->b_list.mem, CL_FALSE, 0, bytes, s->list, 0, NULL, NULL) : CL_SUCCESS;
}

/* Every block's own list of rows (nestcl_block_deliver) would bypass the merged delivery: refused. */
static int check_no_own_rows(const nestcl_block_set *s)
{
  for (int j = 0; j < s->n; ++j) {
    if (s->blocks[j]->n_pend) {
      return nestcl_set_error(NESTCL_EINVAL,
                              "block set: block %d (%s) has spikes of its own (nestcl_block_deliver); "
                              "give a set's blocks their rows with nestcl_block_set_deliver",
                              j, s->blocks[j]->c.model->name);
    }
  }
  return 0;
}

int nestcl_block_set_update_enqueue(nestcl_block_set *s, int64_t origin_steps, int from, int to)
{
  s->in_flight = 0;
  int any = 0, rc = check_no_own_rows(s);
  for (int j = 0; j < s->n && !rc; ++j) {
    int a = 0;
    rc = nestcl_block_update_check(s->blocks[j], from, to, &a);
    any = any || a;
  }
  if (rc || !any) {
    s->n_list = 0;
    return rc;
  }
  cl_command_queue q = nestcl_device_queue(s->dev, s->queue);
  cl_int err = write_list(s, q);
  if (err == CL_SUCCESS)
    err = set_deliver_enqueue(s, 0, s->b_list.mem, s->n_list, s->list_origin, origin_steps, from, to, NULL, 0);
  s->n_list = 0;
  for (int j = 0; j < s->n && err == CL_SUCCESS; ++j) {
    err = nestcl_block_enqueue_plastic(s->blocks[j], q);
  }
  if (err == CL_SUCCESS)
    err = nestcl_enq_write(&s->enq, q, s->b_stage.mem, CL_FALSE, 0, s->stage_elems * 8, s->stage_host, 0, NULL, NULL);
  if (err == CL_SUCCESS && s->count_words)
    err = nestcl_enq_write(&s->enq, q, s->b_counts.mem, CL_FALSE, 0, s->count_words * 4, s->counts_zero, 0, NULL, NULL);
  if (err == CL_SUCCESS)
    err = set_update_enqueue(s, origin_steps, from, to, 1, NULL, 0);
  if (err != CL_SUCCESS) {
    return set_fail(err, "the update");
  }
  for (int j = 0; j < s->n && !rc; ++j) {
    if (!s->merged[j] && s->blocks[j]->c.n)
      rc = nestcl_block_enqueue_own_update(s->blocks[j], q, origin_steps, from, to);
  }
  if (!rc && s->count_words) {
    err = nestcl_enq_read(&s->enq, q, s->b_counts.mem, CL_FALSE, 0, s->count_words * 4, s->counts_host, 0, NULL, NULL);
    rc = err == CL_SUCCESS ? 0 : set_fail(err, "reading the counts");
  }
  for (int j = 0; j < s->n && !rc; ++j) {
    if (s->blocks[j]->c.n)
      rc = nestcl_block_enqueue_readback(s->blocks[j], q, origin_steps, from, to, 0);
  }
  if (!rc && (err = clFlush(q)) != CL_SUCCESS)
    rc = set_fail(err, "clFlush");
  s->in_flight = !rc;
  return rc;
}

int nestcl_block_set_finish(nestcl_block_set *s)
{
  if (!s->in_flight) {
    return 0;
  }
  cl_int err = nestcl_enq_finish(&s->enq, nestcl_device_queue(s->dev, s->queue));
  return err == CL_SUCCESS ? 0 : set_fail(err, "waiting for the queue");
}

int nestcl_block_set_collect(nestcl_block_set *s)
{
  int first = 0;
  for (int j = 0; j < s->n; ++j) {
    nestcl_block *b = s->blocks[j];
    if (s->in_flight && b->in_flight) {
      memcpy(b->count, s->counts_host + s->count_off[j], sizeof b->count);
    }
    const int rc = nestcl_block_update_collect(b);
    first = first ? first : rc;
  }
  s->in_flight = 0;
  return first;
}
