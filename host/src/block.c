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

#include "block_internal.h"
#include "core_kernel_args.h"
#include "nestcl_fixed.h"
#include "nestcl_libm.h"
#include "core/nestcl_core.h"
#include "engine_kernels_source.h"
#include "nestcl_rt_source.h"
#include "model_failure.h"
#include "poisson_cdf.h"
#include "specialise.h"
#include "update_fill.h"

/*
 * The block's own kernels, built into the update's program. Their argument
 * indices, as the host sets them, are the enums below the source; keep both in
 * the order of the kernels' signatures.
 *
 * nestcl_block_stage adds lags [from, to) of the staging to the ring and
 * clears nothing: the host zeroes its copy. Its work is nestcl_ring_stage
 * (nestcl_ring.h), which a block on the host runs as C (block_host.c).
 */
static const char stage_kernel_source[] =
  "__kernel void nestcl_block_stage(__global long *ring, uint n_channels, uint n, uint ring_slots,\n"
  "                                 long origin, int from, int to, __global const long *stage)\n"
  "{\n"
  "  const uint i = (uint)get_global_id(0);\n"
  "  if (i >= n) return;\n"
  "  nestcl_ring_stage(ring, n_channels, n, ring_slots, origin, from, to, stage, i, i + 1u);\n"
  "}\n"
  "\n"
  "/* Device poisson_generator: one work-item per (generator, target) entry; see nestcl_block_add_poisson. */\n"
  "__kernel void nestcl_block_poisson(__global long *ring, uint n_channels, uint n, uint ring_slots, long origin,\n"
  "                                   int from, int to, uint seed, __global const uint *target,\n"
  "                                   __global const int *delay, __global const long *value,\n"
  "                                   __global const ulong *id, uint n_entries, __global const double *cdf,\n"
  "                                   uint cdf_len, uint kstop, uint chunks)\n"
  "{\n"
  "  const uint e = (uint)get_global_id(0);\n"
  "  if (e >= n_entries) return;\n"
  "  const nestcl_philox_key key = nestcl_rng_key(seed, NESTCL_RNG_PURPOSE_POISSON);\n"
  "  const uint t = target[e];\n"
  "  for (int lag = from; lag < to; ++lag) {\n"
  "    const long step = origin + lag;\n"
  "    nestcl_rng_stream s = nestcl_stream_init(key, nestcl_rng_counter(id[e], (ulong)step));\n"
  "    uint k = 0u;\n"
  "    for (uint c = 0u; c < chunks; ++c) k += nestcl_poisson_table(nestcl_stream_uniform(&s), cdf, cdf_len, kstop);\n"
  "    if (k != 0u)\n"
  "      nestcl_ring_add_fixed(ring, n_channels, n, nestcl_ring_slot(step, delay[e], ring_slots),\n"
  "                            t >> NESTCL_TARGET_INDEX_BITS, t & NESTCL_TARGET_INDEX_MASK,\n"
  "                            (long)((ulong)k * (ulong)value[e]));\n"
  "  }\n"
  "}\n";

/* The arguments of nestcl_block_stage, by index. */
enum block_stage_arg {
  STAGE_RING,
  STAGE_N_CHANNELS,
  STAGE_N,
  STAGE_RING_SLOTS,
  STAGE_ORIGIN,
  STAGE_FROM,
  STAGE_TO,
  STAGE_STAGE
};

/* The arguments of nestcl_block_poisson, by index. */
enum block_poisson_arg {
  BPOIS_RING,
  BPOIS_N_CHANNELS,
  BPOIS_N,
  BPOIS_RING_SLOTS,
  BPOIS_ORIGIN,
  BPOIS_FROM,
  BPOIS_TO,
  BPOIS_SEED,
  BPOIS_TARGET,
  BPOIS_DELAY,
  BPOIS_VALUE,
  BPOIS_ID,
  BPOIS_N_ENTRIES,
  BPOIS_CDF,
  BPOIS_CDF_LEN,
  BPOIS_KSTOP,
  BPOIS_CHUNKS
};

static int cl_fail(cl_int err, const char *what)
{
  return nestcl_set_error(NESTCL_ECL, "block: %s failed: %s", what, nestcl_cl_error_name(err));
}

static cl_int enqueue_poisson(nestcl_block *b, cl_command_queue q, cl_long org, cl_int f, cl_int t);

static size_t field_len(const nestcl_field *f, uint32_t K)
{
  return nestcl_field_len(f, K);
}

/* The device's copies of a block's arrays (not for a host block). */
static int alloc_device(nestcl_block *b)
{
  const nestcl_model *m = b->c.model;
  nestcl_device *dev = b->dev;
  int rc = 0;
  char what[160];
  for (int f = 0; f < m->n_fields && !rc; ++f) {
    snprintf(what, sizeof what, "%s.%s", m->name, m->fields[f].member);
    rc = nestcl_buffer_alloc(dev, NESTCL_MEM_STATE, what, b->field_bytes[f], CL_MEM_READ_WRITE, NULL, &b->b_fields[f]);
  }
  size_t ring_bytes = (size_t)b->c.ring_slots * b->n_channels * b->c.n * 8;
  /*
   * The ring starts empty, as NEST's does: uploaded from zeros rather than
   * cleared with clEnqueueFillBuffer, which oclgrind does not count as
   * initialising (tests/oclgrind/false_positive/fill_buffer.c), so every later
   * read of the ring would be reported. Once per block, at creation.
   */
  void *zeros = ring_bytes ? calloc(1, ring_bytes) : NULL;
  if (!rc && ring_bytes && !zeros)
    rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  if (!rc)
    rc = nestcl_buffer_alloc(dev, NESTCL_MEM_RING, "ring", ring_bytes,
                             CL_MEM_READ_WRITE | (zeros ? CL_MEM_COPY_HOST_PTR : 0), zeros, &b->b_ring);
  free(zeros);
  if (!rc)
    rc = nestcl_buffer_alloc(dev, NESTCL_MEM_RING, "ring staging", b->stage_elems * 8, CL_MEM_READ_ONLY, NULL,
                             &b->b_stage);
  if (!rc)
    rc =
      nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "spike count", sizeof b->count, CL_MEM_READ_WRITE, NULL, &b->b_count);
  if (!rc)
    rc = nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "spike list", (size_t)b->spike_cap * 8, CL_MEM_READ_WRITE, NULL,
                             &b->b_spikes);
  if (!rc)
    rc =
      nestcl_buffer_alloc(dev, NESTCL_MEM_RECORDING, "recording", b->rec_elems * 8, CL_MEM_READ_WRITE, NULL, &b->b_rec);
  if (!rc && m->spike_offsets) {
    rc = nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "spike offsets", (size_t)b->spike_cap * 8, CL_MEM_READ_WRITE, NULL,
                             &b->b_offsets);
  }
  return rc;
}

/* The host arrays of a block: fields, staging, spike list, recordings, offsets; a host block's ring. */
static int alloc_host(nestcl_block *b)
{
  const nestcl_model *m = b->c.model;
  const uint32_t n = b->c.n, K = b->c.K;
  b->fields = calloc((size_t)m->n_fields + 1, sizeof *b->fields);
  b->field_bytes = calloc((size_t)m->n_fields + 1, sizeof *b->field_bytes);
  b->b_fields = calloc((size_t)m->n_fields + 1, sizeof *b->b_fields);
  b->stage = calloc(b->stage_elems + 1, sizeof *b->stage);
  b->spikes = calloc((size_t)b->spike_cap + 1, sizeof *b->spikes);
  b->rec = calloc(b->rec_elems + 1, sizeof *b->rec);
  if (m->spike_offsets) {
    b->spike_offsets = calloc((size_t)b->spike_cap + 1, sizeof *b->spike_offsets);
  }
  if (b->c.on_host) {
    b->ring_copy = calloc((size_t)b->c.ring_slots * b->n_channels * n + 1, sizeof *b->ring_copy);
  }
  if (!(b->fields && b->field_bytes && b->b_fields && b->stage && b->spikes && b->rec &&
        (b->spike_offsets || !m->spike_offsets) && (b->ring_copy || !b->c.on_host))) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  for (int f = 0; f < m->n_fields; ++f) {
    b->field_bytes[f] = nestcl_field_type_size(m->fields[f].type) * field_len(&m->fields[f], K) * n;
    b->fields[f] = calloc(b->field_bytes[f] + 8, 1);
    if (!b->fields[f]) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
  }
  return 0;
}

int nestcl_block_create(nestcl_device *dev, const nestcl_block_config *c, nestcl_block **out)
{
  *out = NULL;
  const nestcl_model *m = c->model;
  if (!m || c->min_delay_steps == 0 || c->ring_slots < c->min_delay_steps || !(c->resolution_ms > 0.0) ||
      (!c->on_host && (c->queue < 0 || c->queue >= nestcl_device_queue_count(dev)))) {
    return nestcl_set_error(NESTCL_EINVAL, "block: bad configuration (model %s, min_delay %u, ring slots %u, queue %d)",
                            m ? m->name : "(none)", c->min_delay_steps, c->ring_slots, c->queue);
  }
  if (c->on_host && !m->update_cpu) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: the model has no C loop to run on the host", m->name);
  }
  nestcl_block *b = calloc(1, sizeof *b);
  if (!b) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  int rc = c->on_host ? 0 : nestcl_device_require(dev, "a nestcl block");
  if (rc) {
    free(b);
    return rc;
  }
  b->dev = c->on_host ? NULL : dev;
  b->c = *c;
  b->contiguous = !c->on_host && strcmp(nestcl_device_get_info(dev)->type, "cpu") == 0;
  b->c.K = m->has_receptors ? c->K : 0;
  for (int g = 0; g < m->n_channel_groups; ++g) {
    b->n_channels += m->channels[g].count < 0 ? b->c.K : (uint32_t)m->channels[g].count;
  }
  for (int r = 0; r < m->n_recordables; ++r) {
    b->n_rec += (uint32_t)field_len(&m->fields[m->recordables[r]], b->c.K);
  }
  /* One entry per neuron and step, and room for NESTCL_BLOCK_RUN_ROOM more: a model may send more than one
   * spike in a step (an aeif model without refractory time crosses V_peak again within the step's ODE
   * loop), and one that sends spikes of multiplicity m lists m entries per spike (nestcl_emit_run: a
   * parrot_neuron repeating a spike of multiplicity 2). Only a runaway (a parrot network's chain
   * reaction, a neuron that NEST would stop as numerically unstable) still overflows, which collect reports. */
  b->spike_cap = c->n * c->min_delay_steps + NESTCL_BLOCK_RUN_ROOM;
  b->stage_elems = (size_t)c->min_delay_steps * b->n_channels * c->n;
  b->rec_elems = c->record ? (size_t)c->min_delay_steps * b->n_rec * c->n : 0;
  rc = alloc_host(b);
  if (!rc && !c->on_host)
    rc = alloc_device(b);
  if (rc) {
    nestcl_block_destroy(b);
    return rc;
  }
  *out = b;
  return 0;
}

/* What a plastic set holds: kernel, buffers, host copies. */
static void plastic_free(nestcl_device *dev, block_plastic *p)
{
  if (p->k)
    clReleaseKernel(p->k);
  if (p->prog)
    clReleaseProgram(p->prog);
  nestcl_buffer *bufs[] = {&p->b_row,  &p->b_target, &p->b_delay, &p->b_state, &p->b_src_state,
                           &p->b_tmpl, &p->b_cp,     &p->b_srcs,  &p->b_lags,  &p->b_done};
  for (size_t j = 0; j < sizeof bufs / sizeof *bufs; ++j) {
    nestcl_buffer_free(dev, bufs[j]);
  }
  free(p->tmpl);
  free(p->row_host);
  free(p->pend);
  free(p->srcs);
  free(p->lags);
  memset(p, 0, sizeof *p);
}

void nestcl_block_destroy(nestcl_block *b)
{
  if (!b) {
    return;
  }
  nestcl_kprof_destroy(b->enq.profile);
  const nestcl_model *m = b->c.model;
  if (b->k_update)
    clReleaseKernel(b->k_update);
  if (b->k_stage)
    clReleaseKernel(b->k_stage);
  if (b->k_deliver)
    clReleaseKernel(b->k_deliver);
  if (b->k_poisson)
    clReleaseKernel(b->k_poisson);
  if (b->program)
    clReleaseProgram(b->program);
  nestcl_block_set_synapses(b, 0, NULL, NULL, NULL, NULL);
  nestcl_buffer_free(b->dev, &b->b_pend);
  free(b->pend);
  for (int k = 0; k < b->n_poisson; ++k) {
    block_poisson *d = &b->poisson[k];
    nestcl_buffer_free(b->dev, &d->b_target);
    nestcl_buffer_free(b->dev, &d->b_delay);
    nestcl_buffer_free(b->dev, &d->b_value);
    nestcl_buffer_free(b->dev, &d->b_id);
    nestcl_buffer_free(b->dev, &d->b_cdf);
    free(d->cdf);
  }
  free(b->poisson);
  free(b->ring_copy);
  for (int k = 0; k < b->n_plastic; ++k) {
    plastic_free(b->dev, &b->plastic[k]);
  }
  free(b->plastic);
  eng_hist_free(&b->hist, b->dev);
  for (int f = 0; b->b_fields && f < m->n_fields; ++f) {
    nestcl_buffer_free(b->dev, &b->b_fields[f]);
  }
  nestcl_buffer_free(b->dev, &b->b_ring);
  nestcl_buffer_free(b->dev, &b->b_stage);
  nestcl_buffer_free(b->dev, &b->b_count);
  nestcl_buffer_free(b->dev, &b->b_spikes);
  nestcl_buffer_free(b->dev, &b->b_rec);
  nestcl_buffer_free(b->dev, &b->b_offsets);
  for (int k = 0; k < 4; ++k) {
    nestcl_buffer_free(b->dev, &b->b_evq[k]);
  }
  free(b->ev_i);
  free(b->ev_lag);
  free(b->ev_off);
  free(b->ev_w);
  free(b->evq_first);
  free(b->evq_lag);
  free(b->evq_off);
  free(b->evq_w);
  for (int f = 0; b->fields && f < m->n_fields; ++f) {
    free(b->fields[f]);
  }
  free(b->fields);
  free(b->field_bytes);
  free(b->b_fields);
  if (!b->stage_shared)
    free(b->stage);
  free(b->spikes);
  free(b->spike_offsets);
  free(b->rec);
  free(b->options);
  free(b);
}

uint32_t nestcl_block_channels(const nestcl_block *b)
{
  return b->n_channels;
}
uint32_t nestcl_block_recordables(const nestcl_block *b)
{
  return b->n_rec;
}
void *const *nestcl_block_fields(nestcl_block *b)
{
  return b->fields;
}
const double *nestcl_block_recorded(const nestcl_block *b)
{
  return b->rec;
}

void nestcl_block_spikes(const nestcl_block *b, const nestcl_spike **spikes, uint32_t *n)
{
  *spikes = b->spikes;
  *n = b->n_spikes;
}

const double *nestcl_block_spike_offsets(const nestcl_block *b)
{
  return b->spike_offsets;
}

size_t nestcl_block_device_bytes(const nestcl_block *b)
{
  size_t s = b->b_ring.bytes + b->b_stage.bytes + b->b_count.bytes + b->b_spikes.bytes + b->b_offsets.bytes +
    b->b_rec.bytes + b->b_row_ptr.bytes + b->b_syn_target.bytes + b->b_syn_value.bytes + b->b_syn_delay.bytes +
    b->b_pend.bytes + b->b_evq[0].bytes + b->b_evq[1].bytes + b->b_evq[2].bytes + b->b_evq[3].bytes;
  for (int k = 0; k < b->n_poisson; ++k) {
    const block_poisson *d = &b->poisson[k];
    s += d->b_target.bytes + d->b_delay.bytes + d->b_value.bytes + d->b_id.bytes + d->b_cdf.bytes;
  }
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
  /* Translated code calls nestcl_glibc_exp(x, NESTCL_LIBM_VARIANT): the glibc variant of the host (NEST's). */
  snprintf(opts + used, sizeof opts - used,
           " -DNESTCL_W_T=double -DNESTCL_W_SUFFIX=_d%s -DNESTCL_LIBM_VARIANT=%d -DNESTCL_K_MAX=%u",
           b->contiguous ? " -DNESTCL_DELIVER_CONTIGUOUS" : "", nestcl_libm_host_variant() != 0,
           b->c.K ? (unsigned)b->c.K : 1u);
  if (b->program && b->options && strcmp(b->options, opts) == 0) {
    return 0;
  }
  if (b->k_update)
    clReleaseKernel(b->k_update);
  if (b->k_stage)
    clReleaseKernel(b->k_stage);
  if (b->k_deliver)
    clReleaseKernel(b->k_deliver);
  if (b->k_poisson)
    clReleaseKernel(b->k_poisson);
  if (b->program)
    clReleaseProgram(b->program);
  b->k_update = b->k_stage = b->k_deliver = b->k_poisson = NULL;
  b->program = NULL;
  free(b->options);
  b->options = strdup(opts);
  /* The model's kernel, the engine's core kernels (CSR delivery) and the block's own. */
  size_t len = strlen(nestcl_rt_source) + strlen(m->kernel_source) + strlen(nestcl_engine_kernels_source) +
    sizeof stage_kernel_source + 4;
  char *src = malloc(len);
  if (!b->options || !src) {
    free(src);
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  snprintf(src, len, "%s\n%s\n%s\n%s", nestcl_rt_source, m->kernel_source, nestcl_engine_kernels_source,
           stage_kernel_source);
  int rc = nestcl_program_build(b->dev, src, opts, &b->program);
  free(src);
  if (rc) {
    return rc;
  }
  cl_int err;
  b->k_update = clCreateKernel(b->program, m->kernel_name, &err);
  if (err != CL_SUCCESS)
    return cl_fail(err, "clCreateKernel(update)");
  b->k_stage = clCreateKernel(b->program, "nestcl_block_stage", &err);
  if (err != CL_SUCCESS)
    return cl_fail(err, "clCreateKernel(stage)");
  b->k_deliver = clCreateKernel(b->program, "nestcl_deliver", &err);
  if (err != CL_SUCCESS)
    return cl_fail(err, "clCreateKernel(deliver)");
  b->k_poisson = clCreateKernel(b->program, "nestcl_block_poisson", &err);
  if (err != CL_SUCCESS)
    return cl_fail(err, "clCreateKernel(poisson)");
  /*
   * Delivery: one work-group per spike (engine_kernels.cl), 256 lanes striding
   * through the row on a GPU, capped by the kernel's work-group limit; one
   * work-item walking the row on a CPU device, as the engine found best on PoCL.
   */
  rc = nestcl_kernel_wg_width(b->dev, b->k_deliver, "nestcl_deliver", b->contiguous ? 1u : 256u, &b->deliver_width);
  if (rc)
    return rc;
  return nestcl_block_repoint(b);
}

/*
 * The kernels' arguments that name the block's buffers, set again after a set
 * (block_set.c) replaced the buffers by parts of its own: the update's, the
 * staging's and each plastic set's ring.
 */
int nestcl_block_repoint(nestcl_block *b)
{
  if (!b->k_update) {
    return 0;
  }
  const nestcl_model *m = b->c.model;
  cl_uint n = b->c.n, slots = b->c.ring_slots, nch = b->n_channels;
  nestcl_update_args a;
  nestcl_block_update_args(b, &a);
  const nestcl_update_mems mem = {
    .ring = b->b_ring.mem, .spike_count = b->b_count.mem, .spikes = b->b_spikes.mem, .rec = b->b_rec.mem};
  cl_int err = nestcl_update_kernel_set(b->k_update, &a, &mem, b->b_fields, m->n_fields,
                                        m->spike_offsets ? b->b_offsets.mem : NULL);
  err |= clSetKernelArg(b->k_stage, STAGE_RING, sizeof(cl_mem), &b->b_ring.mem);
  err |= clSetKernelArg(b->k_stage, STAGE_N_CHANNELS, sizeof nch, &nch);
  err |= clSetKernelArg(b->k_stage, STAGE_N, sizeof n, &n);
  err |= clSetKernelArg(b->k_stage, STAGE_RING_SLOTS, sizeof slots, &slots);
  err |= clSetKernelArg(b->k_stage, STAGE_STAGE, sizeof(cl_mem), &b->b_stage.mem);
  for (int k = 0; k < b->n_plastic; ++k) {
    err |= clSetKernelArg(b->plastic[k].k, PK_RING, sizeof(cl_mem), &b->b_ring.mem);
  }
  return err == CL_SUCCESS ? 0 : cl_fail(err, "clSetKernelArg(block buffers)");
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
  if (err == CL_SUCCESS)
    err = clFinish(q);
  return err == CL_SUCCESS ? 0 : cl_fail(err, to_device ? "uploading the state" : "reading the state back");
}

int nestcl_block_upload(nestcl_block *b)
{
  if (b->c.n == 0 || b->c.on_host) {
    return 0;
  }
  int rc = build_kernels(b);
  return rc ? rc : transfer_fields(b, 1);
}

int nestcl_block_download(nestcl_block *b)
{
  return b->c.n == 0 || b->c.on_host ? 0 : transfer_fields(b, 0);
}

void nestcl_block_stage(nestcl_block *b, uint32_t lag, uint32_t ch, uint32_t i, double value)
{
  if (lag < b->c.min_delay_steps && ch < b->n_channels && i < b->c.n) {
    int64_t *p = &b->stage[((size_t)lag * b->n_channels + ch) * b->c.n + i];
    *p = nestcl_fixed_sum(*p, nestcl_fixed_from_double(value));
  }
}

/* The grouped events on the device, with the update's event arguments set. */
static int upload_events(nestcl_block *b, cl_command_queue q, int from, int to)
{
  int rc = nestcl_block_group_events(b, from, to);
  if (rc) {
    return rc;
  }
  const uint32_t n = b->c.n, ne = b->n_ev;
  if (ne > b->ev_dev_cap || !b->b_evq[0].mem) {
    uint32_t cap = b->ev_dev_cap ? b->ev_dev_cap : 256;
    while (cap < ne)
      cap *= 2;
    static const char *const what[4] = {"event index", "event lags", "event offsets", "event weights"};
    const size_t bytes[4] = {((size_t)n + 1) * 4, (size_t)cap * 4, (size_t)cap * 8, (size_t)cap * 8};
    for (int k = 0; k < 4 && !rc; ++k) {
      nestcl_buffer_free(b->dev, &b->b_evq[k]);
      rc = nestcl_buffer_alloc(b->dev, NESTCL_MEM_OTHER, what[k], bytes[k], CL_MEM_READ_ONLY, NULL, &b->b_evq[k]);
    }
    if (rc) {
      b->ev_dev_cap = 0;
      return rc;
    }
    b->ev_dev_cap = cap;
  }
  /* every time: a rebuilt kernel (build_kernels) has none of them */
  const cl_mem mems[4] = {b->b_evq[0].mem, b->b_evq[1].mem, b->b_evq[2].mem, b->b_evq[3].mem};
  if (nestcl_update_kernel_evq_args(b->k_update, b->c.model, mems) != CL_SUCCESS) {
    return nestcl_set_error(NESTCL_ECL, "block %s: setting the event arguments failed", b->c.model->name);
  }
  cl_int err =
    nestcl_enq_write(&b->enq, q, b->b_evq[0].mem, CL_FALSE, 0, ((size_t)n + 1) * 4, b->evq_first, 0, NULL, NULL);
  if (ne) {
    err |= nestcl_enq_write(&b->enq, q, b->b_evq[1].mem, CL_FALSE, 0, (size_t)ne * 4, b->evq_lag, 0, NULL, NULL);
    err |= nestcl_enq_write(&b->enq, q, b->b_evq[2].mem, CL_FALSE, 0, (size_t)ne * 8, b->evq_off, 0, NULL, NULL);
    err |= nestcl_enq_write(&b->enq, q, b->b_evq[3].mem, CL_FALSE, 0, (size_t)ne * 8, b->evq_w, 0, NULL, NULL);
  }
  return err == CL_SUCCESS ? 0 : cl_fail(err, "uploading the events");
}

/* The refusal of what only a device block holds (block.h, on_host). */
static int host_refuses(const nestcl_block *b, const char *what)
{
  return nestcl_set_error(NESTCL_EINVAL, "block %s runs on the host: it holds no %s (the caller keeps them)",
                          b->c.model->name, what);
}

/*
 * bytes of host data into buffer buf from offset on. Where the device's
 * memory is the host's, through a map of the region (its old contents
 * dropped), copied on every host thread: the one copy that is needed, in
 * parallel. Elsewhere a write: a GPU's driver copies either way (and
 * Oclgrind keeps initialised only a buffer's last region mapped for writing).
 */
static int write_mapped(nestcl_block *b, nestcl_buffer *buf, size_t offset, size_t bytes, const void *data)
{
  if (!bytes) {
    return 0;
  }
  cl_command_queue q = nestcl_device_queue(b->dev, b->c.queue);
  cl_int err;
  if (!nestcl_device_get_info(b->dev)->host_unified) { /* a copy either way: the driver's own */
    err = clEnqueueWriteBuffer(q, buf->mem, CL_TRUE, offset, bytes, data, 0, NULL, NULL);
    return err == CL_SUCCESS ? 0 : cl_fail(err, "writing synapses");
  }
  unsigned char *to =
    clEnqueueMapBuffer(q, buf->mem, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, offset, bytes, 0, NULL, NULL, &err);
  if (err != CL_SUCCESS) {
    return cl_fail(err, "mapping synapses");
  }
  const size_t part = 1u << 20;
  const long parts = (long)((bytes + part - 1) / part);
#pragma omp parallel for schedule(dynamic, 1)
  for (long k = 0; k < parts; ++k) {
    const size_t at = (size_t)k * part;
    memcpy(to + at, (const unsigned char *)data + at, bytes - at < part ? bytes - at : part);
  }
  err = clEnqueueUnmapMemObject(q, buf->mem, to, 0, NULL, NULL);
  if (err == CL_SUCCESS)
    err = clFinish(q);
  return err == CL_SUCCESS ? 0 : cl_fail(err, "writing synapses");
}

int nestcl_block_synapses_begin(nestcl_block *b, uint32_t n_rows, const uint64_t *row_ptr, uint16_t delay_min,
                                uint16_t delay_max)
{
  nestcl_buffer_free(b->dev, &b->b_row_ptr);
  nestcl_buffer_free(b->dev, &b->b_syn_target);
  nestcl_buffer_free(b->dev, &b->b_syn_value);
  nestcl_buffer_free(b->dev, &b->b_syn_delay);
  b->n_rows = 0;
  b->nnz = b->max_row = b->syn_filled = 0;
  b->delay_hom = NESTCL_DELAY_PER_SYNAPSE;
  if (n_rows == 0) {
    return 0;
  }
  if (b->c.on_host) {
    return host_refuses(b, "synapses");
  }
  const uint64_t nnz = row_ptr[n_rows];
  uint64_t max_row = 0;
  for (uint32_t r = 0; r < n_rows; ++r) {
    if (row_ptr[r + 1] < row_ptr[r]) {
      return nestcl_set_error(NESTCL_EINVAL, "block %s: synapse rows out of order at row %u", b->c.model->name, r);
    }
    max_row = row_ptr[r + 1] - row_ptr[r] > max_row ? row_ptr[r + 1] - row_ptr[r] : max_row;
  }
  if (nnz &&
      (delay_min > delay_max || delay_min < b->c.min_delay_steps ||
       (uint32_t)delay_max + b->c.min_delay_steps > b->c.ring_slots)) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: synapse delays [%u, %u] steps outside [%u, %u]", b->c.model->name,
                            (unsigned)delay_min, (unsigned)delay_max, b->c.min_delay_steps,
                            b->c.ring_slots - b->c.min_delay_steps);
  }
  const int hom = delay_min == delay_max;
  int rc = nestcl_buffer_alloc(b->dev, NESTCL_MEM_SYNAPSES, "synapse rows", ((size_t)n_rows + 1) * 8,
                               CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (void *)row_ptr, &b->b_row_ptr);
  /* Empty arrays still get a (small, uninitialised) buffer: the kernel takes them as arguments. */
  if (!rc)
    rc = nestcl_buffer_alloc(b->dev, NESTCL_MEM_SYNAPSES, "synapse targets", nnz ? nnz * 4 : 4, CL_MEM_READ_ONLY, NULL,
                             &b->b_syn_target);
  if (!rc)
    rc = nestcl_buffer_alloc(b->dev, NESTCL_MEM_SYNAPSES, "synapse values", nnz ? nnz * 8 : 8, CL_MEM_READ_ONLY, NULL,
                             &b->b_syn_value);
  if (!rc)
    rc = nestcl_buffer_alloc(b->dev, NESTCL_MEM_SYNAPSES, "synapse delays", nnz && !hom ? nnz * 2 : 2, CL_MEM_READ_ONLY,
                             NULL, &b->b_syn_delay);
  if (rc) {
    nestcl_block_synapses_begin(b, 0, NULL, 0, 0);
    return rc;
  }
  b->n_rows = n_rows;
  b->nnz = nnz;
  b->max_row = max_row;
  b->delay_hom = hom && nnz ? delay_min : NESTCL_DELAY_PER_SYNAPSE;
  b->syn_delay_min = delay_min;
  b->syn_delay_max = delay_max;
  return 0;
}

int nestcl_block_synapses_fill(nestcl_block *b, uint64_t first, uint64_t n, const uint32_t *target, const double *value,
                               const uint16_t *delay)
{
  if (first + n > b->nnz || first != b->syn_filled) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: synapses [%llu, %llu) of %llu, after %llu written",
                            b->c.model->name, (unsigned long long)first, (unsigned long long)(first + n),
                            (unsigned long long)b->nnz, (unsigned long long)b->syn_filled);
  }
  uint64_t bad = UINT64_MAX;
#pragma omp parallel for reduction(min : bad) schedule(static)
  for (uint64_t k = 0; k < n; ++k) {
    const uint32_t ch = target[k] >> NESTCL_TARGET_INDEX_BITS, i = target[k] & NESTCL_TARGET_INDEX_MASK;
    if (ch >= b->n_channels || i >= b->c.n || delay[k] < b->syn_delay_min || delay[k] > b->syn_delay_max) {
      bad = k < bad ? k : bad;
    }
  }
  if (bad != UINT64_MAX) {
    const uint32_t ch = target[bad] >> NESTCL_TARGET_INDEX_BITS, i = target[bad] & NESTCL_TARGET_INDEX_MASK;
    return nestcl_set_error(NESTCL_EINVAL,
                            "block %s: synapse %llu (channel %u, neuron %u, delay %u steps) does not "
                            "fit the block (%u channels, %u neurons, delays in [%u, %u])",
                            b->c.model->name, (unsigned long long)(first + bad), ch, i, (unsigned)delay[bad],
                            b->n_channels, b->c.n, (unsigned)b->syn_delay_min, (unsigned)b->syn_delay_max);
  }
  int rc = write_mapped(b, &b->b_syn_target, first * 4, n * 4, target);
  if (!rc)
    rc = write_mapped(b, &b->b_syn_value, first * 8, n * 8, value);
  if (!rc && b->delay_hom == NESTCL_DELAY_PER_SYNAPSE)
    rc = write_mapped(b, &b->b_syn_delay, first * 2, n * 2, delay);
  if (rc) {
    return rc;
  }
  b->syn_filled = first + n;
  return 0;
}

int nestcl_block_synapses_end(nestcl_block *b)
{
  if (b->syn_filled != b->nnz) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: %llu of %llu synapses written", b->c.model->name,
                            (unsigned long long)b->syn_filled, (unsigned long long)b->nnz);
  }
  return 0;
}

int nestcl_block_set_synapses(nestcl_block *b, uint32_t n_rows, const uint64_t *row_ptr, const uint32_t *target,
                              const double *value, const uint16_t *delay)
{
  const uint64_t nnz = n_rows ? row_ptr[n_rows] : 0;
  uint16_t lo = nnz ? delay[0] : 0, hi = lo;
  for (uint64_t k = 0; k < nnz; ++k) {
    lo = delay[k] < lo ? delay[k] : lo;
    hi = delay[k] > hi ? delay[k] : hi;
  }
  int rc = nestcl_block_synapses_begin(b, n_rows, row_ptr, lo, hi);
  if (!rc && n_rows)
    rc = nestcl_block_synapses_fill(b, 0, nnz, target, value, delay);
  if (!rc && n_rows)
    rc = nestcl_block_synapses_end(b);
  if (rc && n_rows)
    nestcl_block_synapses_begin(b, 0, NULL, 0, 0);
  return rc;
}

/* Appends n (row, lag) spikes to a pending list with room for them, checking each. */
static int pend_add(const nestcl_block *b, uint32_t *pend, uint32_t *n_pend, uint32_t n_rows, const uint32_t *rows,
                    const uint32_t *lags, uint32_t n, const char *what)
{
  for (uint32_t k = 0; k < n; ++k) {
    if (rows[k] >= n_rows || lags[k] >= b->c.min_delay_steps) {
      return nestcl_set_error(NESTCL_EINVAL, "block %s: %s of row %u at lag %u, but %u rows and %u lags",
                              b->c.model->name, what, rows[k], lags[k], n_rows, b->c.min_delay_steps);
    }
    pend[2 * (size_t)(*n_pend + k)] = rows[k];
    pend[2 * (size_t)(*n_pend + k) + 1] = lags[k];
  }
  *n_pend += n;
  return 0;
}

int nestcl_block_deliver(nestcl_block *b, int64_t emit_origin, const uint32_t *rows, const uint32_t *lags, uint32_t n)
{
  if (n == 0) {
    return 0;
  }
  if (b->c.on_host) {
    return host_refuses(b, "synapses");
  }
  if (b->n_pend && emit_origin != b->pend_origin) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: spikes of two slices (origins %lld and %lld) before one update",
                            b->c.model->name, (long long)b->pend_origin, (long long)emit_origin);
  }
  if (b->n_pend + (uint64_t)n > b->pend_cap) {
    uint64_t cap = b->pend_cap ? b->pend_cap : 1024;
    while (cap < b->n_pend + (uint64_t)n)
      cap *= 2;
    if (cap > UINT32_MAX / 2) {
      return nestcl_set_error(NESTCL_EINVAL, "block %s: too many spikes in one slice", b->c.model->name);
    }
    uint32_t *t = realloc(b->pend, (size_t)cap * 2 * sizeof *t);
    if (!t) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
    b->pend = t;
    b->pend_cap = (uint32_t)cap;
  }
  int rc = pend_add(b, b->pend, &b->n_pend, b->n_rows, rows, lags, n, "spike");
  if (!rc) {
    b->pend_origin = emit_origin;
  }
  return rc;
}

int nestcl_block_add_poisson(nestcl_block *b, double rate_hz, uint32_t n, const uint32_t *target, const double *value,
                             const uint16_t *delay, const uint32_t *salt)
{
  nestcl_poisson_param pp;
  if (!(rate_hz >= 0.0) || nestcl_poisson_setup(rate_hz * b->c.resolution_ms * 1e-3, &pp) != 0) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: poisson_generator rate %g Hz is out of range", b->c.model->name,
                            rate_hz);
  }
  if (n == 0 || b->c.n == 0) {
    return 0;
  }
  if (b->c.on_host) {
    return host_refuses(b, "Poisson drives");
  }
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t ch = target[k] >> NESTCL_TARGET_INDEX_BITS, i = target[k] & NESTCL_TARGET_INDEX_MASK;
    if (ch >= b->n_channels || i >= b->c.n || delay[k] < 1 || delay[k] >= b->c.ring_slots || salt[k] >= (1u << 24)) {
      return nestcl_set_error(NESTCL_EINVAL,
                              "block %s: Poisson entry %u (channel %u, neuron %u, delay %u, salt %u) "
                              "does not fit the block",
                              b->c.model->name, k, ch, i, (unsigned)delay[k], salt[k]);
    }
  }
  block_poisson *t = realloc(b->poisson, ((size_t)b->n_poisson + 1) * sizeof *t);
  if (!t) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  b->poisson = t;
  block_poisson *d = &b->poisson[b->n_poisson];
  memset(d, 0, sizeof *d);
  b->n_poisson++;
  d->n = n;
  d->chunks = pp.chunks;
  int rc = nestcl_poisson_cdf(pp.mu, pp.exp_neg_mu, &d->cdf, &d->cdf_len, &d->kstop);
  int32_t *dl = malloc((size_t)n * sizeof *dl);
  int64_t *val = malloc((size_t)n * sizeof *val);
  uint64_t *id = malloc((size_t)n * sizeof *id);
  if (!rc && (!dl || !val || !id)) {
    rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  for (uint32_t k = 0; !rc && k < n; ++k) {
    const uint64_t i = target[k] & NESTCL_TARGET_INDEX_MASK;
    dl[k] = delay[k];
    val[k] = nestcl_fixed_from_double(value[k]);
    id[k] = (b->c.id_first + i * (b->c.id_stride ? b->c.id_stride : 1)) | ((uint64_t)salt[k] << 40);
  }
  const cl_mem_flags ro = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR;
  if (!rc)
    rc =
      nestcl_buffer_alloc(b->dev, NESTCL_MEM_OTHER, "poisson targets", (size_t)n * 4, ro, (void *)target, &d->b_target);
  if (!rc)
    rc = nestcl_buffer_alloc(b->dev, NESTCL_MEM_OTHER, "poisson delays", (size_t)n * 4, ro, dl, &d->b_delay);
  if (!rc)
    rc = nestcl_buffer_alloc(b->dev, NESTCL_MEM_OTHER, "poisson values", (size_t)n * 8, ro, val, &d->b_value);
  if (!rc)
    rc = nestcl_buffer_alloc(b->dev, NESTCL_MEM_OTHER, "poisson ids", (size_t)n * 8, ro, id, &d->b_id);
  if (!rc)
    rc = nestcl_buffer_alloc(b->dev, NESTCL_MEM_OTHER, "poisson table", (size_t)d->cdf_len * 8, ro, d->cdf, &d->b_cdf);
  free(dl);
  free(val);
  free(id);
  return rc;
}

/* The ring's bytes (its device buffer may be a part of a set's, which does not count them: block_set.c). */
static size_t block_ring_bytes(const nestcl_block *b)
{
  return (size_t)b->c.ring_slots * b->n_channels * b->c.n * 8;
}

static int ring_copy_alloc(nestcl_block *b)
{
  if (!b->ring_copy) {
    b->ring_copy = calloc(block_ring_bytes(b) / 8 + 1, 8);
    if (!b->ring_copy) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
  }
  return 0;
}

int nestcl_block_ring_save(nestcl_block *b)
{
  if (b->c.n == 0 || b->c.on_host || block_ring_bytes(b) == 0) { /* a host block's ring is the copy */
    return 0;
  }
  int rc = ring_copy_alloc(b);
  if (rc) {
    return rc;
  }
  cl_command_queue q = nestcl_device_queue(b->dev, b->c.queue);
  cl_int err = clEnqueueReadBuffer(q, b->b_ring.mem, CL_TRUE, 0, block_ring_bytes(b), b->ring_copy, 0, NULL, NULL);
  return err == CL_SUCCESS ? 0 : cl_fail(err, "reading the ring back");
}

int64_t nestcl_block_ring_value(const nestcl_block *b, int64_t step, uint32_t ch, uint32_t i)
{
  if (!b->ring_copy || ch >= b->n_channels || i >= b->c.n) {
    return 0;
  }
  return b->ring_copy[nestcl_ring_index(b->n_channels, b->c.n, nestcl_ring_slot(step, 0, b->c.ring_slots), ch, i)];
}

void nestcl_block_ring_add(nestcl_block *b, int64_t step, uint32_t ch, uint32_t i, int64_t value)
{
  if (ch < b->n_channels && i < b->c.n && ring_copy_alloc(b) == 0) {
    int64_t *p =
      &b->ring_copy[nestcl_ring_index(b->n_channels, b->c.n, nestcl_ring_slot(step, 0, b->c.ring_slots), ch, i)];
    *p = nestcl_fixed_sum(*p, value);
  }
}

int nestcl_block_ring_restore(nestcl_block *b)
{
  if (!b->ring_copy || b->c.on_host || block_ring_bytes(b) == 0) {
    return 0;
  }
  cl_command_queue q = nestcl_device_queue(b->dev, b->c.queue);
  cl_int err = clEnqueueWriteBuffer(q, b->b_ring.mem, CL_TRUE, 0, block_ring_bytes(b), b->ring_copy, 0, NULL, NULL);
  return err == CL_SUCCESS ? 0 : cl_fail(err, "writing the ring");
}

uint32_t nestcl_block_ring_slots(const nestcl_block *b)
{
  return b->c.ring_slots;
}

/* The pending spikes' delivery into the ring, ahead of the update on the block's queue. */
static cl_int enqueue_delivery(nestcl_block *b, cl_command_queue q)
{
  if (b->n_pend == 0 || b->nnz == 0) {
    return CL_SUCCESS;
  }
  cl_int err = CL_SUCCESS;
  const size_t bytes = (size_t)b->n_pend * 8;
  if (b->b_pend.bytes < bytes) {
    nestcl_buffer_free(b->dev, &b->b_pend);
    size_t cap = (size_t)b->pend_cap * 8;
    if (nestcl_buffer_alloc(b->dev, NESTCL_MEM_OTHER, "received spikes", cap, CL_MEM_READ_ONLY, NULL, &b->b_pend)) {
      return CL_OUT_OF_RESOURCES;
    }
  }
  cl_uint ns = b->n_pend, hom = b->delay_hom, slots = b->c.ring_slots, n = b->c.n, nch = b->n_channels;
  cl_long org = b->pend_origin;
  err = nestcl_enq_write(&b->enq, q, b->b_pend.mem, CL_FALSE, 0, bytes, b->pend, 0, NULL, NULL);
  err |= clSetKernelArg(b->k_deliver, DELIVER_SPIKES, sizeof(cl_mem), &b->b_pend.mem);
  err |= clSetKernelArg(b->k_deliver, DELIVER_N_SPIKES, sizeof ns, &ns);
  err |= clSetKernelArg(b->k_deliver, DELIVER_ORIGIN, sizeof org, &org);
  err |= clSetKernelArg(b->k_deliver, DELIVER_ROW_PTR, sizeof(cl_mem), &b->b_row_ptr.mem);
  err |= clSetKernelArg(b->k_deliver, DELIVER_TARGET, sizeof(cl_mem), &b->b_syn_target.mem);
  err |= clSetKernelArg(b->k_deliver, DELIVER_WEIGHT, sizeof(cl_mem), &b->b_syn_value.mem);
  err |= clSetKernelArg(b->k_deliver, DELIVER_DELAY, sizeof(cl_mem), &b->b_syn_delay.mem);
  err |= clSetKernelArg(b->k_deliver, DELIVER_DELAY_HOM, sizeof hom, &hom);
  err |= clSetKernelArg(b->k_deliver, DELIVER_RING, sizeof(cl_mem), &b->b_ring.mem);
  err |= clSetKernelArg(b->k_deliver, DELIVER_RING_SLOTS, sizeof slots, &slots);
  err |= clSetKernelArg(b->k_deliver, DELIVER_N, sizeof n, &n);
  err |= clSetKernelArg(b->k_deliver, DELIVER_N_CHANNELS, sizeof nch, &nch);
  if (err != CL_SUCCESS) {
    return err;
  }
  size_t g = b->deliver_width;
  if (b->max_row < g) {
    g = b->max_row ? (size_t)b->max_row : 1u;
  }
  size_t gsize[2] = {g, ns}, lsize[2] = {g, 1};
  return nestcl_enq_launch(&b->enq, q, b->k_deliver, 2, gsize, lsize, 0, NULL, NULL);
}

/* ---- translated synapses and the spike history -------------------------- */

static int64_t block_tics_per_step(const nestcl_block *b)
{
  return llround(b->c.resolution_ms * 1000.0);
}

static double block_ms_per_step(const nestcl_block *b)
{
  return (double)block_tics_per_step(b) / 1000.0;
}

int nestcl_block_history(nestcl_block *b, double tau_minus, double tau_minus_triplet, uint32_t max_entries)
{
  if (b->c.on_host) {
    return host_refuses(b, "spike history");
  }
  if (b->hist.cap) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: history set up twice", b->c.model->name);
  }
  if (!(tau_minus > 0.0) || !(tau_minus_triplet > 0.0) || max_entries == 0) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: history with tau_minus %g, tau_minus_triplet %g, %u entries",
                            b->c.model->name, tau_minus, tau_minus_triplet, max_entries);
  }
  uint32_t cap = max_entries < 64 ? max_entries : 64;
  int fused = nestcl_libm_exp_fused() != 0;
  return eng_hist_init(&b->hist, b->c.n, cap, max_entries, tau_minus, tau_minus_triplet, NULL, NULL, b->spike_cap,
                       block_tics_per_step(b), (double)b->c.min_delay_steps * block_ms_per_step(b), fused,
                       b->c.id_first, b->c.model->name);
}

int nestcl_block_history_set(nestcl_block *b, uint32_t i, const nestcl_history_state *st,
                             const nestcl_history_entry *entries)
{
  eng_history *h = &b->hist;
  if (!h->cap || h->n == 0 || b->hist_on_device || i >= h->n) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: history_set of neuron %u (history %s)", b->c.model->name, i,
                            !h->cap ? "not set up" : (b->hist_on_device ? "already on the device" : "has fewer"));
  }
  if (st->n_entries > h->max_cap) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: neuron %u has %u history entries, more than %u", b->c.model->name,
                            i, st->n_entries, h->max_cap);
  }
  uint32_t cap = h->cap;
  while (cap < st->n_entries) {
    cap *= 2;
  }
  int rc = eng_hist_reserve(h, cap < h->max_cap ? cap : h->max_cap);
  if (rc) {
    return rc;
  }
  nestcl_history v = eng_hist_view(h);
  v.head[i] = 0;
  v.len[i] = st->n_entries;
  for (uint32_t k = 0; k < st->n_entries; ++k) {
    nestcl_u64 at = nestcl_hist_slot(&v, i, k);
    v.t[at] = entries[k].t;
    v.kminus[at] = entries[k].kminus;
    v.kminus_triplet[at] = entries[k].kminus_triplet;
    v.access[at] = entries[k].access;
  }
  v.Kminus[i] = st->Kminus;
  v.Kminus_triplet[i] = st->Kminus_triplet;
  v.last_spike[i] = st->last_spike;
  v.n_incoming[i] = st->n_incoming;
  v.max_delay[i] = st->max_delay_ms;
  return 0;
}

static int hist_to_device(nestcl_block *b)
{
  if (!b->hist.cap || b->hist_on_device || b->c.n == 0) {
    return 0;
  }
  int rc = eng_hist_upload(&b->hist, b->dev, b->program);
  b->hist_on_device = rc == 0;
  return rc;
}

int nestcl_block_history_read(nestcl_block *b)
{
  if (!b) {
    return NESTCL_EINVAL; /* no block (its creation was refused): no history */
  }
  if (!b->hist.cap) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: no history", b->c.model->name);
  }
  return b->hist_on_device ? eng_hist_download(&b->hist, b->dev, b->c.queue) : 0;
}

int nestcl_block_history_get(const nestcl_block *b, uint32_t i, nestcl_history_state *st, nestcl_history_entry *entries)
{
  if (!b->hist.cap || i >= b->hist.n || !b->hist.a[ENG_H_LEN]) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: no history of neuron %u to get (read it first)", b->c.model->name,
                            i);
  }
  nestcl_history v = eng_hist_view((eng_history *)&b->hist);
  st->Kminus = v.Kminus[i];
  st->Kminus_triplet = v.Kminus_triplet[i];
  st->last_spike = v.last_spike[i];
  st->max_delay_ms = v.max_delay[i];
  st->n_incoming = v.n_incoming[i];
  st->n_entries = v.len[i];
  for (uint32_t k = 0; entries && k < v.len[i]; ++k) {
    nestcl_u64 at = nestcl_hist_slot(&v, i, k);
    entries[k].t = v.t[at];
    entries[k].kminus = v.kminus[at];
    entries[k].kminus_triplet = v.kminus_triplet[at];
    entries[k].access = v.access[at];
  }
  return 0;
}

/* A field's bytes copied or compared: 8 and 4 bytes inline, so that a loop over millions of synapses calls no libc. */
static inline void copy_field(unsigned char *to, const unsigned char *from, size_t n)
{
  if (n == 8)
    memcpy(to, from, 8);
  else if (n == 4)
    memcpy(to, from, 4);
  else
    memcpy(to, from, n);
}

static inline int same_field(const unsigned char *a, const unsigned char *b, size_t n)
{
  if (n == 8)
    return memcmp(a, b, 8) == 0;
  if (n == 4)
    return memcmp(a, b, 4) == 0;
  return memcmp(a, b, n) == 0;
}

/*
 * Per-source fields of rows [r0, r1) must agree within each row, and the
 * parameters with the set's template; syn holds synapses row_ptr[r0] ... on.
 */
static int plastic_check(const block_plastic *p, uint32_t r0, uint32_t r1, const unsigned char *syn)
{
  const nestcl_synapse_model *sm = p->sm;
  const uint64_t base = p->row_host[r0];
  /* The fields to check, with their offsets and sizes looked up once (every synapse is checked): per-source
     ones against the row's first synapse, parameters against the template. */
  int n = 0, which[2 * ENG_SYN_FIELDS_MAX], per_source[2 * ENG_SYN_FIELDS_MAX];
  size_t at[2 * ENG_SYN_FIELDS_MAX], bytes[2 * ENG_SYN_FIELDS_MAX];
  for (int f = 0; f < sm->n_syn_fields && n < 2 * ENG_SYN_FIELDS_MAX; ++f) {
    const nestcl_syn_field *sf = &sm->fields[f];
    if (sf->role == NESTCL_SYN_SOURCE || sf->role == NESTCL_SYN_PARAMETER) {
      which[n] = f;
      per_source[n] = sf->role == NESTCL_SYN_SOURCE;
      at[n] = sf->offset;
      bytes[n++] = eng_syn_field_size(sf);
    }
  }
  /* The first synapse that differs (rows checked in parallel, one at a time: rows may be few and long; each
     finds its own, the least is reported). */
  uint64_t bad = UINT64_MAX;
  int bad_f = -1;
#pragma omp parallel for schedule(dynamic, 1)
  for (uint32_t r = r0; r < r1; ++r) {
    const unsigned char *first = syn + (p->row_host[r] - base) * sm->syn_size;
    for (uint64_t k = p->row_host[r]; k < p->row_host[r + 1]; ++k) {
      const unsigned char *a = syn + (k - base) * sm->syn_size;
      int f = -1;
      for (int j = 0; j < n && f < 0; ++j) {
        const unsigned char *ref = per_source[j] ? first : p->tmpl;
        f = same_field(a + at[j], ref + at[j], bytes[j]) ? -1 : which[j];
      }
      if (f >= 0) {
#pragma omp critical(nestcl_plastic_check)
        if (k < bad) {
          bad = k;
          bad_f = f;
        }
        break; /* the row's first difference is enough */
      }
    }
  }
  if (bad_f < 0) {
    return 0;
  }
  const nestcl_syn_field *sf = &sm->fields[bad_f];
  return nestcl_set_error(NESTCL_EINVAL, "%s: synapse %llu differs from %s in %s, which the device keeps %s", sm->name,
                          (unsigned long long)bad, sf->role == NESTCL_SYN_SOURCE ? "its row's first" : "synapse 0",
                          sf->member, sf->role == NESTCL_SYN_SOURCE ? "once per source" : "once for all");
}

int nestcl_block_plastic_routable(const nestcl_block *b, long rport)
{
  int pos = -1, neg = -1, zero = -1;
  return eng_plastic_route(b->c.model, b->c.K, b->n_channels, rport, &pos, &neg, &zero) == 0;
}

/* Synapses [first, first + n) target the block's neurons with delays in the set's range (checked in parallel:
   every synapse of the export passes here; the first that does not is reported). */
static int plastic_targets(const nestcl_block *b, const block_plastic *p, uint64_t first, uint64_t n,
                           const uint32_t *target, const uint16_t *delay)
{
  uint64_t bad = UINT64_MAX;
#pragma omp parallel for reduction(min : bad) schedule(static)
  for (uint64_t k = 0; k < n; ++k) {
    if (target[k] >= b->c.n || delay[k] < p->delay_min || delay[k] > p->delay_max) {
      bad = k < bad ? k : bad;
    }
  }
  if (bad == UINT64_MAX) {
    return 0;
  }
  return nestcl_set_error(
    NESTCL_EINVAL, "block %s: plastic synapse %llu to %u with delay %u (%u neurons, delays [%u, %u])", b->c.model->name,
    (unsigned long long)(first + bad), target[bad], delay[bad], b->c.n, (unsigned)p->delay_min, (unsigned)p->delay_max);
}

/* Each per-synapse (state) or per-source (src) field of the layout: its bytes and its offset in the struct. */
typedef struct plastic_fields {
  int n;
  size_t bytes[ENG_SYN_FIELDS_MAX], at[ENG_SYN_FIELDS_MAX];
} plastic_fields;

static plastic_fields fields_of(const block_plastic *p, int src)
{
  plastic_fields f = {src ? p->lay.n_src : p->lay.n_state, {0}, {0}};
  for (int j = 0; j < f.n; ++j) {
    const nestcl_syn_field *sf = &p->sm->fields[src ? p->lay.src_f[j] : p->lay.state_f[j]];
    f.bytes[j] = eng_syn_field_size(sf);
    f.at[j] = sf->offset;
  }
  return f;
}

/*
 * Between the structs of rows [r0, r1) (syn, from synapse row_ptr[r0]) and
 * the device's layout of those rows, mapped (st[j]: per-synapse field j over
 * the rows' synapses, sr[j]: per-source field j over the rows): to_layout
 * packs, else unpacks (template first, so parameters read back as they were
 * set). Rows in parallel: each writes its own synapses and per-source entries.
 */
static void plastic_convert(const block_plastic *p, uint32_t r0, uint32_t r1, unsigned char *syn,
                            unsigned char *const *st, unsigned char *const *sr, int to_layout)
{
  const size_t size = p->sm->syn_size;
  const uint64_t base = p->row_host[r0];
  const plastic_fields fs = fields_of(p, 0), fr = fields_of(p, 1);
#pragma omp parallel for schedule(dynamic, 1)
  for (uint32_t r = r0; r < r1; ++r) {
    for (uint64_t k = p->row_host[r]; k < p->row_host[r + 1]; ++k) {
      unsigned char *self = syn + (k - base) * size;
      if (!to_layout) {
        memcpy(self, p->tmpl, size);
        for (int j = 0; j < fr.n; ++j)
          copy_field(self + fr.at[j], sr[j] + (r - r0) * fr.bytes[j], fr.bytes[j]);
      }
      for (int j = 0; j < fs.n; ++j) {
        unsigned char *dev = st[j] + (k - base) * fs.bytes[j];
        to_layout ? copy_field(dev, self + fs.at[j], fs.bytes[j]) : copy_field(self + fs.at[j], dev, fs.bytes[j]);
      }
    }
    if (to_layout) {
      /* A row without synapses keeps the template's per-source fields. */
      const unsigned char *first = p->row_host[r + 1] > p->row_host[r] ? syn + (p->row_host[r] - base) * size : p->tmpl;
      for (int j = 0; j < fr.n; ++j)
        copy_field(sr[j] + (r - r0) * fr.bytes[j], first + fr.at[j], fr.bytes[j]);
    }
  }
}

/*
 * The host's view of rows [r0, r1) of a set's state and per-source state:
 * st[j] (per-synapse field j over the rows' synapses) and sr[j] (per-source
 * field j over the rows). Where the device's memory is the host's, the
 * fields' regions are mapped (for writing: their old contents dropped), no
 * copy made. Elsewhere a write goes through host memory of its own (a map
 * would be a copy anyway), one piece per buffer when the rows are all of
 * them: Oclgrind keeps initialised only a buffer's last region written from
 * the host.
 */
typedef struct plastic_view {
  unsigned char *st[ENG_SYN_FIELDS_MAX], *sr[ENG_SYN_FIELDS_MAX];
  int n, staged; /* regions; whether they are host copies written at the end */
  cl_mem mem[2 * ENG_SYN_FIELDS_MAX];
  size_t at[2 * ENG_SYN_FIELDS_MAX], size[2 * ENG_SYN_FIELDS_MAX];
  unsigned char *ptr[2 * ENG_SYN_FIELDS_MAX];
} plastic_view;

/* v's regions: one per field, or (staged, all rows) one per buffer. */
static void plastic_regions(const block_plastic *p, uint32_t r0, uint32_t r1, plastic_view *v)
{
  const uint64_t base = p->row_host[r0], m = p->row_host[r1] - base, nr = r1 - r0;
  const plastic_fields fs = fields_of(p, 0), fr = fields_of(p, 1);
  const int whole = v->staged && r0 == 0 && r1 == p->n_rows;
  v->n = 0;
  for (int j = 0; j < fs.n && m && !(whole && j); ++j) {
    v->mem[v->n] = p->b_state.mem;
    v->at[v->n] = whole ? 0 : p->lay.state_off[j] * p->nnz + base * fs.bytes[j];
    v->size[v->n++] = whole ? p->nnz * p->lay.state_bytes : m * fs.bytes[j];
  }
  for (int j = 0; j < fr.n && nr && !(whole && j); ++j) {
    v->mem[v->n] = p->b_src_state.mem;
    v->at[v->n] = whole ? 0 : p->lay.src_off[j] * p->n_rows + (size_t)r0 * fr.bytes[j];
    v->size[v->n++] = whole ? (size_t)p->n_rows * p->lay.src_bytes : nr * fr.bytes[j];
  }
}

/* The fields' pointers into v's regions. */
static void plastic_fields_at(const block_plastic *p, uint32_t r0, uint32_t r1, plastic_view *v)
{
  const uint64_t m = p->row_host[r1] - p->row_host[r0];
  const plastic_fields fs = fields_of(p, 0), fr = fields_of(p, 1);
  const int whole = v->staged && r0 == 0 && r1 == p->n_rows, ns = m ? (whole ? 1 : fs.n) : 0;
  for (int j = 0; j < fs.n && m; ++j)
    v->st[j] = whole ? v->ptr[0] + p->lay.state_off[j] * p->nnz : v->ptr[j];
  for (int j = 0; j < fr.n && r1 > r0; ++j)
    v->sr[j] = whole ? v->ptr[ns] + p->lay.src_off[j] * p->n_rows : v->ptr[ns + j];
}

/* Opens v over rows [r0, r1) (write: for writing), or on failure leaves nothing open. */
static int plastic_open(nestcl_block *b, block_plastic *p, uint32_t r0, uint32_t r1, int write, plastic_view *v)
{
  cl_command_queue q = nestcl_device_queue(b->dev, b->c.queue);
  memset(v, 0, sizeof *v);
  v->staged = write && !nestcl_device_get_info(b->dev)->host_unified;
  plastic_regions(p, r0, r1, v);
  const cl_map_flags how = write ? CL_MAP_WRITE_INVALIDATE_REGION : CL_MAP_READ;
  cl_int err = CL_SUCCESS;
  for (int k = 0; k < v->n && err == CL_SUCCESS; ++k) {
    if (v->staged) {
      v->ptr[k] = malloc(v->size[k]);
      err = v->ptr[k] ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
    } else {
      v->ptr[k] = clEnqueueMapBuffer(q, v->mem[k], CL_TRUE, how, v->at[k], v->size[k], 0, NULL, NULL, &err);
    }
  }
  for (int k = 0; k < v->n && err != CL_SUCCESS; ++k) {
    if (v->ptr[k] && v->staged)
      free(v->ptr[k]);
    else if (v->ptr[k])
      (void)clEnqueueUnmapMemObject(q, v->mem[k], v->ptr[k], 0, NULL, NULL);
    v->ptr[k] = NULL;
  }
  if (err != CL_SUCCESS) {
    (void)clFinish(q);
    return cl_fail(err, "mapping plastic synapses");
  }
  plastic_fields_at(p, r0, r1, v);
  return 0;
}

/* Closes v: staged copies written, maps released; the device has the data when this returns. */
static int plastic_close(nestcl_block *b, plastic_view *v)
{
  cl_command_queue q = nestcl_device_queue(b->dev, b->c.queue);
  cl_int err = CL_SUCCESS, e;
  for (int k = 0; k < v->n; ++k) {
    if (v->staged) {
      e = clEnqueueWriteBuffer(q, v->mem[k], CL_TRUE, v->at[k], v->size[k], v->ptr[k], 0, NULL, NULL);
      free(v->ptr[k]);
    } else {
      e = clEnqueueUnmapMemObject(q, v->mem[k], v->ptr[k], 0, NULL, NULL);
    }
    err = err == CL_SUCCESS ? e : err;
  }
  if (err == CL_SUCCESS)
    err = clFinish(q);
  return err == CL_SUCCESS ? 0 : cl_fail(err, "writing plastic synapses");
}

/* Rows [r0, r1) between syn and the device, through the view of their layout (to_device: write). */
static int plastic_move(nestcl_block *b, block_plastic *p, uint32_t r0, uint32_t r1, unsigned char *syn, int to_device)
{
  plastic_view v;
  int rc = plastic_open(b, p, r0, r1, to_device, &v);
  if (rc) {
    return rc;
  }
  plastic_convert(p, r0, r1, syn, v.st, v.sr, to_device);
  return plastic_close(b, &v);
}

/* The set's device buffers, empty but for the rows, the template and the common properties. */
static int plastic_alloc(nestcl_device *dev, block_plastic *p, const uint64_t *row_ptr, const void *cp)
{
  const nestcl_synapse_model *sm = p->sm;
  const int hom = p->delay_hom != NESTCL_DELAY_PER_SYNAPSE;
  size_t sb = p->nnz * p->lay.state_bytes, rb = (size_t)p->n_rows * p->lay.src_bytes;
  int rc = nestcl_buffer_alloc(dev, NESTCL_MEM_SYNAPSES, "plastic row pointers", ((size_t)p->n_rows + 1) * 8,
                               CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (void *)row_ptr, &p->b_row);
  if (!rc)
    rc = nestcl_buffer_alloc(dev, NESTCL_MEM_SYNAPSES, "plastic targets", p->nnz ? p->nnz * 4 : 4, CL_MEM_READ_ONLY,
                             NULL, &p->b_target);
  if (!rc)
    rc = nestcl_buffer_alloc(dev, NESTCL_MEM_SYNAPSES, "plastic delays", hom || !p->nnz ? 2 : p->nnz * 2,
                             CL_MEM_READ_ONLY, NULL, &p->b_delay);
  if (!rc)
    rc =
      nestcl_buffer_alloc(dev, NESTCL_MEM_SYNAPSES, "plastic state", sb ? sb : 8, CL_MEM_READ_WRITE, NULL, &p->b_state);
  if (!rc)
    rc = nestcl_buffer_alloc(dev, NESTCL_MEM_SYNAPSES, "per-source state", rb ? rb : 8, CL_MEM_READ_WRITE, NULL,
                             &p->b_src_state);
  if (!rc)
    rc = nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "synapse template", sm->syn_size,
                             CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, p->tmpl, &p->b_tmpl);
  if (!rc)
    rc = nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "common properties", sm->cp_size ? sm->cp_size : 8,
                             CL_MEM_READ_ONLY | (sm->cp_size ? CL_MEM_COPY_HOST_PTR : 0),
                             sm->cp_size ? (void *)cp : NULL, &p->b_cp);
  return rc;
}

/* The set's program and kernel, with every argument that stays the same from slice to slice. */
static int plastic_kernel(nestcl_block *b, block_plastic *p, long rport, const int ch[3])
{
  const nestcl_synapse_model *sm = p->sm;
  cl_int err = CL_SUCCESS;
  int rc = eng_plastic_shape_get(b->dev, &p->shape);
  if (!rc)
    rc = eng_plastic_program(b->dev, sm, &p->lay, b->contiguous, &p->shape, &p->prog);
  if (!rc) {
    p->k = clCreateKernel(p->prog, "nestcl_plastic", &err);
    rc = err == CL_SUCCESS ? 0 : cl_fail(err, "clCreateKernel(nestcl_plastic)");
  }
  if (!rc)
    rc = eng_plastic_width(b->dev, p->k, &p->shape, b->contiguous ? 1u : 256u, &p->width);
  if (!rc)
    rc = eng_plastic_row_done_alloc(b->dev, p->n_rows, &p->b_done);
  if (rc) {
    return rc;
  }
  eng_plastic_fixed fx = {&p->b_tmpl,
                          &p->b_cp,
                          &b->b_ring,
                          &p->b_tmpl,
                          p->delay_hom,
                          b->c.ring_slots,
                          b->c.n,
                          b->n_channels,
                          (uint32_t)ch[0],
                          (uint32_t)ch[1],
                          (uint32_t)ch[2],
                          rport,
                          block_tics_per_step(b),
                          block_ms_per_step(b),
                          sm->uses_history ? b->hist.tau_minus_inv : 0.0,
                          b->hist.cap ? b->hist.fused : nestcl_libm_exp_fused() != 0};
  err = eng_plastic_fixed_args(p->k, &fx);
  err |= eng_plastic_rows_args(p->k, &p->b_tmpl, 0, p->n_rows, &p->b_row, &p->b_target, &p->b_delay, &p->b_state,
                               p->nnz, &p->b_src_state, &p->b_done);
  if (sm->uses_history) {
    err |= eng_hist_args(p->k, PK_HIST, &b->hist);
    /* It follows the history when it grows (plastic_dev.h). */
    if (err == CL_SUCCESS && eng_hist_add_user(&b->hist, p->k))
      return NESTCL_ENOMEM;
  } else {
    for (cl_uint a = 0; a < ENG_H_ARRAYS; ++a) {
      err |= clSetKernelArg(p->k, PK_HIST + a, sizeof(cl_mem), &p->b_tmpl.mem);
    }
    cl_uint zero = 0;
    err |= clSetKernelArg(p->k, PK_HIST + ENG_H_ARRAYS, sizeof zero, &zero);
  }
  return err == CL_SUCCESS ? 0 : cl_fail(err, "clSetKernelArg(nestcl_plastic)");
}

/* The set's template: tmpl, or the model's defaults. */
static int plastic_template(block_plastic *p, const void *tmpl)
{
  const nestcl_synapse_model *sm = p->sm;
  if (tmpl) {
    memcpy(p->tmpl, tmpl, sm->syn_size);
    return 0;
  }
  unsigned char *scratch = malloc(sm->cp_size + 8);
  if (!scratch) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  sm->set_defaults(p->tmpl, scratch);
  free(scratch);
  return 0;
}

/* What nestcl_block_plastic_begin checks before a set is added. */
static int plastic_begin_check(const nestcl_block *b, const nestcl_synapse_model *sm, uint32_t n_rows,
                               const uint64_t *row_ptr, uint16_t delay_min, uint16_t delay_max)
{
  if (b->c.on_host) {
    return host_refuses(b, "plastic synapses");
  }
  if (!b->program) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: plastic synapses before the first upload", b->c.model->name);
  }
  if (!sm || !sm->device_source || !row_ptr) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: plastic synapses without a translated model or rows",
                            b->c.model->name);
  }
  if (sm->uses_history && !b->hist.cap) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: %s reads the spike history; set it up first", b->c.model->name,
                            sm->name);
  }
  for (uint32_t r = 0; r < n_rows; ++r) {
    if (row_ptr[r + 1] < row_ptr[r]) {
      return nestcl_set_error(NESTCL_EINVAL, "block %s: plastic rows out of order at row %u", b->c.model->name, r);
    }
  }
  if (row_ptr[n_rows] && (delay_min < 1 || delay_min > delay_max || delay_max >= b->c.ring_slots)) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: plastic delays [%u, %u] outside [1, %u]", b->c.model->name,
                            (unsigned)delay_min, (unsigned)delay_max, b->c.ring_slots - 1);
  }
  return 0;
}

int nestcl_block_plastic_begin(nestcl_block *b, const nestcl_synapse_model *sm, const void *cp, long rport,
                               uint32_t n_rows, const uint64_t *row_ptr, uint16_t delay_min, uint16_t delay_max,
                               const void *tmpl, int *set)
{
  int rc = plastic_begin_check(b, sm, n_rows, row_ptr, delay_min, delay_max);
  block_plastic *np = rc ? NULL : realloc(b->plastic, (size_t)(b->n_plastic + 1) * sizeof *np);
  if (!rc && !np) {
    rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  if (rc) {
    return rc;
  }
  b->plastic = np;
  block_plastic *p = &b->plastic[b->n_plastic];
  memset(p, 0, sizeof *p);
  p->sm = sm;
  p->n_rows = n_rows;
  p->nnz = row_ptr[n_rows];
  p->rport = rport;
  p->delay_min = p->nnz ? delay_min : (uint16_t)b->c.min_delay_steps;
  p->delay_max = p->nnz ? delay_max : p->delay_min;
  p->delay_hom = p->delay_min == p->delay_max ? p->delay_min : NESTCL_DELAY_PER_SYNAPSE;
  for (uint32_t r = 0; r < n_rows; ++r) {
    p->max_row = row_ptr[r + 1] - row_ptr[r] > p->max_row ? (uint32_t)(row_ptr[r + 1] - row_ptr[r]) : p->max_row;
  }
  rc = eng_syn_layout_init(sm, &p->lay);
  if (!rc)
    rc = eng_plastic_route(b->c.model, b->c.K, b->n_channels, rport, &p->ch[0], &p->ch[1], &p->ch[2]);
  p->tmpl = malloc(sm->syn_size + 1);
  p->row_host = malloc(((size_t)n_rows + 1) * 8);
  if (!rc && (!p->tmpl || !p->row_host))
    rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  if (!rc) {
    memcpy(p->row_host, row_ptr, ((size_t)n_rows + 1) * 8);
    rc = plastic_template(p, tmpl);
  }
  if (!rc)
    rc = plastic_alloc(b->dev, p, row_ptr, cp);
  b->n_plastic++; /* also on failure: destroy frees what was made */
  if (!rc)
    *set = b->n_plastic - 1;
  return rc;
}

/* Set s, if there is one and its synapses are not yet all written (fill) or are (any other use). */
static block_plastic *plastic_set(nestcl_block *b, int s, int filling)
{
  if (s < 0 || s >= b->n_plastic || (b->plastic[s].k != NULL) == filling) {
    (void)nestcl_set_error(NESTCL_EINVAL, "block %s: no plastic set %d %s", b->c.model->name, s,
                           filling ? "being filled" : "complete");
    return NULL;
  }
  return &b->plastic[s];
}

int nestcl_block_plastic_fill(nestcl_block *b, int s, uint32_t first_row, uint32_t n_rows, const uint32_t *target,
                              const uint16_t *delay, const void *syn)
{
  block_plastic *p = plastic_set(b, s, 1);
  if (!p) {
    return NESTCL_EINVAL;
  }
  if (first_row != p->rows_filled || n_rows > p->n_rows - first_row) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: plastic rows [%u, %u) of %u, after %u written", b->c.model->name,
                            first_row, first_row + n_rows, p->n_rows, p->rows_filled);
  }
  const uint32_t r1 = first_row + n_rows;
  const uint64_t first = p->row_host[first_row], m = p->row_host[r1] - first;
  int rc = plastic_targets(b, p, first, m, target, delay);
  if (!rc)
    rc = plastic_check(p, first_row, r1, syn);
  if (!rc)
    rc = plastic_move(b, p, first_row, r1, (unsigned char *)syn, 1);
  if (!rc)
    rc = write_mapped(b, &p->b_target, first * 4, m * 4, target);
  if (!rc && p->delay_hom == NESTCL_DELAY_PER_SYNAPSE)
    rc = write_mapped(b, &p->b_delay, first * 2, m * 2, delay);
  if (!rc)
    p->rows_filled = r1;
  return rc;
}

int nestcl_block_plastic_end(nestcl_block *b, int s)
{
  block_plastic *p = plastic_set(b, s, 1);
  if (!p) {
    return NESTCL_EINVAL;
  }
  if (p->rows_filled != p->n_rows) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: %u of %u plastic rows written", b->c.model->name, p->rows_filled,
                            p->n_rows);
  }
  int rc = hist_to_device(b);
  return rc ? rc : plastic_kernel(b, p, p->rport, p->ch);
}

int nestcl_block_plastic_cancel(nestcl_block *b, int s)
{
  if (s != b->n_plastic - 1 || s < 0) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: only the last plastic set (%d) can be cancelled, not %d",
                            b->c.model->name, b->n_plastic - 1, s);
  }
  plastic_free(b->dev, &b->plastic[s]);
  b->n_plastic--;
  return 0;
}

int nestcl_block_plastic_clear(nestcl_block *b)
{
  for (int k = 0; k < b->n_plastic; ++k) {
    plastic_free(b->dev, &b->plastic[k]);
  }
  b->n_plastic = 0;
  eng_hist_free(&b->hist, b->dev);
  memset(&b->hist, 0, sizeof b->hist);
  b->hist_on_device = 0;
  return 0;
}

int nestcl_block_add_plastic(nestcl_block *b, const nestcl_synapse_model *sm, const void *cp, long rport,
                             uint32_t n_rows, const uint64_t *row_ptr, const uint32_t *target, const uint16_t *delay,
                             const void *syn, int *set)
{
  const uint64_t nnz = row_ptr ? row_ptr[n_rows] : 0;
  if (nnz && (!target || !delay || !syn)) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: add_plastic without synapses", b->c.model->name);
  }
  uint16_t lo = nnz ? delay[0] : 1, hi = lo;
  for (uint64_t k = 0; k < nnz; ++k) {
    lo = delay[k] < lo ? delay[k] : lo;
    hi = delay[k] > hi ? delay[k] : hi;
  }
  int s = -1;
  int rc = nestcl_block_plastic_begin(b, sm, cp, rport, n_rows, row_ptr, lo, hi, nnz ? syn : NULL, &s);
  if (!rc)
    rc = nestcl_block_plastic_fill(b, s, 0, n_rows, target, delay, syn);
  if (!rc)
    rc = nestcl_block_plastic_end(b, s);
  if (!rc)
    *set = s;
  else if (s >= 0)
    (void)nestcl_block_plastic_cancel(b, s); /* a refused set leaves nothing behind (the error stays the first) */
  return rc;
}

int nestcl_block_deliver_plastic(nestcl_block *b, int s, int64_t emit_origin, const uint32_t *rows,
                                 const uint32_t *lags, uint32_t n)
{
  if (s < 0 || s >= b->n_plastic) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: no plastic set %d", b->c.model->name, s);
  }
  block_plastic *p = &b->plastic[s];
  if (n == 0) {
    return 0;
  }
  if (p->n_pend && emit_origin != p->pend_origin) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: plastic spikes of two slices before one update",
                            b->c.model->name);
  }
  if ((uint64_t)p->n_pend + n > p->pend_cap) {
    uint64_t cap = p->pend_cap ? p->pend_cap : 1024;
    while (cap < (uint64_t)p->n_pend + n)
      cap *= 2;
    if (cap > UINT32_MAX / 4) {
      return nestcl_set_error(NESTCL_EINVAL, "block %s: too many plastic spikes in one slice", b->c.model->name);
    }
    /* Each array grows on its own; a failure leaves the old ones (and the old capacity) valid. */
    uint32_t *t = realloc(p->pend, (size_t)cap * 2 * sizeof *t);
    if (t)
      p->pend = t;
    uint32_t *sr = t ? realloc(p->srcs, (size_t)cap * 3 * sizeof *sr) : NULL;
    if (sr)
      p->srcs = sr;
    uint32_t *lg = sr ? realloc(p->lags, (size_t)cap * sizeof *lg) : NULL;
    if (lg)
      p->lags = lg;
    if (!lg) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
    p->pend_cap = (uint32_t)cap;
  }
  int rc = pend_add(b, p->pend, &p->n_pend, p->n_rows, rows, lags, n, "plastic spike");
  if (!rc) {
    p->pend_origin = emit_origin;
  }
  return rc;
}

static int cmp_u32_pair(const void *x, const void *y)
{
  const uint32_t *a = x, *c = y;
  if (a[0] != c[0]) {
    return a[0] < c[0] ? -1 : 1;
  }
  return a[1] < c[1] ? -1 : (a[1] > c[1]);
}

/* The pending spikes of every set through its kernel: grouped by row, each row's in time order. */
cl_int nestcl_block_enqueue_plastic(nestcl_block *b, cl_command_queue q)
{
  cl_int err = CL_SUCCESS;
  for (int s = 0; s < b->n_plastic && err == CL_SUCCESS; ++s) {
    block_plastic *p = &b->plastic[s];
    if (p->n_pend == 0) {
      continue;
    }
    if (p->nnz == 0) {
      p->n_pend = 0;
      continue;
    }
    qsort(p->pend, p->n_pend, 2 * sizeof *p->pend, cmp_u32_pair);
    uint32_t m = 0;
    for (uint32_t k = 0; k < p->n_pend; ++k) {
      if (k == 0 || p->pend[2 * k] != p->pend[2 * (k - 1)]) {
        if (m)
          p->srcs[3 * (m - 1) + 2] = k;
        p->srcs[3 * m] = p->pend[2 * k];
        p->srcs[3 * m + 1] = k;
        ++m;
      }
      p->lags[k] = p->pend[2 * k + 1];
    }
    p->srcs[3 * (m - 1) + 2] = p->n_pend;
    if (p->b_lags.bytes < (size_t)p->pend_cap * 4) {
      nestcl_buffer_free(b->dev, &p->b_srcs);
      nestcl_buffer_free(b->dev, &p->b_lags);
      if (nestcl_buffer_alloc(b->dev, NESTCL_MEM_OTHER, "plastic spikes", (size_t)p->pend_cap * 12, CL_MEM_READ_ONLY,
                              NULL, &p->b_srcs) ||
          nestcl_buffer_alloc(b->dev, NESTCL_MEM_OTHER, "plastic spike lags", (size_t)p->pend_cap * 4, CL_MEM_READ_ONLY,
                              NULL, &p->b_lags)) {
        return CL_OUT_OF_RESOURCES;
      }
    }
    cl_uint ns = m;
    cl_long org = p->pend_origin;
    err = nestcl_enq_write(&b->enq, q, p->b_srcs.mem, CL_FALSE, 0, (size_t)m * 12, p->srcs, 0, NULL, NULL);
    err |= nestcl_enq_write(&b->enq, q, p->b_lags.mem, CL_FALSE, 0, (size_t)p->n_pend * 4, p->lags, 0, NULL, NULL);
    err |= clSetKernelArg(p->k, PK_SRCS, sizeof(cl_mem), &p->b_srcs.mem);
    err |= clSetKernelArg(p->k, PK_N_SRCS, sizeof ns, &ns);
    err |= clSetKernelArg(p->k, PK_LAGS, sizeof(cl_mem), &p->b_lags.mem);
    err |= clSetKernelArg(p->k, PK_ORIGIN, sizeof org, &org);
    size_t gsize[2], lsize[2];
    block_plastic_grid(b, p, m, m, gsize, lsize);
    if (err == CL_SUCCESS) {
      err = nestcl_enq_launch(&b->enq, q, p->k, 2, gsize, lsize, 0, NULL, NULL);
    }
    p->n_pend = 0;
  }
  return err;
}

void block_plastic_grid(const nestcl_block *b, const block_plastic *p, uint64_t n_list, size_t max_groups,
                        size_t gsize[2], size_t lsize[2])
{
  if (p->shape.flat) {
    lsize[0] = gsize[0] = p->width;
    gsize[1] = eng_plastic_flat_groups(b->dev, p->width, n_list, p->max_row);
  } else {
    lsize[0] = gsize[0] = p->width < p->max_row ? p->width : (p->max_row ? p->max_row : 1);
    gsize[1] = n_list < max_groups ? n_list : max_groups;
    gsize[1] = gsize[1] ? gsize[1] : 1;
  }
  lsize[1] = 1;
}

/* The block's spikes of this slice into the history (ArchivingNode::set_spiketime). */
static int append_history(nestcl_block *b, int64_t origin)
{
  eng_history *h = &b->hist;
  if (!h->cap || b->n_spikes == 0) {
    return 0;
  }
  int rc = hist_to_device(b);
  if (rc) {
    return rc;
  }
  h->n_append = 0;
  for (uint32_t k = 0; k < b->n_spikes && h->n_append < h->max_pairs; ++k) {
    h->append[2 * h->n_append] = b->spikes[k].index;
    h->append[2 * h->n_append + 1] = b->spikes[k].lag;
    h->n_append++;
  }
  eng_hist_sort(h);
  h->counts = &b->enq;
  return eng_hist_append_device(h, b->dev, b->c.queue, origin);
}

/* Rows [first_row, first_row + n_rows) of set s between the device and syn (to_device: write). */
static int plastic_rows_io(nestcl_block *b, int s, uint32_t first_row, uint32_t n_rows, unsigned char *syn,
                           int to_device)
{
  block_plastic *p = plastic_set(b, s, 0);
  if (!p) {
    return NESTCL_EINVAL;
  }
  if (n_rows > p->n_rows || first_row > p->n_rows - n_rows) {
    return nestcl_set_error(NESTCL_EINVAL, "block %s: plastic rows [%u, %u) of %u", b->c.model->name, first_row,
                            first_row + n_rows, p->n_rows);
  }
  const uint32_t r1 = first_row + n_rows;
  const int rc = to_device ? plastic_check(p, first_row, r1, syn) : 0;
  return rc ? rc : plastic_move(b, p, first_row, r1, syn, to_device);
}

int nestcl_block_plastic_read_rows(nestcl_block *b, int s, uint32_t first_row, uint32_t n_rows, void *syn)
{
  return plastic_rows_io(b, s, first_row, n_rows, syn, 0);
}

int nestcl_block_plastic_write_rows(nestcl_block *b, int s, uint32_t first_row, uint32_t n_rows, const void *syn)
{
  return plastic_rows_io(b, s, first_row, n_rows, (unsigned char *)syn, 1);
}

int nestcl_block_plastic_read(nestcl_block *b, int s, void *syn)
{
  block_plastic *p = plastic_set(b, s, 0);
  return p ? plastic_rows_io(b, s, 0, p->n_rows, syn, 0) : NESTCL_EINVAL;
}

int nestcl_block_plastic_write(nestcl_block *b, int s, const void *syn)
{
  block_plastic *p = plastic_set(b, s, 0);
  return p ? plastic_rows_io(b, s, 0, p->n_rows, (unsigned char *)syn, 1) : NESTCL_EINVAL;
}

/* The device poisson_generators' draws for lags [from, to) of the slice at origin. */
static cl_int enqueue_poisson(nestcl_block *b, cl_command_queue q, cl_long org, cl_int f, cl_int t)
{
  cl_int err = CL_SUCCESS;
  cl_uint n = b->c.n, slots = b->c.ring_slots, nch = b->n_channels, seed = b->c.rng_seed;
  for (int k = 0; k < b->n_poisson && err == CL_SUCCESS; ++k) {
    const block_poisson *d = &b->poisson[k];
    cl_uint ne = d->n, len = d->cdf_len, kstop = d->kstop, chunks = d->chunks;
    err = clSetKernelArg(b->k_poisson, BPOIS_RING, sizeof(cl_mem), &b->b_ring.mem);
    err |= clSetKernelArg(b->k_poisson, BPOIS_N_CHANNELS, sizeof nch, &nch);
    err |= clSetKernelArg(b->k_poisson, BPOIS_N, sizeof n, &n);
    err |= clSetKernelArg(b->k_poisson, BPOIS_RING_SLOTS, sizeof slots, &slots);
    err |= clSetKernelArg(b->k_poisson, BPOIS_ORIGIN, sizeof org, &org);
    err |= clSetKernelArg(b->k_poisson, BPOIS_FROM, sizeof f, &f);
    err |= clSetKernelArg(b->k_poisson, BPOIS_TO, sizeof t, &t);
    err |= clSetKernelArg(b->k_poisson, BPOIS_SEED, sizeof seed, &seed);
    err |= clSetKernelArg(b->k_poisson, BPOIS_TARGET, sizeof(cl_mem), &d->b_target.mem);
    err |= clSetKernelArg(b->k_poisson, BPOIS_DELAY, sizeof(cl_mem), &d->b_delay.mem);
    err |= clSetKernelArg(b->k_poisson, BPOIS_VALUE, sizeof(cl_mem), &d->b_value.mem);
    err |= clSetKernelArg(b->k_poisson, BPOIS_ID, sizeof(cl_mem), &d->b_id.mem);
    err |= clSetKernelArg(b->k_poisson, BPOIS_N_ENTRIES, sizeof ne, &ne);
    err |= clSetKernelArg(b->k_poisson, BPOIS_CDF, sizeof(cl_mem), &d->b_cdf.mem);
    err |= clSetKernelArg(b->k_poisson, BPOIS_CDF_LEN, sizeof len, &len);
    err |= clSetKernelArg(b->k_poisson, BPOIS_KSTOP, sizeof kstop, &kstop);
    err |= clSetKernelArg(b->k_poisson, BPOIS_CHUNKS, sizeof chunks, &chunks);
    size_t gsize = d->n;
    if (err == CL_SUCCESS)
      err = nestcl_enq_launch(&b->enq, q, b->k_poisson, 1, &gsize, NULL, 0, NULL, NULL);
  }
  return err;
}

int nestcl_block_failure(const nestcl_block *b, uint32_t *code, uint32_t *index, uint32_t *lag, int *status)
{
  if (!b || b->count[1] == 0) {
    return 0;
  }
  if (code)
    *code = b->count[1];
  if (index)
    *index = b->count[2];
  if (lag)
    *lag = b->count[3];
  if (status)
    *status = (int)b->count[4];
  return 1;
}

/*
 * The spike entries read back with the count, in the same round trip: as
 * many as twice the last slices' rate predicts (more take a second read).
 */
uint32_t nestcl_block_spike_guess(const nestcl_block *b)
{
  double g = 2.0 * b->spike_rate + 64.0;
  return g < (double)b->spike_cap ? (uint32_t)g : b->spike_cap;
}

/*
 * The block's own update of lags [from, to): its precise-spike events, the
 * staged input added to the ring (the staging already written) and the
 * model's kernel. A set (block_set.c) runs this for a block it could not merge.
 */
int nestcl_block_enqueue_own_update(nestcl_block *b, cl_command_queue q, int64_t origin_steps, int from, int to)
{
  cl_long org = origin_steps;
  cl_int f = from, t = to;
  size_t gsize = b->c.n;
  if (b->c.model->event_queue) {
    int rc = upload_events(b, q, from, to);
    b->n_ev = 0;
    if (rc) {
      return rc;
    }
  }
  cl_int err = clSetKernelArg(b->k_stage, STAGE_ORIGIN, sizeof org, &org);
  err |= clSetKernelArg(b->k_stage, STAGE_FROM, sizeof f, &f);
  err |= clSetKernelArg(b->k_stage, STAGE_TO, sizeof t, &t);
  err |= nestcl_update_kernel_slice(b->k_update, origin_steps, from, to);
  if (err == CL_SUCCESS)
    err = nestcl_enq_launch(&b->enq, q, b->k_stage, 1, &gsize, NULL, 0, NULL, NULL);
  if (err == CL_SUCCESS)
    err = nestcl_enq_launch(&b->enq, q, b->k_update, 1, &gsize, NULL, 0, NULL, NULL);
  return err == CL_SUCCESS ? 0 : cl_fail(err, "update");
}

/*
 * The read-back of an update of lags [from, to) for the caller's one wait: the
 * count words (unless a set reads every block's at once), a guess of the
 * spikes and their offsets, the recordings; then the block is in flight.
 */
int nestcl_block_enqueue_readback(nestcl_block *b, cl_command_queue q, int64_t origin_steps, int from, int to,
                                  int read_count)
{
  nestcl_enqueue_counts *c = &b->enq;
  cl_int err = CL_SUCCESS;
  b->guess = nestcl_block_spike_guess(b);
  if (read_count) {
    err = nestcl_enq_read(c, q, b->b_count.mem, CL_FALSE, 0, sizeof b->count, b->count, 0, NULL, NULL);
  }
  if (err == CL_SUCCESS && b->guess) {
    err = nestcl_enq_read(c, q, b->b_spikes.mem, CL_FALSE, 0, (size_t)b->guess * sizeof *b->spikes, b->spikes, 0, NULL,
                          NULL);
    if (err == CL_SUCCESS && b->spike_offsets) {
      err = nestcl_enq_read(c, q, b->b_offsets.mem, CL_FALSE, 0, (size_t)b->guess * sizeof *b->spike_offsets,
                            b->spike_offsets, 0, NULL, NULL);
    }
  }
  if (err == CL_SUCCESS && b->rec_elems) {
    err = nestcl_enq_read(c, q, b->b_rec.mem, CL_FALSE, 0, (size_t)(to - from) * b->n_rec * b->c.n * 8, b->rec, 0, NULL,
                          NULL);
  }
  if (err != CL_SUCCESS) {
    return cl_fail(err, "update");
  }
  b->in_flight = 1;
  b->flight_origin = origin_steps;
  return 0;
}

/* Whether an update of lags [from, to) has anything to do; fails on a bad slice or a block not uploaded. */
int nestcl_block_update_check(nestcl_block *b, int from, int to, int *any)
{
  b->n_spikes = 0;
  b->in_flight = 0;
  memset(b->count, 0, sizeof b->count);
  *any = 0;
  if (b->c.n == 0 || from >= to) {
    b->n_ev = 0;
    return 0;
  }
  if (from < 0 || (uint32_t)to > b->c.min_delay_steps) {
    return nestcl_set_error(NESTCL_EINVAL, "block: lags [%d, %d) outside the slice of %u steps", from, to,
                            b->c.min_delay_steps);
  }
  if (!b->c.on_host && !b->k_update) {
    return nestcl_set_error(NESTCL_EINVAL, "block: update before the first upload");
  }
  *any = 1;
  return 0;
}

int nestcl_block_update_enqueue(nestcl_block *b, int64_t origin_steps, int from, int to)
{
  int any = 0;
  int rc = nestcl_block_update_check(b, from, to, &any);
  if (rc || !any) {
    return rc;
  }
  if (b->c.on_host) {
    return nestcl_block_host_update(b, origin_steps, from, to);
  }
  static const cl_uint zero[NESTCL_COUNT_WORDS] = {0};
  cl_command_queue q = nestcl_device_queue(b->dev, b->c.queue);
  cl_int err = enqueue_delivery(b, q);
  if (err == CL_SUCCESS)
    err = nestcl_block_enqueue_plastic(b, q);
  if (err != CL_SUCCESS) {
    return cl_fail(err, "spike delivery");
  }
  err = nestcl_enq_write(&b->enq, q, b->b_stage.mem, CL_FALSE, 0, b->stage_elems * 8, b->stage, 0, NULL, NULL);
  err |= nestcl_enq_write(&b->enq, q, b->b_count.mem, CL_FALSE, 0, sizeof zero, zero, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    return cl_fail(err, "update");
  }
  rc = nestcl_block_enqueue_own_update(b, q, origin_steps, from, to);
  if (!rc && (err = enqueue_poisson(b, q, origin_steps, from, to)) != CL_SUCCESS)
    rc = cl_fail(err, "update");
  /* The count, a guess of the spikes and the recordings come back in the caller's one wait for the queue. */
  if (!rc)
    rc = nestcl_block_enqueue_readback(b, q, origin_steps, from, to, 1);
  if (!rc && (err = clFlush(q)) != CL_SUCCESS)
    rc = cl_fail(err, "update");
  return rc;
}

int nestcl_block_finish(nestcl_block *b)
{
  if (b->c.on_host) {
    return 0; /* its update ran in _enqueue */
  }
  cl_int err = nestcl_enq_finish(&b->enq, nestcl_device_queue(b->dev, b->c.queue));
  return err == CL_SUCCESS ? 0 : cl_fail(err, "waiting for the queue");
}

int nestcl_block_update_collect(nestcl_block *b)
{
  if (!b->in_flight) {
    return 0; /* nothing was enqueued (no neurons, or no lags) */
  }
  b->in_flight = 0;
  const uint32_t count = b->count[0];
  if (count > b->spike_cap) {
    return nestcl_set_error(NESTCL_ERUNTIME, "block %s: %u spikes in one slice, more than the %u it has room for",
                            b->c.model->name, count, b->spike_cap);
  }
  if (count > b->guess) {
    /* More spikes than the guess: the rest in a second round trip. */
    cl_command_queue q = nestcl_device_queue(b->dev, b->c.queue);
    size_t g = b->guess, m = count - b->guess;
    cl_int err = CL_SUCCESS;
    if (b->spike_offsets) {
      err = nestcl_enq_read(&b->enq, q, b->b_offsets.mem, CL_FALSE, g * sizeof *b->spike_offsets,
                            m * sizeof *b->spike_offsets, b->spike_offsets + g, 0, NULL, NULL);
    }
    if (err == CL_SUCCESS) {
      err = nestcl_enq_read(&b->enq, q, b->b_spikes.mem, CL_TRUE, g * sizeof *b->spikes, m * sizeof *b->spikes,
                            b->spikes + g, 0, NULL, NULL);
    }
    if (err != CL_SUCCESS) {
      return cl_fail(err, "reading spikes");
    }
  }
  b->spike_rate = (double)count > b->spike_rate ? (double)count : 0.5 * (b->spike_rate + (double)count);
  b->n_spikes = count;
  b->n_pend = 0;
  /* The queue has finished: the staging's upload is done, its host copy is free again. */
  memset(b->stage, 0, b->stage_elems * 8);
  if (b->count[1]) {
    /* The model threw (model.h, Failures): the neuron by its id, as the block's random streams number it. */
    uint64_t id = b->c.id_first + (uint64_t)b->count[2] * (b->c.id_stride ? b->c.id_stride : 1);
    return nestcl_failure_error(b->c.model, b->count, id,
                                nestcl_step_ms(b->flight_origin + (int64_t)b->count[3], block_tics_per_step(b), 1e-3));
  }
  return append_history(b, b->flight_origin);
}

int nestcl_block_update(nestcl_block *b, int64_t origin_steps, int from, int to)
{
  int rc = nestcl_block_update_enqueue(b, origin_steps, from, to);
  if (!rc && b->in_flight)
    rc = nestcl_block_finish(b);
  if (!rc)
    rc = nestcl_block_update_collect(b);
  return rc;
}

int nestcl_block_profile_kernels(nestcl_block *b, int sample_every)
{
  if (!b || sample_every < 0 || sample_every > 1000000) {
    return nestcl_set_error(NESTCL_EINVAL, "block kernel profile: sample_every %d (need 0 to 1000000)", sample_every);
  }
  nestcl_kprof_destroy(b->enq.profile);
  b->enq.profile = NULL;
  if (sample_every > 0 && !b->c.on_host) {
    b->enq.profile = nestcl_kprof_create(sample_every);
    if (!b->enq.profile) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory for the kernel profile");
    }
  }
  return 0;
}

int nestcl_block_kernel_profile(const nestcl_block *b, nestcl_kernel_profile *out)
{
  return b ? nestcl_kprof_add_to(b->enq.profile, out) : NESTCL_EINVAL;
}

void nestcl_block_enqueued(const nestcl_block *b, uint64_t *launches, uint64_t *waits)
{
  if (launches)
    *launches = b ? b->enq.launches : 0;
  if (waits)
    *waits = b ? b->enq.waits : 0;
}
