/*
 * Plastic synapses in the device loop (issue 29): STDP and the other
 * translated synapse models run inside super steps that the device runs on
 * its own (resident.c), without the host seeing the spikes.
 *
 * cycle.c hands the plastic delivery a per-source, time-ordered view of the
 * super step's spikes, which the host builds by sorting the global list. Here
 * the device builds it: the gather puts each spike of a neuron that is a
 * source or a target of plastic synapses into that neuron's bucket (at most
 * min_delay spikes: one per step, so a model that sends multiplicities keeps
 * the host clock) and the first spike of each neuron on the list of the super
 * step's sources (nestcl_bucket_add, engine_kernels.cl). Then, per super step:
 *   - per block with a spike history (targets of STDP synapses), one launch
 *     appends its sources' spikes, each bucket sorted by lag, to their history
 *     (ArchivingNode::set_spiketime; nestcl_hist_append_loop);
 *   - per set of plastic synapses onto a block, one launch runs the synapse
 *     model's send() for every synapse of every source on the list, its spikes
 *     in time order (nestcl_plastic, loop 1 or 2);
 *   - the static delivery and the drives follow (resident_merge.c).
 * Weights and traces do not depend on the order of sources or on the
 * scheduling: each synapse sees its source's spikes in time order from one
 * work-item, the history is appended before any delivery reads it, and the
 * ring's sums are exact. So the results are cycle.c's bit for bit.
 *
 * A history ring grows on demand (plastic_dev.c), which the device cannot do
 * on its own: a full ring halts the loop at that super step (the append sets
 * status word [11]; every kernel of later super steps then does nothing). The
 * host finds the halt when it next drains, grows the ring, and runs the rest
 * of that super step again (the append, which skips the spikes appended
 * already, the plastic and the static delivery); then the loop goes on from
 * the next super step (resident_run.c). Counted as `resumes`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine_internal.h"
#include "enqueue.h"

/* nestcl_hist_append_loop's arguments (engine_kernels.cl): the origin, then the history's from HA_HIST on. */
enum { HA_ORIGIN = 6, HA_CLOCKED = 7, HA_HIST = 17 };

static int any_plastic(const nestcl_engine *e)
{
  for (int p = 0; p < e->desc.n_projs; ++p) {
    if (e->desc.projs[p].sm) {
      return 1;
    }
  }
  return 0;
}

/* Whether population p's neurons get buckets: sources or targets of plastic synapses. */
static int bucketed(const nestcl_engine *e, int p)
{
  for (int q = 0; q < e->desc.n_projs; ++q) {
    if (e->desc.projs[q].sm && (e->desc.projs[q].src == p || e->desc.projs[q].tgt == p)) {
      return 1;
    }
  }
  return 0;
}

static uint32_t bucket_width(const nestcl_engine *e, int min_delay)
{
  return any_plastic(e) ? (uint32_t)min_delay : 0;
}

/* No plastic synapses batched (over the memory budget: the host picks the rows each super step). */
static int none_batched(const nestcl_engine *e)
{
  for (int v = 0; e->vps && v < e->n_vps; ++v) {
    for (int p = 0; e->vps[v].blocks && p < e->desc.n_pops; ++p) {
      const eng_block *b = &e->vps[v].blocks[p];
      for (int j = 0; j < b->n_plastic; ++j) {
        if (b->plastic[j].batch_cap) {
          return 0;
        }
      }
    }
  }
  return 1;
}

int eng_resident_plastic_fits(const nestcl_engine *e, int min_delay, int loop)
{
  if (!any_plastic(e)) {
    return 1;
  }
  if (!loop) {
    return none_batched(e); /* beside threads or ranks: eng_resident_plastic_step */
  }
  /* Every kernel of a super step must see a halt: each population's update merged (resident_update.c). */
  for (int p = 0; p < e->desc.n_pops; ++p) {
    const nestcl_model *m = e->desc.pops[p].model;
    if (m->spike_offsets || m->event_queue || (bucketed(e, p) && m->multiplicity)) {
      return 0;
    }
  }
  /* Bucket positions are 32-bit. */
  return (uint64_t)e->desc.n_global * (uint64_t)min_delay <= UINT32_MAX && none_batched(e);
}

size_t eng_resident_bucket_bytes(const nestcl_engine *e, int min_delay)
{
  return any_plastic(e) ? (size_t)e->desc.n_global * (8 + 4 + 4 * (size_t)min_delay) : 0;
}

void eng_resident_bucket_marks(const nestcl_engine *e, unsigned char *marks)
{
  for (int p = 0; any_plastic(e) && p < e->desc.n_pops; ++p) {
    if (bucketed(e, p)) {
      for (uint64_t g = e->desc.pops[p].first; g < e->desc.pops[p].first + e->desc.pops[p].n; ++g) {
        marks[g] |= ENG_MARK_BUCKET;
      }
    }
  }
}

/* The buckets (zeros: no stamp matches), before the gather kernel takes them as arguments. */
int eng_resident_bucket_alloc(nestcl_engine *e)
{
  eng_resident *r = &e->device.res;
  /* Beside threads or ranks the host's list of sources serves (eng_resident_plastic_step): no buckets. */
  r->bucket_width = r->full ? bucket_width(e, e->clock.min_delay) : 0;
  size_t n = r->bucket_width ? (e->desc.n_global ? e->desc.n_global : 1) : 1;
  size_t w = r->bucket_width ? r->bucket_width : 1;
  void *zeros = calloc(n * w, 8);
  if (!zeros) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  const cl_mem_flags rw = CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR;
  int rc = nestcl_buffer_alloc(e->device.dev, NESTCL_MEM_OTHER, "spike buckets", n * 8, rw, zeros, &r->b_bucket_word);
  if (!rc)
    rc = nestcl_buffer_alloc(e->device.dev, NESTCL_MEM_OTHER, "bucket sources", n * 4, rw, zeros, &r->b_bucket_src);
  if (!rc)
    rc = nestcl_buffer_alloc(e->device.dev, NESTCL_MEM_OTHER, "bucket lags", n * w * 4, rw, zeros, &r->b_bucket_lags);
  free(zeros);
  return rc;
}

/* Launch idx's kernel (a history append or a delivery) with its arguments; clocked: see resident_graph.c. */
cl_kernel eng_resident_plastic_kernel(nestcl_engine *e, eng_vp *vp, int idx, int clocked, cl_int *err)
{
  eng_resident *r = &e->device.res;
  eng_res_syn *l = &r->syn[idx];
  eng_block *b = &vp->blocks[l->pop];
  cl_uint width = r->bucket_width, md = (cl_uint)e->clock.min_delay;
  cl_int c = clocked;
  cl_kernel k;
  cl_int x;
  if (l->j < 0) {
    const eng_history *h = &b->hist;
    k = clCreateKernel(e->device.core_program, "nestcl_hist_append_loop", err);
    if (*err != CL_SUCCESS) {
      return NULL;
    }
    cl_ulong first = b->first_gid;
    cl_uint n = b->n;
    cl_long tps = h->tics_per_step, zero = 0;
    cl_double mpt = 1e-3, tmi = h->tau_minus_inv, tti = h->tau_minus_triplet_inv, mdm = h->min_delay_ms;
    cl_double eps = ENG_STDP_EPS;
    cl_int fused = h->fused;
    x = clSetKernelArg(k, 0, sizeof(cl_mem), &r->b_status.mem);
    x |= clSetKernelArg(k, 1, sizeof(cl_mem), &r->b_bucket_src.mem);
    x |= clSetKernelArg(k, 2, sizeof(cl_mem), &r->b_bucket_word.mem);
    x |= clSetKernelArg(k, 3, sizeof(cl_mem), &r->b_bucket_lags.mem);
    x |= clSetKernelArg(k, 4, sizeof width, &width);
    x |= clSetKernelArg(k, 5, sizeof md, &md);
    x |= clSetKernelArg(k, HA_ORIGIN, sizeof zero, &zero);
    x |= clSetKernelArg(k, HA_CLOCKED, sizeof c, &c);
    x |= clSetKernelArg(k, 8, sizeof first, &first);
    x |= clSetKernelArg(k, 9, sizeof n, &n);
    x |= clSetKernelArg(k, 10, sizeof tps, &tps);
    x |= clSetKernelArg(k, 11, sizeof mpt, &mpt);
    x |= clSetKernelArg(k, 12, sizeof tmi, &tmi);
    x |= clSetKernelArg(k, 13, sizeof tti, &tti);
    x |= clSetKernelArg(k, 14, sizeof mdm, &mdm);
    x |= clSetKernelArg(k, 15, sizeof eps, &eps);
    x |= clSetKernelArg(k, 16, sizeof fused, &fused);
    x |= eng_hist_args(k, HA_HIST, h);
  } else {
    eng_plastic *pl = &b->plastic[l->j];
    k = clCreateKernel(e->device.plastic_programs[pl->proj], "nestcl_plastic", err);
    if (*err != CL_SUCCESS) {
      return NULL;
    }
    cl_uint none = 0;
    cl_long zero = 0;
    cl_int loop = clocked ? 2 : 1;
    x = eng_plastic_kernel_args(e, b, pl, k, &r->b_bucket_src, &r->b_bucket_lags);
    x |= clSetKernelArg(k, PK_N_SRCS, sizeof none, &none);
    x |= clSetKernelArg(k, PK_ORIGIN, sizeof zero, &zero);
    x |= clSetKernelArg(k, PK_STATUS, sizeof(cl_mem), &r->b_status.mem);
    x |= clSetKernelArg(k, PK_BUCKET_WORD, sizeof(cl_mem), &r->b_bucket_word.mem);
    x |= clSetKernelArg(k, PK_BUCKET_WIDTH, sizeof width, &width);
    x |= clSetKernelArg(k, PK_MIN_DELAY, sizeof md, &md);
    x |= clSetKernelArg(k, PK_LOOP, sizeof loop, &loop);
  }
  if (x != CL_SUCCESS) {
    clReleaseKernel(k);
    *err = x;
    return NULL;
  }
  return k;
}

/* The launches: every block's history append, then every block's plastic deliveries; their shapes. */
static int plan_launches(nestcl_engine *e, eng_vp *vp)
{
  eng_resident *r = &e->device.res;
  int n = 0;
  for (int p = 0; p < e->desc.n_pops; ++p) {
    n += (vp->blocks[p].hist.cap && vp->blocks[p].n) + vp->blocks[p].n_plastic;
  }
  r->syn = calloc((size_t)n + 1, sizeof *r->syn);
  if (!r->syn) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  const nestcl_device_info *di = nestcl_device_get_info(e->device.dev);
  size_t cu = di->compute_units ? di->compute_units : 1;
  for (int pass = 0; pass < 2; ++pass) {
    for (int p = 0; p < e->desc.n_pops; ++p) {
      eng_block *b = &vp->blocks[p];
      if (b->n == 0) {
        continue;
      }
      if (pass == 0 && b->hist.cap) {
        /* One work-item per source, a few per compute unit's lanes: sources are few per super step. */
        eng_res_syn *l = &r->syn[r->n_syn++];
        l->pop = p;
        l->j = -1;
        size_t g = cu * 256 < b->n ? cu * 256 : b->n;
        l->gsize[0] = (g + 63) / 64 * 64;
        l->dims = 1;
        continue;
      }
      for (int j = 0; pass == 1 && j < b->n_plastic; ++j) {
        eng_plastic *pl = &b->plastic[j];
        if (pl->nnz == 0) {
          continue;
        }
        eng_res_syn *l = &r->syn[r->n_syn++];
        l->pop = p;
        l->j = j;
        /* The super step's list is not known here: at most every row, each work-group taking several. */
        eng_plastic_grid(e, pl, pl->n_rows, pl->max_row, r->deliver_groups, l->gsize, l->lsize);
        l->dims = 2;
      }
    }
  }
  return 0;
}

int eng_resident_plastic_setup(nestcl_engine *e, eng_vp *vp)
{
  eng_resident *r = &e->device.res;
  r->halt_clear[0] = 0;
  r->halt_clear[1] = UINT64_MAX;
  for (int p = 0; p < e->desc.n_pops; ++p) {
    /* The host-clock kernels' rings are parts of one buffer now (resident.c): their ring argument follows. */
    for (int j = 0; j < vp->blocks[p].n_plastic; ++j) {
      cl_int err = clSetKernelArg(vp->blocks[p].plastic[j].k, PK_RING, sizeof(cl_mem), &vp->blocks[p].b_ring.mem);
      if (err != CL_SUCCESS) {
        return eng_cl_check(err, "clSetKernelArg(nestcl_plastic)");
      }
    }
  }
  if (!r->full && any_plastic(e)) {
    /* Beside threads or ranks: the history lengths each collect reads (eng_resident_plastic_step). */
    r->hist_len = calloc((size_t)e->desc.n_pops, sizeof *r->hist_len);
    for (int p = 0; r->hist_len && p < e->desc.n_pops; ++p) {
      if (vp->blocks[p].hist.cap && vp->blocks[p].n && !(r->hist_len[p] = calloc(vp->blocks[p].n, 4))) {
        return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
      }
    }
    return r->hist_len ? 0 : nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  if (!r->bucket_width) {
    return 0;
  }
  int rc = plan_launches(e, vp);
  for (int k = 0; k < r->n_syn && !rc; ++k) {
    cl_int err;
    r->syn[k].k = eng_resident_plastic_kernel(e, vp, k, 0, &err);
    rc = eng_cl_check(err, r->syn[k].j < 0 ? "the device loop's history append" : "the device loop's plastic delivery");
  }
  return rc;
}

void eng_resident_plastic_free(nestcl_engine *e)
{
  eng_resident *r = &e->device.res;
  for (int k = 0; r->syn && k < r->n_syn; ++k) {
    if (r->syn[k].k)
      clReleaseKernel(r->syn[k].k);
  }
  free(r->syn);
  r->syn = NULL;
  r->n_syn = 0;
  for (int p = 0; r->hist_len && p < e->desc.n_pops; ++p) {
    free(r->hist_len[p]);
  }
  free(r->hist_len);
  r->hist_len = NULL;
  if (e->device.dev) {
    nestcl_buffer_free(e->device.dev, &r->b_bucket_word);
    nestcl_buffer_free(e->device.dev, &r->b_bucket_src);
    nestcl_buffer_free(e->device.dev, &r->b_bucket_lags);
  }
}

/* The plastic part of the super step at origin, launched one by one (not clocked). */
cl_int eng_resident_enqueue_plastic(nestcl_engine *e, eng_vp *vp, cl_command_queue q, int64_t origin)
{
  eng_resident *r = &e->device.res;
  cl_long org = origin;
  cl_int err = CL_SUCCESS;
  for (int k = 0; k < r->n_syn && err == CL_SUCCESS; ++k) {
    eng_res_syn *l = &r->syn[k];
    err = clSetKernelArg(l->k, l->j < 0 ? HA_ORIGIN : PK_ORIGIN, sizeof org, &org);
    if (err == CL_SUCCESS) {
      err = nestcl_enq_launch(&vp->st.enqueued, q, l->k, (cl_uint)l->dims, l->gsize, l->dims == 2 ? l->lsize : NULL, 0,
                              NULL, NULL);
    }
  }
  return err;
}

/* Block p's history moved (grown, or replaced by a restore): the device loop's kernels follow it (eng_resident_repoint). */
int eng_resident_plastic_repoint(nestcl_engine *e, eng_vp *vp, int p)
{
  eng_resident *r = &e->device.res;
  const eng_history *h = &vp->blocks[p].hist;
  cl_int err = CL_SUCCESS;
  for (int k = 0; r->on && k < r->n_syn; ++k) {
    if (r->syn[k].pop == p) {
      err |= eng_hist_args(r->syn[k].k, r->syn[k].j < 0 ? HA_HIST : PK_HIST, h);
    }
  }
  return eng_cl_check(err, "clSetKernelArg(device loop history)");
}

/* ---- one stream beside CPU threads or ranks ------------------------------ */

/*
 * There the host has the super step's spikes anyway (the exchange), so the
 * plastic delivery walks the host's list of sources (cycle.c builds it) with
 * the host clock's kernels; what this path saves is the waits. A history
 * append must not find a ring full: each collect also reads the stream's
 * history lengths (one transfer per block with a history, in the collect's
 * one round trip), so the host grows a ring before the append that would
 * overflow it, as if the ring could hold each neuron's length plus its new
 * spikes (NEST may drop old entries first, so this grows early at worst). At
 * the bound (history_max) the exact append decides, with a wait.
 */
cl_int eng_resident_enqueue_hist_lengths(nestcl_engine *e, eng_vp *vp, cl_command_queue q)
{
  eng_resident *r = &e->device.res;
  cl_int err = CL_SUCCESS;
  for (int p = 0; r->hist_len && p < e->desc.n_pops && err == CL_SUCCESS; ++p) {
    const eng_block *b = &vp->blocks[p];
    if (r->hist_len[p]) {
      err = nestcl_enq_read(&vp->st.enqueued, q, b->hist.b[ENG_H_LEN].mem, CL_FALSE, 0, (size_t)b->n * 4,
                            r->hist_len[p], 0, NULL, NULL);
    }
  }
  return err;
}

/* Block b's spikes of the super step at origin into its history, the ring grown first where it could fill. */
static int append_history(nestcl_engine *e, eng_vp *vp, eng_block *b, const uint32_t *len, int64_t origin)
{
  eng_history *h = &b->hist;
  eng_plastic_hist_pairs(vp, b);
  h->counts = &vp->st.enqueued;
  uint32_t need = 0, worst = 0;
  for (size_t q = 0; q < h->n_append;) {
    const uint32_t i = h->append[2 * q];
    size_t q1 = q + 1;
    while (q1 < h->n_append && h->append[2 * q1] == i) {
      ++q1;
    }
    if (len[i] + (uint32_t)(q1 - q) > need) {
      need = len[i] + (uint32_t)(q1 - q);
      worst = i;
    }
    q = q1;
  }
  while (need > h->cap && h->cap < h->max_cap) {
    int rc = eng_hist_grow(h, e->device.dev, vp->queue, worst);
    if (rc) {
      return rc;
    }
  }
  if (need > h->cap) {
    return eng_hist_append_device(h, e->device.dev, vp->queue, origin);
  }
  return eng_cl_check(eng_hist_append_enqueue(h, e->device.dev, vp->queue, origin), "history append");
}

int eng_resident_plastic_step(nestcl_engine *e, eng_vp *vp, int64_t origin)
{
  eng_resident *r = &e->device.res;
  double t0 = eng_now();
  int rc = 0;
  for (int p = 0; p < e->desc.n_pops && !rc; ++p) {
    if (r->hist_len && r->hist_len[p] && vp->blocks[p].hist.cap) {
      rc = append_history(e, vp, &vp->blocks[p], r->hist_len[p], origin);
    }
  }
  double t1 = eng_now();
  vp->st.seconds[NESTCL_PHASE_UPDATE] += t1 - t0;
  if (rc || e->exchange.n_src_list == 0) {
    return rc;
  }
  /* The host's list stays as it is until the next collect has waited for this queue. */
  nestcl_enqueue_counts *c = &vp->st.enqueued;
  cl_command_queue q = nestcl_device_queue(e->device.dev, vp->queue);
  cl_int err = nestcl_enq_write(c, q, vp->b_srcs.mem, CL_FALSE, 0, e->exchange.n_src_list * 12, e->exchange.src_list, 0,
                                NULL, NULL);
  err |= nestcl_enq_write(c, q, vp->b_lags.mem, CL_FALSE, 0, e->exchange.n_global_spikes * 4, e->exchange.src_lags, 0,
                          NULL, NULL);
  cl_uint ns = (cl_uint)e->exchange.n_src_list;
  cl_long org = origin;
  for (int p = 0; p < e->desc.n_pops && err == CL_SUCCESS; ++p) {
    eng_block *b = &vp->blocks[p];
    for (int j = 0; b->n && j < b->n_plastic && err == CL_SUCCESS; ++j) {
      eng_plastic *pl = &b->plastic[j];
      if (pl->nnz == 0) {
        continue;
      }
      err = clSetKernelArg(pl->k, PK_N_SRCS, sizeof ns, &ns);
      err |= clSetKernelArg(pl->k, PK_ORIGIN, sizeof org, &org);
      size_t gsize[2], lsize[2];
      eng_plastic_grid(e, pl, e->exchange.n_src_list, pl->max_row, e->exchange.n_src_list, gsize, lsize);
      if (err == CL_SUCCESS)
        err = nestcl_enq_launch(c, q, pl->k, 2, gsize, lsize, 0, NULL, NULL);
    }
  }
  if (err == CL_SUCCESS)
    err = clFlush(q);
  double dt = eng_now() - t1;
  vp->st.plastic_seconds += dt;
  vp->st.seconds[NESTCL_PHASE_DELIVER] += dt;
  return eng_cl_check(err, "plastic delivery");
}
