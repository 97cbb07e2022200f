/*
 * The device loop: super steps that run on the device on their own, while the
 * host enqueues ahead of them (issue 29; docs/architecture.md, "The device loop").
 * This folder (host/src/engine/device_loop/) holds the loop's files: this
 * one (eligibility, sizes, buffers), resident_run.c (the loop), resident_merge.c,
 * resident_update.c, resident_plastic.c (its kernels), resident_graph.c (the
 * recorded super step), resident_persist.c (many super steps per launch) and
 * resident_step.c (one stream beside threads or ranks).
 *
 * cycle.c's loop makes the host the clock of the device: per super step it
 * waits for the update, reads each population's spikes back, sorts them,
 * writes the global list back and waits for the delivery. On a discrete GPU
 * each wait costs 10-30 us of latency, more than the kernels of a small super
 * step. Here, for a rank whose one VP is a stream of one device (the default
 * device run, --threads 0 --streams 1) with static synapses:
 *   - each model's populations are updated by one launch (resident_update.c),
 *     appending to their spike lists, which are parts (sub-buffers) of one
 *     list, so that one gather kernel turns all of them into the global list
 *     on the device, zeroes the counts, sums the spikes and synaptic events
 *     and copies the recorded neurons' spikes into a recording buffer
 *     (nestcl_gather, engine_kernels.cl);
 *   - one generated kernel delivers the list into every population, reading
 *     its length there (the host does not know it), and adds the Poisson and
 *     DC drives of the super step (resident_merge.c): three launches per
 *     super step for a network of one model;
 *   - the host waits for the device only when it drains (resident_run.c):
 *     every sync_interval super steps (K, fewer when the recording buffer for
 *     K super steps would exceed its budget), at the end of simulate(), and
 *     when the stop flag is set. A drain reads the status words (errors,
 *     totals, the recording's length) and the recorded spikes in one round
 *     trip (a second when there are more than the last rate predicts).
 *   - so that a stop request is taken within about 100 ms, the host runs at
 *     most about 50 ms of super steps ahead of the device: it waits for the
 *     end of an earlier super step (a marker event), which leaves work queued
 *     (a throttle, counted apart from the waits).
 * With CPU threads or other ranks beside the one stream, the same kernels run
 * inside cycle.c's loop, waiting once per super step (resident_step.c).
 * Errors (a failed update, an overflowing spike list, a bad entry) are kept on
 * the device with the origin of the super step where they happened; the drain
 * reports the first, as cycle.c would have at that step, records nothing of
 * that super step or later, and the engine refuses to go on (a sticky error).
 * Results are bit-identical to cycle.c's: the ring's fixed-point sums do not
 * depend on the order of the global list, and the recorded spikes are sorted
 * by (step, gid) before the recorders see them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine_internal.h"
#include "enqueue.h"

enum { RES_DEFAULT_K = 250 };
/* Work-groups per compute unit of the merged end of a super step (resident_merge.c). */
enum { STEP_GROUPS_PER_CU = 8 };
/* Device bytes the recording buffer may take, at most (and at most half the device's largest allocation). */
#define RES_REC_BUDGET ((size_t)256 << 20)

static int res_fail(cl_int err, const char *what)
{
  return nestcl_set_error(NESTCL_ECL, "%s failed: %s", what, nestcl_cl_error_name(err));
}

int eng_resident_mode(const nestcl_engine *e, int n_ranks)
{
  if (e->desc.cfg.host_clock || e->desc.cfg.gpu_streams != 1) {
    return 0;
  }
  /*
   * Plastic synapses: in the device loop (resident_plastic.c) where every
   * update can be halted; beside threads or ranks from the host's list
   * (eng_resident_plastic_step); not batched ones (the host clock).
   */
  const int loop = n_ranks == 1 && e->desc.cfg.cpu_threads == 0;
  if (!eng_resident_plastic_fits(e, e->clock.min_delay ? e->clock.min_delay : 1, loop)) {
    return 0;
  }
  /*
   * A multimeter: the device loop keeps its samples for a window of super
   * steps (resident_update.c), when every sampled population's update is
   * merged; beside threads or ranks the host clock samples every slice.
   */
  for (int p = 0; p < e->desc.n_pops; ++p) {
    const nestcl_model *m = e->desc.pops[p].model;
    if (e->desc.pops[p].rec_interval_steps != 0 && (!loop || m->spike_offsets || m->event_queue)) {
      return 0;
    }
  }
  return loop ? 2 : 1;
}

/*
 * The recording buffer's entries per super step, at most: per population, its
 * recorded neurons' spikes (min_delay each; a model that sends multiplicities
 * may fill its whole list, n x min_delay, on them).
 */
static uint64_t rec_per_super_step(const nestcl_engine *e, int min_delay)
{
  uint64_t total = 0;
  for (int p = 0; p < e->desc.n_pops; ++p) {
    const eng_population *pop = &e->desc.pops[p];
    unsigned char *mark = calloc(pop->n ? pop->n : 1, 1);
    uint64_t r = 0;
    for (int k = 0; mark && k < e->desc.n_recs; ++k) {
      const eng_recorder *rc = &e->desc.recs[k];
      if (rc->is_multimeter || rc->pop != p) {
        continue;
      }
      for (uint32_t i = rc->first; i < rc->first + rc->count && i < pop->n; ++i) {
        r += mark[i] == 0;
        mark[i] = 1;
      }
    }
    free(mark);
    uint64_t cap = (uint64_t)pop->n * (uint64_t)min_delay;
    uint64_t need = pop->model->multiplicity ? (r ? cap : 0) : r * (uint64_t)min_delay;
    total += need < cap ? need : cap;
  }
  return total;
}

void eng_resident_plan(const nestcl_engine *e, int mode, int min_delay, size_t max_alloc, eng_res_plan *plan)
{
  memset(plan, 0, sizeof *plan);
  /* Beside threads or ranks (mode 1) the host records from the exchange, as for threads. */
  plan->rec_per_ss = mode == 2 ? rec_per_super_step(e, min_delay) : 0;
  int k = e->desc.cfg.sync_interval > 0 ? e->desc.cfg.sync_interval : RES_DEFAULT_K;
  size_t budget = max_alloc / 2 < RES_REC_BUDGET ? max_alloc / 2 : RES_REC_BUDGET;
  if (plan->rec_per_ss > 0) {
    uint64_t fit = budget / (plan->rec_per_ss * 8);
    k = fit < 1 ? 1 : fit < (uint64_t)k ? (int)fit : k;
  }
  /* Multimeter samples: a slot of every sampled population's records per slice, k + 2 slices per window. */
  plan->mm_slot = 0;
  for (int p = 0; mode == 2 && p < e->desc.n_pops; ++p) {
    const eng_population *pop = &e->desc.pops[p];
    if (pop->rec_interval_steps != 0) {
      plan->mm_slot += (size_t)min_delay * eng_rec_width(pop->model, pop->K) * pop->n;
    }
  }
  if (plan->mm_slot > 0) {
    uint64_t fit = budget / (plan->mm_slot * 8);
    fit = fit > 2 ? fit - 2 : 1;
    k = fit < (uint64_t)k ? (int)fit : k;
  }
  plan->k = k;
  plan->rec_cap = plan->rec_per_ss * (uint64_t)k;
  plan->mm_bytes = plan->mm_slot * (size_t)(k + 2) * 8;
  /* Out-degrees, recorded marks, status, per-block tables and error words; the recording buffer. */
  plan->other_bytes = e->desc.n_global * 5 + ENG_RES_STATUS_WORDS * 8 +
    (size_t)e->desc.n_pops * (16 + 8 + ENG_RES_ERR_WORDS * 4) +
    (mode == 2 ? eng_resident_bucket_bytes(e, min_delay) : 0);
  plan->rec_bytes = (size_t)(plan->rec_cap ? plan->rec_cap : 1) * 8;
}

/* One buffer of `bytes` for all blocks, each block's part at offs[p] as a sub-buffer in *sub[p]. */
static int carve(nestcl_engine *e, const char *what, const size_t *offs, const size_t *sizes, size_t bytes,
                 const void *init, nestcl_buffer *parent, nestcl_buffer *const *sub)
{
  int rc = nestcl_buffer_alloc(e->device.dev, NESTCL_MEM_OTHER, what, bytes,
                               CL_MEM_READ_WRITE | (init ? CL_MEM_COPY_HOST_PTR : 0), init, parent);
  for (int p = 0; p < e->desc.n_pops && !rc; ++p) {
    if (!sub[p]) {
      continue;
    }
    cl_buffer_region region = {offs[p], sizes[p]};
    cl_int err;
    cl_mem m = clCreateSubBuffer(parent->mem, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    if (err != CL_SUCCESS) {
      return res_fail(err, "clCreateSubBuffer");
    }
    /* The block's own buffer goes; the part takes its place (bytes 0: the parent holds the memory). */
    nestcl_buffer_free(e->device.dev, sub[p]);
    sub[p]->mem = m;
    sub[p]->bytes = 0;
    sub[p]->cls = NESTCL_MEM_OTHER;
  }
  return rc;
}

/* The blocks' count words and spike lists as parts of two buffers, and the update kernels pointed at them. */
static int carve_blocks(nestcl_engine *e, eng_vp *vp, uint32_t *table)
{
  size_t align = eng_resident_base_align(e);
  size_t *co = calloc(4 * (size_t)e->desc.n_pops, sizeof *co);
  nestcl_buffer **cs = calloc(2 * (size_t)e->desc.n_pops, sizeof *cs);
  if (!co || !cs) {
    free(co);
    free(cs);
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  size_t *csz = co + e->desc.n_pops, *so = co + 2 * e->desc.n_pops, *ssz = co + 3 * e->desc.n_pops;
  size_t cbytes = 0, sbytes = 0;
  for (int p = 0; p < e->desc.n_pops; ++p) {
    eng_block *b = &vp->blocks[p];
    csz[p] = NESTCL_COUNT_WORDS * 4;
    ssz[p] = (size_t)(b->spike_cap ? b->spike_cap : 1) * 8;
    co[p] = cbytes;
    so[p] = sbytes;
    cbytes += (csz[p] + align - 1) / align * align;
    sbytes += (ssz[p] + align - 1) / align * align;
    cs[p] = b->n ? &b->b_count : NULL;
    cs[e->desc.n_pops + p] = b->n ? &b->b_spikes : NULL;
    table[4 * p] = (uint32_t)(co[p] / 4);
    table[4 * p + 1] = (uint32_t)(so[p] / 8);
    table[4 * p + 2] = b->spike_cap;
    table[4 * p + 3] = b->n;
  }
  eng_resident *r = &e->device.res;
  /*
   * Both start as zeros from a host copy: the counts must (memory that
   * clEnqueueFillBuffer cleared is uninitialised to oclgrind), and the lists
   * because oclgrind (21.10) does not see the update kernels' writes through
   * the sub-buffers in the parent, which the gather kernel reads
   * (docs/oclgrind-reports.md).
   */
  void *zeros = calloc(cbytes > sbytes ? cbytes : sbytes, 1);
  int rc = zeros ? carve(e, "spike counts", co, csz, cbytes, zeros, &r->b_counts, cs)
                 : nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  if (!rc)
    rc = carve(e, "spike lists", so, ssz, sbytes, zeros, &r->b_spikes, cs + e->desc.n_pops);
  free(zeros);
  free(co);
  free(cs);
  for (int p = 0; p < e->desc.n_pops && !rc; ++p) {
    eng_block *b = &vp->blocks[p];
    if (b->n == 0) {
      continue;
    }
    /* nestcl_update_kernel_fixed_args: 9 spike_count, 10 spikes. */
    cl_int err = clSetKernelArg(b->k_update, 9, sizeof(cl_mem), &b->b_count.mem);
    err |= clSetKernelArg(b->k_update, 10, sizeof(cl_mem), &b->b_spikes.mem);
    rc = eng_cl_check(err, "clSetKernelArg(update)");
  }
  return rc;
}

/* A gather kernel with its fixed arguments (origin, parity, window origin are set per launch); clocked: see resident_graph.c. */
cl_kernel eng_resident_gather_kernel(nestcl_engine *e, eng_vp *vp, int clocked, cl_int *err)
{
  eng_resident *r = &e->device.res;
  cl_kernel k = clCreateKernel(e->device.core_program, "nestcl_gather", err);
  if (*err != CL_SUCCESS) {
    return NULL;
  }
  cl_uint md = (cl_uint)e->clock.min_delay;
  cl_ulong cap = r->plan.rec_cap;
  cl_int c = clocked;
  cl_int x = clSetKernelArg(k, 0, sizeof(cl_mem), &r->b_counts.mem);
  x |= clSetKernelArg(k, 1, sizeof(cl_mem), &r->b_spikes.mem);
  x |= clSetKernelArg(k, 2, sizeof(cl_mem), &r->b_table.mem);
  x |= clSetKernelArg(k, 3, sizeof(cl_mem), &r->b_gids.mem);
  x |= clSetKernelArg(k, 4, sizeof md, &md);
  x |= clSetKernelArg(k, 7, sizeof(cl_mem), &vp->b_global.mem);
  x |= clSetKernelArg(k, 8, sizeof(cl_mem), &r->b_status.mem);
  x |= clSetKernelArg(k, 9, sizeof(cl_mem), &r->b_degree.mem);
  x |= clSetKernelArg(k, 10, sizeof(cl_mem), &r->b_recorded.mem);
  x |= clSetKernelArg(k, 11, sizeof(cl_mem), &r->b_rec.mem);
  x |= clSetKernelArg(k, 12, sizeof cap, &cap);
  x |= clSetKernelArg(k, 14, sizeof(cl_mem), &r->b_errs.mem);
  x |= clSetKernelArg(k, 15, sizeof c, &c);
  x |= clSetKernelArg(k, 16, sizeof(cl_mem), &r->b_bucket_word.mem);
  x |= clSetKernelArg(k, 17, sizeof(cl_mem), &r->b_bucket_src.mem);
  x |= clSetKernelArg(k, 18, sizeof(cl_mem), &r->b_bucket_lags.mem);
  x |= clSetKernelArg(k, 19, sizeof(cl_uint), &r->bucket_width);
  if (x != CL_SUCCESS) {
    clReleaseKernel(k);
    *err = x;
    return NULL;
  }
  return k;
}

cl_int eng_resident_enqueue_gather(nestcl_engine *e, eng_vp *vp, cl_command_queue q, int64_t origin,
                                   int64_t window_origin)
{
  eng_resident *r = &e->device.res;
  cl_uint parity = (cl_uint)((origin / e->clock.min_delay) & 1);
  cl_long org = origin, wo = window_origin;
  cl_int err = clSetKernelArg(r->k_gather, 5, sizeof org, &org);
  err |= clSetKernelArg(r->k_gather, 6, sizeof parity, &parity);
  err |= clSetKernelArg(r->k_gather, 13, sizeof wo, &wo);
  size_t gsize = (size_t)e->desc.n_pops * r->gather_width, lsize = r->gather_width;
  if (err == CL_SUCCESS) {
    err = nestcl_enq_launch(&vp->st.enqueued, q, r->k_gather, 1, &gsize, &lsize, 0, NULL, NULL);
  }
  return err;
}

static int make_kernels(nestcl_engine *e, eng_vp *vp)
{
  eng_resident *r = &e->device.res;
  cl_int err;
  r->k_gather = eng_resident_gather_kernel(e, vp, 0, &err);
  int rc = eng_cl_check(err, "the gather kernel");
  if (!rc)
    rc = nestcl_kernel_wg_width(e->device.dev, r->k_gather, "nestcl_gather", 256, &r->gather_width);
  /* The rings as parts of one buffer; the updates of each model in one launch; delivery and drive in one each. */
  if (!rc)
    rc = eng_resident_rehome_rings(e, vp);
  for (int p = 0; p < e->desc.n_pops && !rc; ++p) {
    /* Populations that keep their own update launch: their ring is a part now (nestcl_update_kernel_fixed_args: 8). */
    if (vp->blocks[p].n) {
      rc = eng_cl_check(clSetKernelArg(vp->blocks[p].k_update, 8, sizeof(cl_mem), &vp->blocks[p].b_ring.mem),
                        "clSetKernelArg(update)");
    }
  }
  if (!rc)
    rc = eng_resident_update_setup(e, vp);
  if (!rc)
    rc = eng_resident_merge_setup(e, vp);
  for (int p = 0; p < e->desc.n_pops && !rc && r->bucket_width; ++p) {
    if (vp->blocks[p].n && !r->merged_pop[p]) {
      /* eng_resident_plastic_fits took the models that cannot merge; a block without host parameters is left. */
      rc = nestcl_set_error(NESTCL_ERUNTIME,
                            "plastic synapses in the device loop need every population's update "
                            "merged; %s's is not: run with --host-clock",
                            e->desc.pops[p].model->name);
    }
  }
  if (!rc)
    rc = eng_resident_plastic_setup(e, vp);
  /* One launch for many super steps, where the device runs all of its work-groups at once. */
  if (!rc)
    rc = eng_resident_persist_setup(e, vp);
  return rc;
}

/*
 * The gather's marks over all global ids: the recorded neurons (none beside
 * threads or ranks: the host records there), the bucketed ones (plastic synapses).
 */
static unsigned char *gather_marks(const nestcl_engine *e, int mode)
{
  unsigned char *m = calloc(e->desc.n_global ? e->desc.n_global : 1, 1);
  for (int k = 0; m && mode == 2 && k < e->desc.n_recs; ++k) {
    const eng_recorder *rc = &e->desc.recs[k];
    if (!rc->is_multimeter) {
      memset(m + e->desc.pops[rc->pop].first + rc->first, ENG_MARK_RECORDED, rc->count);
    }
  }
  if (m && e->device.res.bucket_width) {
    eng_resident_bucket_marks(e, m);
  }
  return m;
}

int eng_resident_setup(nestcl_engine *e)
{
  eng_resident *r = &e->device.res;
  memset(r, 0, sizeof *r);
  int mode = e->device.dev ? eng_resident_mode(e, e->exchange.n_ranks) : 0;
  if (!mode) {
    return 0;
  }
  /* The stream VP: after the threads (build.c). */
  r->vp = e->desc.cfg.cpu_threads;
  r->full = mode == 2;
  eng_vp *vp = &e->vps[r->vp];
  const nestcl_device_info *di = nestcl_device_get_info(e->device.dev);
  eng_resident_plan(e, mode, e->clock.min_delay, (size_t)di->max_alloc_bytes, &r->plan);
  uint32_t *table = calloc(4 * (size_t)e->desc.n_pops, sizeof *table);
  uint64_t *gids = calloc((size_t)e->desc.n_pops, sizeof *gids);
  int rc = eng_resident_bucket_alloc(e);
  unsigned char *marks = gather_marks(e, mode);
  uint32_t *errs0 = calloc(ENG_RES_ERR_WORDS * (size_t)e->desc.n_pops, sizeof *errs0);
  uint64_t status0[ENG_RES_STATUS_WORDS] = {0};
  status0[ENG_RES_HALT_GID] = UINT64_MAX;
  memcpy(r->status, status0, sizeof r->status);
  r->errs = calloc(ENG_RES_ERR_WORDS * (size_t)e->desc.n_pops, sizeof *r->errs);
  r->table = table;
  r->rec_host = malloc((size_t)(r->plan.rec_cap ? r->plan.rec_cap : 1) * 8);
  r->markers = calloc((size_t)r->plan.k + 1, sizeof *r->markers);
  if (!rc && (!table || !gids || !marks || !errs0 || !r->errs || !r->rec_host || !r->markers)) {
    rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  for (int p = 0; p < e->desc.n_pops && !rc; ++p) {
    gids[p] = vp->blocks[p].first_gid;
  }
  if (!rc)
    rc = carve_blocks(e, vp, table);
  if (!rc && !(r->counts = malloc(r->b_counts.bytes)))
    rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  nestcl_device *d = e->device.dev;
  const cl_mem_flags ro = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, rw = CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR;
  if (!rc)
    rc = nestcl_buffer_alloc(d, NESTCL_MEM_OTHER, "block table", 16 * (size_t)e->desc.n_pops, ro, table, &r->b_table);
  if (!rc)
    rc = nestcl_buffer_alloc(d, NESTCL_MEM_OTHER, "block gids", 8 * (size_t)e->desc.n_pops, ro, gids, &r->b_gids);
  if (!rc)
    rc = nestcl_buffer_alloc(d, NESTCL_MEM_OTHER, "out-degrees", 4 * (e->desc.n_global ? e->desc.n_global : 1), ro,
                             e->exchange.out_degree, &r->b_degree);
  if (!rc)
    rc = nestcl_buffer_alloc(d, NESTCL_MEM_OTHER, "recorded marks", e->desc.n_global ? e->desc.n_global : 1, ro, marks,
                             &r->b_recorded);
  if (!rc)
    rc = nestcl_buffer_alloc(d, NESTCL_MEM_OTHER, "device loop status", sizeof status0, rw, status0, &r->b_status);
  if (!rc)
    rc = nestcl_buffer_alloc(d, NESTCL_MEM_OTHER, "device loop errors", ENG_RES_ERR_WORDS * 4 * (size_t)e->desc.n_pops,
                             rw, errs0, &r->b_errs);
  if (!rc)
    rc = nestcl_buffer_alloc(d, NESTCL_MEM_RECORDING, "spike recording", r->plan.rec_bytes, CL_MEM_READ_WRITE, NULL,
                             &r->b_rec);
  /* Multimeter samples of a window of slices (none: one word, an argument all the same). */
  if (!rc)
    rc = nestcl_buffer_alloc(d, NESTCL_MEM_RECORDING, "multimeter samples", r->plan.mm_bytes ? r->plan.mm_bytes : 8,
                             CL_MEM_READ_WRITE, NULL, &r->b_mm);
  if (!rc && r->plan.mm_bytes &&
      (!(r->mm_host = malloc(r->plan.mm_bytes)) || !(r->slices = malloc(3 * ((size_t)r->plan.k + 2) * 8)))) {
    rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  /* Work-groups of the plastic delivery: enough to fill the device, each walking many spikes. */
  size_t cu = di->compute_units ? di->compute_units : 1;
  r->deliver_groups =
    cu * 32 < e->exchange.global_cap ? cu * 32 : (e->exchange.global_cap ? e->exchange.global_cap : 1);
  /*
   * The merged end of a super step takes its units (spikes times blocks,
   * groups of driven neurons) in turn: STEP_GROUPS_PER_CU work-groups per
   * compute unit keep a GPU's units busy (8 of 256 work-items: 2,048 per
   * unit) without launching the empty work-groups that a grid sized for the
   * longest list would (issue 41: 4,224 per block on an H200, 43 us).
   */
  r->step_groups = cu * STEP_GROUPS_PER_CU;
  if (!rc)
    rc = make_kernels(e, vp);
  if (!rc) {
    r->on = 1;
  }
  free(gids);
  free(marks);
  free(errs0);
  return rc;
}

void eng_resident_free(nestcl_engine *e)
{
  eng_resident *r = &e->device.res;
  /* The recorded super step went first (build.c: eng_resident_graph_free): it uses what follows. */
  eng_resident_persist_free(e);
  eng_resident_plastic_free(e);
  if (r->k_gather)
    clReleaseKernel(r->k_gather);
  eng_resident_merge_free(e);
  eng_resident_update_free(e);
  if (e->device.dev) {
    /* Parents may go before their sub-buffers: OpenCL keeps the memory until the last one is released. */
    nestcl_buffer *bufs[] = {&r->b_mm,     &r->b_counts,   &r->b_spikes, &r->b_table, &r->b_gids,
                             &r->b_degree, &r->b_recorded, &r->b_status, &r->b_errs,  &r->b_rec};
    for (size_t k = 0; k < sizeof bufs / sizeof *bufs; ++k) {
      nestcl_buffer_free(e->device.dev, bufs[k]);
    }
  }
  free(r->errs);
  free(r->mm_host);
  free(r->slices);
  free(r->table);
  free(r->counts);
  free(r->rec_host);
  free(r->markers);
  memset(r, 0, sizeof *r);
}
