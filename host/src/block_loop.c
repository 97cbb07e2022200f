/*
 * The device loop of a block set (nestcl/block_set.h): whole slices of a NEST
 * stream VP that runs every neuron of the network, with the host waiting once
 * per sync interval instead of once per slice.
 *
 * Slice by slice (block_set.c) the host is the clock: it reads each slice's
 * spikes back, hands them to NEST, which exchanges them and hands back the
 * rows to deliver; on a GPU each such round trip costs tens of microseconds
 * whatever the network does (the H200: 147 us per slice against 51 us in the
 * engine's device loop). When nothing but the device takes part in a slice
 * (every neuron on this set, every synapse and generator on the device,
 * recorders that can wait: the caller decides), the device runs the slice on
 * its own, with the engine's device-loop kernels (engine_kernels.cl,
 * plastic_kernels.cl) over the set's merged buffers:
 *   1. the merged update of every block (block_set_source.c), which does
 *      nothing once the loop has halted;
 *   2. nestcl_gather: every block's spikes into the slice's list of
 *      (loop id, lag), kept in the recording buffer as well (every spike:
 *      the caller hands them to NEST at the drain), and, for the sources and
 *      targets of plastic synapses, into their buckets (one per neuron, its
 *      spikes of the slice); the count words cleared, a failure kept with
 *      the slice's origin;
 *   3. per block with a spike history, nestcl_hist_append_loop (NEST's
 *      set_spiketime for the slice's spikes, before any plastic delivery
 *      reads it); a full ring halts the loop at this slice;
 *   4. per plastic set, nestcl_plastic over the slice's sources (loop 1):
 *      each synapse takes its source's spikes in time order;
 *   5. the merged delivery of the list into every block (rows are loop ids)
 *      and the Poisson drives of the slice (they land in later slices: a
 *      drive's delay counts in the min delay).
 * Every sync_interval slices (fewer when the buffer for every neuron's spikes
 * would exceed its budget) the host drains: the status words and the kept
 * spikes in one round trip. A halt (a history ring full) is undone there: the
 * ring grows, the rest of the halted slice runs, and the slices enqueued
 * after it run again. Results are the slice-by-slice path's bit for bit: the
 * rings' sums are exact, each synapse sees its source's spikes in time order,
 * histories are appended before they are read, and the caller gets the
 * spikes in NEST's order (sorted here).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block_set_internal.h"
#include "core/nestcl_core.h"
#include "model_failure.h"

/* Bytes the buffer of kept spikes may take, at most. */
#define LOOP_REC_BUDGET ((size_t)128 << 20)
#define LOOP_DEFAULT_K 250u

/* nestcl_gather's arguments (engine_kernels.cl) that change per slice. */
enum { GA_ORIGIN = 5, GA_PARITY = 6, GA_WINDOW = 13 };
/* nestcl_hist_append_loop's (engine_kernels.cl): the origin, then the history's arrays from HA_HIST on. */
enum { HA_ORIGIN = 6, HA_HIST = 17 };

static int loop_fail(cl_int err, const char *what)
{
  return nestcl_set_error(NESTCL_ECL, "device loop: %s failed: %s", what, nestcl_cl_error_name(err));
}

uint64_t nestcl_block_set_first(const nestcl_block_set *s, int b)
{
  uint64_t first = 0;
  for (int j = 0; j < b && j < s->n; ++j) {
    first += s->blocks[j]->c.n;
  }
  return first;
}

static int any_plastic(const nestcl_block_set *s)
{
  for (int j = 0; j < s->n; ++j) {
    if (s->blocks[j]->n_plastic) {
      return 1;
    }
  }
  return 0;
}

int nestcl_block_set_loop_possible(const nestcl_block_set *s, char *why, size_t cap)
{
  const uint64_t lids = nestcl_block_set_first(s, s->n);
  const int plastic = any_plastic(s);
  for (int j = 0; j < s->n; ++j) {
    const nestcl_block *b = s->blocks[j];
    const char *m = b->c.model->name;
    if (!s->merged[j]) {
      snprintf(why, cap, "%s sets spike offsets or takes precise spike events, which the device loop does not", m);
      return 0;
    }
    if (plastic && b->c.model->multiplicity) {
      snprintf(why, cap, "%s sends spikes of multiplicity beside plastic synapses", m);
      return 0;
    }
    if (b->nnz && b->n_rows != lids) {
      snprintf(why, cap, "the synapse rows of %s are not the loop's %llu source ids", m, (unsigned long long)lids);
      return 0;
    }
    for (int k = 0; k < b->n_plastic; ++k) {
      if (b->plastic[k].n_rows != lids) {
        snprintf(why, cap, "the %s synapses onto %s are not in rows of the loop's source ids", b->plastic[k].sm->name,
                 m);
        return 0;
      }
    }
  }
  if (plastic && lids * s->min_delay > UINT32_MAX) {
    snprintf(why, cap, "%llu neurons are too many for the device loop's spike buckets", (unsigned long long)lids);
    return 0;
  }
  return 1;
}

void set_loop_free(nestcl_block_set *s)
{
  set_loop *l = &s->loop;
  if (l->k_gather)
    clReleaseKernel(l->k_gather);
  for (int j = 0; l->k_hist && j < s->n; ++j) {
    if (l->k_hist[j])
      clReleaseKernel(l->k_hist[j]);
  }
  nestcl_buffer *bufs[] = {&l->b_table, &l->b_gids,   &l->b_degree,      &l->b_marks,      &l->b_status,     &l->b_errs,
                           &l->b_rec,   &l->b_global, &l->b_bucket_word, &l->b_bucket_src, &l->b_bucket_lags};
  for (size_t k = 0; k < sizeof bufs / sizeof *bufs; ++k) {
    nestcl_buffer_free(s->dev, bufs[k]);
  }
  free(l->k_hist);
  free(l->first);
  free(l->origins);
  free(l->errs);
  free(l->rec_host);
  free(l->spikes);
  uint64_t resumes = l->resumes;
  memset(l, 0, sizeof *l);
  l->resumes = resumes;
  l->failed_block = -1;
}

/*
 * Slices between drains: sync_interval, fewer when the kept spikes of every
 * neuron spiking every step (and a block's room for more: block_internal.h)
 * would not fit the budget; *rec_per_slice is that bound per slice.
 */
static uint32_t plan_k(const nestcl_block_set *s, uint32_t sync_interval, uint64_t *rec_per_slice)
{
  uint64_t per = NESTCL_BLOCK_RUN_ROOM;
  for (int j = 0; j < s->n; ++j) {
    per += (uint64_t)s->blocks[j]->c.n * s->min_delay;
  }
  *rec_per_slice = per;
  uint64_t k = LOOP_REC_BUDGET / 8 / per;
  k = k < 1 ? 1 : k;
  uint32_t want = sync_interval ? sync_interval : LOOP_DEFAULT_K;
  return k < want ? (uint32_t)k : want;
}

/* Row r's length in the CSR behind row_ptr (rows + 1 words on the device), added to degree[r]. */
static int add_rows(nestcl_block_set *s, cl_mem row_ptr, uint32_t rows, uint32_t *degree)
{
  uint64_t *rp = malloc(((size_t)rows + 1) * 8);
  if (!rp) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  cl_int err = clEnqueueReadBuffer(nestcl_device_queue(s->dev, s->queue), row_ptr, CL_TRUE, 0, ((size_t)rows + 1) * 8,
                                   rp, 0, NULL, NULL);
  for (uint32_t r = 0; err == CL_SUCCESS && r < rows; ++r) {
    degree[r] += (uint32_t)(rp[r + 1] - rp[r]);
  }
  free(rp);
  return err == CL_SUCCESS ? 0 : loop_fail(err, "reading the synapse rows");
}

/* Each source's synapses, static and plastic, over every block: the events its spike makes (statistics). */
static int out_degrees(nestcl_block_set *s, uint32_t *degree)
{
  int rc = 0;
  for (int j = 0; j < s->n && !rc; ++j) {
    const nestcl_block *b = s->blocks[j];
    if (b->nnz)
      rc = add_rows(s, b->b_row_ptr.mem, b->n_rows, degree);
    for (int k = 0; k < b->n_plastic && !rc; ++k) {
      if (b->plastic[k].nnz)
        rc = add_rows(s, b->plastic[k].b_row.mem, b->plastic[k].n_rows, degree);
    }
  }
  return rc;
}

/* The host-side tables: per block its count words' and list's offsets, capacity and size; the first loop ids. */
static int loop_tables(nestcl_block_set *s, uint32_t **table, uint64_t **gids, uint32_t **degree, uint8_t **marks)
{
  set_loop *l = &s->loop;
  const int plastic = any_plastic(s);
  *table = calloc(4 * (size_t)s->n + 1, sizeof **table);
  *gids = calloc((size_t)s->n + 1, sizeof **gids);
  *degree = calloc((size_t)l->lids + 1, sizeof **degree);
  *marks = calloc((size_t)l->lids + 1, 1);
  if (!*table || !*gids || !*degree || !*marks) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  for (int j = 0; j < s->n; ++j) {
    const nestcl_block *b = s->blocks[j];
    (*table)[4 * j] = (uint32_t)s->count_off[j];
    (*table)[4 * j + 1] = (uint32_t)s->spike_off[j];
    (*table)[4 * j + 2] = b->spike_cap;
    (*table)[4 * j + 3] = b->c.n;
    (*gids)[j] = l->first[j];
  }
  /* Every spike is kept (the caller hands each to NEST); sources and targets of plastic synapses get buckets. */
  for (uint64_t g = 0; g < l->lids; ++g) {
    (*marks)[g] = (uint8_t)(NESTCL_MARK_RECORDED | (plastic ? NESTCL_MARK_BUCKET : 0u));
  }
  return out_degrees(s, *degree);
}

static int loop_buffers(nestcl_block_set *s, uint32_t *table, uint64_t *gids, uint32_t *degree, uint8_t *marks,
                        uint64_t rec_per_slice)
{
  set_loop *l = &s->loop;
  const cl_mem_flags ro = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, rw = CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR;
  l->rec_cap = (uint64_t)l->k * rec_per_slice;
  uint64_t list_cap = 0;
  for (int j = 0; j < s->n; ++j) {
    list_cap += s->blocks[j]->spike_cap;
  }
  const size_t lids = l->lids ? l->lids : 1, w = l->bucket_width ? l->bucket_width : 1;
  /*
   * The buckets, the list and the error words start as zeros (as the engine's device loop's): oclgrind
   * otherwise takes what the gather wrote there for uninitialised in the kernels after it. The kept
   * spikes, read only by the host, do not.
   */
  const size_t zero_words = lids * w + (size_t)list_cap * 2 + (size_t)s->n * NESTCL_RES_ERR_WORDS + lids * 2 + 2;
  void *zeros = calloc(zero_words, 4);
  l->errs = calloc((size_t)s->n * NESTCL_RES_ERR_WORDS + 1, sizeof *l->errs);
  l->rec_host = calloc(2 * l->rec_cap + 2, sizeof *l->rec_host);
  if (!zeros || !l->errs || !l->rec_host) {
    free(zeros);
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  nestcl_device *d = s->dev;
  const cl_mem_flags scratch = CL_MEM_READ_WRITE;
  int rc = nestcl_buffer_alloc(d, NESTCL_MEM_OTHER, "loop table", (size_t)s->n * 16 + 4, ro, table, &l->b_table);
  if (!rc)
    rc = nestcl_buffer_alloc(d, NESTCL_MEM_OTHER, "loop first ids", (size_t)s->n * 8 + 8, ro, gids, &l->b_gids);
  if (!rc)
    rc = nestcl_buffer_alloc(d, NESTCL_MEM_OTHER, "loop out-degrees", lids * 4, ro, degree, &l->b_degree);
  if (!rc)
    rc = nestcl_buffer_alloc(d, NESTCL_MEM_OTHER, "loop marks", lids, ro, marks, &l->b_marks);
  if (!rc)
    rc = nestcl_buffer_alloc(d, NESTCL_MEM_OTHER, "loop status", sizeof l->status_img, rw, l->status_img, &l->b_status);
  if (!rc)
    rc = nestcl_buffer_alloc(d, NESTCL_MEM_OTHER, "loop errors", (size_t)s->n * NESTCL_RES_ERR_WORDS * 4 + 4, rw, zeros,
                             &l->b_errs);
  if (!rc)
    rc = nestcl_buffer_alloc(d, NESTCL_MEM_RECORDING, "loop spikes kept", l->rec_cap * 8, scratch, NULL, &l->b_rec);
  if (!rc)
    rc = nestcl_buffer_alloc(d, NESTCL_MEM_OTHER, "loop spike list", list_cap * 8 + 8, rw, zeros, &l->b_global);
  if (!rc)
    rc = nestcl_buffer_alloc(d, NESTCL_MEM_OTHER, "spike buckets", lids * 8, rw, zeros, &l->b_bucket_word);
  if (!rc)
    rc = nestcl_buffer_alloc(d, NESTCL_MEM_OTHER, "bucket sources", lids * 4, rw, zeros, &l->b_bucket_src);
  if (!rc)
    rc = nestcl_buffer_alloc(d, NESTCL_MEM_OTHER, "bucket lags", lids * w * 4, rw, zeros, &l->b_bucket_lags);
  free(zeros);
  return rc;
}

/* nestcl_gather over the set's blocks (from block 0's program: every block's holds the engine's kernels). */
static int gather_kernel(nestcl_block_set *s)
{
  set_loop *l = &s->loop;
  cl_int err;
  l->k_gather = clCreateKernel(s->blocks[0]->program, "nestcl_gather", &err);
  if (err != CL_SUCCESS) {
    return loop_fail(err, "clCreateKernel(nestcl_gather)");
  }
  cl_uint md = s->min_delay, width = l->bucket_width;
  cl_ulong rec_cap = l->rec_cap;
  cl_int clocked = 0;
  cl_kernel k = l->k_gather;
  err = clSetKernelArg(k, 0, sizeof(cl_mem), &s->b_counts.mem);
  err |= clSetKernelArg(k, 1, sizeof(cl_mem), &s->b_spikes.mem);
  err |= clSetKernelArg(k, 2, sizeof(cl_mem), &l->b_table.mem);
  err |= clSetKernelArg(k, 3, sizeof(cl_mem), &l->b_gids.mem);
  err |= clSetKernelArg(k, 4, sizeof md, &md);
  err |= clSetKernelArg(k, 7, sizeof(cl_mem), &l->b_global.mem);
  err |= clSetKernelArg(k, 8, sizeof(cl_mem), &l->b_status.mem);
  err |= clSetKernelArg(k, 9, sizeof(cl_mem), &l->b_degree.mem);
  err |= clSetKernelArg(k, 10, sizeof(cl_mem), &l->b_marks.mem);
  err |= clSetKernelArg(k, 11, sizeof(cl_mem), &l->b_rec.mem);
  err |= clSetKernelArg(k, 12, sizeof rec_cap, &rec_cap);
  err |= clSetKernelArg(k, 14, sizeof(cl_mem), &l->b_errs.mem);
  err |= clSetKernelArg(k, 15, sizeof clocked, &clocked);
  err |= clSetKernelArg(k, 16, sizeof(cl_mem), &l->b_bucket_word.mem);
  err |= clSetKernelArg(k, 17, sizeof(cl_mem), &l->b_bucket_src.mem);
  err |= clSetKernelArg(k, 18, sizeof(cl_mem), &l->b_bucket_lags.mem);
  err |= clSetKernelArg(k, 19, sizeof width, &width);
  if (err != CL_SUCCESS) {
    return loop_fail(err, "clSetKernelArg(nestcl_gather)");
  }
  return nestcl_kernel_wg_width(s->dev, k, "nestcl_gather", 64, &l->gather_width);
}

/* Block j's history append of the loop (nestcl_hist_append_loop), from its own program. */
static int hist_kernel(nestcl_block_set *s, int j)
{
  set_loop *l = &s->loop;
  const nestcl_block *b = s->blocks[j];
  const eng_history *h = &b->hist;
  cl_int err;
  cl_kernel k = clCreateKernel(b->program, "nestcl_hist_append_loop", &err);
  if (err != CL_SUCCESS) {
    return loop_fail(err, "clCreateKernel(nestcl_hist_append_loop)");
  }
  l->k_hist[j] = k;
  cl_uint width = l->bucket_width, md = s->min_delay, n = b->c.n;
  cl_ulong first = l->first[j];
  cl_long tps = h->tics_per_step, zero = 0;
  cl_double mpt = 1e-3, tmi = h->tau_minus_inv, tti = h->tau_minus_triplet_inv, mdm = h->min_delay_ms;
  cl_double eps = ENG_STDP_EPS;
  cl_int fused = h->fused, clocked = 0;
  err = clSetKernelArg(k, 0, sizeof(cl_mem), &l->b_status.mem);
  err |= clSetKernelArg(k, 1, sizeof(cl_mem), &l->b_bucket_src.mem);
  err |= clSetKernelArg(k, 2, sizeof(cl_mem), &l->b_bucket_word.mem);
  err |= clSetKernelArg(k, 3, sizeof(cl_mem), &l->b_bucket_lags.mem);
  err |= clSetKernelArg(k, 4, sizeof width, &width);
  err |= clSetKernelArg(k, 5, sizeof md, &md);
  err |= clSetKernelArg(k, HA_ORIGIN, sizeof zero, &zero);
  err |= clSetKernelArg(k, 7, sizeof clocked, &clocked);
  err |= clSetKernelArg(k, 8, sizeof first, &first);
  err |= clSetKernelArg(k, 9, sizeof n, &n);
  err |= clSetKernelArg(k, 10, sizeof tps, &tps);
  err |= clSetKernelArg(k, 11, sizeof mpt, &mpt);
  err |= clSetKernelArg(k, 12, sizeof tmi, &tmi);
  err |= clSetKernelArg(k, 13, sizeof tti, &tti);
  err |= clSetKernelArg(k, 14, sizeof mdm, &mdm);
  err |= clSetKernelArg(k, 15, sizeof eps, &eps);
  err |= clSetKernelArg(k, 16, sizeof fused, &fused);
  err |= eng_hist_args(k, HA_HIST, h);
  return err == CL_SUCCESS ? 0 : loop_fail(err, "clSetKernelArg(nestcl_hist_append_loop)");
}

/* The plastic sets' kernels take the loop's sources (loop 1) while it runs, the host's list (loop 0) after. */
static int plastic_mode(nestcl_block_set *s, int loop)
{
  set_loop *l = &s->loop;
  cl_uint width = l->bucket_width, md = s->min_delay, none = 0;
  cl_int mode = loop;
  cl_int err = CL_SUCCESS;
  for (int j = 0; j < s->n; ++j) {
    nestcl_block *b = s->blocks[j];
    for (int k = 0; k < b->n_plastic; ++k) {
      cl_kernel kk = b->plastic[k].k;
      if (loop) {
        err |= clSetKernelArg(kk, PK_SRCS, sizeof(cl_mem), &l->b_bucket_src.mem);
        err |= clSetKernelArg(kk, PK_N_SRCS, sizeof none, &none);
        err |= clSetKernelArg(kk, PK_LAGS, sizeof(cl_mem), &l->b_bucket_lags.mem);
        err |= clSetKernelArg(kk, PK_STATUS, sizeof(cl_mem), &l->b_status.mem);
        err |= clSetKernelArg(kk, PK_BUCKET_WORD, sizeof(cl_mem), &l->b_bucket_word.mem);
        err |= clSetKernelArg(kk, PK_BUCKET_WIDTH, sizeof width, &width);
        err |= clSetKernelArg(kk, PK_MIN_DELAY, sizeof md, &md);
      } else {
        /* Not read with the host's list, but an argument must not name a buffer the loop frees. */
        err |= clSetKernelArg(kk, PK_SRCS, sizeof(cl_mem), &b->plastic[k].b_tmpl.mem);
        err |= clSetKernelArg(kk, PK_LAGS, sizeof(cl_mem), &b->plastic[k].b_tmpl.mem);
        err |= clSetKernelArg(kk, PK_STATUS, sizeof(cl_mem), &b->plastic[k].b_tmpl.mem);
        err |= clSetKernelArg(kk, PK_BUCKET_WORD, sizeof(cl_mem), &b->plastic[k].b_tmpl.mem);
      }
      err |= clSetKernelArg(kk, PK_LOOP, sizeof mode, &mode);
    }
  }
  return err == CL_SUCCESS ? 0 : loop_fail(err, "clSetKernelArg(nestcl_plastic)");
}

/*
 * A loop kept from the last run (nestcl_block_set_loop_end) begun again: its
 * tables, buffers and kernels are the set's as they were; only the status
 * words, the error words, the spike list and the buckets start from zero.
 */
static int loop_restart(nestcl_block_set *s)
{
  set_loop *l = &s->loop;
  cl_command_queue q = nestcl_device_queue(s->dev, s->queue);
  memset(l->status_img, 0, sizeof l->status_img);
  l->status_img[NESTCL_RES_HALT_GID] = UINT64_MAX;
  memcpy(l->status, l->status_img, sizeof l->status);
  const cl_uint zero = 0;
  nestcl_buffer *const zeroed[] = {&l->b_errs, &l->b_global, &l->b_bucket_word, &l->b_bucket_src, &l->b_bucket_lags};
  cl_int err =
    clEnqueueWriteBuffer(q, l->b_status.mem, CL_FALSE, 0, sizeof l->status_img, l->status_img, 0, NULL, NULL);
  for (size_t k = 0; k < sizeof zeroed / sizeof *zeroed; ++k) {
    err |= clEnqueueFillBuffer(q, zeroed[k]->mem, &zero, sizeof zero, 0, zeroed[k]->bytes / 4 * 4, 0, NULL, NULL);
  }
  if (err != CL_SUCCESS) {
    return loop_fail(err, "restarting the loop");
  }
  l->n_slices = 0;
  l->n_spikes = 0;
  l->failed_block = -1;
  l->last = -1;
  l->kept = 0;
  int rc = plastic_mode(s, 1);
  l->on = rc == 0;
  return rc;
}

int nestcl_block_set_loop_begin(nestcl_block_set *s, uint32_t sync_interval)
{
  set_loop *l = &s->loop;
  char why[256];
  if (l->on) {
    return nestcl_set_error(NESTCL_EINVAL, "device loop: begun twice");
  }
  if (l->kept && l->kept_sync == sync_interval) {
    return loop_restart(s);
  }
  set_loop_free(s);
  if (s->n == 0 || !nestcl_block_set_loop_possible(s, why, sizeof why)) {
    return nestcl_set_error(NESTCL_EINVAL, "device loop: %s", s->n ? why : "a set without blocks");
  }
  uint64_t rec_per_slice = 0;
  l->k = plan_k(s, sync_interval, &rec_per_slice);
  l->lids = (uint32_t)nestcl_block_set_first(s, s->n);
  l->bucket_width = any_plastic(s) ? s->min_delay : 0;
  l->first = calloc((size_t)s->n + 1, sizeof *l->first);
  l->origins = calloc((size_t)l->k + 1, sizeof *l->origins);
  l->k_hist = calloc((size_t)s->n + 1, sizeof *l->k_hist);
  int rc = l->first && l->origins && l->k_hist ? 0 : nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  for (int j = 0; j < s->n && !rc; ++j) {
    l->first[j] = nestcl_block_set_first(s, j);
  }
  memset(l->status_img, 0, sizeof l->status_img);
  l->status_img[NESTCL_RES_HALT_GID] = UINT64_MAX;
  memcpy(l->status, l->status_img, sizeof l->status);
  uint32_t *table = NULL, *degree = NULL;
  uint64_t *gids = NULL;
  uint8_t *marks = NULL;
  if (!rc)
    rc = loop_tables(s, &table, &gids, &degree, &marks);
  if (!rc)
    rc = loop_buffers(s, table, gids, degree, marks, rec_per_slice);
  free(table);
  free(gids);
  free(degree);
  free(marks);
  if (!rc)
    rc = gather_kernel(s);
  for (int j = 0; j < s->n && !rc; ++j) {
    if (s->blocks[j]->hist.cap && s->blocks[j]->c.n)
      rc = hist_kernel(s, j);
  }
  if (!rc)
    rc = plastic_mode(s, 1);
  const nestcl_device_info *di = nestcl_device_get_info(s->dev);
  l->groups = (di->compute_units ? di->compute_units : 1) * 4;
  l->failed_block = -1;
  l->last = -1;
  l->on = rc == 0;
  l->kept_sync = sync_interval;
  if (rc) {
    set_loop_free(s);
  }
  return rc;
}

/* The history appends of the slice at origin (NEST's set_spiketime, right after the update). */
static cl_int enqueue_history(nestcl_block_set *s, cl_command_queue q, int64_t origin)
{
  set_loop *l = &s->loop;
  cl_long org = origin;
  cl_int err = CL_SUCCESS;
  const nestcl_device_info *di = nestcl_device_get_info(s->dev);
  const size_t cu = di->compute_units ? di->compute_units : 1;
  for (int j = 0; j < s->n && err == CL_SUCCESS; ++j) {
    if (!l->k_hist[j]) {
      continue;
    }
    /* One work-item per source of the slice, a few per compute unit's lanes: sources are few per slice. */
    size_t g = cu * 256 < s->blocks[j]->c.n ? cu * 256 : s->blocks[j]->c.n;
    g = (g + 63) / 64 * 64;
    err = clSetKernelArg(l->k_hist[j], HA_ORIGIN, sizeof org, &org);
    if (err == CL_SUCCESS)
      err = nestcl_enq_launch(&s->enq, q, l->k_hist[j], 1, &g, NULL, 0, NULL, NULL);
  }
  return err;
}

/* The plastic deliveries of the slice at origin's spikes (its sources' buckets). */
static cl_int enqueue_plastic(nestcl_block_set *s, cl_command_queue q, int64_t origin)
{
  set_loop *l = &s->loop;
  cl_long org = origin;
  cl_int err = CL_SUCCESS;
  for (int j = 0; j < s->n && err == CL_SUCCESS; ++j) {
    nestcl_block *b = s->blocks[j];
    for (int k = 0; k < b->n_plastic && err == CL_SUCCESS; ++k) {
      const block_plastic *p = &b->plastic[k];
      if (p->nnz == 0) {
        continue;
      }
      size_t gs[2], ls[2];
      block_plastic_grid(b, p, p->n_rows, l->groups, gs, ls); /* at most every row in a slice */
      err = clSetKernelArg(p->k, PK_ORIGIN, sizeof org, &org);
      if (err == CL_SUCCESS)
        err = nestcl_enq_launch(&s->enq, q, p->k, 2, gs, ls, 0, NULL, NULL);
    }
  }
  return err;
}

/*
 * The slice at origin, in NEST's order: the delivery of the slice before
 * (`prev`, its plastic synapses, then its list with this slice's drives in
 * one launch), the merged update, the gather and the history appends. The
 * last slice's spikes are delivered by the next slice, or by whoever takes
 * them over at the end of the loop (NEST's exchange), as NEST would.
 */
static cl_int enqueue_slice(nestcl_block_set *s, cl_command_queue q, int64_t origin, int64_t prev)
{
  set_loop *l = &s->loop;
  cl_int err = CL_SUCCESS;
  if (prev >= 0) {
    err = enqueue_plastic(s, q, prev);
    if (err == CL_SUCCESS)
      err = set_deliver_enqueue(s, 1, l->b_global.mem, 0, prev, origin, 0, (int)s->min_delay, l->b_status.mem, 1);
  }
  if (err == CL_SUCCESS)
    err = set_update_enqueue(s, origin, 0, (int)s->min_delay, 0, l->b_status.mem, 1);
  cl_long org = origin, wo = l->window_origin;
  cl_uint parity = (cl_uint)((origin / (int64_t)s->min_delay) & 1);
  err |= clSetKernelArg(l->k_gather, GA_ORIGIN, sizeof org, &org);
  err |= clSetKernelArg(l->k_gather, GA_PARITY, sizeof parity, &parity);
  err |= clSetKernelArg(l->k_gather, GA_WINDOW, sizeof wo, &wo);
  size_t gs = l->gather_width * (size_t)s->n, ls = l->gather_width;
  if (err == CL_SUCCESS)
    err = nestcl_enq_launch(&s->enq, q, l->k_gather, 1, &gs, &ls, 0, NULL, NULL);
  if (err == CL_SUCCESS)
    err = enqueue_history(s, q, origin);
  return err;
}

/*
 * The loop's first slice at origin: what arrived before it from the host
 * (nestcl_block_set_deliver's list with this slice's drives, one launch; the
 * plastic sets' own lists), then the slice.
 */
static cl_int enqueue_first(nestcl_block_set *s, cl_command_queue q, int64_t origin)
{
  cl_int err = CL_SUCCESS;
  const size_t bytes = (size_t)s->n_list * 8;
  if (s->b_list.bytes < bytes) {
    nestcl_buffer_free(s->dev, &s->b_list);
    if (nestcl_buffer_alloc(s->dev, NESTCL_MEM_OTHER, "received spikes", (size_t)s->list_cap * 8, CL_MEM_READ_ONLY,
                            NULL, &s->b_list)) {
      return CL_OUT_OF_RESOURCES;
    }
  }
  if (bytes)
    err = nestcl_enq_write(&s->enq, q, s->b_list.mem, CL_FALSE, 0, bytes, s->list, 0, NULL, NULL);
  int any = 0;
  for (int j = 0; j < s->n; ++j) {
    for (int k = 0; k < s->blocks[j]->n_plastic; ++k) {
      any = any || s->blocks[j]->plastic[k].n_pend;
    }
  }
  if (any && err == CL_SUCCESS) {
    err = plastic_mode(s, 0) ? CL_INVALID_KERNEL_ARGS : CL_SUCCESS;
    for (int j = 0; j < s->n && err == CL_SUCCESS; ++j) {
      err = nestcl_block_enqueue_plastic(s->blocks[j], q);
    }
    if (err == CL_SUCCESS)
      err = plastic_mode(s, 1) ? CL_INVALID_KERNEL_ARGS : CL_SUCCESS;
  }
  if (err == CL_SUCCESS)
    err = set_deliver_enqueue(s, 0, s->b_list.mem, s->n_list, s->list_origin, origin, 0, (int)s->min_delay, NULL, 0);
  if (err == CL_SUCCESS && bytes)
    err = nestcl_enq_finish(&s->enq, q); /* the host's list may be written again before the write ran */
  s->n_list = 0;
  if (err == CL_SUCCESS)
    err = enqueue_slice(s, q, origin, -1);
  return err;
}

int nestcl_block_set_loop_slice(nestcl_block_set *s, int64_t origin, int *drained)
{
  set_loop *l = &s->loop;
  *drained = 0;
  if (!l->on) {
    return nestcl_set_error(NESTCL_EINVAL, "device loop: a slice before nestcl_block_set_loop_begin");
  }
  if (l->failed_block >= 0) {
    return nestcl_set_error(NESTCL_ERUNTIME, "device loop: a slice after a failure");
  }
  if (origin % (int64_t)s->min_delay != 0 || (l->last >= 0 && origin != l->last + (int64_t)s->min_delay)) {
    return nestcl_set_error(NESTCL_EINVAL, "device loop: a slice at step %lld, not the next of min delay %u",
                            (long long)origin, s->min_delay);
  }
  cl_command_queue q = nestcl_device_queue(s->dev, s->queue);
  cl_int err = CL_SUCCESS;
  if (l->n_slices == 0) {
    l->window_origin = origin;
  }
  if (l->last < 0) {
    /* The slice-by-slice path zeroes the count words before each update; from here the gather does. */
    err = nestcl_enq_write(&s->enq, q, s->b_counts.mem, CL_FALSE, 0, s->count_words * 4, s->counts_zero, 0, NULL, NULL);
    if (err == CL_SUCCESS)
      err = enqueue_first(s, q, origin);
  } else {
    err = enqueue_slice(s, q, origin, l->last);
  }
  if (err == CL_SUCCESS)
    err = clFlush(q);
  if (err != CL_SUCCESS) {
    return loop_fail(err, "enqueueing a slice");
  }
  l->last = origin;
  l->origins[l->n_slices++] = origin;
  if (l->n_slices < l->k) {
    return 0;
  }
  *drained = 1;
  return nestcl_block_set_loop_drain(s);
}

/* The block of loop id lid. */
static int block_of(const nestcl_block_set *s, uint64_t lid)
{
  int lo = 0, hi = s->n - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (s->loop.first[mid] <= lid)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/*
 * The loop halted at the slice at halt_at (the history ring of loop id gid
 * was full): that ring grows (or the error at its bound), the halt is lifted,
 * the rest of that slice runs, and every slice enqueued after it again.
 */
static int resume(nestcl_block_set *s, cl_command_queue q, int64_t halt_at, uint64_t gid)
{
  set_loop *l = &s->loop;
  const int j = gid < l->lids ? block_of(s, gid) : 0;
  nestcl_block *b = s->blocks[j];
  if (gid >= l->lids || !b->hist.cap || !l->k_hist[j]) {
    return nestcl_set_error(NESTCL_ERUNTIME, "internal: the device loop halted for neuron %llu, which has no history",
                            (unsigned long long)gid);
  }
  /* The plastic kernels that read the history follow it (its users); the loop's append is ours to re-point. */
  int rc = eng_hist_grow(&b->hist, s->dev, s->queue, (uint32_t)(gid - l->first[j]));
  if (!rc && eng_hist_args(l->k_hist[j], HA_HIST, &b->hist) != CL_SUCCESS)
    rc = loop_fail(CL_INVALID_KERNEL_ARGS, "clSetKernelArg(history)");
  if (rc) {
    return rc;
  }
  l->resumes++;
  memcpy(l->status_img, l->status, sizeof l->status_img);
  l->status_img[NESTCL_RES_HALT] = 0;
  l->status_img[NESTCL_RES_HALT_GID] = UINT64_MAX;
  cl_int err =
    nestcl_enq_write(&s->enq, q, l->b_status.mem, CL_FALSE, 0, sizeof l->status_img, l->status_img, 0, NULL, NULL);
  if (err == CL_SUCCESS)
    err = enqueue_history(s, q, halt_at);
  for (uint32_t k = 0; k < l->n_slices && err == CL_SUCCESS; ++k) {
    if (l->origins[k] > halt_at)
      err = enqueue_slice(s, q, l->origins[k], l->origins[k] - (int64_t)s->min_delay);
  }
  return err == CL_SUCCESS ? 0 : loop_fail(err, "resuming the device loop");
}

/* The status words, after waiting for every slice enqueued. */
static int read_status(nestcl_block_set *s, cl_command_queue q)
{
  set_loop *l = &s->loop;
  cl_ulong st[16];
  cl_int err = nestcl_enq_read(&s->enq, q, l->b_status.mem, CL_TRUE, 0, sizeof st, st, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    return loop_fail(err, "the drain");
  }
  for (int k = 0; k < 16; ++k) {
    l->status[k] = st[k];
  }
  if (st[NESTCL_RES_RECORDED] > l->rec_cap) {
    return nestcl_set_error(NESTCL_ERUNTIME,
                            "device loop: %llu spikes in %u slices, more than the %llu its buffer holds "
                            "(neurons sending several spikes in one step)",
                            (unsigned long long)st[NESTCL_RES_RECORDED], l->n_slices, (unsigned long long)l->rec_cap);
  }
  return 0;
}

/* The first block whose update failed in the slice at fail_at: its record into its count words, and the error. */
static int report_failure(nestcl_block_set *s, cl_command_queue q, int64_t fail_at)
{
  set_loop *l = &s->loop;
  cl_int err = nestcl_enq_read(&s->enq, q, l->b_errs.mem, CL_TRUE, 0, (size_t)s->n * NESTCL_RES_ERR_WORDS * 4, l->errs,
                               0, NULL, NULL);
  if (err != CL_SUCCESS) {
    return loop_fail(err, "reading the errors");
  }
  int j = 0;
  while (j < s->n - 1 &&
         !(l->errs[j * NESTCL_RES_ERR_WORDS] > s->blocks[j]->spike_cap || l->errs[j * NESTCL_RES_ERR_WORDS + 1] ||
           l->errs[j * NESTCL_RES_ERR_WORDS + 5])) {
    ++j;
  }
  nestcl_block *b = s->blocks[j];
  const uint32_t *w = l->errs + (size_t)j * NESTCL_RES_ERR_WORDS;
  memcpy(b->count, w, sizeof b->count);
  l->failed_block = j;
  l->failed_origin = fail_at;
  const double h = b->c.resolution_ms;
  if (w[1]) {
    const uint64_t id = b->c.id_first + (uint64_t)w[2] * (b->c.id_stride ? b->c.id_stride : 1);
    return nestcl_failure_error(b->c.model, b->count, id,
                                nestcl_step_ms(fail_at + (int64_t)w[3], (int64_t)llround(h * 1000.0), 1e-3));
  }
  if (w[0] > b->spike_cap) {
    return nestcl_set_error(NESTCL_ERUNTIME, "block %s: %u spikes in one slice, more than the %u it has room for",
                            b->c.model->name, w[0], b->spike_cap);
  }
  return nestcl_set_error(NESTCL_ERUNTIME, "internal: block %s wrote a bad spike-list entry at t = %g ms",
                          b->c.model->name, (double)fail_at * h);
}

static int cmp_spike(const void *x, const void *y)
{
  const nestcl_loop_spike *a = x, *c = y;
  if (a->block != c->block || a->index != c->index) {
    return a->block != c->block ? (a->block < c->block ? -1 : 1) : (a->index < c->index ? -1 : 1);
  }
  return a->step < c->step ? -1 : (a->step > c->step);
}

/* The kept spikes before step `until` as (block, neuron, step), sorted by slice, then block, neuron and step. */
static int collect_spikes(nestcl_block_set *s, cl_command_queue q, int64_t until)
{
  set_loop *l = &s->loop;
  const uint64_t n = l->status[NESTCL_RES_RECORDED];
  cl_int err =
    n ? nestcl_enq_read(&s->enq, q, l->b_rec.mem, CL_TRUE, 0, n * 8, l->rec_host, 0, NULL, NULL) : CL_SUCCESS;
  if (err != CL_SUCCESS) {
    return loop_fail(err, "reading the spikes");
  }
  if (n > l->spikes_cap) {
    nestcl_loop_spike *t = realloc(l->spikes, n * sizeof *t);
    if (!t) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
    l->spikes = t;
    l->spikes_cap = n;
  }
  l->n_spikes = 0;
  for (uint64_t r = 0; r < n; ++r) {
    const uint32_t gid = l->rec_host[2 * r];
    const int64_t step = l->window_origin + (int64_t)l->rec_host[2 * r + 1];
    if (step >= until || gid >= l->lids) {
      continue;
    }
    const int j = block_of(s, gid);
    l->spikes[l->n_spikes++] = (nestcl_loop_spike){(uint32_t)j, (uint32_t)(gid - l->first[j]), step};
  }
  /* By slice first: within a slice NEST sends block by block, each neuron through its lags. */
  size_t at = 0;
  for (uint32_t k = 0; k < l->n_slices; ++k) {
    const int64_t end = l->origins[k] + (int64_t)s->min_delay;
    size_t b = at;
    for (size_t i = at; i < l->n_spikes; ++i) {
      if (l->spikes[i].step < end) {
        nestcl_loop_spike t = l->spikes[b];
        l->spikes[b++] = l->spikes[i];
        l->spikes[i] = t;
      }
    }
    qsort(l->spikes + at, b - at, sizeof *l->spikes, cmp_spike);
    at = b;
  }
  return 0;
}

int nestcl_block_set_loop_drain(nestcl_block_set *s)
{
  set_loop *l = &s->loop;
  l->n_spikes = 0;
  if (!l->on || l->n_slices == 0) {
    return 0;
  }
  cl_command_queue q = nestcl_device_queue(s->dev, s->queue);
  int rc = 0;
  int64_t fail_at = -1;
  for (;;) {
    rc = read_status(s, q);
    if (rc) {
      break;
    }
    fail_at = l->status[NESTCL_RES_FAILED] ? (int64_t)(l->status[NESTCL_RES_FAILED] - 1) : -1;
    const int64_t halt_at = l->status[NESTCL_RES_HALT] && fail_at < 0 ? (int64_t)(l->status[NESTCL_RES_HALT] - 1) : -1;
    if (halt_at < 0) {
      break;
    }
    rc = resume(s, q, halt_at, l->status[NESTCL_RES_HALT_GID]);
    if (rc) {
      break;
    }
  }
  if (!rc)
    rc = collect_spikes(s, q, fail_at >= 0 ? fail_at : INT64_MAX);
  if (!rc && fail_at >= 0)
    rc = report_failure(s, q, fail_at);
  if (!rc) {
    /* The next window: its kept spikes from 0 (the list lengths stay as the last gather left them). */
    memcpy(l->status_img, l->status, sizeof l->status_img);
    l->status_img[NESTCL_RES_RECORDED] = 0;
    cl_int err =
      nestcl_enq_write(&s->enq, q, l->b_status.mem, CL_FALSE, 0, sizeof l->status_img, l->status_img, 0, NULL, NULL);
    rc = err == CL_SUCCESS ? 0 : loop_fail(err, "the drain");
  }
  l->n_slices = 0;
  return rc;
}

void nestcl_block_set_loop_spikes(const nestcl_block_set *s, const nestcl_loop_spike **spikes, size_t *n)
{
  *spikes = s->loop.spikes;
  *n = s->loop.n_spikes;
}

int nestcl_block_set_failed(const nestcl_block_set *s, int64_t *origin)
{
  if (origin)
    *origin = s->loop.failed_origin;
  return s->loop.failed_block;
}

int nestcl_block_set_loop_end(nestcl_block_set *s)
{
  if (!s->loop.on) {
    return 0;
  }
  int rc = s->loop.failed_block >= 0 ? 0 : nestcl_block_set_loop_drain(s);
  /* The drain's last write of the status words may still be queued: the buffers are reused only after it. */
  cl_int err = nestcl_enq_finish(&s->enq, nestcl_device_queue(s->dev, s->queue));
  if (!rc && err != CL_SUCCESS)
    rc = loop_fail(err, "the loop's end");
  const int rc2 = plastic_mode(s, 0);
  /* Kept for the next run (a NEST user's loop of short Simulate calls): a failed one is made again. */
  if (rc || rc2 || s->loop.failed_block >= 0) {
    set_loop_free(s);
  } else {
    s->loop.on = 0;
    s->loop.kept = 1;
  }
  return rc ? rc : rc2;
}

uint64_t nestcl_block_set_loop_resumes(const nestcl_block_set *s)
{
  return s->loop.resumes;
}
