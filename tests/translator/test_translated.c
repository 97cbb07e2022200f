/*
 * Checks the output of nestcl_translate_models() over models/ as the runtime
 * will use it: the registry is sorted and complete, every kernel builds on the
 * OpenCL device (PoCL here) with the runtime headers prepended and takes the
 * 14 fixed arguments plus one per field, a parameter can be specialised with
 * -DNESTCL_CONST_<member>, and the kernel and the C loop advance the same
 * neurons through one super step with spike and current input to bit-identical
 * fields, ring and spike lists. (The comparison with the original C++ update()
 * is tests/models' job.) Exits 77 when no OpenCL device is available.
 */
#include "nestcl/device.h"
#include "nestcl/model.h"
#include "nestcl_check.h"
#include "nestcl_fixed.h"
#include "nestcl_libm.h"
#include "nestcl_ring.h"
#include "nestcl_rt_source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 37
#define STEPS 10
#define SLOTS 16

static size_t field_elems(const nestcl_field *f, uint32_t K)
{
  size_t len = nestcl_field_len(f, K ? K : 1);
  return len * N;
}

static uint32_t channel_count(const nestcl_model *m, uint32_t K)
{
  uint32_t c = 0;
  int g;
  for (g = 0; g < m->n_channel_groups; g++)
    c += m->channels[g].count < 0 ? K : (uint32_t)m->channels[g].count;
  return c;
}

static int cmp_spike(const void *a, const void *b)
{
  const nestcl_spike *x = a, *y = b;
  if (x->index != y->index)
    return x->index < y->index ? -1 : 1;
  return x->lag < y->lag ? -1 : x->lag > y->lag;
}

static char *kernel_program(const nestcl_model *m)
{
  size_t a = strlen(nestcl_rt_source), b = strlen(m->kernel_source);
  char *s = malloc(a + b + 2);
  memcpy(s, nestcl_rt_source, a);
  s[a] = '\n';
  memcpy(s + a + 1, m->kernel_source, b + 1);
  return s;
}

static void run_model(nestcl_device *dev, const nestcl_model *m)
{
  const uint32_t K = m->has_receptors ? 3 : 0;
  const uint32_t nch = channel_count(m, K);
  const double h = 0.1;
  void **cpu = calloc((size_t)m->n_fields, sizeof *cpu);
  void **gpu_host = calloc((size_t)m->n_fields, sizeof *gpu_host);
  nestcl_buffer *bufs = calloc((size_t)m->n_fields, sizeof *bufs);
  size_t ring_len = (size_t)SLOTS * nch * N;
  int64_t *ring = calloc(ring_len ? ring_len : 1, sizeof *ring);
  int64_t *ring_gpu = calloc(ring_len ? ring_len : 1, sizeof *ring);
  nestcl_spike spikes_c[N * STEPS], spikes_g[N * STEPS];
  /* a model that sets spike offsets: the list's offsets, and by (lag, neuron) for the comparison */
  double offsets_c[N * STEPS], offsets_g[N * STEPS], by_step_c[N * STEPS], by_step_g[N * STEPS];
  uint32_t count_c[NESTCL_COUNT_WORDS] = {0}, count_g[NESTCL_COUNT_WORDS] = {0};
  char libm[48];
  double rec_dummy = 0;
  cl_program prog;
  cl_kernel kern;
  cl_int err;
  nestcl_buffer b_ring, b_count, b_spikes, b_rec, b_offsets;
  cl_command_queue q = nestcl_device_queue(dev, 0);
  char *src = kernel_program(m);
  int f, i, s;

  for (f = 0; f < m->n_fields; f++) {
    size_t bytes = field_elems(&m->fields[f], K) * nestcl_field_type_size(m->fields[f].type);
    cpu[f] = calloc(1, bytes);
    gpu_host[f] = calloc(1, bytes);
  }
  CHECK(m->set_defaults != NULL, "%s: set_defaults missing", m->name);
  CHECK(m->pre_run != NULL, "%s: pre_run missing", m->name);
  CHECK(m->route_spike != NULL, "%s: route_spike missing", m->name);
  for (i = 0; i < N; i++) {
    if (m->set_defaults)
      m->set_defaults(cpu, N, (size_t)i, K);
    /* A per-receptor parameter vector that NEST leaves empty by default (pp_psc_delta's tau_sfa)
       has zeros in its K entries here: give them values a model accepts (time constants > 0). */
    for (f = 0; f < m->n_fields; f++)
      if (m->fields[f].role == NESTCL_ROLE_PARAMETER && m->fields[f].array_len < 0 &&
          m->fields[f].type == NESTCL_T_DOUBLE)
        for (size_t k = 0; k < nestcl_field_len(&m->fields[f], K); k++)
          if (((double *)cpu[f])[k * N + (size_t)i] == 0.0)
            ((double *)cpu[f])[k * N + (size_t)i] = 10.0 + (double)k;
    if (m->init_buffers)
      CHECK(m->init_buffers(cpu, N, (size_t)i, K, h) == 0, "%s: init_buffers failed: %s", m->name, nestcl_last_error());
    if (m->pre_run)
      CHECK(m->pre_run(cpu, N, (size_t)i, K, h) == 0, "%s: pre_run failed: %s", m->name, nestcl_last_error());
  }
  /* get_status/set_status on slot 0: I_e is a parameter of every model here with fields (a parrot has none). */
  CHECK((m->get_status && m->set_status) || m->n_fields == 0, "%s: get_status/set_status missing", m->name);
  if (m->get_status && m->set_status && m->n_fields > 0) {
    double v = -1.0;
    CHECK(m->set_status(cpu, N, 0, K, "I_e", 12.5) == 0, "%s: set_status(I_e) failed: %s", m->name,
          nestcl_last_error());
    CHECK(m->get_status(cpu, N, 0, K, "I_e", &v) == 0 && v == 12.5, "%s: I_e reads back as %g", m->name, v);
    CHECK(m->set_status(cpu, N, 0, K, "no_such_entry", 1.0) == NESTCL_EINVAL, "%s: unknown name accepted", m->name);
    CHECK(m->set_status(cpu, N, 0, K, "I_e", 0.0) == 0, "%s: set_status(I_e) failed", m->name);
  }
  /* Input: spikes of growing weight (multiples of 2^-16) and a current, per neuron and step. */
  for (i = 0; i < N; i++)
    for (s = 0; s < STEPS; s++) {
      int ch;
      double v;
      long rport = K ? (long)(1 + (i + s) % K) : 0;
      if (m->route_spike && (i + s) % 2 == 0 &&
          m->route_spike(((i % 5) - 1) * 6000.0 + s * 0.25, rport, K, &ch, &v) == 0)
        ring[nestcl_ring_index(nch, N, (uint32_t)s, (uint32_t)ch, (uint32_t)i)] += nestcl_fixed_from_double(v);
      if (m->route_current && s % 3 == 0 && m->route_current(8000.0 + 8.0 * i, 1.0, 0, K, &ch, &v) == 0)
        ring[nestcl_ring_index(nch, N, (uint32_t)s, (uint32_t)ch, (uint32_t)i)] += nestcl_fixed_from_double(v);
    }
  memcpy(ring_gpu, ring, ring_len * sizeof *ring);
  for (f = 0; f < m->n_fields; f++)
    memcpy(gpu_host[f], cpu[f], field_elems(&m->fields[f], K) * nestcl_field_type_size(m->fields[f].type));

  {
    nestcl_update_args a;
    memset(&a, 0, sizeof a);
    a.n = N;
    a.K = K;
    a.origin_steps = 0;
    a.from = 0;
    a.to = STEPS;
    a.resolution_ms = h;
    a.ring_slots = SLOTS;
    a.n_channels = nch;
    a.ring = ring;
    a.spike_count = count_c;
    a.spikes = spikes_c;
    a.spike_capacity = N * STEPS;
    a.rec_interval = 0;
    a.rec = &rec_dummy;
    a.rng_seed = 99u;
    a.id_first = 1000;
    a.id_stride = 3;
    a.spike_offsets = offsets_c;
    m->update_cpu(&a, cpu);
  }

  /* Translated code calls nestcl_glibc_exp(x, NESTCL_LIBM_VARIANT): the host's variant, as the runtime builds it. */
  snprintf(libm, sizeof libm, "-DNESTCL_LIBM_VARIANT=%d", nestcl_libm_host_variant() != 0);
  if (nestcl_program_build(dev, src, libm, &prog)) {
    CHECK(0, "%s: kernel does not build: %s", m->name, nestcl_last_error());
    goto out;
  }
  kern = clCreateKernel(prog, m->kernel_name, &err);
  CHECK(err == CL_SUCCESS, "%s: no kernel %s", m->name, m->kernel_name);
  if (err == CL_SUCCESS) {
    cl_uint nargs = 0;
    cl_uint ui;
    cl_int ii;
    cl_long li;
    double d;
    size_t gsz = N;
    clGetKernelInfo(kern, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL);
    CHECK(nargs == (cl_uint)(NESTCL_UPDATE_FIXED_ARGS + m->n_fields + (m->spike_offsets ? 1 : 0)),
          "%s: %u kernel arguments", m->name, nargs);
    nestcl_buffer_alloc(dev, NESTCL_MEM_RING, "ring", ring_len * sizeof(int64_t),
                        CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, ring_gpu, &b_ring);
    nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "count", sizeof count_g, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                        count_g, &b_count);
    nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "spikes", sizeof spikes_g, CL_MEM_READ_WRITE, NULL, &b_spikes);
    nestcl_buffer_alloc(dev, NESTCL_MEM_RECORDING, "rec", sizeof rec_dummy, CL_MEM_READ_WRITE, NULL, &b_rec);
    memset(&b_offsets, 0, sizeof b_offsets);
    if (m->spike_offsets) {
      nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "spike offsets", sizeof offsets_g, CL_MEM_READ_WRITE, NULL,
                          &b_offsets);
      clSetKernelArg(kern, (cl_uint)(NESTCL_UPDATE_FIXED_ARGS + m->n_fields), sizeof(cl_mem), &b_offsets.mem);
    }
    ui = N;
    clSetKernelArg(kern, 0, sizeof ui, &ui);
    ui = K;
    clSetKernelArg(kern, 1, sizeof ui, &ui);
    li = 0;
    clSetKernelArg(kern, 2, sizeof li, &li);
    ii = 0;
    clSetKernelArg(kern, 3, sizeof ii, &ii);
    ii = STEPS;
    clSetKernelArg(kern, 4, sizeof ii, &ii);
    d = h;
    clSetKernelArg(kern, 5, sizeof d, &d);
    ui = SLOTS;
    clSetKernelArg(kern, 6, sizeof ui, &ui);
    ui = nch;
    clSetKernelArg(kern, 7, sizeof ui, &ui);
    clSetKernelArg(kern, 8, sizeof(cl_mem), &b_ring.mem);
    clSetKernelArg(kern, 9, sizeof(cl_mem), &b_count.mem);
    clSetKernelArg(kern, 10, sizeof(cl_mem), &b_spikes.mem);
    ui = N * STEPS;
    clSetKernelArg(kern, 11, sizeof ui, &ui);
    li = 0;
    clSetKernelArg(kern, 12, sizeof li, &li);
    clSetKernelArg(kern, 13, sizeof(cl_mem), &b_rec.mem);
    ui = 99u;
    clSetKernelArg(kern, 14, sizeof ui, &ui);
    {
      cl_ulong id0 = 1000, ids = 3;
      clSetKernelArg(kern, 15, sizeof id0, &id0);
      clSetKernelArg(kern, 16, sizeof ids, &ids);
    }
    for (f = 0; f < m->n_fields; f++) {
      size_t bytes = field_elems(&m->fields[f], K) * nestcl_field_type_size(m->fields[f].type);
      nestcl_buffer_alloc(dev, NESTCL_MEM_STATE, m->fields[f].member, bytes, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                          gpu_host[f], &bufs[f]);
      clSetKernelArg(kern, (cl_uint)(NESTCL_UPDATE_FIXED_ARGS + f), sizeof(cl_mem), &bufs[f].mem);
    }
    err = clEnqueueNDRangeKernel(q, kern, 1, NULL, &gsz, NULL, 0, NULL, NULL);
    CHECK(err == CL_SUCCESS, "%s: launch failed (%d)", m->name, err);
    clEnqueueReadBuffer(q, b_ring.mem, CL_TRUE, 0, ring_len * sizeof(int64_t), ring_gpu, 0, NULL, NULL);
    clEnqueueReadBuffer(q, b_count.mem, CL_TRUE, 0, sizeof count_g, count_g, 0, NULL, NULL);
    clEnqueueReadBuffer(q, b_spikes.mem, CL_TRUE, 0, sizeof spikes_g, spikes_g, 0, NULL, NULL);
    if (m->spike_offsets) {
      clEnqueueReadBuffer(q, b_offsets.mem, CL_TRUE, 0, sizeof offsets_g, offsets_g, 0, NULL, NULL);
    }
    for (f = 0; f < m->n_fields; f++) {
      size_t bytes = field_elems(&m->fields[f], K) * nestcl_field_type_size(m->fields[f].type);
      clEnqueueReadBuffer(q, bufs[f].mem, CL_TRUE, 0, bytes, gpu_host[f], 0, NULL, NULL);
      CHECK(memcmp(cpu[f], gpu_host[f], bytes) == 0, "%s: field %s differs between the C loop and the kernel", m->name,
            m->fields[f].member);
      nestcl_buffer_free(dev, &bufs[f]);
    }
    CHECK(memcmp(ring, ring_gpu, ring_len * sizeof *ring) == 0, "%s: ring differs", m->name);
    CHECK(count_c[0] == count_g[0], "%s: %u spikes in C, %u in OpenCL", m->name, count_c[0], count_g[0]);
    CHECK(count_c[0] > 0, "%s: the input produced no spike, the comparison is too weak", m->name);
    CHECK(count_c[1] == 0 && count_g[1] == 0, "%s: failure %u in C (neuron %u, status %d), %u in OpenCL", m->name,
          count_c[1], count_c[2], (int)count_c[4], count_g[1]);
    if (m->spike_offsets && count_c[0] == count_g[0] && count_c[0] <= N * STEPS) {
      /* each neuron sends at most one event per step: its offset by (lag, neuron), bit for bit */
      int nonzero = 0;
      memset(by_step_c, 0, sizeof by_step_c);
      memset(by_step_g, 0, sizeof by_step_g);
      for (uint32_t k = 0; k < count_c[0]; ++k) {
        by_step_c[spikes_c[k].lag * N + spikes_c[k].index] = offsets_c[k];
        by_step_g[spikes_g[k].lag * N + spikes_g[k].index] = offsets_g[k];
        nonzero |= offsets_c[k] != 0.0;
      }
      CHECK(memcmp(by_step_c, by_step_g, sizeof by_step_c) == 0, "%s: spike offsets differ", m->name);
      CHECK(nonzero, "%s: every spike offset is 0, the comparison is too weak", m->name);
    }
    if (count_c[0] == count_g[0] && count_c[0] <= N * STEPS) {
      qsort(spikes_c, count_c[0], sizeof *spikes_c, cmp_spike);
      qsort(spikes_g, count_g[0], sizeof *spikes_g, cmp_spike);
      CHECK(memcmp(spikes_c, spikes_g, count_c[0] * sizeof *spikes_c) == 0, "%s: spike lists differ", m->name);
    }
    nestcl_buffer_free(dev, &b_ring);
    nestcl_buffer_free(dev, &b_count);
    nestcl_buffer_free(dev, &b_spikes);
    nestcl_buffer_free(dev, &b_rec);
    nestcl_buffer_free(dev, &b_offsets);
    clReleaseKernel(kern);
  }
  clReleaseProgram(prog);
  /* Parameter specialisation compiles (the macro replaces the per-neuron read). */
  {
    int pf = -1;
    for (f = 0; f < m->n_fields; f++)
      if (m->fields[f].role == NESTCL_ROLE_PARAMETER && m->fields[f].array_len == 0 &&
          m->fields[f].type == NESTCL_T_DOUBLE && pf < 0)
        pf = f;
    if (pf >= 0) {
      char opt[256];
      snprintf(opt, sizeof opt, "%s -DNESTCL_CONST_%s=1.5", libm, m->fields[pf].member);
      CHECK(nestcl_program_build(dev, src, opt, &prog) == 0, "%s: %s does not build: %s", m->name, opt,
            nestcl_last_error());
      if (!failures)
        clReleaseProgram(prog);
    }
  }
out:
  for (f = 0; f < m->n_fields; f++) {
    free(cpu[f]);
    free(gpu_host[f]);
  }
  free(cpu);
  free(gpu_host);
  free(bufs);
  free(ring);
  free(ring_gpu);
  free(src);
}

int main(void)
{
  nestcl_device *dev = NULL;
  int k;
  CHECK(nestcl_builtin_model_count >= 5, "registry has %d models", nestcl_builtin_model_count);
  for (k = 0; k < nestcl_builtin_model_count; k++) {
    const nestcl_model *m = nestcl_builtin_models[k];
    char kn[256];
    snprintf(kn, sizeof kn, "nestcl_update_%s", m->name);
    CHECK(!strcmp(m->kernel_name, kn), "%s: kernel name %s", m->name, m->kernel_name);
    CHECK(strlen(m->source_hash) == 16, "%s: source hash '%s'", m->name, m->source_hash);
    if (k)
      CHECK(strcmp(nestcl_builtin_models[k - 1]->name, m->name) < 0, "registry not sorted at %s", m->name);
  }
  if (nestcl_device_open("cpu", 1, &dev)) {
    fprintf(stderr, "skipped: no OpenCL CPU device: %s\n", nestcl_last_error());
    return failures ? 1 : 77;
  }
  for (k = 0; k < nestcl_builtin_model_count; k++)
    run_model(dev, nestcl_builtin_models[k]);
  nestcl_device_close(dev);
  if (check_report())
    return 1;
  printf("%d translated models: kernels build, C loop and kernel agree bit for bit\n", nestcl_builtin_model_count);
  return 0;
}
