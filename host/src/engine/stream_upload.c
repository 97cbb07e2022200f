/*
 * A stream VP's buffers on the device (eng_vp_ops.upload of both stream
 * kinds): the spike lists it reads, then each block's state, ring, spike
 * list, CSR and kernels with their fixed arguments; the synapse arrays that
 * the build draws straight into device buffers or pinned memory, each sent
 * while the next is drawn (stage, staged); and what the build's device
 * budget and specialisation ask of a stream (device_need, batch,
 * kernel_block). The build calls it through the VP's table; it calls
 * nothing of the build or the cycle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "core_kernel_args.h"
#include "core/nestcl_core.h"
#include "specialise.h"

/* ---- the build's staged arrays -------------------------------------------- */

/*
 * Room for one of a block's synapse arrays while it is drawn (eng_vp_ops.stage):
 * its device buffer, and where the host writes it. Mapped (stage_map): the
 * buffer itself, mapped for writing, which on a device whose memory is the
 * host's (PoCL, integrated GPUs) is allocated there (CL_MEM_ALLOC_HOST_PTR)
 * and is the same memory, so the upload copies nothing (elsewhere the driver
 * sends it at the unmap); otherwise pinned host memory (CL_MEM_ALLOC_HOST_PTR,
 * mapped), whose transfer eng_stream_staged starts without waiting. An empty
 * array gets its (empty) buffer and nothing to write.
 */
int eng_stream_stage(nestcl_engine *e, eng_vp *vp, nestcl_buffer *buf, eng_stage *st, nestcl_mem_class c,
                     cl_mem_flags access, const char *what, size_t bytes, void **host)
{
  memset(st, 0, sizeof *st);
  *host = NULL;
  cl_mem_flags flags = access | (e->device.stage_map && e->device.host_unified ? CL_MEM_ALLOC_HOST_PTR : 0);
  int rc = nestcl_buffer_alloc(e->device.dev, c, what, bytes, flags, NULL, buf);
  if (rc || bytes == 0) {
    return rc;
  }
  e->device.staged_bytes += bytes;
  cl_command_queue q = nestcl_device_queue(e->device.dev, vp->queue);
  st->q = q;
  cl_int err = CL_SUCCESS;
  cl_mem target = buf->mem;
  if (!e->device.stage_map) {
    st->staging = clCreateBuffer(nestcl_device_context(e->device.dev), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes,
                                 NULL, &err);
    if ((rc = eng_cl_check(err, "clCreateBuffer(pinned staging)"))) {
      return rc;
    }
    target = st->staging;
  }
  st->host = clEnqueueMapBuffer(q, target, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, bytes, 0, NULL, NULL, &err);
  if ((rc = eng_cl_check(err, "clEnqueueMapBuffer(the build's synapses)"))) {
    st->host = NULL;
    return rc;
  }
  *host = st->host;
  return 0;
}

/* The array is complete (eng_vp_ops.staged): unmapped in place, or its transfer started; neither waited for. */
int eng_stream_staged(nestcl_engine *e, eng_vp *vp, nestcl_buffer *buf, eng_stage *st, size_t bytes)
{
  if (!st->host) {
    return 0;
  }
  (void)e;
  (void)vp;
  cl_command_queue q = st->q;
  cl_int err;
  if (st->staging) {
    err = clEnqueueWriteBuffer(q, buf->mem, CL_FALSE, 0, bytes, st->host, 0, NULL, &st->done);
  } else {
    err = clEnqueueUnmapMemObject(q, buf->mem, st->host, 0, NULL, &st->done);
    st->host = NULL;
  }
  /* Start it now, not at the queue's next wait. */
  clFlush(q);
  return eng_cl_check(err, st->staging ? "clEnqueueWriteBuffer(the build's synapses)" : "clEnqueueUnmapMemObject");
}

int eng_stream_stage_finish(nestcl_engine *e, eng_stage *st)
{
  (void)e;
  cl_int err = CL_SUCCESS;
  if (st->done) {
    err = clWaitForEvents(1, &st->done);
    clReleaseEvent(st->done);
    st->done = NULL;
  }
  if (st->staging) {
    if (st->host) {
      cl_int e2 = clEnqueueUnmapMemObject(st->q, st->staging, st->host, 0, NULL, NULL);
      e2 = e2 == CL_SUCCESS ? clFinish(st->q) : e2;
      err = err == CL_SUCCESS ? e2 : err;
    }
    clReleaseMemObject(st->staging);
    st->staging = NULL;
  }
  st->host = NULL;
  return eng_cl_check(err, "the build's upload of the synapses");
}

/* ---- a block's buffers ----------------------------------------------------- */

/*
 * Block b's synapses in CSR: row pointers over every global source, targets,
 * weights and (if they differ) delays; the last three are the build's staged
 * buffers (their uploads are waited for here) or made from the host's arrays.
 */
static int alloc_block_csr(nestcl_engine *e, eng_block *b)
{
  nestcl_device *dev = e->device.dev;
  size_t wsize = e->desc.cfg.weight_type == NESTCL_WEIGHT_DOUBLE ? 8 : 4;
  size_t rp = (size_t)(e->desc.n_global + 1) * 8;
  int rc = nestcl_buffer_alloc(dev, NESTCL_MEM_SYNAPSES, "CSR row pointers", rp,
                               CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, b->row_ptr, &b->b_row);
  for (int k = 0; k < 3 && !rc; ++k) {
    rc = eng_stream_stage_finish(e, &b->stage[k]);
  }
  if (!rc && b->b_target.mem) {
    return 0; /* staged */
  }
  if (!rc)
    rc = nestcl_buffer_alloc(dev, NESTCL_MEM_SYNAPSES, "CSR targets", b->nnz * 4,
                             CL_MEM_READ_ONLY | (b->nnz ? CL_MEM_COPY_HOST_PTR : 0), b->nnz ? b->target : NULL,
                             &b->b_target);
  if (!rc)
    rc = nestcl_buffer_alloc(dev, NESTCL_MEM_SYNAPSES, "CSR weights", b->nnz * wsize,
                             CL_MEM_READ_ONLY | (b->nnz ? CL_MEM_COPY_HOST_PTR : 0), b->nnz ? b->weight : NULL,
                             &b->b_weight);
  if (!rc)
    rc = nestcl_buffer_alloc(dev, NESTCL_MEM_SYNAPSES, "CSR delays", b->delay ? b->nnz * 2 : 0,
                             CL_MEM_READ_ONLY | (b->delay && b->nnz ? CL_MEM_COPY_HOST_PTR : 0),
                             b->delay && b->nnz ? b->delay : NULL, &b->b_delay);
  return rc;
}

/* The delivery and drive kernels' arguments that never change (the rest are set per super step). */
static cl_int set_core_args(nestcl_engine *e, eng_vp *vp, eng_block *b)
{
  cl_uint slots = (cl_uint)e->clock.ring_slots, nch = b->n_channels, n = b->n, dh = b->delay_hom,
          seed = e->desc.cfg.seed;
  cl_ulong first = b->first_gid;
  cl_int err = clSetKernelArg(b->k_deliver, DELIVER_ROW_PTR, sizeof(cl_mem), &b->b_row.mem);
  err |= clSetKernelArg(b->k_deliver, DELIVER_TARGET, sizeof(cl_mem), &b->b_target.mem);
  err |= clSetKernelArg(b->k_deliver, DELIVER_WEIGHT, sizeof(cl_mem), &b->b_weight.mem);
  err |= clSetKernelArg(b->k_deliver, DELIVER_DELAY, sizeof(cl_mem), &b->b_delay.mem);
  err |= clSetKernelArg(b->k_deliver, DELIVER_DELAY_HOM, sizeof dh, &dh);
  err |= clSetKernelArg(b->k_deliver, DELIVER_RING, sizeof(cl_mem), &b->b_ring.mem);
  err |= clSetKernelArg(b->k_deliver, DELIVER_RING_SLOTS, sizeof slots, &slots);
  err |= clSetKernelArg(b->k_deliver, DELIVER_N, sizeof n, &n);
  err |= clSetKernelArg(b->k_deliver, DELIVER_N_CHANNELS, sizeof nch, &nch);
  err |= clSetKernelArg(b->k_deliver, DELIVER_SPIKES, sizeof(cl_mem), &vp->b_global.mem);
  err |= clSetKernelArg(b->k_drive, DRIVE_RING, sizeof(cl_mem), &b->b_ring.mem);
  err |= clSetKernelArg(b->k_drive, DRIVE_N_CHANNELS, sizeof nch, &nch);
  err |= clSetKernelArg(b->k_drive, DRIVE_N, sizeof n, &n);
  err |= clSetKernelArg(b->k_drive, DRIVE_RING_SLOTS, sizeof slots, &slots);
  err |= clSetKernelArg(b->k_drive, DRIVE_FIRST_GID, sizeof first, &first);
  err |= clSetKernelArg(b->k_drive, DRIVE_SEED, sizeof seed, &seed);
  return err;
}

/* Block b's state, ring, spike count and list, recording and CSR as device buffers, copied from the host's. */
static int alloc_block_buffers(nestcl_engine *e, eng_block *b, const eng_population *p)
{
  const nestcl_model *m = p->model;
  nestcl_device *dev = e->device.dev;
  int rc = 0;
  char what[160];
  b->b_fields = calloc((size_t)m->n_fields, sizeof *b->b_fields);
  if (!b->b_fields) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  for (int f = 0; f < m->n_fields && !rc; ++f) {
    size_t bytes = nestcl_field_type_size(m->fields[f].type) * nestcl_field_len(&m->fields[f], p->K) * b->n;
    snprintf(what, sizeof what, "%s.%s", m->name, m->fields[f].member);
    rc = nestcl_buffer_alloc(dev, NESTCL_MEM_STATE, what, bytes, CL_MEM_READ_WRITE | (bytes ? CL_MEM_COPY_HOST_PTR : 0),
                             bytes ? b->fields[f] : NULL, &b->b_fields[f]);
  }
  size_t ring_bytes = (size_t)e->clock.ring_slots * b->n_channels * b->n * 8;
  if (!rc)
    rc = nestcl_buffer_alloc(dev, NESTCL_MEM_RING, "ring", ring_bytes,
                             CL_MEM_READ_WRITE | (ring_bytes ? CL_MEM_COPY_HOST_PTR : 0), ring_bytes ? b->ring : NULL,
                             &b->b_ring);
  if (!rc)
    rc = nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "spike count", sizeof b->spike_count,
                             CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, b->spike_count, &b->b_count);
  if (!rc)
    rc = nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "spike list", (size_t)b->spike_cap * 8, CL_MEM_READ_WRITE, NULL,
                             &b->b_spikes);
  if (!rc)
    rc =
      nestcl_buffer_alloc(dev, NESTCL_MEM_RECORDING, "recording", b->rec_elems * 8, CL_MEM_READ_WRITE, NULL, &b->b_rec);
  if (!rc && m->spike_offsets)
    rc = nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "spike offsets", (size_t)b->spike_cap * 8, CL_MEM_READ_WRITE, NULL,
                             &b->b_offsets);
  return rc ? rc : alloc_block_csr(e, b);
}

/* Block b's update, delivery and drive kernels, with the arguments that never change. */
static int create_block_kernels(nestcl_engine *e, eng_vp *vp, eng_block *b, int pop)
{
  const eng_population *p = &e->desc.pops[pop];
  const nestcl_model *m = p->model;
  int rc;
  cl_int err;
  b->k_update = clCreateKernel(e->device.model_programs[pop], m->kernel_name, &err);
  if ((rc = eng_cl_check(err, "clCreateKernel(update)")))
    return rc;
  b->k_deliver = clCreateKernel(e->device.core_program, "nestcl_deliver", &err);
  if ((rc = eng_cl_check(err, "clCreateKernel(nestcl_deliver)")))
    return rc;
  /* A work-group per spike: no wider than the device allows for this kernel. */
  if ((rc = nestcl_kernel_wg_width(e->device.dev, b->k_deliver, "nestcl_deliver", e->device.deliver_width,
                                   &b->deliver_width)))
    return rc;
  b->k_drive = clCreateKernel(e->device.core_program, "nestcl_drive", &err);
  if ((rc = eng_cl_check(err, "clCreateKernel(nestcl_drive)")))
    return rc;
  err = nestcl_update_kernel_fixed_args(
    b->k_update, b->n, p->K, e->desc.cfg.resolution_ms, (uint32_t)e->clock.ring_slots, b->n_channels, b->b_ring.mem,
    b->b_count.mem, b->b_spikes.mem, b->spike_cap, p->rec_interval_steps, b->b_rec.mem, e->desc.cfg.seed, b->first_gid,
    1, b->b_fields, m->n_fields, m->spike_offsets ? b->b_offsets.mem : NULL);
  if ((rc = eng_cl_check(err, "clSetKernelArg(update)")))
    return rc;
  return eng_cl_check(set_core_args(e, vp, b), "clSetKernelArg(core)");
}

/*
 * The device owns the data now: the host copies go, but for the parameters,
 * which update() never writes and a derived recordable reads beside the
 * recorded state (model.h, recordable_value: V_m of iaf_psc_alpha is
 * y3_ + E_L_). A few doubles per neuron.
 */
static void drop_host_copies(eng_block *b, const nestcl_model *m)
{
  for (int f = 0; f < m->n_fields; ++f) {
    if (m->fields[f].struct_name && strcmp(m->fields[f].struct_name, "Parameters_") == 0) {
      continue;
    }
    free(b->fields[f]);
    b->fields[f] = NULL;
  }
  free(b->ring);
  b->ring = NULL;
  free(b->target);
  b->target = NULL;
  free(b->weight);
  b->weight = NULL;
  free(b->delay);
  b->delay = NULL;
  /* row_ptr stays: the host needs nothing of it, but out-degree counting ran already; drop it too. */
  free(b->row_ptr);
  b->row_ptr = NULL;
}

static int upload_block(nestcl_engine *e, eng_vp *vp, eng_block *b, int pop)
{
  int rc = alloc_block_buffers(e, b, &e->desc.pops[pop]);
  if (!rc)
    rc = create_block_kernels(e, vp, b, pop);
  if (!rc)
    drop_host_copies(b, e->desc.pops[pop].model);
  return rc;
}

/* A stream's buffers on the device (vp_ops.upload): the spike lists it reads, then each block and its plastic synapses. */
int eng_stream_upload(nestcl_engine *e, eng_vp *vp)
{
  /* Read-write: the device loop's gather kernel writes it (resident.c). */
  int rc = nestcl_buffer_alloc(e->device.dev, NESTCL_MEM_OTHER, "global spike list", e->exchange.global_cap * 8,
                               CL_MEM_READ_WRITE, NULL, &vp->b_global);
  if (!rc && e->desc.any_plastic) {
    rc = nestcl_buffer_alloc(e->device.dev, NESTCL_MEM_OTHER, "spiking sources", e->exchange.global_cap * 12,
                             CL_MEM_READ_ONLY, NULL, &vp->b_srcs);
    if (!rc)
      rc = nestcl_buffer_alloc(e->device.dev, NESTCL_MEM_OTHER, "spike lags", e->exchange.global_cap * 4,
                               CL_MEM_READ_ONLY, NULL, &vp->b_lags);
  }
  for (int p = 0; p < e->desc.n_pops && !rc; ++p) {
    eng_block *b = &vp->blocks[p];
    rc = upload_block(e, vp, b, p);
    for (int j = 0; j < b->n_plastic && !rc; ++j) {
      for (int k = 0; k < 4 && !rc; ++k) {
        rc = eng_stream_stage_finish(e, &b->plastic[j].stage[k]);
      }
    }
    if (!rc)
      rc = eng_plastic_upload(e, vp, b);
  }
  return rc;
}

/* A block's bytes on the device when everything stays resident (the build's budget). */
static size_t block_device_bytes(const nestcl_engine *e, const eng_block *b)
{
  const eng_population *p = &e->desc.pops[b->pop];
  const nestcl_model *m = p->model;
  size_t bytes = 0;
  for (int f = 0; f < m->n_fields; ++f) {
    bytes += nestcl_field_type_size(m->fields[f].type) * nestcl_field_len(&m->fields[f], p->K) * b->n;
  }
  size_t wsize = e->desc.cfg.weight_type == NESTCL_WEIGHT_DOUBLE ? 8 : 4;
  bytes += (size_t)e->clock.ring_slots * b->n_channels * b->n * 8 + 4 + (size_t)b->spike_cap * 8 + b->rec_elems * 8;
  bytes += m->spike_offsets ? (size_t)b->spike_cap * 8 : 0;
  bytes +=
    (e->desc.n_global + 1) * 8 + b->nnz * (4 + wsize) + (b->delay_hom == NESTCL_DELAY_PER_SYNAPSE ? b->nnz * 2 : 0);
  bytes += eng_plastic_resident_bytes(e, b);
  if (b->hist.cap) {
    bytes += (size_t)b->n * ((size_t)b->hist.cap * 28 + 44) + (size_t)b->spike_cap * 8 + 8;
  }
  return bytes;
}

/* The stream's blocks and spike lists on the device (eng_vp_ops.device_need); plastic, units: their plastic sets. */
size_t eng_stream_device_need(const nestcl_engine *e, const eng_vp *vp, size_t *plastic, int *units)
{
  size_t need = 0;
  for (int p = 0; p < e->desc.n_pops; ++p) {
    const eng_block *b = &vp->blocks[p];
    need += block_device_bytes(e, b);
    *plastic += eng_plastic_resident_bytes(e, b);
    *units += b->n_plastic;
  }
  return need + e->desc.n_global * (size_t)e->clock.min_delay * (e->desc.any_plastic ? 24 : 8);
}

/*
 * A plastic set the build drew into device buffers (the estimate said it
 * would stay resident) that must go batched after all: its arrays back into
 * host memory, its buffers freed.
 */
static int unstage_plastic(nestcl_engine *e, eng_vp *vp, eng_plastic *pl)
{
  const eng_syn_layout *L = &e->desc.projs[pl->proj].lay;
  size_t bytes[4] = {pl->nnz * 4, pl->nnz * L->state_bytes, pl->delay_hom == NESTCL_DELAY_PER_SYNAPSE ? pl->nnz * 2 : 0,
                     (size_t)pl->n_rows * L->src_bytes};
  nestcl_buffer *buf[4] = {&pl->b_target, &pl->b_state, &pl->b_delay, &pl->b_src_state};
  void *host[4];
  int rc = 0;
  cl_int err = CL_SUCCESS;
  for (int k = 0; k < 4; ++k) {
    rc = rc ? rc : eng_stream_stage_finish(e, &pl->stage[k]);
    host[k] = malloc(bytes[k] + 8);
    rc = rc ? rc : (host[k] ? 0 : nestcl_set_error(NESTCL_ENOMEM, "out of host memory for plastic synapses"));
    if (!rc && bytes[k] && err == CL_SUCCESS) {
      err = clEnqueueReadBuffer(nestcl_device_queue(e->device.dev, vp->queue), buf[k]->mem, CL_TRUE, 0, bytes[k],
                                host[k], 0, NULL, NULL);
    }
  }
  rc = rc ? rc : eng_cl_check(err, "reading the build's plastic synapses back for batches");
  pl->target = host[0];
  pl->state = host[1];
  pl->delay = pl->delay_hom == NESTCL_DELAY_PER_SYNAPSE ? host[2] : NULL;
  if (!pl->delay) {
    free(host[2]);
  }
  pl->src_state = host[3];
  for (int k = 0; k < 4; ++k) {
    e->device.staged_bytes -= buf[k]->bytes;
    nestcl_buffer_free(e->device.dev, buf[k]);
  }
  return rc;
}

/*
 * The stream's plastic sets batched (eng_vp_ops.batch): room bytes of batch
 * slots each, at most its synapses; one that cannot hold its longest row is
 * an error.
 */
int eng_stream_batch(nestcl_engine *e, eng_vp *vp, size_t room)
{
  for (int p = 0; p < e->desc.n_pops; ++p) {
    eng_block *b = &vp->blocks[p];
    for (int j = 0; j < b->n_plastic; ++j) {
      eng_plastic *pl = &b->plastic[j];
      size_t per = eng_plastic_slot_bytes(e, pl, 1);
      uint64_t cap = room / per;
      if (cap > pl->nnz) {
        cap = pl->nnz;
      }
      if (cap < pl->max_row || cap == 0) {
        return nestcl_set_error(NESTCL_ENOMEM,
                                "device memory budget too small for one batch of plastic synapses: %zu bytes are "
                                "left for %s's batches after the resident data, one batch needs %zu (its longest "
                                "row has %u synapses); raise --device-memory",
                                room, e->desc.projs[pl->proj].sm->name,
                                eng_plastic_slot_bytes(e, pl, pl->max_row ? pl->max_row : 1), pl->max_row);
      }
      pl->batch_cap = cap;
      int rc = pl->b_target.mem ? unstage_plastic(e, vp, pl) : 0;
      if (rc) {
        return rc;
      }
    }
  }
  return 0;
}

/* A stream runs every population's kernel: its block's fields join the specialisation (eng_vp_ops.kernel_block). */
int eng_stream_kernel_block(const eng_vp *vp, int pop, void *const **fields, uint32_t *n)
{
  *fields = vp->blocks[pop].fields;
  *n = vp->blocks[pop].n;
  return 1;
}
