/*
 * The device loop's end of a super step in one launch (issue 29): delivery of
 * the global list into every block of the stream and the Poisson and DC drive
 * of every driven block, instead of one launch per block and per drive.
 *
 * OpenCL 1.2 cannot keep buffer addresses in device memory, so, as GeNN
 * generates a merged group's code, the engine generates a kernel whose
 * arguments are every block's buffers and sizes (the rings as offsets into
 * the stream's one ring buffer) and which picks its item by the work-item's
 * index in dimension 2: item j < n_deliver delivers into a block, the others
 * drive a block. A kernel's arguments may take CL_DEVICE_MAX_PARAMETER_SIZE
 * bytes (1,024 on PoCL, 4,352 on NVIDIA's drivers): items beyond that go to a
 * second kernel of the same kind, and so on.
 *
 * The drive of a whole super step runs at its end: a drive's delay is at
 * least the min delay (it counts in it), so its inputs land in the slots of
 * later super steps, which no update of this one reads. Ring additions are
 * integer atomics (nestcl_fixed_add), so delivery and drive may add into one
 * cell together; the drives of one block run one after the other for each
 * neuron, in the engine's order.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine_internal.h"
#include "engine_kernels_source.h"
#include "enqueue.h"
#include "gen_text.h"
#include "nestcl_rt_source.h"

/*
 * Arguments: the fixed ones, then per delivered block its CSR buffers, per
 * drive its Poisson table; the sizes, offsets and the drives' values and
 * windows are constants of the generated source. Their bytes (pointers as 8).
 */
enum { FIXED = 8, PER_DELIVER = 4, PER_DRIVE = 1 };
enum { FIXED_B = 56, DELIVER_B = 32, DRIVEN_B = 0, DRIVE_B = 8 };

/* The drives of population p, in the engine's order. */
static int block_drives(const nestcl_engine *e, int p, int *out)
{
  int m = 0;
  for (int k = 0; k < e->desc.n_drives; ++k) {
    if (e->desc.drives[k].pop == p) {
      out[m++] = k;
    }
  }
  return m;
}

/* Launch l's own parameters: per delivered block its CSR, per drive of a driven block its Poisson table. */
static void gen_params(const nestcl_engine *e, text *t, const eng_launch *l, int *drv, const char *pfx)
{
  for (int j = 0; j < l->n_items; ++j) {
    if (j < l->n_deliver) {
      put(t,
          ",\n  __global const ulong *%srp%d, __global const uint *%stg%d, __global const NESTCL_W_T *%sw%d,"
          " __global const nestcl_u16 *%sd%d",
          pfx, j, pfx, j, pfx, j, pfx, j);
      continue;
    }
    int m = block_drives(e, l->items[j], drv);
    for (int k = 0; k < m; ++k) {
      put(t, ",\n  __global const double *%scdf%d_%d", pfx, j, k);
    }
  }
}

/*
 * The body of launch l's kernel: its work-groups take units in turn (unit u
 * from get_group_id(1), stepping by the grid's work-groups), as many as the
 * super step has: a delivery unit per spike of the global list and delivered
 * block (block-major), then a drive unit per CH (a multiple of the width)
 * neurons of each driven block whose drives are on in this super step (none
 * otherwise). The grid is fixed and small (step_groups, resident.c), so the
 * kernel costs what its units cost, not what the longest list could (issue
 * 41).
 */
static void gen_units(const nestcl_engine *e, const eng_vp *vp, text *t, const eng_launch *l, int *drv, const char *pfx,
                      int dim)
{
  const eng_resident *r = &e->device.res;
  /*
   * A drive unit: CH neurons, W per pass. On GPUs one pass (a neuron per
   * work-item); on CPU devices, whose work-groups are one work-item wide
   * (contiguous delivery), 64 neurons, so that a unit's bookkeeping (finding
   * its block, its window) is not paid per neuron.
   */
  put(t,
      "  const uint W = (uint)get_local_size(0), lid = (uint)get_local_id(0), CH = W * %du;\n  int f, t;\n"
      "  (void)f; (void)t;\n",
      e->device.deliver_contiguous ? 64 : 1);
  for (int j = l->n_deliver; j < l->n_items; ++j) {
    int m = block_drives(e, l->items[j], drv);
    put(t, "  ulong c%d = 0ul; /* population %d's drive units: none while its drives are off */\n", j, l->items[j]);
    for (int k = 0; k < m; ++k) {
      const eng_drive *d = &e->desc.drives[drv[k]];
      put(
        t,
        "  nestcl_drive_window(%lldl, %lldl, origin, %d, &f, &t);\n  if (f < t) {\n    c%d = (%uul + CH - 1ul) / CH;\n  }\n",
        (long long)d->start_step, (long long)d->stop_step, e->clock.min_delay, j, vp->blocks[l->items[j]].n);
    }
  }
  put(t, "  const ulong n_spikes = status[NESTCL_RES_GLOBAL_N + parity], nd = n_spikes * %dul;\n", l->n_deliver);
  put(t, "  const ulong total = nd");
  for (int j = l->n_deliver; j < l->n_items; ++j) {
    put(t, " + c%d", j);
  }
  put(t, ";\n  for (ulong u = get_group_id(%d); u < total; u += get_num_groups(%d)) {\n", dim, dim);
  if (l->n_deliver) {
    /*
     * Block-major (unit u: block u / n, spike u - that n; n the list's
     * length), so that the block's index has no range the compiler knows:
     * spike-major, u mod 8 blocks became a switch on an i3, which oclgrind
     * 21.10 misreads (docs/oclgrind-reports.md, 7).
     */
    put(t, "    if (u < nd) {\n      const ulong j = u / n_spikes, s = u - j * n_spikes;\n      switch (j) {\n");
    for (int j = 0; j < l->n_deliver; ++j) {
      const eng_block *b = &vp->blocks[l->items[j]];
      put(t,
          "      case %d: nestcl_deliver_spike(spikes, s, origin, %srp%d, %stg%d, %sw%d, %sd%d, %uu, ring + %lluul,"
          " ring_slots, %uu, %uu); break;\n",
          j, pfx, j, pfx, j, pfx, j, pfx, j, b->delay_hom, (unsigned long long)r->ring_off[l->items[j]], b->n,
          b->n_channels);
    }
    put(t, "      default: break;\n      }\n      continue;\n    }\n");
  }
  put(t, "    ulong v = u - nd;\n    (void)v;\n");
  for (int j = l->n_deliver; j < l->n_items; ++j) {
    const eng_block *b = &vp->blocks[l->items[j]];
    const unsigned long long ro = r->ring_off[l->items[j]];
    put(t,
        "    if (v < c%d) {\n      const uint i1 = min((uint)v * CH + CH, %uu);\n"
        "      for (uint i = (uint)v * CH + lid; i < i1; i += W) {\n",
        j, b->n);
    int m = block_drives(e, l->items[j], drv);
    for (int k = 0; k < m; ++k) {
      const eng_drive *d = &e->desc.drives[drv[k]];
      /* eng_drive_window over the whole super step, on the device; the drives of a neuron in the engine's order. */
      put(t, "        nestcl_drive_window(%lldl, %lldl, origin, %d, &f, &t);\n", (long long)d->start_step,
          (long long)d->stop_step, e->clock.min_delay);
      put(t,
          "        nestcl_drive_neuron(ring + %lluul, %uu, %uu, ring_slots, %uu, i, %lluul, %uu, origin, f, t, %d,"
          " %lldl, %d, seed, %scdf%d_%d, %uu, %uu, %uu);\n",
          ro, b->n_channels, b->n, (unsigned)d->channel, (unsigned long long)b->first_gid, d->gen, d->delay_steps,
          (long long)d->value_fixed, d->is_poisson, pfx, j, k, d->cdf_len, d->kstop, d->chunks);
    }
    put(t, "      }\n      continue;\n    }\n    v -= c%d;\n", j);
  }
  put(t, "  }\n");
}

/* Kernel `name` for launch l: items [0, n_deliver) deliver, the rest drive (gen_units). */
static void gen_kernel(const nestcl_engine *e, const eng_vp *vp, text *t, const char *name, const eng_launch *l,
                       int *drv)
{
  const eng_resident *r = &e->device.res;
  put(t,
      "__kernel void %s(__global const uint *spikes, __global ulong *status, uint parity, long origin,\n"
      "  uint ring_slots, __global long *ring, uint seed, int clocked",
      name);
  gen_params(e, t, l, drv, "");
  /* A replay (clocked) reads its origin from the status words and advances the clock for the next one. */
  put(t, ")\n{\n");
  if (r->bucket_width) {
    /* Plastic synapses: the loop can halt (resident_plastic.c), and nothing runs then. */
    put(t, "  if (status[NESTCL_RES_HALT] != 0ul) {\n    return; /* the host resumes this super step */\n  }\n");
  }
  put(t,
      "  if (clocked) {\n    origin = (long)status[NESTCL_RES_CLOCK_END];\n"
      "    parity = (uint)((origin / %d) & 1);\n"
      "    if (get_global_id(0) == 0 && get_global_id(1) == 0) {\n"
      "      status[NESTCL_RES_CLOCK] = (ulong)(origin + %d);\n    }\n  }\n",
      e->clock.min_delay, e->clock.min_delay);
  gen_units(e, vp, t, l, drv, "", 1);
  put(t, "}\n\n");
}

/*
 * Splits the items (blocks with synapses to deliver through, then driven
 * blocks) into launches whose arguments fit max_param bytes.
 */
static int plan_launches(nestcl_engine *e, const eng_vp *vp, size_t max_param, int *drv)
{
  eng_resident *r = &e->device.res;
  r->launches = calloc(2 * (size_t)e->desc.n_pops + 1, sizeof *r->launches);
  if (!r->launches) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  size_t bytes = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (int p = 0; p < e->desc.n_pops; ++p) {
      const eng_block *b = &vp->blocks[p];
      int m = pass ? block_drives(e, p, drv) : 0;
      if (b->n == 0 || (pass ? m == 0 : b->nnz == 0)) {
        continue;
      }
      size_t need = pass ? DRIVEN_B + (size_t)m * DRIVE_B : DELIVER_B;
      if (FIXED_B + need > max_param) {
        return nestcl_set_error(NESTCL_ENODEV,
                                "the device takes %zu bytes of kernel arguments; the device loop's "
                                "merged kernel needs %zu for population %d (%s)",
                                max_param, FIXED_B + need, p, e->desc.pops[p].model->name);
      }
      /* A new launch when this one is full (delivery items first, then drives, in each). */
      if (r->n_launches == 0 || bytes + need > max_param) {
        eng_launch *l = &r->launches[r->n_launches++];
        l->items = malloc(2 * (size_t)e->desc.n_pops * sizeof *l->items);
        if (!l->items) {
          return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
        }
        bytes = FIXED_B;
      }
      eng_launch *l = &r->launches[r->n_launches - 1];
      l->items[l->n_items++] = p;
      l->n_deliver += pass == 0;
      bytes += need;
    }
  }
  return 0;
}

/* Launch l's own arguments of kernel k from index *a on (gen_params' order); the longest row delivered. */
static size_t item_args(nestcl_engine *e, eng_vp *vp, const eng_launch *l, cl_kernel k, cl_uint *a, int *drv,
                        cl_int *err)
{
  size_t max_row = 1;
  for (int j = 0; j < l->n_items; ++j) {
    const eng_block *b = &vp->blocks[l->items[j]];
    if (j < l->n_deliver) {
      *err |= clSetKernelArg(k, *a, sizeof(cl_mem), &b->b_row.mem);
      *err |= clSetKernelArg(k, *a + 1, sizeof(cl_mem), &b->b_target.mem);
      *err |= clSetKernelArg(k, *a + 2, sizeof(cl_mem), &b->b_weight.mem);
      *err |= clSetKernelArg(k, *a + 3, sizeof(cl_mem), &b->b_delay.mem);
      *a += PER_DELIVER;
      max_row = b->max_row > max_row ? b->max_row : max_row;
      continue;
    }
    int m = block_drives(e, l->items[j], drv);
    for (int q = 0; q < m; ++q, *a += PER_DRIVE) {
      *err |= clSetKernelArg(k, *a, sizeof(cl_mem), &e->desc.drives[drv[q]].b_cdf.mem);
    }
  }
  return max_row;
}

/* The arguments of launch l's kernel k (the rest is in its source; parity and origin are set per launch). */
static cl_int set_args(nestcl_engine *e, eng_vp *vp, eng_launch *l, cl_kernel k, int clocked, int *drv)
{
  eng_resident *r = &e->device.res;
  cl_uint slots = (cl_uint)e->clock.ring_slots, seed = e->desc.cfg.seed;
  cl_int c = clocked;
  cl_int err = clSetKernelArg(k, 0, sizeof(cl_mem), &vp->b_global.mem);
  err |= clSetKernelArg(k, 1, sizeof(cl_mem), &r->b_status.mem);
  err |= clSetKernelArg(k, 4, sizeof slots, &slots);
  err |= clSetKernelArg(k, 5, sizeof(cl_mem), &r->b_ring_all.mem);
  err |= clSetKernelArg(k, 6, sizeof seed, &seed);
  err |= clSetKernelArg(k, 7, sizeof c, &c);
  cl_uint a = FIXED;
  size_t max_row = item_args(e, vp, l, k, &a, drv, &err);
  /* Work-items per spike (and per group of driven neurons): the engine's width within this kernel's limit. */
  size_t w;
  if (nestcl_kernel_wg_width(e->device.dev, k, "nestcl_step_merged", e->device.deliver_width, &w)) {
    return CL_INVALID_KERNEL;
  }
  l->width = l->n_deliver && w > max_row ? max_row : w;
  return err;
}

/* Launch number `index`'s kernel with its arguments; clocked: see resident_graph.c. */
cl_kernel eng_resident_launch_kernel(nestcl_engine *e, eng_vp *vp, int index, int clocked, cl_int *err)
{
  eng_resident *r = &e->device.res;
  char name[64];
  snprintf(name, sizeof name, "nestcl_step_merged_%d", index);
  cl_kernel k = clCreateKernel(r->merged, name, err);
  if (*err != CL_SUCCESS) {
    return NULL;
  }
  int *drv = malloc(((size_t)e->desc.n_drives + 1) * sizeof *drv);
  cl_int x = drv ? set_args(e, vp, &r->launches[index], k, clocked, drv) : CL_OUT_OF_HOST_MEMORY;
  free(drv);
  if (x != CL_SUCCESS) {
    clReleaseKernel(k);
    *err = x;
    return NULL;
  }
  return k;
}

int eng_resident_merge_setup(nestcl_engine *e, eng_vp *vp)
{
  eng_resident *r = &e->device.res;
  size_t max_param = 1024;
  clGetDeviceInfo(nestcl_device_id(e->device.dev), CL_DEVICE_MAX_PARAMETER_SIZE, sizeof max_param, &max_param, NULL);
  int *drv = malloc(((size_t)e->desc.n_drives + 1) * sizeof *drv);
  if (!drv) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  int rc = plan_launches(e, vp, max_param, drv);
  text t = {0};
  put(&t, "%s\n%s\n", nestcl_rt_source, nestcl_engine_kernels_source);
  char name[64];
  for (int k = 0; k < r->n_launches && !rc; ++k) {
    snprintf(name, sizeof name, "nestcl_step_merged_%d", k);
    gen_kernel(e, vp, &t, name, &r->launches[k], drv);
  }
  if (!rc && t.oom)
    rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  char opt[160];
  snprintf(opt, sizeof opt, "%s%s",
           e->desc.cfg.weight_type == NESTCL_WEIGHT_DOUBLE ? "-DNESTCL_W_T=double -DNESTCL_W_SUFFIX=_d"
                                                           : "-DNESTCL_W_T=float -DNESTCL_W_SUFFIX=_f",
           e->device.deliver_contiguous ? " -DNESTCL_DELIVER_CONTIGUOUS=1" : "");
  if (!rc && r->n_launches)
    rc = nestcl_program_build(e->device.dev, t.s, opt, &r->merged);
  free(t.s);
  for (int k = 0; k < r->n_launches && !rc; ++k) {
    cl_int err;
    r->launches[k].k = eng_resident_launch_kernel(e, vp, k, 0, &err);
    rc = eng_cl_check(err, "the merged end of a super step");
  }
  free(drv);
  return rc;
}

void eng_resident_merge_free(nestcl_engine *e)
{
  eng_resident *r = &e->device.res;
  for (int k = 0; r->launches && k < r->n_launches; ++k) {
    if (r->launches[k].k)
      clReleaseKernel(r->launches[k].k);
    free(r->launches[k].items);
  }
  free(r->launches);
  if (r->merged)
    clReleaseProgram(r->merged);
  r->launches = NULL;
  r->n_launches = 0;
  r->merged = NULL;
}

/* The end of the super step at origin: delivery and the drives of its lags [0, min_delay). */
cl_int eng_resident_enqueue_step_end(nestcl_engine *e, eng_vp *vp, cl_command_queue q, int64_t origin, cl_uint parity)
{
  eng_resident *r = &e->device.res;
  cl_long org = origin;
  cl_int err = CL_SUCCESS;
  int drv[64], *dp = e->desc.n_drives <= 64 ? drv : malloc((size_t)e->desc.n_drives * sizeof *dp);
  if (!dp) {
    return CL_OUT_OF_HOST_MEMORY;
  }
  for (int k = 0; k < r->n_launches && err == CL_SUCCESS; ++k) {
    eng_launch *l = &r->launches[k];
    /* A launch that only drives, when none of its drives is on in this super step, is left out. */
    int active = l->n_deliver > 0;
    for (int j = l->n_deliver; j < l->n_items && !active; ++j) {
      int m = block_drives(e, l->items[j], dp);
      for (int i = 0; i < m && !active; ++i) {
        int f2, t2;
        active = eng_drive_window(&e->desc.drives[dp[i]], origin, 0, e->clock.min_delay, &f2, &t2);
      }
    }
    err = clSetKernelArg(l->k, 2, sizeof parity, &parity);
    err |= clSetKernelArg(l->k, 3, sizeof org, &org);
    size_t gs[2] = {l->width, r->step_groups}, ls[2] = {l->width, 1};
    if (err == CL_SUCCESS && active) {
      err = nestcl_enq_launch(&vp->st.enqueued, q, l->k, 2, gs, ls, 0, NULL, NULL);
    }
  }
  if (dp != drv) {
    free(dp);
  }
  return err;
}

/*
 * The persistent loop's end of a super step (resident_persist.c): every
 * launch's parameters (params: ",\n  ..." each, named L<k>_...), or their
 * units, for the work-groups of dimension 0, each launch in a scope of its
 * own (the names its body declares repeat). NULL: out of memory.
 */
char *eng_resident_step_text(const nestcl_engine *e, const eng_vp *vp, int params)
{
  const eng_resident *r = &e->device.res;
  int *drv = malloc(((size_t)e->desc.n_drives + 1) * sizeof *drv);
  text t = {0};
  put(&t, "%s", "");
  for (int k = 0; drv && k < r->n_launches; ++k) {
    char pfx[32];
    snprintf(pfx, sizeof pfx, "L%d_", k);
    if (params) {
      gen_params(e, &t, &r->launches[k], drv, pfx);
      continue;
    }
    put(&t, "    { /* the end of the super step, part %d */\n", k);
    gen_units(e, vp, &t, &r->launches[k], drv, pfx, 0);
    put(&t, "    }\n");
  }
  if (!drv || t.oom) {
    free(t.s);
    t.s = NULL;
  }
  free(drv);
  return t.s;
}

/* The arguments of eng_resident_step_text's parameters of kernel k from index *a on. */
cl_int eng_resident_step_args(nestcl_engine *e, eng_vp *vp, cl_kernel k, cl_uint *a)
{
  eng_resident *r = &e->device.res;
  int *drv = malloc(((size_t)e->desc.n_drives + 1) * sizeof *drv);
  cl_int err = drv ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
  for (int j = 0; drv && j < r->n_launches; ++j) {
    item_args(e, vp, &r->launches[j], k, a, drv, &err);
  }
  free(drv);
  return err;
}
