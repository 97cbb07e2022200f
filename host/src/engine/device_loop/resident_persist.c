/*
 * The persistent device loop (issue 41; docs/architecture.md, "The device
 * loop"): where the device runs all of a kernel's work-groups at once, one
 * launch runs many super steps. Its phases, the merged update of every
 * neuron, the gather (nestcl_gather_block) and the end of the super step
 * (resident_merge.c's units: delivery and drive), are separated by software
 * grid barriers (nestcl_grid_sync, engine_kernels.cl), so that a super step
 * costs two or three barriers of about a microsecond and a half on a GPU
 * instead of three launches of about six. The host enqueues the next launch
 * while the device runs this one (resident_run.c): its loop is the launched
 * loop's, with a launch for many super steps in place of three per super
 * step, and the drains, the throttle and the recording as they were.
 *
 * Residency: the launch has one work-group per compute unit (its width the
 * kernel's limit, at most 256 work-items), which a device runs at once when
 * nothing else runs on it: OpenCL 1.2 says nothing of occupancy, but a kernel
 * whose CL_KERNEL_WORK_GROUP_SIZE admits the width can hold one group per
 * unit. A barrier that does not complete within a bound (spins) sets the
 * loop's error word instead of hanging; the host then stops with an error
 * that names the device, and later device loops of this process launch
 * their kernels one by one on it.
 *
 * Where: one stream, no threads or ranks beside it (the device loop), the
 * populations all of one merged model, no plastic synapses (their halts and
 * resumes stay launched), no multimeter, the kernel's arguments within the
 * device's parameter size; nestcl_engine_config.persistent -1 (default) on
 * GPUs, 1 on any device (PoCL's CPU device runs one group per thread: the
 * tests use it), 0 never. Results are those of the launched loop, bit for
 * bit: the same functions run in the same order on the same data.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine_internal.h"
#include "engine_kernels_source.h"
#include "enqueue.h"
#include "gen_text.h"
#include "nestcl_rt_source.h"

/* The spins of a barrier before it fails: reads of an atomic word, about 0.5 us each on a GPU, 20 ns on a CPU. */
#define SPINS_GPU ((cl_ulong)1 << 23)
#define SPINS_CPU ((cl_ulong)1 << 27)

struct eng_persist {
  cl_program prog;
  cl_kernel k;
  nestcl_buffer b_bar; /* arrivals, generation, error word (nestcl_grid_sync), one spare */
  size_t groups, width;
  cl_ulong spins;
  cl_uint arg_origin; /* origin0, n_ss and window_origin follow it */
  char device[256];
};

/* Devices on which a persistent loop's barrier failed in this process: their later loops launch. */
static pthread_mutex_t failed_lock = PTHREAD_MUTEX_INITIALIZER;
static char failed_devices[8][256];
static int n_failed;

static int failed_before(const char *device)
{
  pthread_mutex_lock(&failed_lock);
  int hit = 0;
  for (int k = 0; k < n_failed && !hit; ++k) {
    hit = strcmp(failed_devices[k], device) == 0;
  }
  pthread_mutex_unlock(&failed_lock);
  return hit;
}

static void remember_failure(const char *device)
{
  if (failed_before(device)) {
    return;
  }
  pthread_mutex_lock(&failed_lock);
  if (n_failed < 8) {
    snprintf(failed_devices[n_failed++], sizeof failed_devices[0], "%s", device);
  }
  pthread_mutex_unlock(&failed_lock);
}

/*
 * A positive number from the environment, else def: the tests' overrides of
 * the work-groups (NESTCL_PERSISTENT_GROUPS: more than the device runs at
 * once), their width (NESTCL_PERSISTENT_WIDTH: more than it takes) and the
 * spin bound (NESTCL_PERSISTENT_SPINS), which make the failures happen.
 */
static unsigned long long env_count(const char *name, unsigned long long def)
{
  const char *v = getenv(name);
  char *end;
  unsigned long long x = v ? strtoull(v, &end, 10) : 0;
  return v && *v && !*end && x > 0 ? x : def;
}

/* Whether this device loop can run persistent (why not, for NESTCL_VERBOSE, in *why). */
static int eligible(const nestcl_engine *e, const eng_vp *vp, const char **why)
{
  const eng_resident *r = &e->device.res;
  const nestcl_device_info *di = nestcl_device_get_info(e->device.dev);
  const int mode = e->desc.cfg.persistent;
  *why = mode == 0                             ? "--no-persistent"
    : mode < 0 && strcmp(di->type, "gpu") != 0 ? "not a GPU (--persistent runs it there)"
    : !r->full                                 ? "threads or ranks beside the stream"
    : r->bucket_width || r->plan.mm_slot       ? "plastic synapses or a multimeter"
    : r->n_upd != 1 || r->n_launches < 1       ? "not one merged model"
    : failed_before(di->device_name)           ? "its grid barrier failed on this device before"
                                               : NULL;
  for (int p = 0; p < e->desc.n_pops && !*why; ++p) {
    if (vp->blocks[p].n && !r->merged_pop[p]) {
      *why = "a population updated on its own";
    }
  }
  return *why == NULL;
}

/* The kernel's source: the model's update as a function of the neuron, the engine's kernels, the loop. */
static char *source(const nestcl_engine *e, const eng_vp *vp)
{
  const eng_resident *r = &e->device.res;
  const eng_update *u = &r->upd[0];
  const nestcl_model *m = e->desc.pops[u->pops[0]].model;
  char *at = eng_resident_update_at_source(m);
  char *params = eng_resident_step_text(e, vp, 1), *units = eng_resident_step_text(e, vp, 0);
  size_t cap = (at ? strlen(at) : 0) + (params ? strlen(params) : 0) + (units ? strlen(units) : 0) +
    strlen(nestcl_rt_source) + strlen(nestcl_engine_kernels_source) + 8192 + (size_t)m->n_fields * 96;
  char *s = at && params && units ? malloc(cap) : NULL;
  size_t n = 0;
#define PUT(...) (n += (size_t)snprintf(s + n, cap - n, __VA_ARGS__))
  if (s) {
    PUT("%s\n%s\n%s\n", nestcl_rt_source, at, nestcl_engine_kernels_source);
    PUT(
      "__kernel void nestcl_persistent(__global const ulong *tab, const double resolution_ms, const uint ring_slots,\n"
      "  __global double *rec_mm, const uint rng_seed, __global long *ring, __global uint *counts,\n"
      "  __global uint *spikes, __global const uint *blocks, __global const ulong *block_gid,\n"
      "  __global uint *global_list, __global ulong *status, __global const uint *out_degree,\n"
      "  __global const uchar *recorded, __global uint *rec, const ulong rec_cap, __global uint *errs,\n"
      "  __global ulong *bucket_word, __global uint *bucket_src, __global uint *bucket_lags, const uint seed,\n"
      "  volatile __global uint *bar, const ulong spins");
    for (int f = 0; f < m->n_fields; ++f) {
      PUT(",\n  __global %s *f%d", nestcl_cl_type_name(m->fields[f].type), f);
    }
    PUT("%s,\n  const long origin0, const uint n_ss, const long window_origin)\n{\n", params);
    PUT(
      "  __local uint bad, stop;\n  const uint groups = (uint)get_num_groups(0);\n"
      "  const ulong g0 = get_global_id(0), gs = get_global_size(0);\n"
      "  for (uint ss = 0u; ss < n_ss; ++ss) {\n    const long origin = origin0 + (long)ss * %dl;\n"
      "    const uint parity = (uint)((origin / %dl) & 1);\n"
      "    for (uint j = 0u; j < %du; ++j) {\n      __global const ulong *t = tab + %du * j;\n"
      "      for (ulong i = g0; i < t[0]; i += gs) {\n"
      "        %s_at((uint)i, (uint)t[0], (uint)t[1], origin, 0, %d, resolution_ms, ring_slots, (uint)t[2],\n"
      "          ring + t[4], counts + t[5], (__global uint2 *)spikes + t[6], (uint)t[3], (long)t[8], rec_mm + t[9],\n"
      "          rng_seed, t[7], 1ul",
      e->clock.min_delay, e->clock.min_delay, u->n, u->stride, m->kernel_name, e->clock.min_delay);
    for (int f = 0; f < m->n_fields; ++f) {
      PUT(", f%d + t[%d]", f, u->stride - m->n_fields + f);
    }
    PUT(");\n      }\n    }\n    if (nestcl_grid_sync(bar, groups, spins, &stop)) {\n      return;\n    }\n"
        "    for (uint b = (uint)get_group_id(0); b < %du; b += groups) {\n"
        "      nestcl_gather_block(b, &bad, 0, 0, counts, spikes, blocks, block_gid, %du, origin, parity,\n"
        "        global_list, status, out_degree, recorded, rec, rec_cap, window_origin, errs, bucket_word,\n"
        "        bucket_src, bucket_lags, 0u);\n    }\n"
        "    if (nestcl_grid_sync(bar, groups, spins, &stop)) {\n      return;\n    }\n"
        "    {\n      /* the end of the super step delivers the global list (its kernels' `spikes`) */\n"
        "      __global const uint *spikes = global_list;\n%s    }\n"
        "    if (nestcl_grid_sync(bar, groups, spins, &stop)) {\n      return;\n    }\n  }\n}\n",
        e->desc.n_pops, e->clock.min_delay, units);
    if (n >= cap) {
      free(s);
      s = NULL;
    }
  }
#undef PUT
  free(at);
  free(params);
  free(units);
  return s;
}

/* nestcl_persistent's fixed leading arguments (source()'s order); the model's fields, the units' and the launch's follow. */
enum {
  PA_TAB,
  PA_RESOLUTION,
  PA_RING_SLOTS,
  PA_REC_MM,
  PA_RNG_SEED,
  PA_RING,
  PA_COUNTS,
  PA_SPIKES,
  PA_BLOCKS,
  PA_BLOCK_GID,
  PA_GLOBAL_LIST,
  PA_STATUS,
  PA_OUT_DEGREE,
  PA_RECORDED,
  PA_REC,
  PA_REC_CAP,
  PA_ERRS,
  PA_BUCKET_WORD,
  PA_BUCKET_SRC,
  PA_BUCKET_LAGS,
  PA_SEED,
  PA_BAR,
  PA_SPINS,
  PA_FIELDS
};

/* The kernel's arguments but the per-launch ones (origin0, n_ss and window_origin from p->arg_origin on). */
static cl_int set_args(nestcl_engine *e, eng_vp *vp, struct eng_persist *p)
{
  eng_resident *r = &e->device.res;
  const eng_update *u = &r->upd[0];
  const nestcl_model *m = e->desc.pops[u->pops[0]].model;
  cl_kernel k = p->k;
  cl_double h = e->desc.cfg.resolution_ms;
  cl_uint slots = (cl_uint)e->clock.ring_slots, seed = e->desc.cfg.seed;
  cl_ulong cap = r->plan.rec_cap, spins = p->spins;
  const struct {
    cl_uint at;
    const cl_mem *mem;
  } bufs[] = {{PA_TAB, &u->b_tab.mem},
              {PA_REC_MM, &r->b_mm.mem},
              {PA_RING, &r->b_ring_all.mem},
              {PA_COUNTS, &r->b_counts.mem},
              {PA_SPIKES, &r->b_spikes.mem},
              {PA_BLOCKS, &r->b_table.mem},
              {PA_BLOCK_GID, &r->b_gids.mem},
              {PA_GLOBAL_LIST, &vp->b_global.mem},
              {PA_STATUS, &r->b_status.mem},
              {PA_OUT_DEGREE, &r->b_degree.mem},
              {PA_RECORDED, &r->b_recorded.mem},
              {PA_REC, &r->b_rec.mem},
              {PA_ERRS, &r->b_errs.mem},
              {PA_BUCKET_WORD, &r->b_bucket_word.mem},
              {PA_BUCKET_SRC, &r->b_bucket_src.mem},
              {PA_BUCKET_LAGS, &r->b_bucket_lags.mem},
              {PA_BAR, &p->b_bar.mem}};
  cl_int err = CL_SUCCESS;
  for (size_t b = 0; b < sizeof bufs / sizeof bufs[0]; ++b) {
    err |= clSetKernelArg(k, bufs[b].at, sizeof(cl_mem), bufs[b].mem);
  }
  err |= clSetKernelArg(k, PA_RESOLUTION, sizeof h, &h);
  err |= clSetKernelArg(k, PA_RING_SLOTS, sizeof slots, &slots);
  err |= clSetKernelArg(k, PA_RNG_SEED, sizeof seed, &seed);
  err |= clSetKernelArg(k, PA_REC_CAP, sizeof cap, &cap);
  err |= clSetKernelArg(k, PA_SEED, sizeof seed, &seed);
  err |= clSetKernelArg(k, PA_SPINS, sizeof spins, &spins);
  cl_uint a = PA_FIELDS;
  for (int f = 0; f < m->n_fields; ++f, ++a) {
    err |= clSetKernelArg(k, a, sizeof(cl_mem), &u->parents[f].mem);
  }
  err |= eng_resident_step_args(e, vp, k, &a);
  p->arg_origin = a;
  return err;
}

/* The program and kernel, the width within the kernel's limit, the barrier words. */
static int build(nestcl_engine *e, eng_vp *vp, struct eng_persist *p)
{
  eng_resident *r = &e->device.res;
  const nestcl_device_info *di = nestcl_device_get_info(e->device.dev);
  char *src = source(e, vp);
  if (!src) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory (the persistent loop's source)");
  }
  size_t ol = strlen(r->upd[0].opts) + 160;
  char *opt = malloc(ol);
  int rc = opt ? 0 : nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  if (!rc) {
    snprintf(opt, ol, "%s %s%s", r->upd[0].opts,
             e->desc.cfg.weight_type == NESTCL_WEIGHT_DOUBLE ? "-DNESTCL_W_T=double -DNESTCL_W_SUFFIX=_d"
                                                             : "-DNESTCL_W_T=float -DNESTCL_W_SUFFIX=_f",
             e->device.deliver_contiguous ? " -DNESTCL_DELIVER_CONTIGUOUS=1" : "");
    rc = nestcl_program_build(e->device.dev, src, opt, &p->prog);
  }
  free(src);
  free(opt);
  cl_int err = CL_SUCCESS;
  if (!rc) {
    p->k = clCreateKernel(p->prog, "nestcl_persistent", &err);
    rc = eng_cl_check(err, "clCreateKernel(nestcl_persistent)");
  }
  if (!rc)
    rc = nestcl_kernel_wg_width(e->device.dev, p->k, "nestcl_persistent", e->device.deliver_contiguous ? 64 : 256,
                                &p->width);
  p->width = env_count("NESTCL_PERSISTENT_WIDTH", p->width);
  p->groups = env_count("NESTCL_PERSISTENT_GROUPS", di->compute_units ? di->compute_units : 1);
  p->spins = env_count("NESTCL_PERSISTENT_SPINS", strcmp(di->type, "cpu") == 0 ? SPINS_CPU : SPINS_GPU);
  snprintf(p->device, sizeof p->device, "%s", di->device_name);
  static const cl_uint zero[4] = {0, 0, 0, 0};
  if (!rc)
    rc = nestcl_buffer_alloc(e->device.dev, NESTCL_MEM_OTHER, "persistent loop barrier", sizeof zero,
                             CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, zero, &p->b_bar);
  if (!rc)
    rc = eng_cl_check(set_args(e, vp, p), "clSetKernelArg(nestcl_persistent)");
  return rc;
}

static void persist_free(nestcl_engine *e, struct eng_persist *p)
{
  if (p->k)
    clReleaseKernel(p->k);
  if (p->prog)
    clReleaseProgram(p->prog);
  if (e->device.dev)
    nestcl_buffer_free(e->device.dev, &p->b_bar);
  free(p);
}

int eng_resident_persist_setup(nestcl_engine *e, eng_vp *vp)
{
  eng_resident *r = &e->device.res;
  const char *why;
  if (!eligible(e, vp, &why)) {
    if (getenv("NESTCL_VERBOSE"))
      fprintf(stderr, "nestcl: the device loop launches its kernels: %s\n", why);
    return 0;
  }
  /* Its arguments must fit the device's parameter size, or the launched loop stays. */
  size_t max_param = 1024;
  clGetDeviceInfo(nestcl_device_id(e->device.dev), CL_DEVICE_MAX_PARAMETER_SIZE, sizeof max_param, &max_param, NULL);
  size_t need = 8 * (30 + (size_t)e->desc.pops[r->upd[0].pops[0]].model->n_fields);
  for (int k = 0; k < r->n_launches; ++k) {
    need += 8 * (4 * (size_t)r->launches[k].n_deliver + (size_t)e->desc.n_drives);
  }
  if (need > max_param) {
    if (getenv("NESTCL_VERBOSE"))
      fprintf(stderr, "nestcl: the device loop launches its kernels: %zu bytes of arguments, the device takes %zu\n",
              need, max_param);
    return 0;
  }
  struct eng_persist *p = calloc(1, sizeof *p);
  if (!p) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  char *at = eng_resident_update_at_source(e->desc.pops[r->upd[0].pops[0]].model);
  const int takes_neuron = at != NULL;
  free(at);
  if (!takes_neuron) {
    free(p);
    if (getenv("NESTCL_VERBOSE"))
      fprintf(stderr,
              "nestcl: the device loop launches its kernels: %s's kernel does not take its neuron from "
              "get_global_id(0) alone\n",
              e->desc.pops[r->upd[0].pops[0]].model->name);
    return 0; /* the model's kernel does not take its neuron as the translator writes it: launched */
  }
  int rc = build(e, vp, p);
  if (rc) {
    persist_free(e, p);
    return rc;
  }
  r->persist = p;
  return 0;
}

void eng_resident_persist_free(nestcl_engine *e)
{
  if (e->device.res.persist) {
    persist_free(e, e->device.res.persist);
  }
  e->device.res.persist = NULL;
}

size_t eng_resident_persist_groups(const nestcl_engine *e)
{
  return e->device.res.persist ? e->device.res.persist->groups : 0;
}

cl_int eng_resident_persist_enqueue(nestcl_engine *e, eng_vp *vp, cl_command_queue q, int64_t origin, int n_ss,
                                    int64_t window_origin)
{
  struct eng_persist *p = e->device.res.persist;
  cl_long org = origin, wo = window_origin;
  cl_uint n = (cl_uint)n_ss;
  cl_int err = clSetKernelArg(p->k, p->arg_origin, sizeof org, &org);
  err |= clSetKernelArg(p->k, p->arg_origin + 1, sizeof n, &n);
  err |= clSetKernelArg(p->k, p->arg_origin + 2, sizeof wo, &wo);
  size_t gsize = p->groups * p->width, lsize = p->width;
  if (err == CL_SUCCESS) {
    err = nestcl_enq_launch(&vp->st.enqueued, q, p->k, 1, &gsize, &lsize, 0, NULL, NULL);
  }
  if (err == CL_SUCCESS) {
    vp->st.enqueued.persistent_steps += (uint64_t)n_ss;
  }
  return err;
}

cl_int eng_resident_persist_read(nestcl_engine *e, eng_vp *vp, cl_command_queue q, cl_uint *bar)
{
  struct eng_persist *p = e->device.res.persist;
  return nestcl_enq_read(&vp->st.enqueued, q, p->b_bar.mem, CL_FALSE, 0, 4 * sizeof *bar, bar, 0, NULL, NULL);
}

int eng_resident_persist_failed(nestcl_engine *e)
{
  struct eng_persist *p = e->device.res.persist;
  remember_failure(p->device);
  return nestcl_set_error(NESTCL_ERUNTIME,
                          "device %s: a grid barrier of the persistent device loop did not complete within %llu "
                          "spins (%zu work-groups of %zu: more than the device runs at once); this run's results "
                          "are void, and this process's later device loops launch their kernels one by one on it "
                          "(--no-persistent does so from the start)",
                          p->device, (unsigned long long)p->spins, p->groups, p->width);
}

void eng_resident_persist_refused(nestcl_engine *e, cl_int err)
{
  struct eng_persist *p = e->device.res.persist;
  if (getenv("NESTCL_VERBOSE"))
    fprintf(stderr, "nestcl: device %s refused the persistent device loop's launch (%s): it launches its kernels\n",
            p->device, nestcl_cl_error_name(err));
  eng_resident_persist_free(e);
}
