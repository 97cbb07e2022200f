/*
 * Translated synapses in the engine (issue 9; docs/architecture.md, "Plastic synapses and the spike history"):
 * the postsynaptic spike history of their targets (nestcl_history.h, one
 * bounded ring per neuron that grows on demand), and the delivery that runs a
 * synapse model's send() for every (synapse, presynaptic spike), on the device
 * through plastic_kernels.cl (the C path, and how CPU threads share it, is
 * plastic_cpu.c).
 *
 * Order of a super step, as in NEST: the update appends every spike of a
 * neuron to its history (set_spiketime; here right after the update, before
 * any delivery, which is equivalent: nothing reads the history in between),
 * then the spikes are delivered, each synapse seeing its source's spikes in
 * time order. A history read by a delivery belongs to the same block as the
 * synapse (its target), so every VP works on its own blocks only.
 *
 * Layout: per projection and block a CSR over the source population's rows,
 * a 32-bit target index per synapse, the per-synapse state (eng_syn_layout:
 * for stdp_pl_synapse_hom the double weight only, so 12 bytes per synapse with
 * a homogeneous delay) and the per-source state once per row. Resident, or
 * (a GPU VP over its device memory budget) batched: the CSR stays in host
 * memory and the rows one time stamp's spikes touch go to the device in
 * batches through two slots. What the device side shares with nest_patch's
 * blocks (layout, program, arguments, spike history) is in ../plastic_dev.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "enqueue.h"
#include "nestcl_synapse.h"
#include "core/nestcl_core.h"

/* ---- time --------------------------------------------------------------- */

/* NEST's Time with 1000 tics per ms: tics per step, ms per tic, ms per step. */
static int64_t tics_per_step(const nestcl_engine *e)
{
  return eng_tics_per_step(e->desc.cfg.resolution_ms);
}

size_t eng_plastic_resident_bytes(const nestcl_engine *e, const eng_block *b)
{
  size_t bytes = 0;
  for (int j = 0; j < b->n_plastic; ++j) {
    const eng_plastic *pl = &b->plastic[j];
    const eng_syn_layout *L = &e->desc.projs[pl->proj].lay;
    bytes += ((size_t)pl->n_rows + 1) * 8 + pl->nnz * (4 + L->state_bytes) +
      (pl->delay_hom == NESTCL_DELAY_PER_SYNAPSE ? pl->nnz * 2 : 0) + (size_t)pl->n_rows * L->src_bytes;
  }
  return bytes;
}

/* Two slots, each: row pointers, targets, state, delays of cap synapses; per-source state and the
   (row, spike) triples of up to cap rows. */
size_t eng_plastic_slot_bytes(const nestcl_engine *e, const eng_plastic *pl, uint64_t cap)
{
  const eng_syn_layout *L = &e->desc.projs[pl->proj].lay;
  size_t per_syn = 4 + L->state_bytes + (pl->delay_hom == NESTCL_DELAY_PER_SYNAPSE ? 2 : 0);
  size_t per_row = 8 + L->src_bytes + 12;
  return 2 * ((size_t)cap * (per_syn + per_row) + 8);
}

int eng_plastic_init_state(nestcl_engine *e, eng_vp *vp, eng_block *b, const uint32_t *hist_nin,
                           const double *hist_maxd)
{
  for (int j = 0; j < b->n_plastic; ++j) {
    eng_plastic *pl = &b->plastic[j];
    const eng_projection *pr = &e->desc.projs[pl->proj];
    const nestcl_synapse_model *sm = pr->sm;
    const unsigned char *t = pr->tmpl;
    /* Per-source state from the template; per-synapse state too, except the drawn weight. */
    for (uint32_t r = 0; r < pl->n_rows; ++r) {
      eng_syn_store(sm, t, pl->src_state, pr->lay.n_src, pr->lay.src_f, pr->lay.src_off, pl->n_rows, r);
    }
    /* No state here: the device drew the set, its state from the template too (connect_device.c). */
    for (int f = 0; f < pr->lay.n_state && pl->state; ++f) {
      if (pr->lay.state_f[f] == pr->lay.weight_f) {
        continue;
      }
      for (uint64_t k = 0; k < pl->nnz; ++k) {
        eng_syn_store(sm, t, pl->state, 1, &pr->lay.state_f[f], &pr->lay.state_off[f], pl->nnz, k);
      }
    }
    int rc = vp->ops->plastic_init(e, vp, pl);
    if (rc) {
      return rc;
    }
  }
  if (!hist_nin) {
    return 0;
  }
  const eng_population *pop = &e->desc.pops[b->pop];
  int rc = eng_hist_init(&b->hist, b->n, e->desc.cfg.history_capacity, e->desc.cfg.history_max, pop->tau_minus,
                         pop->tau_minus_triplet, hist_nin, hist_maxd, b->spike_cap, tics_per_step(e),
                         eng_delay_ms(e, e->clock.min_delay), e->device.libm_fused, b->first_gid, pop->model->name);
  if (!rc) {
    vp->ops->account(vp, NESTCL_MEM_STATE, eng_hist_bytes(&b->hist));
  }
  return rc;
}

/* The VP's own spikes of block b as (local index, lag) pairs, by index then lag. */
static int cmp_pair(const void *x, const void *y)
{
  const uint32_t *a = x, *b = y;
  if (a[0] != b[0]) {
    return a[0] < b[0] ? -1 : 1;
  }
  return a[1] < b[1] ? -1 : (a[1] > b[1]);
}

void eng_plastic_hist_pairs(const eng_vp *vp, eng_block *b)
{
  eng_history *h = &b->hist;
  h->n_append = 0;
  for (size_t s = 0; s < vp->n_out; ++s) {
    uint64_t gid = vp->out[2 * s];
    if (gid >= b->first_gid && gid < b->first_gid + b->n) {
      h->append[2 * h->n_append] = (uint32_t)(gid - b->first_gid);
      h->append[2 * h->n_append + 1] = vp->out[2 * s + 1];
      h->n_append++;
    }
  }
  eng_hist_sort(h);
}

/* ---- programs and upload ------------------------------------------------ */

int eng_plastic_build_programs(nestcl_engine *e)
{
  e->device.plastic_programs = calloc((size_t)e->desc.n_projs, sizeof *e->device.plastic_programs);
  if (!e->device.plastic_programs) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  int shape_rc = eng_plastic_shape_get(e->device.dev, &e->device.plastic_shape);
  if (shape_rc) {
    return shape_rc;
  }
  for (int p = 0; p < e->desc.n_projs; ++p) {
    const eng_projection *pr = &e->desc.projs[p];
    if (!pr->sm) {
      continue;
    }
    int same = -1;
    for (int q = 0; q < p && same < 0; ++q) {
      if (e->desc.projs[q].sm == pr->sm) {
        same = q;
      }
    }
    if (same >= 0) {
      e->device.plastic_programs[p] = e->device.plastic_programs[same];
      clRetainProgram(e->device.plastic_programs[p]);
      continue;
    }
    int rc = eng_plastic_program(e->device.dev, pr->sm, &pr->lay, e->device.deliver_contiguous,
                                 &e->device.plastic_shape, &e->device.plastic_programs[p]);
    if (rc) {
      return rc;
    }
  }
  return 0;
}

static int slots_alloc(nestcl_engine *e, eng_plastic *pl);

/*
 * Kernel k's arguments for synapses pl onto block b (all but the per-launch
 * ones), the sources from srcs and their lags from lags: the host's list
 * (cycle.c), or the device loop's buckets (resident_plastic.c, which then sets
 * the arguments from PK_STATUS on).
 */
cl_int eng_plastic_kernel_args(nestcl_engine *e, eng_block *b, eng_plastic *pl, cl_kernel k, const nestcl_buffer *srcs,
                               const nestcl_buffer *lags)
{
  const eng_projection *pr = &e->desc.projs[pl->proj];
  const eng_history *h = &b->hist;
  eng_plastic_fixed fx = {&pl->b_tmpl,
                          &pl->b_cp,
                          &b->b_ring,
                          lags,
                          pl->delay_hom,
                          (uint32_t)e->clock.ring_slots,
                          b->n,
                          b->n_channels,
                          (uint32_t)pr->ch_pos,
                          (uint32_t)pr->ch_neg,
                          (uint32_t)pr->ch_zero,
                          pr->syn.rport,
                          tics_per_step(e),
                          eng_delay_ms(e, 1),
                          h->cap ? h->tau_minus_inv : 0.0,
                          e->device.libm_fused};
  cl_int err = eng_plastic_fixed_args(k, &fx);
  if (!pl->batch_cap) {
    err |= eng_plastic_rows_args(k, srcs, pl->src_first, pl->n_rows, &pl->b_row, &pl->b_target, &pl->b_delay,
                                 &pl->b_state, pl->nnz, &pl->b_src_state, &pl->b_done);
  }
  if (h->cap) {
    err |= eng_hist_args(k, PK_HIST, h);
  } else {
    /* No history: any valid buffer for the arrays, cap 0 (the kernel passes no history then). */
    for (cl_uint a = 0; a < ENG_H_ARRAYS; ++a) {
      err |= clSetKernelArg(k, PK_HIST + a, sizeof(cl_mem), &pl->b_tmpl.mem);
    }
    cl_uint zero = 0;
    err |= clSetKernelArg(k, PK_HIST + ENG_H_ARRAYS, sizeof zero, &zero);
  }
  return err;
}

int eng_plastic_upload(nestcl_engine *e, eng_vp *vp, eng_block *b)
{
  nestcl_device *dev = e->device.dev;
  int rc = 0;
  cl_int err = CL_SUCCESS;
  eng_history *h = &b->hist;
  if (h->cap && (rc = eng_hist_upload(h, dev, e->device.core_program))) {
    return rc;
  }
  for (int j = 0; j < b->n_plastic; ++j) {
    eng_plastic *pl = &b->plastic[j];
    const eng_projection *pr = &e->desc.projs[pl->proj];
    size_t sb = pl->nnz * pr->lay.state_bytes, rb = pl->n_rows * pr->lay.src_bytes;
    if (pl->batch_cap) {
      rc = slots_alloc(e, pl);
    } else if (pl->b_target.mem) { /* the build drew the rest into its buffers (connect.c, stream_upload.c) */
      rc = nestcl_buffer_alloc(dev, NESTCL_MEM_SYNAPSES, "plastic row pointers", (pl->n_rows + 1) * 8,
                               CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, pl->row_ptr, &pl->b_row);
    } else {
      rc = nestcl_buffer_alloc(dev, NESTCL_MEM_SYNAPSES, "plastic row pointers", (pl->n_rows + 1) * 8,
                               CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, pl->row_ptr, &pl->b_row);
      if (!rc)
        rc = nestcl_buffer_alloc(dev, NESTCL_MEM_SYNAPSES, "plastic targets", pl->nnz * 4,
                                 CL_MEM_READ_ONLY | (pl->nnz ? CL_MEM_COPY_HOST_PTR : 0), pl->nnz ? pl->target : NULL,
                                 &pl->b_target);
      if (!rc)
        rc = nestcl_buffer_alloc(dev, NESTCL_MEM_SYNAPSES, "plastic delays", pl->delay ? pl->nnz * 2 : 0,
                                 CL_MEM_READ_ONLY | (pl->delay && pl->nnz ? CL_MEM_COPY_HOST_PTR : 0),
                                 pl->delay && pl->nnz ? pl->delay : NULL, &pl->b_delay);
      if (!rc)
        rc =
          nestcl_buffer_alloc(dev, NESTCL_MEM_SYNAPSES, "plastic state", sb,
                              CL_MEM_READ_WRITE | (sb ? CL_MEM_COPY_HOST_PTR : 0), sb ? pl->state : NULL, &pl->b_state);
      if (!rc)
        rc = nestcl_buffer_alloc(dev, NESTCL_MEM_SYNAPSES, "per-source state", rb,
                                 CL_MEM_READ_WRITE | (rb ? CL_MEM_COPY_HOST_PTR : 0), rb ? pl->src_state : NULL,
                                 &pl->b_src_state);
    }
    if (!rc)
      rc = eng_plastic_row_done_alloc(dev, pl->n_rows, &pl->b_done);
    if (!rc)
      rc = nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "synapse template", pr->sm->syn_size,
                               CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, pr->tmpl, &pl->b_tmpl);
    if (!rc)
      rc = nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "common properties", pr->sm->cp_size,
                               CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, pr->cp, &pl->b_cp);
    if (rc) {
      return rc;
    }
    pl->k = clCreateKernel(e->device.plastic_programs[pl->proj], "nestcl_plastic", &err);
    if ((rc = eng_cl_check(err, "clCreateKernel(nestcl_plastic)")))
      return rc;
    /* Its own limit: a translated send() may need more registers than static delivery. */
    if ((rc = eng_plastic_width(dev, pl->k, &e->device.plastic_shape, e->device.deliver_width, &pl->width)))
      return rc;
    err = eng_plastic_kernel_args(e, b, pl, pl->k, &vp->b_srcs, &vp->b_lags);
    if ((rc = eng_cl_check(err, "clSetKernelArg(nestcl_plastic)")))
      return rc;
    /* It reads the history: it follows the history's moves (plastic_dev.h), with every other set of the block. */
    if (h->cap && (rc = eng_hist_add_user(h, pl->k)))
      return rc;
    if (pl->batch_cap) {
      continue; /* batched: the host keeps the synapses */
    }
    /* Resident: the device owns the synapses now; row pointers stay for reading weights back. */
    free(pl->target);
    pl->target = NULL;
    free(pl->state);
    pl->state = NULL;
    free(pl->src_state);
    pl->src_state = NULL;
    free(pl->delay);
    pl->delay = NULL;
  }
  return 0;
}

static int slots_alloc(nestcl_engine *e, eng_plastic *pl)
{
  const eng_syn_layout *L = &e->desc.projs[pl->proj].lay;
  uint64_t cap = pl->batch_cap;
  int per_syn_delay = pl->delay_hom == NESTCL_DELAY_PER_SYNAPSE;
  pl->row_batch = calloc((size_t)pl->n_rows + 1, sizeof *pl->row_batch);
  if (!pl->row_batch) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  int rc = 0;
  for (int k = 0; k < 2 && !rc; ++k) {
    struct eng_slot *sl = &pl->slot[k];
    sl->row = malloc((cap + 1) * 8);
    sl->target = malloc(cap * 4);
    sl->srcs = malloc(cap * 12);
    sl->rows = malloc(cap * 4);
    sl->delay = per_syn_delay ? malloc(cap * 2) : NULL;
    sl->state = malloc(cap * L->state_bytes);
    sl->src_state = malloc(cap * L->src_bytes + 1);
    if (!sl->row || !sl->target || !sl->srcs || !sl->rows || (per_syn_delay && !sl->delay) || !sl->state ||
        !sl->src_state) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory for plastic batches");
    }
    rc = nestcl_buffer_alloc(e->device.dev, NESTCL_MEM_SYNAPSES, "batch row pointers", (cap + 1) * 8, CL_MEM_READ_ONLY,
                             NULL, &sl->b_row);
    if (!rc)
      rc = nestcl_buffer_alloc(e->device.dev, NESTCL_MEM_SYNAPSES, "batch targets", cap * 4, CL_MEM_READ_ONLY, NULL,
                               &sl->b_target);
    if (!rc)
      rc = nestcl_buffer_alloc(e->device.dev, NESTCL_MEM_SYNAPSES, "batch delays", per_syn_delay ? cap * 2 : 2,
                               CL_MEM_READ_ONLY, NULL, &sl->b_delay);
    if (!rc)
      rc = nestcl_buffer_alloc(e->device.dev, NESTCL_MEM_SYNAPSES, "batch state", cap * L->state_bytes,
                               CL_MEM_READ_WRITE, NULL, &sl->b_state);
    if (!rc)
      rc = nestcl_buffer_alloc(e->device.dev, NESTCL_MEM_SYNAPSES, "batch per-source state", cap * L->src_bytes + 8,
                               CL_MEM_READ_WRITE, NULL, &sl->b_src_state);
    if (!rc)
      rc = nestcl_buffer_alloc(e->device.dev, NESTCL_MEM_OTHER, "batch sources", cap * 12, CL_MEM_READ_ONLY, NULL,
                               &sl->b_srcs);
  }
  return rc;
}

/* Waits for a slot's read-back and writes its rows back into the host CSR. */
static int slot_retire(nestcl_engine *e, eng_vp *vp, eng_plastic *pl, struct eng_slot *sl)
{
  if (!sl->done) {
    return 0;
  }
  cl_int err = nestcl_enq_wait(&vp->st.enqueued, 1, &sl->done);
  clReleaseEvent(sl->done);
  sl->done = NULL;
  if (err != CL_SUCCESS) {
    return eng_cl_check(err, "plastic batch");
  }
  const eng_projection *pr = &e->desc.projs[pl->proj];
  const nestcl_synapse_model *sm = pr->sm;
  const eng_syn_layout *L = &pr->lay;
  for (uint32_t r = 0; r < sl->n_rows; ++r) {
    uint32_t row = sl->rows[r];
    uint64_t r0 = pl->row_ptr[row], len = pl->row_ptr[row + 1] - r0, at = sl->row[r];
    for (int f = 0; f < L->n_state; ++f) {
      size_t sz = eng_syn_field_size(&sm->fields[L->state_f[f]]);
      memcpy(pl->state + L->state_off[f] * pl->nnz + r0 * sz, sl->state + L->state_off[f] * sl->nnz + at * sz,
             len * sz);
    }
    for (int f = 0; f < L->n_src; ++f) {
      size_t sz = eng_syn_field_size(&sm->fields[L->src_f[f]]);
      memcpy(pl->src_state + L->src_off[f] * pl->n_rows + row * sz, sl->src_state + L->src_off[f] * sl->n_rows + r * sz,
             sz);
    }
  }
  return 0;
}

/*
 * A slot's field arrays are packed at a stride of batch_cap synapses (rows),
 * since a batch's size is known only when it is full; before the upload they
 * move down to the batch's own count (fields in ascending order of offset,
 * so no move overwrites a field still to move), so that one transfer each way
 * carries all fields of the batch, with nothing between them. (It also keeps
 * every transfer at offset 0: oclgrind marks [0, size) initialised for a write
 * at any offset, tests/oclgrind/false_positive/write_offset.c.)
 */
static void slot_compact(unsigned char *base, int n_fields, const size_t *off, size_t total, uint64_t cap,
                         uint64_t count)
{
  for (int f = 1; f < n_fields; ++f) {
    size_t size = (f + 1 < n_fields ? off[f + 1] : total) - off[f];
    memmove(base + off[f] * count, base + off[f] * cap, (size_t)count * size);
  }
}

/* Sends one packed slot: uploads on the transfer queue, the kernel on the VP's queue, read-back behind it. */
static int slot_launch(nestcl_engine *e, eng_vp *vp, eng_plastic *pl, struct eng_slot *sl, int64_t origin)
{
  const eng_syn_layout *L = &e->desc.projs[pl->proj].lay;
  cl_command_queue q = nestcl_device_queue(e->device.dev, vp->queue);
  cl_command_queue t = nestcl_device_queue(e->device.dev, e->desc.cfg.gpu_streams + vp->queue);
  uint64_t cap = pl->batch_cap;
  cl_int err =
    nestcl_enq_write(&vp->st.enqueued, t, sl->b_row.mem, CL_FALSE, 0, (sl->n_rows + 1) * 8, sl->row, 0, NULL, NULL);
  err |= nestcl_enq_write(&vp->st.enqueued, t, sl->b_target.mem, CL_FALSE, 0, sl->nnz * 4, sl->target, 0, NULL, NULL);
  err |= nestcl_enq_write(&vp->st.enqueued, t, sl->b_srcs.mem, CL_FALSE, 0, (size_t)sl->n_rows * 12, sl->srcs, 0, NULL,
                          NULL);
  if (sl->delay) {
    err |= nestcl_enq_write(&vp->st.enqueued, t, sl->b_delay.mem, CL_FALSE, 0, sl->nnz * 2, sl->delay, 0, NULL, NULL);
  }
  const size_t state_bytes = sl->nnz * L->state_bytes, src_bytes = (size_t)sl->n_rows * L->src_bytes;
  slot_compact(sl->state, L->n_state, L->state_off, L->state_bytes, cap, sl->nnz);
  slot_compact(sl->src_state, L->n_src, L->src_off, L->src_bytes, cap, sl->n_rows);
  if (state_bytes) {
    err |= nestcl_enq_write(&vp->st.enqueued, t, sl->b_state.mem, CL_FALSE, 0, state_bytes, sl->state, 0, NULL, NULL);
  }
  if (src_bytes) {
    err |=
      nestcl_enq_write(&vp->st.enqueued, t, sl->b_src_state.mem, CL_FALSE, 0, src_bytes, sl->src_state, 0, NULL, NULL);
  }
  cl_event written = NULL, ran = NULL;
  err |= clEnqueueMarkerWithWaitList(t, 0, NULL, &written);
  if (err != CL_SUCCESS) {
    return eng_cl_check(err, "uploading a plastic batch");
  }
  cl_uint ns = sl->n_rows;
  cl_long org = origin;
  /* Rows are the slot's own (0, 1, ...); its arrays are laid out for the batch's synapses and rows. */
  err = eng_plastic_rows_args(pl->k, &sl->b_srcs, 0, sl->n_rows, &sl->b_row, &sl->b_target, &sl->b_delay, &sl->b_state,
                              sl->nnz, &sl->b_src_state, &pl->b_done);
  err |= clSetKernelArg(pl->k, PK_N_SRCS, sizeof ns, &ns);
  err |= clSetKernelArg(pl->k, PK_ORIGIN, sizeof org, &org);
  uint32_t longest = 0;
  for (uint32_t r = 0; r < sl->n_rows; ++r) {
    uint32_t len = (uint32_t)(sl->row[r + 1] - sl->row[r]);
    longest = len > longest ? len : longest;
  }
  size_t gsize[2], lsize[2];
  eng_plastic_grid(e, pl, sl->n_rows, longest, sl->n_rows, gsize, lsize);
  if (err == CL_SUCCESS) {
    err = nestcl_enq_launch(&vp->st.enqueued, q, pl->k, 2, gsize, lsize, 1, &written, &ran);
  }
  clReleaseEvent(written);
  if (err != CL_SUCCESS) {
    return eng_cl_check(err, "plastic batch kernel");
  }
  clFlush(q);
  if (state_bytes) {
    err |= nestcl_enq_read(&vp->st.enqueued, t, sl->b_state.mem, CL_FALSE, 0, state_bytes, sl->state, 1, &ran, NULL);
  }
  if (src_bytes) {
    err |=
      nestcl_enq_read(&vp->st.enqueued, t, sl->b_src_state.mem, CL_FALSE, 0, src_bytes, sl->src_state, 1, &ran, NULL);
  }
  err |= clEnqueueMarkerWithWaitList(t, 1, &ran, &sl->done);
  clReleaseEvent(ran);
  clFlush(t);
  pl->batches++;
  vp->st.plastic_batches++;
  return eng_cl_check(err, "reading a plastic batch back");
}

/*
 * Batched delivery of one projection onto a GPU VP's block: for each time
 * stamp (lag) in order, the rows of the sources that spiked then are packed
 * into batches of at most batch_cap synapses, alternating between the two
 * slots; a slot is retired (waited for, written back) before it is packed
 * again, and so is any in-flight batch that holds a row about to be packed.
 */
static int deliver_batched(nestcl_engine *e, eng_vp *vp, eng_plastic *pl, int64_t origin)
{
  const eng_projection *pr = &e->desc.projs[pl->proj];
  const nestcl_synapse_model *sm = pr->sm;
  const eng_syn_layout *L = &pr->lay;
  int cur = 0, rc = 0;
  struct eng_slot *sl = &pl->slot[0];
  sl->n_rows = 0;
  sl->nnz = 0;
  sl->row[0] = 0;
  size_t n = e->exchange.n_global_spikes;
  for (size_t s = 0; s < n && !rc;) {
    uint32_t lag = e->exchange.global[2 * s + 1];
    size_t s1 = s;
    while (s1 < n && e->exchange.global[2 * s1 + 1] == lag) {
      ++s1;
    }
    for (; s < s1 && !rc; ++s) {
      uint64_t gid = e->exchange.global[2 * s];
      if (gid < pl->src_first || gid - pl->src_first >= pl->n_rows) {
        continue;
      }
      uint32_t row = (uint32_t)(gid - pl->src_first);
      uint64_t r0 = pl->row_ptr[row], len = pl->row_ptr[row + 1] - r0;
      if (len == 0) {
        continue;
      }
      if (sl->nnz + len > pl->batch_cap) {
        rc = slot_launch(e, vp, pl, sl, origin);
        cur ^= 1;
        sl = &pl->slot[cur];
        if (!rc)
          rc = slot_retire(e, vp, pl, sl);
        sl->n_rows = 0;
        sl->nnz = 0;
        sl->row[0] = 0;
        if (rc)
          break;
      }
      /* A row still in flight in the other slot must come back first. */
      struct eng_slot *other = &pl->slot[cur ^ 1];
      if (other->done && pl->row_batch[row] == other->id + 1) {
        rc = slot_retire(e, vp, pl, other);
        if (rc)
          break;
      }
      uint32_t r = sl->n_rows++;
      uint64_t at = sl->nnz;
      sl->rows[r] = row;
      sl->srcs[3 * r] = r;
      sl->srcs[3 * r + 1] = e->exchange.src_q[s];
      sl->srcs[3 * r + 2] = e->exchange.src_q[s] + 1;
      memcpy(sl->target + at, pl->target + r0, len * 4);
      if (sl->delay) {
        memcpy(sl->delay + at, pl->delay + r0, len * 2);
      }
      for (int f = 0; f < L->n_state; ++f) {
        size_t sz = eng_syn_field_size(&sm->fields[L->state_f[f]]);
        memcpy(sl->state + L->state_off[f] * pl->batch_cap + at * sz, pl->state + L->state_off[f] * pl->nnz + r0 * sz,
               len * sz);
      }
      for (int f = 0; f < L->n_src; ++f) {
        size_t sz = eng_syn_field_size(&sm->fields[L->src_f[f]]);
        memcpy(sl->src_state + L->src_off[f] * pl->batch_cap + r * sz,
               pl->src_state + L->src_off[f] * pl->n_rows + row * sz, sz);
      }
      sl->nnz += len;
      sl->row[r + 1] = sl->nnz;
      sl->id = pl->batches;
      pl->row_batch[row] = pl->batches + 1;
    }
    /* A batch never mixes time stamps: each synapse sees its spikes in order. */
    if (!rc && sl->n_rows) {
      rc = slot_launch(e, vp, pl, sl, origin);
      cur ^= 1;
      sl = &pl->slot[cur];
      if (!rc)
        rc = slot_retire(e, vp, pl, sl);
      sl->n_rows = 0;
      sl->nnz = 0;
      sl->row[0] = 0;
    }
  }
  int rc2 = slot_retire(e, vp, pl, &pl->slot[0]);
  int rc3 = slot_retire(e, vp, pl, &pl->slot[1]);
  return rc ? rc : (rc2 ? rc2 : rc3);
}

/* ---- delivery ----------------------------------------------------------- */

void eng_plastic_grid(const nestcl_engine *e, const eng_plastic *pl, uint64_t n_list, uint32_t longest,
                      size_t max_groups, size_t gsize[2], size_t lsize[2])
{
  if (e->device.plastic_shape.flat) {
    /* Every work-item a synapse: chunks of the list of rows, the grid as wide as the device. */
    lsize[0] = gsize[0] = pl->width;
    gsize[1] = eng_plastic_flat_groups(e->device.dev, pl->width, n_list, longest);
  } else {
    /* A work-group per source, no wider than the longest row. */
    lsize[0] = gsize[0] = pl->width < longest ? pl->width : (longest ? longest : 1);
    gsize[1] = n_list < max_groups ? n_list : max_groups;
    gsize[1] = gsize[1] ? gsize[1] : 1;
  }
  lsize[1] = 1;
}

static int cmp_pair_gid(const void *x, const void *y)
{
  return cmp_pair(x, y);
}

void eng_plastic_sources(nestcl_engine *e)
{
  size_t n = e->exchange.n_global_spikes;
  uint32_t *tmp = e->exchange.gather_tmp;
  memcpy(tmp, e->exchange.global, n * 2 * sizeof *tmp);
  qsort(tmp, n, 2 * sizeof *tmp, cmp_pair_gid);
  size_t m = 0;
  for (size_t s = 0; s < n; ++s) {
    if (s == 0 || tmp[2 * s] != tmp[2 * (s - 1)]) {
      if (m) {
        e->exchange.src_list[3 * (m - 1) + 2] = (uint32_t)s;
      }
      e->exchange.src_list[3 * m] = tmp[2 * s];
      e->exchange.src_list[3 * m + 1] = (uint32_t)s;
      ++m;
    }
    e->exchange.src_lags[s] = tmp[2 * s + 1];
  }
  if (m) {
    e->exchange.src_list[3 * (m - 1) + 2] = (uint32_t)n;
  }
  e->exchange.n_src_list = m;
  /* For batched delivery: where each spike of the global list (by lag, then gid) is in src_lags. */
  for (size_t k = 0; k < m; ++k) {
    for (uint32_t q = e->exchange.src_list[3 * k + 1]; q < e->exchange.src_list[3 * k + 2]; ++q) {
      uint32_t key[2] = {e->exchange.src_list[3 * k], e->exchange.src_lags[q]};
      size_t lo = 0, hi = n; /* the (gid, lag) pair in the list sorted by (lag, gid) */
      while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const uint32_t *g = e->exchange.global + 2 * mid;
        if (g[1] < key[1] || (g[1] == key[1] && g[0] < key[0])) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      e->exchange.src_q[lo] = q;
    }
  }
}

static int deliver_device(nestcl_engine *e, eng_vp *vp, eng_block *b, int64_t origin)
{
  cl_command_queue q = nestcl_device_queue(e->device.dev, vp->queue);
  cl_uint ns = (cl_uint)e->exchange.n_src_list;
  cl_long org = origin;
  cl_int err = CL_SUCCESS;
  for (int j = 0; j < b->n_plastic && err == CL_SUCCESS; ++j) {
    eng_plastic *pl = &b->plastic[j];
    if (pl->nnz == 0) {
      continue;
    }
    if (pl->batch_cap) {
      err = nestcl_enq_finish(&vp->st.enqueued, q);
      int rc = err == CL_SUCCESS ? deliver_batched(e, vp, pl, origin) : 0;
      if (rc) {
        return rc;
      }
      continue;
    }
    err = clSetKernelArg(pl->k, PK_N_SRCS, sizeof ns, &ns);
    err |= clSetKernelArg(pl->k, PK_ORIGIN, sizeof org, &org);
    size_t gsize[2], lsize[2];
    eng_plastic_grid(e, pl, e->exchange.n_src_list, pl->max_row, e->exchange.n_src_list, gsize, lsize);
    if (err == CL_SUCCESS) {
      err = nestcl_enq_launch(&vp->st.enqueued, q, pl->k, 2, gsize, lsize, 0, NULL, NULL);
    }
  }
  if (err == CL_SUCCESS) {
    err = nestcl_enq_finish(&vp->st.enqueued, q);
  }
  return eng_cl_check(err, "plastic delivery kernel");
}

/* A stream's: appended on the device, before the plastic kernels that read it. */
static int hist_device(nestcl_engine *e, eng_vp *vp, eng_block *b, int64_t origin)
{
  b->hist.counts = &vp->st.enqueued;
  return eng_hist_append_device(&b->hist, e->device.dev, vp->queue, origin);
}

/* A stream's delivery: the spiking sources to the device, then each block's kernels (or batches). */
static int deliver_device_all(nestcl_engine *e, eng_vp *vp, int64_t origin)
{
  int rc = 0;
  int any = 0;
  for (int p = 0; p < e->desc.n_pops; ++p) {
    any |= vp->blocks[p].n_plastic > 0;
  }
  if (any) {
    cl_command_queue q = nestcl_device_queue(e->device.dev, vp->queue);
    cl_int err = nestcl_enq_write(&vp->st.enqueued, q, vp->b_srcs.mem, CL_FALSE, 0, e->exchange.n_src_list * 12,
                                  e->exchange.src_list, 0, NULL, NULL);
    err |= nestcl_enq_write(&vp->st.enqueued, q, vp->b_lags.mem, CL_FALSE, 0, e->exchange.n_global_spikes * 4,
                            e->exchange.src_lags, 0, NULL, NULL);
    rc = eng_cl_check(err, "writing the spiking sources");
  }
  for (int p = 0; p < e->desc.n_pops && !rc; ++p) {
    eng_block *b = &vp->blocks[p];
    if (b->n_plastic == 0 || b->n == 0) {
      continue;
    }
    rc = deliver_device(e, vp, b, origin);
  }
  return rc;
}

/* The VP's part of the super step's plastic work: history of its own spikes, then delivery, each timed. */
static int plastic_step(nestcl_engine *e, eng_vp *vp, int64_t origin,
                        int (*hist)(nestcl_engine *, eng_vp *, eng_block *, int64_t),
                        int (*deliver)(nestcl_engine *, eng_vp *, int64_t))
{
  double t0 = eng_now();
  int rc = 0;
  for (int p = 0; p < e->desc.n_pops && !rc; ++p) {
    eng_block *b = &vp->blocks[p];
    if (b->hist.cap && b->n) {
      eng_plastic_hist_pairs(vp, b);
      rc = hist(e, vp, b, origin);
    }
  }
  double t1 = eng_now();
  vp->st.seconds[NESTCL_PHASE_UPDATE] += t1 - t0;
  if (rc || e->exchange.n_src_list == 0) {
    return rc;
  }
  rc = deliver(e, vp, origin);
  double dt = eng_now() - t1;
  vp->st.plastic_seconds += dt;
  vp->st.seconds[NESTCL_PHASE_DELIVER] += dt;
  return rc;
}

int eng_plastic_deliver_device(nestcl_engine *e, eng_vp *vp, int64_t origin)
{
  return plastic_step(e, vp, origin, hist_device, deliver_device_all);
}

/* ---- weights ------------------------------------------------------------ */

static uint64_t mix64(uint64_t x)
{
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__extension__ typedef __int128 eng_i128;
__extension__ typedef unsigned __int128 eng_u128;

/* A built projection of translated synapses, for the readers below. */
static int check_plastic_proj(const nestcl_engine *e, int proj, const void *out, const char *what)
{
  if (!e || !out) {
    return nestcl_set_error(NESTCL_EINVAL, "null argument");
  }
  if (proj < 0 || proj >= e->desc.n_projs || !e->desc.projs[proj].sm) {
    return nestcl_set_error(NESTCL_EINVAL, "projection %d is not one of translated synapses", proj);
  }
  if (!e->built) {
    return nestcl_set_error(NESTCL_EINVAL, "%s: the network is not built yet (simulate or prepare first)", what);
  }
  return 0;
}

/*
 * The current weights, targets and (dl non-NULL) delays of one set into the
 * caller's arrays of nnz entries, from the host copy (CPU VPs, batched sets).
 */
int eng_plastic_snapshot_host(nestcl_engine *e, const eng_vp *vp, const eng_plastic *pl, double *w, uint32_t *tg,
                              uint16_t *dl)
{
  (void)vp;
  const eng_syn_layout *L = &e->desc.projs[pl->proj].lay;
  if (pl->nnz == 0) {
    return 0;
  }
  memcpy(w, pl->state + L->weight_off * pl->nnz, pl->nnz * 8);
  memcpy(tg, pl->target, pl->nnz * 4);
  if (dl && pl->delay) {
    memcpy(dl, pl->delay, pl->nnz * 2);
  }
  return 0;
}

/* The same on a stream: read back from the device where the set is resident; a batched set's host copy is current. */
int eng_plastic_snapshot_device(nestcl_engine *e, const eng_vp *vp, const eng_plastic *pl, double *w, uint32_t *tg,
                                uint16_t *dl)
{
  const eng_syn_layout *L = &e->desc.projs[pl->proj].lay;
  if (pl->nnz == 0 || pl->batch_cap) {
    return eng_plastic_snapshot_host(e, vp, pl, w, tg, dl);
  }
  cl_command_queue q = nestcl_device_queue(e->device.dev, vp->queue);
  cl_int err = clEnqueueReadBuffer(q, pl->b_state.mem, CL_TRUE, L->weight_off * pl->nnz, pl->nnz * 8, w, 0, NULL, NULL);
  err |= clEnqueueReadBuffer(q, pl->b_target.mem, CL_TRUE, 0, pl->nnz * 4, tg, 0, NULL, NULL);
  if (dl && pl->delay_hom == NESTCL_DELAY_PER_SYNAPSE) {
    err |= clEnqueueReadBuffer(q, pl->b_delay.mem, CL_TRUE, 0, pl->nnz * 2, dl, 0, NULL, NULL);
  }
  return eng_cl_check(err, "reading plastic synapses back");
}

int nestcl_engine_weight_stats(nestcl_engine *e, int proj, nestcl_weight_stats *out)
{
  int rc0 = check_plastic_proj(e, proj, out, "weight_stats");
  if (rc0) {
    return rc0;
  }
  const eng_projection *pr = &e->desc.projs[proj];
  eng_i128 sum = 0, sq = 0;
  uint64_t n = 0, check = 0;
  double lo = INFINITY, hi = -INFINITY;
  int rc = 0;
  for (int v = 0; v < e->n_vps && !rc; ++v) {
    eng_vp *vp = &e->vps[v];
    eng_block *b = &vp->blocks[pr->tgt];
    for (int j = 0; j < b->n_plastic && !rc; ++j) {
      eng_plastic *pl = &b->plastic[j];
      if (pl->proj != proj || pl->nnz == 0) {
        continue;
      }
      double *w = malloc(pl->nnz * sizeof *w);
      uint32_t *tg = malloc(pl->nnz * sizeof *tg);
      rc = w && tg ? vp->ops->plastic_snapshot(e, vp, pl, w, tg, NULL)
                   : nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
      for (uint32_t r = 0; r < pl->n_rows && !rc; ++r) {
        uint64_t src = pl->src_first + r;
        for (uint64_t k = pl->row_ptr[r]; k < pl->row_ptr[r + 1]; ++k) {
          uint64_t tgt = b->first_gid + tg[k], bits;
          memcpy(&bits, &w[k], 8);
          check += mix64(bits ^ mix64(src << 32 ^ tgt));
          eng_i128 x = (eng_i128)llround(w[k] * 65536.0);
          sum += x;
          sq += x * x;
          lo = w[k] < lo ? w[k] : lo;
          hi = w[k] > hi ? w[k] : hi;
          ++n;
        }
      }
      free(w);
      free(tg);
    }
  }
  if (rc) {
    return rc;
  }
  if (e->exchange.n_ranks > 1) {
    uint64_t mine[5] = {(uint64_t)sum, (uint64_t)((eng_u128)sum >> 64), (uint64_t)sq, (uint64_t)((eng_u128)sq >> 64),
                        n};
    uint64_t *all = malloc(5 * (size_t)e->exchange.n_ranks * sizeof *all);
    if (!all) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
    eng_mpi_allgather(e, mine, all, 5, ENG_MPI_U64);
    sum = sq = 0;
    n = 0;
    for (int r = 0; r < e->exchange.n_ranks; ++r) {
      sum += (eng_i128)(((eng_u128)all[5 * r + 1] << 64) | all[5 * r]);
      sq += (eng_i128)(((eng_u128)all[5 * r + 3] << 64) | all[5 * r + 2]);
      n += all[5 * r + 4];
    }
    free(all);
    eng_mpi_allreduce(e, &check, 1, ENG_MPI_U64, ENG_MPI_SUM);
    eng_mpi_allreduce(e, &lo, 1, ENG_MPI_DOUBLE, ENG_MPI_MIN);
    eng_mpi_allreduce(e, &hi, 1, ENG_MPI_DOUBLE, ENG_MPI_MAX);
  }
  out->n = n;
  out->checksum = check;
  out->min = n ? lo : 0.0;
  out->max = n ? hi : 0.0;
  if (n) {
    long double ln = (long double)n, s = (long double)sum, var = ((long double)sq - s * s / ln) / ln;
    out->mean = (double)(s / ln / 65536.0L);
    out->sd = (double)(sqrtl(var > 0 ? var : 0) / 65536.0L);
  } else {
    out->mean = out->sd = 0.0;
  }
  return 0;
}

int nestcl_engine_connections(nestcl_engine *e, int proj, uint64_t *source, uint64_t *target, double *weight,
                              int64_t *delay_steps, size_t cap, size_t *n)
{
  int rc = check_plastic_proj(e, proj, n, "connections");
  if (rc) {
    return rc;
  }
  const eng_projection *pr = &e->desc.projs[proj];
  size_t count = 0;
  for (int v = 0; v < e->n_vps; ++v) {
    eng_vp *vp = &e->vps[v];
    eng_block *b = &vp->blocks[pr->tgt];
    for (int j = 0; j < b->n_plastic; ++j) {
      eng_plastic *pl = &b->plastic[j];
      if (pl->proj != proj) {
        continue;
      }
      if (!source) {
        count += pl->nnz;
        continue;
      }
      if (count + pl->nnz > cap) {
        return nestcl_set_error(NESTCL_EINVAL, "connections: %zu entries do not hold them all", cap);
      }
      int per_syn = pl->delay_hom == NESTCL_DELAY_PER_SYNAPSE;
      uint32_t *tg = malloc((pl->nnz ? pl->nnz : 1) * sizeof *tg);
      uint16_t *dl = per_syn ? malloc((pl->nnz ? pl->nnz : 1) * sizeof *dl) : NULL;
      rc = tg && (dl || !per_syn) ? vp->ops->plastic_snapshot(e, vp, pl, weight + count, tg, dl)
                                  : nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
      if (rc) {
        free(tg);
        free(dl);
        return rc;
      }
      for (uint32_t r = 0; r < pl->n_rows; ++r) {
        for (uint64_t k = pl->row_ptr[r]; k < pl->row_ptr[r + 1]; ++k) {
          source[count + k] = pl->src_first + r;
          target[count + k] = b->first_gid + tg[k];
          delay_steps[count + k] = dl ? dl[k] : pl->delay_hom;
        }
      }
      free(tg);
      free(dl);
      count += pl->nnz;
    }
  }
  *n = count;
  return 0;
}

/* ---- teardown ----------------------------------------------------------- */

void eng_plastic_free(nestcl_engine *e, eng_block *b)
{
  for (int j = 0; b->plastic && j < b->n_plastic; ++j) {
    eng_plastic *pl = &b->plastic[j];
    free(pl->row_ptr);
    free(pl->target);
    free(pl->delay);
    free(pl->state);
    free(pl->src_state);
    free(pl->src_prev);
    if (pl->k)
      clReleaseKernel(pl->k);
    for (int k = 0; k < 2; ++k) {
      struct eng_slot *sl = &pl->slot[k];
      if (sl->done) {
        clWaitForEvents(1, &sl->done);
        clReleaseEvent(sl->done);
      }
      void *host[] = {sl->row, sl->target, sl->srcs, sl->rows, sl->delay, sl->state, sl->src_state};
      for (size_t h = 0; h < sizeof host / sizeof *host; ++h) {
        free(host[h]);
      }
    }
    nestcl_buffer *bufs[] = {&pl->b_row,
                             &pl->b_done,
                             &pl->b_target,
                             &pl->b_delay,
                             &pl->b_state,
                             &pl->b_src_state,
                             &pl->b_tmpl,
                             &pl->b_cp,
                             &pl->slot[0].b_row,
                             &pl->slot[0].b_target,
                             &pl->slot[0].b_delay,
                             &pl->slot[0].b_state,
                             &pl->slot[0].b_src_state,
                             &pl->slot[0].b_srcs,
                             &pl->slot[1].b_row,
                             &pl->slot[1].b_target,
                             &pl->slot[1].b_delay,
                             &pl->slot[1].b_state,
                             &pl->slot[1].b_src_state,
                             &pl->slot[1].b_srcs};
    for (size_t k = 0; e->device.dev && k < sizeof bufs / sizeof *bufs; ++k) {
      nestcl_buffer_free(e->device.dev, bufs[k]);
    }
    free(pl->row_batch);
  }
  free(b->plastic);
  b->plastic = NULL;
  b->n_plastic = 0;
  eng_hist_free(&b->hist, e->device.dev);
}
