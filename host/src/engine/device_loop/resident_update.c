/*
 * Merged updates of the device loop (issue 29): one launch per model per slice
 * updates every population of that model on the stream, as GeNN merges the
 * neuron groups of one model, instead of one launch per population.
 *
 * The model's translated kernel becomes a function of the merged kernel (its
 * source with `__kernel` taken off and the name suffixed), called once per
 * work-item with the block of its index in dimension 1. The blocks' buffers
 * are parts of one buffer per field (and of the stream's ring, count and
 * spike-list buffers), so the merged kernel takes the same few arguments
 * however many populations there are, and finds its block's part at the
 * offsets of a table (per block: n, K, channels, list capacity, the offsets
 * of its ring, counts and list, its first gid, its multimeter interval and
 * the offset of its records within a slice's slot, then one offset per
 * field). A multimeter's records go to the slot of the slice (an argument),
 * kept until the host drains (resident_run.c).
 * Parameters equal over all these populations are compiled in (specialise.h),
 * the others read per neuron as before. Models with spike offsets or an event
 * queue keep one launch per population.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine_internal.h"
#include "enqueue.h"
#include "gen_text.h"
#include "nestcl_rt_source.h"
#include "specialise.h"

enum { TAB_FIXED = 10 };

static size_t align_up(size_t x, size_t a)
{
  return (x + a - 1) / a * a;
}

/* Whether population p's model can be merged (and the blocks' host parameters are there for the constants). */
static int mergeable(const nestcl_engine *e, const eng_vp *vp, int p)
{
  const nestcl_model *m = e->desc.pops[p].model;
  if (m->spike_offsets || m->event_queue || vp->blocks[p].n == 0) {
    return 0;
  }
  for (int f = 0; f < m->n_fields; ++f) {
    if (m->fields[f].role == NESTCL_ROLE_PARAMETER && !vp->blocks[p].fields[f]) {
      return 0;
    }
  }
  return 1;
}

/*
 * The model's source with its kernel made a function named <kernel>_body
 * (static: one program holds it once), then the merged kernel.
 */
static char *merged_source(const nestcl_model *m, int tab_stride, int halt)
{
  const char *ks = m->kernel_source;
  char sig[256];
  snprintf(sig, sizeof sig, "__kernel void %s(", m->kernel_name);
  const char *at = strstr(ks, sig);
  if (!at) {
    return NULL;
  }
  size_t cap = strlen(nestcl_rt_source) + strlen(ks) + 8192 + (size_t)m->n_fields * 160;
  char *s = malloc(cap);
  if (!s) {
    return NULL;
  }
  int k = snprintf(s, cap, "%s\n%.*sstatic void %s_body(%s\n", nestcl_rt_source, (int)(at - ks), ks, m->kernel_name,
                   at + strlen(sig));
  k +=
    snprintf(s + k, cap - (size_t)k,
             "__kernel void nestcl_update_merged(__global const ulong *tab, const long origin_steps, const int from,\n"
             "    const int to, const double resolution_ms, const uint ring_slots, __global double *rec,\n"
             "    const uint rng_seed, __global long *ring, __global uint *counts, __global uint2 *spikes");
  for (int f = 0; f < m->n_fields; ++f) {
    k += snprintf(s + k, cap - (size_t)k, ",\n    __global %s *f%d", nestcl_cl_type_name(m->fields[f].type), f);
  }
  /* A replay (clocked: resident_graph.c) reads the super step's origin from the status words. */
  k += snprintf(
    s + k, cap - (size_t)k,
    ",\n    __global const ulong *status, const int clocked, const ulong rec_slot)\n{\n%s"
    "  const long origin = clocked ? (long)status[7] : origin_steps;\n"
    "  __global const ulong *t = tab + %d * get_global_id(1);\n"
    "  %s_body((uint)t[0], (uint)t[1], origin, from, to, resolution_ms, ring_slots, (uint)t[2],\n"
    "      ring + t[4], counts + t[5], spikes + t[6], (uint)t[3], (long)t[8], rec + t[9] + rec_slot, rng_seed,\n"
    "      t[7], 1ul",
    /* With plastic synapses the loop can halt (resident_plastic.c): then nothing runs. */
    halt ? "  if (status[11] != 0ul) {\n    return; /* halted (NESTCL_RES_HALT) */\n  }\n" : "", tab_stride,
    m->kernel_name);
  for (int f = 0; f < m->n_fields; ++f) {
    k += snprintf(s + k, cap - (size_t)k, ",\n      f%d + t[%d]", f, TAB_FIXED + f);
  }
  snprintf(s + k, cap - (size_t)k, ");\n}\n");
  return s;
}

/*
 * The persistent loop's update (resident_persist.c): model m's source with its
 * kernel made a function <kernel>_at whose first parameter is the neuron
 * (the persistent kernel's work-items take many neurons each), the rest the
 * kernel's own. NULL when the kernel does not take its neuron from
 * get_global_id(0) exactly once, as the translator writes it, or uses
 * another work-item function.
 */
char *eng_resident_update_at_source(const nestcl_model *m)
{
  const char *ks = m->kernel_source;
  char sig[256];
  snprintf(sig, sizeof sig, "__kernel void %s(", m->kernel_name);
  const char *at = strstr(ks, sig);
  static const char idx[] = "(uint)get_global_id(0)";
  const char *use = at ? strstr(at, idx) : NULL;
  if (!use || strstr(use + strlen(idx), "get_global_id") || strstr(at, "get_local_") || strstr(at, "get_group_") ||
      strstr(at, "barrier(")) {
    return NULL;
  }
  size_t cap = strlen(ks) + 256;
  char *s = malloc(cap);
  if (!s) {
    return NULL;
  }
  snprintf(s, cap, "%.*sstatic void %s_at(const uint nestcl_i_at, %.*snestcl_i_at%s\n", (int)(at - ks), ks,
           m->kernel_name, (int)(use - at - strlen(sig)), at + strlen(sig), use + strlen(idx));
  return s;
}

/*
 * Moves the device buffers *bufs[0..nb) into one new buffer, each at an offset
 * aligned for sub-buffers (offs[j], bytes), and replaces each by a sub-buffer
 * of it: the contents go through a host image, so that the new buffer is
 * created initialised (oclgrind sees the contents of CL_MEM_COPY_HOST_PTR,
 * not always of copies).
 */
static int rehome(nestcl_engine *e, cl_command_queue q, nestcl_mem_class cls, const char *what, int nb,
                  nestcl_buffer **bufs, size_t align, nestcl_buffer *parent, size_t *offs)
{
  size_t total = 0;
  for (int j = 0; j < nb; ++j) {
    offs[j] = total;
    total += align_up(bufs[j]->bytes ? bufs[j]->bytes : 1, align);
  }
  if (total == 0) {
    total =
      align; /* nothing to move (a stream without neurons): a buffer all the same, as OpenCL has none of 0 bytes */
  }
  unsigned char *img = calloc(total ? total : 1, 1);
  if (!img) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  int rc = 0;
  for (int j = 0; j < nb && !rc; ++j) {
    if (bufs[j]->bytes) {
      rc = eng_cl_check(clEnqueueReadBuffer(q, bufs[j]->mem, CL_TRUE, 0, bufs[j]->bytes, img + offs[j], 0, NULL, NULL),
                        "clEnqueueReadBuffer(device loop)");
    }
  }
  if (!rc)
    rc = nestcl_buffer_alloc(e->device.dev, cls, what, total, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, img, parent);
  free(img);
  for (int j = 0; j < nb && !rc; ++j) {
    size_t bytes = bufs[j]->bytes;
    if (!bytes) {
      continue;
    }
    cl_buffer_region region = {offs[j], bytes};
    cl_int err;
    cl_mem m = clCreateSubBuffer(parent->mem, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    if ((rc = eng_cl_check(err, "clCreateSubBuffer(device loop)"))) {
      break;
    }
    nestcl_buffer_free(e->device.dev, bufs[j]);
    bufs[j]->mem = m;
    bufs[j]->bytes = 0;
    bufs[j]->cls = cls;
  }
  return rc;
}

size_t eng_resident_base_align(const nestcl_engine *e)
{
  cl_uint bits = 1024;
  clGetDeviceInfo(nestcl_device_id(e->device.dev), CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL);
  return bits / 8 > 8 ? bits / 8 : 8;
}

/* The stream's rings as parts of one buffer (e->device.res.b_ring_all), at e->device.res.ring_off[p] elements. */
int eng_resident_rehome_rings(nestcl_engine *e, eng_vp *vp)
{
  eng_resident *r = &e->device.res;
  nestcl_buffer **bufs = calloc((size_t)e->desc.n_pops, sizeof *bufs);
  size_t *offs = calloc((size_t)e->desc.n_pops, sizeof *offs);
  int *pops = calloc((size_t)e->desc.n_pops, sizeof *pops);
  r->ring_off = calloc((size_t)e->desc.n_pops, sizeof *r->ring_off);
  if (!bufs || !offs || !pops || !r->ring_off) {
    free(bufs);
    free(offs);
    free(pops);
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  int nb = 0;
  for (int p = 0; p < e->desc.n_pops; ++p) {
    if (vp->blocks[p].n) {
      pops[nb] = p;
      bufs[nb++] = &vp->blocks[p].b_ring;
    }
  }
  int rc = rehome(e, nestcl_device_queue(e->device.dev, vp->queue), NESTCL_MEM_RING, "rings", nb, bufs,
                  eng_resident_base_align(e), &r->b_ring_all, offs);
  for (int j = 0; j < nb; ++j) {
    r->ring_off[pops[j]] = offs[j] / 8;
  }
  free(bufs);
  free(offs);
  free(pops);
  return rc;
}

/*
 * A kernel of u's merged update with its fixed arguments (origin, from and to
 * are set per launch); clocked: it reads the origin from the status words (a
 * command buffer's, resident_graph.c).
 */
cl_kernel eng_resident_update_kernel(nestcl_engine *e, const eng_update *u, int clocked, cl_int *err)
{
  const eng_resident *r = &e->device.res;
  const nestcl_model *m = e->desc.pops[u->pops[0]].model;
  cl_kernel k = clCreateKernel(u->prog, "nestcl_update_merged", err);
  if (*err != CL_SUCCESS) {
    return NULL;
  }
  double h = e->desc.cfg.resolution_ms;
  cl_uint slots = (cl_uint)e->clock.ring_slots, seed = e->desc.cfg.seed;
  cl_int c = clocked;
  cl_int x = clSetKernelArg(k, 0, sizeof(cl_mem), &u->b_tab.mem);
  x |= clSetKernelArg(k, 4, sizeof h, &h);
  x |= clSetKernelArg(k, 5, sizeof slots, &slots);
  x |= clSetKernelArg(k, 6, sizeof(cl_mem), &r->b_mm.mem);
  x |= clSetKernelArg(k, 7, sizeof seed, &seed);
  x |= clSetKernelArg(k, 8, sizeof(cl_mem), &r->b_ring_all.mem);
  x |= clSetKernelArg(k, 9, sizeof(cl_mem), &r->b_counts.mem);
  x |= clSetKernelArg(k, 10, sizeof(cl_mem), &r->b_spikes.mem);
  for (int f = 0; f < m->n_fields; ++f) {
    x |= clSetKernelArg(k, 11 + (cl_uint)f, sizeof(cl_mem), &u->parents[f].mem);
  }
  x |= clSetKernelArg(k, 11 + (cl_uint)m->n_fields, sizeof(cl_mem), &r->b_status.mem);
  x |= clSetKernelArg(k, 12 + (cl_uint)m->n_fields, sizeof c, &c);
  cl_ulong slot = 0;
  x |= clSetKernelArg(k, 13 + (cl_uint)m->n_fields, sizeof slot, &slot);
  if (x != CL_SUCCESS) {
    clReleaseKernel(k);
    *err = x;
    return NULL;
  }
  return k;
}

/* One merged update for the populations pops[0..np) of one model: fields moved, table, program, kernel. */
static int setup_one(nestcl_engine *e, eng_vp *vp, const int *pops, int np, eng_update *u)
{
  eng_resident *r = &e->device.res;
  const nestcl_model *m = e->desc.pops[pops[0]].model;
  cl_command_queue q = nestcl_device_queue(e->device.dev, vp->queue);
  const int stride = TAB_FIXED + m->n_fields;
  u->n = np;
  u->pops = malloc((size_t)np * sizeof *u->pops);
  u->parents = calloc((size_t)m->n_fields + 1, sizeof *u->parents);
  uint64_t *tab = calloc((size_t)np * (size_t)stride, sizeof *tab);
  nestcl_buffer **bufs = calloc((size_t)np, sizeof *bufs);
  size_t *offs = calloc((size_t)np, sizeof *offs);
  void *const **sets = calloc((size_t)np, sizeof *sets);
  uint32_t *ns = calloc((size_t)np, sizeof *ns);
  int rc = (!u->pops || !u->parents || !tab || !bufs || !offs || !sets || !ns)
    ? nestcl_set_error(NESTCL_ENOMEM, "out of host memory")
    : 0;
  uint32_t kmax = 1;
  for (int j = 0; j < np && !rc; ++j) {
    const eng_block *b = &vp->blocks[pops[j]];
    uint64_t *t = tab + (size_t)j * stride;
    u->pops[j] = pops[j];
    t[0] = b->n;
    t[1] = e->desc.pops[pops[j]].K;
    t[2] = b->n_channels;
    t[3] = b->spike_cap;
    t[4] = r->ring_off[pops[j]];
    t[5] = r->table[4 * pops[j]];
    t[6] = r->table[4 * pops[j] + 1];
    t[7] = b->first_gid;
    t[8] = (uint64_t)e->desc.pops[pops[j]].rec_interval_steps;
    t[9] = r->mm_off ? r->mm_off[pops[j]] : 0;
    u->width = b->n > u->width ? b->n : u->width;
    kmax = e->desc.pops[pops[j]].K > kmax ? e->desc.pops[pops[j]].K : kmax;
    sets[j] = b->fields;
    ns[j] = b->n;
  }
  size_t align = eng_resident_base_align(e);
  for (int f = 0; f < m->n_fields && !rc; ++f) {
    for (int j = 0; j < np; ++j) {
      bufs[j] = &vp->blocks[pops[j]].b_fields[f];
    }
    char what[160];
    snprintf(what, sizeof what, "%s.%s (merged)", m->name, m->fields[f].member);
    rc = rehome(e, q, NESTCL_MEM_STATE, what, np, bufs, align, &u->parents[f], offs);
    for (int j = 0; j < np && !rc; ++j) {
      tab[(size_t)j * stride + TAB_FIXED + f] = offs[j] / nestcl_field_type_size(m->fields[f].type);
    }
  }
  if (!rc)
    rc = nestcl_buffer_alloc(e->device.dev, NESTCL_MEM_OTHER, "merged update table", (size_t)np * stride * 8,
                             CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, tab, &u->b_tab);
  char *src = rc ? NULL : merged_source(m, stride, e->device.res.bucket_width != 0);
  if (!rc && !src)
    rc = nestcl_set_error(NESTCL_ERUNTIME, "the device loop cannot merge %s's kernel", m->name);
  char opt[4096];
  if (!rc) {
    nestcl_const_options(m, sets, ns, np, opt, sizeof opt - 64);
    size_t used = strlen(opt);
    snprintf(opt + used, sizeof opt - used, "%s-DNESTCL_LIBM_VARIANT=%d -DNESTCL_K_MAX=%u", used ? " " : "",
             e->device.libm_fused, kmax);
    rc = nestcl_program_build(e->device.dev, src, opt, &u->prog);
    u->opts = rc ? NULL : strdup(opt);
    if (!rc && !u->opts)
      rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  u->stride = stride;
  free(src);
  cl_int err = CL_SUCCESS;
  if (!rc) {
    u->k = eng_resident_update_kernel(e, u, 0, &err);
    rc = eng_cl_check(err, "the merged update kernel");
  }
  /*
   * Work-groups of up to 64 neurons of one block, the global size rounded up
   * (the model returns beyond its n): left to the driver, a block of prime
   * size could run in work-groups of one.
   */
  if (!rc)
    rc = nestcl_kernel_wg_width(e->device.dev, u->k, "nestcl_update_merged", 64, &u->group);
  if (!rc)
    u->width = (u->width + u->group - 1) / u->group * u->group;
  free(tab);
  free(bufs);
  free(offs);
  free(sets);
  free(ns);
  return rc;
}

int eng_resident_update_setup(nestcl_engine *e, eng_vp *vp)
{
  eng_resident *r = &e->device.res;
  /* Each sampled population's records within a slice's slot, in population order. */
  r->mm_off = calloc((size_t)e->desc.n_pops, sizeof *r->mm_off);
  if (!r->mm_off) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  size_t off = 0;
  for (int p = 0; p < e->desc.n_pops; ++p) {
    r->mm_off[p] = off;
    off += e->desc.pops[p].rec_interval_steps ? vp->blocks[p].rec_elems : 0;
  }
  r->upd = calloc((size_t)e->desc.n_pops, sizeof *r->upd);
  r->merged_pop = calloc((size_t)e->desc.n_pops, sizeof *r->merged_pop);
  int *pops = calloc((size_t)e->desc.n_pops, sizeof *pops);
  if (!r->upd || !r->merged_pop || !pops) {
    free(pops);
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  int rc = 0;
  for (int p = 0; p < e->desc.n_pops && !rc; ++p) {
    if (r->merged_pop[p] || !mergeable(e, vp, p)) {
      continue;
    }
    int np = 0;
    for (int q = p; q < e->desc.n_pops; ++q) {
      if (e->desc.pops[q].model == e->desc.pops[p].model && mergeable(e, vp, q)) {
        pops[np++] = q;
        r->merged_pop[q] = 1;
      }
    }
    rc = setup_one(e, vp, pops, np, &r->upd[r->n_upd++]);
  }
  free(pops);
  return rc;
}

void eng_resident_update_free(nestcl_engine *e)
{
  eng_resident *r = &e->device.res;
  for (int k = 0; r->upd && k < r->n_upd; ++k) {
    eng_update *u = &r->upd[k];
    if (u->k)
      clReleaseKernel(u->k);
    if (u->prog)
      clReleaseProgram(u->prog);
    free(u->opts);
    if (e->device.dev) {
      const nestcl_model *m = e->desc.pops[u->pops[0]].model;
      for (int f = 0; u->parents && f < m->n_fields; ++f) {
        nestcl_buffer_free(e->device.dev, &u->parents[f]);
      }
      nestcl_buffer_free(e->device.dev, &u->b_tab);
    }
    free(u->parents);
    free(u->pops);
  }
  free(r->upd);
  free(r->merged_pop);
  free(r->ring_off);
  free(r->mm_off);
  r->mm_off = NULL;
  if (e->device.dev)
    nestcl_buffer_free(e->device.dev, &r->b_ring_all);
  r->upd = NULL;
  r->merged_pop = NULL;
  r->ring_off = NULL;
  r->n_upd = 0;
}

/* The slice's updates: one launch per merged model, one per population of the others. */
cl_int eng_resident_enqueue_update(nestcl_engine *e, eng_vp *vp, cl_command_queue q, int64_t origin, int from, int to,
                                   int slot)
{
  eng_resident *r = &e->device.res;
  cl_long org = origin;
  cl_ulong rec_slot = (cl_ulong)slot * r->plan.mm_slot;
  cl_int f = from, t = to, err = CL_SUCCESS;
  for (int k = 0; k < r->n_upd && err == CL_SUCCESS; ++k) {
    eng_update *u = &r->upd[k];
    const nestcl_model *m = e->desc.pops[u->pops[0]].model;
    err = clSetKernelArg(u->k, 13 + (cl_uint)m->n_fields, sizeof rec_slot, &rec_slot);
    err |= clSetKernelArg(u->k, 1, sizeof org, &org);
    err |= clSetKernelArg(u->k, 2, sizeof f, &f);
    err |= clSetKernelArg(u->k, 3, sizeof t, &t);
    size_t gs[2] = {u->width, (size_t)u->n}, ls[2] = {u->group, 1};
    if (err == CL_SUCCESS) {
      err = nestcl_enq_launch(&vp->st.enqueued, q, u->k, 2, gs, ls, 0, NULL, NULL);
    }
  }
  for (int p = 0; p < e->desc.n_pops && err == CL_SUCCESS; ++p) {
    eng_block *b = &vp->blocks[p];
    if (b->n == 0 || r->merged_pop[p]) {
      continue;
    }
    err = clSetKernelArg(b->k_update, 2, sizeof org, &org);
    err |= clSetKernelArg(b->k_update, 3, sizeof f, &f);
    err |= clSetKernelArg(b->k_update, 4, sizeof t, &t);
    size_t gsize = b->n;
    if (err == CL_SUCCESS) {
      err = nestcl_enq_launch(&vp->st.enqueued, q, b->k_update, 1, &gsize, NULL, 0, NULL, NULL);
    }
  }
  return err;
}
