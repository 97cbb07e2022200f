/*
 * nestcl_block (nestcl/block.h): one translated model's neurons on one device
 * queue, updated slice by slice for a caller that keeps its own loop (NEST).
 * The update kernel is the model's own; the staged input of a slice is added
 * to the ring by a small kernel of this file, built into the same program, so
 * a block needs no other program. Host copies: the fields (for packing and
 * read-back), the staging [min_delay][channel][n] in fixed point, the spike
 * list and the recordings of one slice. Nothing is allocated per slice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestcl/block.h"
#include "nestcl_fixed.h"
#include "nestcl_rt_source.h"
#include "specialise.h"

/* Adds lags [from, to) of the staging to the ring and clears nothing: the host zeroes its copy. */
static const char stage_kernel_source[] =
  "__kernel void nestcl_block_stage(__global long *ring, uint n_channels, uint n, uint ring_slots,\n"
  "                                 long origin, int from, int to, __global const long *stage)\n"
  "{\n"
  "  const uint i = (uint)get_global_id(0);\n"
  "  if (i >= n) return;\n"
  "  for (int lag = from; lag < to; ++lag) {\n"
  "    const uint slot = nestcl_ring_slot(origin, lag, ring_slots);\n"
  "    for (uint ch = 0; ch < n_channels; ++ch) {\n"
  "      const long v = stage[((ulong)lag * n_channels + ch) * n + i];\n"
  "      if (v != 0) ring[nestcl_ring_index(n_channels, n, slot, ch, i)] += v;\n"
  "    }\n"
  "  }\n"
  "}\n";

struct nestcl_block {
  nestcl_device *dev;
  nestcl_block_config c;
  uint32_t n_channels, n_rec, spike_cap;
  void **fields;              /* host SoA, one array per field */
  size_t *field_bytes;
  int64_t *stage;             /* [min_delay][n_channels][n] */
  size_t stage_elems;
  nestcl_spike *spikes;
  uint32_t n_spikes;
  double *rec;                /* [min_delay][n_rec][n] */
  size_t rec_elems;
  char *options;              /* constants the kernel was built with */
  cl_program program;
  cl_kernel k_update, k_stage;
  nestcl_buffer *b_fields;
  nestcl_buffer b_ring, b_stage, b_count, b_spikes, b_rec;
};

static int cl_fail(cl_int err, const char *what)
{
  return nestcl_set_error(NESTCL_ECL, "block: %s failed: %s", what, nestcl_cl_error_name(err));
}

static size_t field_len(const nestcl_field *f, uint32_t K)
{
  return f->array_len == 0 ? 1u : (f->array_len < 0 ? (size_t)K : (size_t)f->array_len);
}

int nestcl_block_create(nestcl_device *dev, const nestcl_block_config *c, nestcl_block **out)
{
  *out = NULL;
  const nestcl_model *m = c->model;
  if (!m || c->min_delay_steps == 0 || c->ring_slots < c->min_delay_steps || !(c->resolution_ms > 0.0) ||
      c->queue < 0 || c->queue >= nestcl_device_queue_count(dev)) {
    return nestcl_set_error(NESTCL_EINVAL, "block: bad configuration (model %s, min_delay %u, ring slots %u, queue %d)",
                            m ? m->name : "(none)", c->min_delay_steps, c->ring_slots, c->queue);
  }
  nestcl_block *b = calloc(1, sizeof *b);
  if (!b) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  b->dev = dev;
  b->c = *c;
  b->c.K = m->has_receptors ? c->K : 0;
  const uint32_t n = c->n, K = b->c.K;
  for (int g = 0; g < m->n_channel_groups; ++g) {
    b->n_channels += m->channels[g].count < 0 ? K : (uint32_t)m->channels[g].count;
  }
  for (int r = 0; r < m->n_recordables; ++r) {
    b->n_rec += (uint32_t)field_len(&m->fields[m->recordables[r]], K);
  }
  b->spike_cap = n * c->min_delay_steps;
  b->stage_elems = (size_t)c->min_delay_steps * b->n_channels * n;
  b->rec_elems = c->record ? (size_t)c->min_delay_steps * b->n_rec * n : 0;
  b->fields = calloc((size_t)m->n_fields + 1, sizeof *b->fields);
  b->field_bytes = calloc((size_t)m->n_fields + 1, sizeof *b->field_bytes);
  b->b_fields = calloc((size_t)m->n_fields + 1, sizeof *b->b_fields);
  b->stage = calloc(b->stage_elems + 1, sizeof *b->stage);
  b->spikes = calloc((size_t)b->spike_cap + 1, sizeof *b->spikes);
  b->rec = calloc(b->rec_elems + 1, sizeof *b->rec);
  int rc = (b->fields && b->field_bytes && b->b_fields && b->stage && b->spikes && b->rec)
             ? 0 : nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  for (int f = 0; f < m->n_fields && !rc; ++f) {
    b->field_bytes[f] = nestcl_field_type_size(m->fields[f].type) * field_len(&m->fields[f], K) * n;
    b->fields[f] = calloc(b->field_bytes[f] + 8, 1);
    if (!b->fields[f]) {
      rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
  }
  char what[160];
  for (int f = 0; f < m->n_fields && !rc; ++f) {
    snprintf(what, sizeof what, "%s.%s", m->name, m->fields[f].member);
    rc = nestcl_buffer_alloc(dev, NESTCL_MEM_STATE, what, b->field_bytes[f], CL_MEM_READ_WRITE, NULL, &b->b_fields[f]);
  }
  size_t ring_bytes = (size_t)c->ring_slots * b->n_channels * n * 8;
  if (!rc) rc = nestcl_buffer_alloc(dev, NESTCL_MEM_RING, "ring", ring_bytes, CL_MEM_READ_WRITE, NULL, &b->b_ring);
  if (!rc) rc = nestcl_buffer_alloc(dev, NESTCL_MEM_RING, "ring staging", b->stage_elems * 8, CL_MEM_READ_ONLY, NULL, &b->b_stage);
  if (!rc) rc = nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "spike count", 4, CL_MEM_READ_WRITE, NULL, &b->b_count);
  if (!rc) rc = nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "spike list", (size_t)b->spike_cap * 8, CL_MEM_READ_WRITE, NULL, &b->b_spikes);
  if (!rc) rc = nestcl_buffer_alloc(dev, NESTCL_MEM_RECORDING, "recording", b->rec_elems * 8, CL_MEM_READ_WRITE, NULL, &b->b_rec);
  if (!rc && ring_bytes) {
    /* The ring starts empty, as NEST's does. */
    static const cl_long zero = 0;
    cl_command_queue q = nestcl_device_queue(dev, c->queue);
    cl_int err = clEnqueueFillBuffer(q, b->b_ring.mem, &zero, sizeof zero, 0, ring_bytes, 0, NULL, NULL);
    if (err == CL_SUCCESS) err = clFinish(q);
    if (err != CL_SUCCESS) rc = cl_fail(err, "clearing the ring");
  }
  if (rc) {
    nestcl_block_destroy(b);
    return rc;
  }
  *out = b;
  return 0;
}

void nestcl_block_destroy(nestcl_block *b)
{
  if (!b) {
    return;
  }
  const nestcl_model *m = b->c.model;
  if (b->k_update) clReleaseKernel(b->k_update);
  if (b->k_stage) clReleaseKernel(b->k_stage);
  if (b->program) clReleaseProgram(b->program);
  for (int f = 0; b->b_fields && f < m->n_fields; ++f) {
    nestcl_buffer_free(b->dev, &b->b_fields[f]);
  }
  nestcl_buffer_free(b->dev, &b->b_ring);
  nestcl_buffer_free(b->dev, &b->b_stage);
  nestcl_buffer_free(b->dev, &b->b_count);
  nestcl_buffer_free(b->dev, &b->b_spikes);
  nestcl_buffer_free(b->dev, &b->b_rec);
  for (int f = 0; b->fields && f < m->n_fields; ++f) {
    free(b->fields[f]);
  }
  free(b->fields);
  free(b->field_bytes);
  free(b->b_fields);
  free(b->stage);
  free(b->spikes);
  free(b->rec);
  free(b->options);
  free(b);
}

uint32_t nestcl_block_channels(const nestcl_block *b) { return b->n_channels; }
uint32_t nestcl_block_recordables(const nestcl_block *b) { return b->n_rec; }
void *const *nestcl_block_fields(nestcl_block *b) { return b->fields; }
const double *nestcl_block_recorded(const nestcl_block *b) { return b->rec; }

void nestcl_block_spikes(const nestcl_block *b, const nestcl_spike **spikes, uint32_t *n)
{
  *spikes = b->spikes;
  *n = b->n_spikes;
}

size_t nestcl_block_device_bytes(const nestcl_block *b)
{
  size_t s = b->b_ring.bytes + b->b_stage.bytes + b->b_count.bytes + b->b_spikes.bytes + b->b_rec.bytes;
  for (int f = 0; f < b->c.model->n_fields; ++f) {
    s += b->b_fields[f].bytes;
  }
  return s;
}

/* (Re)builds the program when the constant parameters differ from those it was built with. */
static int build_kernels(nestcl_block *b)
{
  const nestcl_model *m = b->c.model;
  char opts[4096];
  void *const *sets[1] = {b->fields};
  nestcl_const_options(m, sets, &b->c.n, 1, opts, sizeof opts);
  size_t used = strlen(opts);
  snprintf(opts + used, sizeof opts - used,
           "%s-DNESTCL_MODEL_RNG_SEED=%uu -DNESTCL_NEURON_ID(i)=((nestcl_u64)%lluUL+(nestcl_u64)(i)*%lluUL)",
           used ? " " : "", (unsigned)b->c.rng_seed, (unsigned long long)b->c.id_first,
           (unsigned long long)(b->c.id_stride ? b->c.id_stride : 1));
  if (b->program && b->options && strcmp(b->options, opts) == 0) {
    return 0;
  }
  if (b->k_update) clReleaseKernel(b->k_update);
  if (b->k_stage) clReleaseKernel(b->k_stage);
  if (b->program) clReleaseProgram(b->program);
  b->k_update = b->k_stage = NULL;
  b->program = NULL;
  free(b->options);
  b->options = strdup(opts);
  size_t len = strlen(nestcl_rt_source) + strlen(m->kernel_source) + sizeof stage_kernel_source + 3;
  char *src = malloc(len);
  if (!b->options || !src) {
    free(src);
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  snprintf(src, len, "%s\n%s\n%s", nestcl_rt_source, m->kernel_source, stage_kernel_source);
  int rc = nestcl_program_build(b->dev, src, opts, &b->program);
  free(src);
  if (rc) {
    return rc;
  }
  cl_int err;
  b->k_update = clCreateKernel(b->program, m->kernel_name, &err);
  if (err != CL_SUCCESS) return cl_fail(err, "clCreateKernel(update)");
  b->k_stage = clCreateKernel(b->program, "nestcl_block_stage", &err);
  if (err != CL_SUCCESS) return cl_fail(err, "clCreateKernel(stage)");
  cl_uint n = b->c.n, slots = b->c.ring_slots, nch = b->n_channels;
  err = nestcl_update_kernel_fixed_args(b->k_update, b->c.n, b->c.K, b->c.resolution_ms, b->c.ring_slots,
                                        b->n_channels, b->b_ring.mem, b->b_count.mem, b->b_spikes.mem, b->spike_cap,
                                        b->c.record ? 1 : 0, b->b_rec.mem, b->b_fields, m->n_fields);
  err |= clSetKernelArg(b->k_stage, 0, sizeof(cl_mem), &b->b_ring.mem);
  err |= clSetKernelArg(b->k_stage, 1, sizeof nch, &nch);
  err |= clSetKernelArg(b->k_stage, 2, sizeof n, &n);
  err |= clSetKernelArg(b->k_stage, 3, sizeof slots, &slots);
  err |= clSetKernelArg(b->k_stage, 7, sizeof(cl_mem), &b->b_stage.mem);
  return err == CL_SUCCESS ? 0 : cl_fail(err, "clSetKernelArg");
}

/* Host fields to the device (to_device) or back, on the block's queue. */
static int transfer_fields(nestcl_block *b, int to_device)
{
  cl_command_queue q = nestcl_device_queue(b->dev, b->c.queue);
  cl_int err = CL_SUCCESS;
  for (int f = 0; f < b->c.model->n_fields && err == CL_SUCCESS; ++f) {
    if (!b->field_bytes[f]) {
      continue;
    }
    err = to_device
            ? clEnqueueWriteBuffer(q, b->b_fields[f].mem, CL_FALSE, 0, b->field_bytes[f], b->fields[f], 0, NULL, NULL)
            : clEnqueueReadBuffer(q, b->b_fields[f].mem, CL_FALSE, 0, b->field_bytes[f], b->fields[f], 0, NULL, NULL);
  }
  if (err == CL_SUCCESS) err = clFinish(q);
  return err == CL_SUCCESS ? 0 : cl_fail(err, to_device ? "uploading the state" : "reading the state back");
}

int nestcl_block_upload(nestcl_block *b)
{
  if (b->c.n == 0) {
    return 0;
  }
  int rc = build_kernels(b);
  return rc ? rc : transfer_fields(b, 1);
}

int nestcl_block_download(nestcl_block *b)
{
  return b->c.n == 0 ? 0 : transfer_fields(b, 0);
}

void nestcl_block_stage(nestcl_block *b, uint32_t lag, uint32_t ch, uint32_t i, double value)
{
  if (lag < b->c.min_delay_steps && ch < b->n_channels && i < b->c.n) {
    int64_t *p = &b->stage[((size_t)lag * b->n_channels + ch) * b->c.n + i];
    *p = nestcl_fixed_sum(*p, nestcl_fixed_from_double(value));
  }
}

int nestcl_block_update(nestcl_block *b, int64_t origin_steps, int from, int to)
{
  b->n_spikes = 0;
  if (b->c.n == 0 || from >= to) {
    return 0;
  }
  if (from < 0 || (uint32_t)to > b->c.min_delay_steps) {
    return nestcl_set_error(NESTCL_EINVAL, "block: lags [%d, %d) outside the slice of %u steps", from, to,
                            b->c.min_delay_steps);
  }
  if (!b->k_update) {
    return nestcl_set_error(NESTCL_EINVAL, "block: update before the first upload");
  }
  static const cl_uint zero = 0;
  cl_command_queue q = nestcl_device_queue(b->dev, b->c.queue);
  cl_long org = origin_steps;
  cl_int f = from, t = to;
  size_t gsize = b->c.n;
  size_t stage_bytes = b->stage_elems * 8;
  cl_int err = clEnqueueWriteBuffer(q, b->b_stage.mem, CL_FALSE, 0, stage_bytes, b->stage, 0, NULL, NULL);
  err |= clEnqueueWriteBuffer(q, b->b_count.mem, CL_FALSE, 0, sizeof zero, &zero, 0, NULL, NULL);
  err |= clSetKernelArg(b->k_stage, 4, sizeof org, &org);
  err |= clSetKernelArg(b->k_stage, 5, sizeof f, &f);
  err |= clSetKernelArg(b->k_stage, 6, sizeof t, &t);
  err |= clSetKernelArg(b->k_update, 2, sizeof org, &org);
  err |= clSetKernelArg(b->k_update, 3, sizeof f, &f);
  err |= clSetKernelArg(b->k_update, 4, sizeof t, &t);
  if (err == CL_SUCCESS) err = clEnqueueNDRangeKernel(q, b->k_stage, 1, NULL, &gsize, NULL, 0, NULL, NULL);
  if (err == CL_SUCCESS) err = clEnqueueNDRangeKernel(q, b->k_update, 1, NULL, &gsize, NULL, 0, NULL, NULL);
  cl_uint count = 0;
  if (err == CL_SUCCESS) err = clEnqueueReadBuffer(q, b->b_count.mem, CL_TRUE, 0, sizeof count, &count, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    return cl_fail(err, "update");
  }
  /* The blocking read ran after the staging's upload on this in-order queue: the host copy is free again. */
  if (count > b->spike_cap) {
    return nestcl_set_error(NESTCL_ERUNTIME, "block %s: %u spikes in one slice, more than the %u it has room for",
                            b->c.model->name, count, b->spike_cap);
  }
  if (count) {
    err = clEnqueueReadBuffer(q, b->b_spikes.mem, CL_FALSE, 0, (size_t)count * sizeof *b->spikes, b->spikes, 0,
                              NULL, NULL);
  }
  if (err == CL_SUCCESS && b->rec_elems) {
    err = clEnqueueReadBuffer(q, b->b_rec.mem, CL_FALSE, 0, (size_t)(to - from) * b->n_rec * b->c.n * 8, b->rec, 0,
                              NULL, NULL);
  }
  if (err == CL_SUCCESS) err = clFinish(q);
  if (err != CL_SUCCESS) {
    return cl_fail(err, "reading spikes and recordings");
  }
  b->n_spikes = count;
  memset(b->stage, 0, stage_bytes);
  return 0;
}
