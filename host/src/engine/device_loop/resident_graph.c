/*
 * The device loop's super step recorded once and replayed (issue 29): where
 * the device offers cl_khr_command_buffer, the kernels of one whole super
 * step (each model's merged update, the gather, the plastic synapses'
 * history appends and deliveries, the end of the super step)
 * are recorded into a command buffer, and each super step is then one
 * enqueue instead of three or more launches. Recorded commands keep the
 * arguments they were recorded with, so these kernels run "clocked": they
 * read the super step's origin from the status words and advance it there
 * (engine_kernels.cl, NESTCL_RES_CLOCK); the host writes the clock when the
 * device's may be stale (after super steps it launched itself: the parts of
 * super steps that simulate() calls split, and after each drain, which also
 * moves the recording window's origin). Populations whose update is not
 * merged (spike offsets, an event queue) keep per-launch super steps.
 * nestcl_engine_config.command_buffer = 0 (--no-command-buffer) turns it off.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl_ext.h>

#include "../engine_internal.h"
#include "enqueue.h"

struct eng_graph {
  cl_command_buffer_khr cb;
  clCreateCommandBufferKHR_fn create;
  clCommandNDRangeKernelKHR_fn ndrange;
  clFinalizeCommandBufferKHR_fn finalize;
  clEnqueueCommandBufferKHR_fn enqueue;
  clReleaseCommandBufferKHR_fn release;
  cl_ulong clock[2]; /* the origin and window origin the host writes (must outlive the non-blocking write) */
  cl_kernel *kernels; /* the recorded ones */
  int n_kernels;
};

static int offered(const nestcl_engine *e, cl_command_queue q)
{
  cl_device_id d = nestcl_device_id(e->device.dev);
  size_t len = 0;
  if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &len) != CL_SUCCESS || len == 0) {
    return 0;
  }
  char *ext = malloc(len + 1);
  if (!ext || clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, len, ext, NULL) != CL_SUCCESS) {
    free(ext);
    return 0;
  }
  ext[len] = 0;
  int has = strstr(ext, "cl_khr_command_buffer") != NULL;
  free(ext);
  /*
   * Replays follow each other without waits: the buffer must be enqueued
   * again while the last replay is pending (simultaneous use), else each
   * super step would wait for the one before.
   */
  cl_device_command_buffer_capabilities_khr caps = 0;
  if (has &&
      (clGetDeviceInfo(d, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR, sizeof caps, &caps, NULL) != CL_SUCCESS ||
       !(caps & CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR))) {
    return 0;
  }
  /* The queue must have what the device requires of a command buffer's queue. */
  cl_command_queue_properties need = 0, have = 0;
  if (has &&
      clGetDeviceInfo(d, CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR, sizeof need, &need, NULL) ==
        CL_SUCCESS &&
      clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof have, &have, NULL) == CL_SUCCESS) {
    return (need & ~have) == 0;
  }
  return 0;
}

/*
 * Records the super step: the commands one after the other (each waits for
 * the one before), on the buffer's one queue (named NULL: PoCL 3.1 refuses
 * it named). The kernels are the buffer's own, clocked, and never set again:
 * PoCL 3.1 reads a recorded kernel's arguments when it replays it, not when it
 * records it.
 */
static cl_int record(nestcl_engine *e, eng_vp *vp, struct eng_graph *g)
{
  eng_resident *r = &e->device.res;
  g->kernels = calloc((size_t)(r->n_upd + 1 + r->n_syn + r->n_launches), sizeof *g->kernels);
  if (!g->kernels) {
    return CL_OUT_OF_HOST_MEMORY;
  }
  cl_sync_point_khr prev = 0, sp;
  cl_int err = CL_SUCCESS, f = 0, t = e->clock.min_delay;
  /* Clocked kernels ignore their origin, parity and window arguments; every argument must be set to record. */
  cl_long zero = 0;
  cl_uint parity = 0;
  for (int k = 0; k < r->n_upd && err == CL_SUCCESS; ++k) {
    eng_update *u = &r->upd[k];
    cl_kernel kk = g->kernels[g->n_kernels++] = eng_resident_update_kernel(e, u, 1, &err);
    if (err != CL_SUCCESS)
      break;
    err = clSetKernelArg(kk, 1, sizeof zero, &zero);
    err |= clSetKernelArg(kk, 2, sizeof f, &f);
    err |= clSetKernelArg(kk, 3, sizeof t, &t);
    size_t gs[2] = {u->width, (size_t)u->n}, ls[2] = {u->group, 1};
    if (err == CL_SUCCESS) {
      err = g->ndrange(g->cb, NULL, NULL, kk, 2, NULL, gs, ls, k > 0, k > 0 ? &prev : NULL, &sp, NULL);
    }
    prev = sp;
  }
  if (err == CL_SUCCESS) {
    cl_kernel kk = g->kernels[g->n_kernels++] = eng_resident_gather_kernel(e, vp, 1, &err);
    if (err == CL_SUCCESS) {
      err = clSetKernelArg(kk, 5, sizeof zero, &zero);
      err |= clSetKernelArg(kk, 6, sizeof parity, &parity);
      err |= clSetKernelArg(kk, 13, sizeof zero, &zero);
    }
    size_t gsize = (size_t)e->desc.n_pops * r->gather_width, lsize = r->gather_width;
    if (err == CL_SUCCESS) {
      err = g->ndrange(g->cb, NULL, NULL, kk, 1, NULL, &gsize, &lsize, r->n_upd > 0, r->n_upd > 0 ? &prev : NULL, &sp,
                       NULL);
    }
    prev = sp;
  }
  /* Plastic synapses (resident_plastic.c): history appends, then deliveries. */
  for (int k = 0; k < r->n_syn && err == CL_SUCCESS; ++k) {
    eng_res_syn *l = &r->syn[k];
    cl_kernel kk = g->kernels[g->n_kernels++] = eng_resident_plastic_kernel(e, vp, k, 1, &err);
    if (err == CL_SUCCESS) {
      err = g->ndrange(g->cb, NULL, NULL, kk, (cl_uint)l->dims, NULL, l->gsize, l->dims == 2 ? l->lsize : NULL, 1,
                       &prev, &sp, NULL);
    }
    prev = sp;
  }
  for (int k = 0; k < r->n_launches && err == CL_SUCCESS; ++k) {
    eng_launch *l = &r->launches[k];
    cl_kernel kk = g->kernels[g->n_kernels++] = eng_resident_launch_kernel(e, vp, k, 1, &err);
    if (err != CL_SUCCESS)
      break;
    err = clSetKernelArg(kk, 2, sizeof parity, &parity);
    err |= clSetKernelArg(kk, 3, sizeof zero, &zero);
    size_t gs[2] = {l->width, r->step_groups}, ls[2] = {l->width, 1};
    if (err == CL_SUCCESS) {
      err = g->ndrange(g->cb, NULL, NULL, kk, 2, NULL, gs, ls, 1, &prev, &sp, NULL);
    }
    prev = sp;
  }
  if (err == CL_SUCCESS) {
    err = g->finalize(g->cb);
  }
  return err;
}

static void graph_free(struct eng_graph *g)
{
  if (g->cb)
    g->release(g->cb);
  for (int k = 0; k < g->n_kernels; ++k) {
    if (g->kernels[k])
      clReleaseKernel(g->kernels[k]);
  }
  free(g->kernels);
  free(g);
}

int eng_resident_graph_setup(nestcl_engine *e, eng_vp *vp)
{
  eng_resident *r = &e->device.res;
  if (!e->desc.cfg.command_buffer || !r->full || r->n_launches == 0 || r->plan.mm_slot > 0 || r->persist) {
    /* (without an end-of-super-step launch, nothing would advance the device's clock; a multimeter's slot moves;
        the persistent loop runs every whole super step) */
    return 0;
  }
  for (int p = 0; p < e->desc.n_pops; ++p) {
    if (vp->blocks[p].n && !r->merged_pop[p]) {
      return 0; /* a population launched on its own: its kernel cannot read the clock */
    }
  }
  cl_command_queue q = nestcl_device_queue(e->device.dev, vp->queue);
  if (!offered(e, q)) {
    return 0;
  }
  struct eng_graph *g = calloc(1, sizeof *g);
  if (!g) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  cl_platform_id pf = nestcl_device_get_info(e->device.dev)->platform;
  g->create = (clCreateCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(pf, "clCreateCommandBufferKHR");
  g->ndrange = (clCommandNDRangeKernelKHR_fn)clGetExtensionFunctionAddressForPlatform(pf, "clCommandNDRangeKernelKHR");
  g->finalize =
    (clFinalizeCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(pf, "clFinalizeCommandBufferKHR");
  g->enqueue = (clEnqueueCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(pf, "clEnqueueCommandBufferKHR");
  g->release = (clReleaseCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(pf, "clReleaseCommandBufferKHR");
  if (!g->create || !g->ndrange || !g->finalize || !g->enqueue || !g->release) {
    free(g);
    return 0; /* offered, but not callable through this ICD: launch one by one */
  }
  cl_int err;
  const cl_command_buffer_properties_khr props[] = {CL_COMMAND_BUFFER_FLAGS_KHR, CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR,
                                                    0};
  g->cb = g->create(1, &q, props, &err);
  if (err == CL_SUCCESS) {
    err = record(e, vp, g);
  }
  if (err != CL_SUCCESS) {
    graph_free(g);
    return nestcl_set_error(NESTCL_ECL,
                            "recording the device loop's command buffer failed: %s (turn it off with "
                            "--no-command-buffer)",
                            nestcl_cl_error_name(err));
  }
  r->graph = g;
  r->clock_stale = 1;
  return 0;
}

void eng_resident_graph_free(nestcl_engine *e)
{
  struct eng_graph *g = e->device.res.graph;
  if (g) {
    graph_free(g);
  }
  e->device.res.graph = NULL;
}

/* One whole super step at origin, recorded; window_origin: the recording's. */
cl_int eng_resident_graph_enqueue(nestcl_engine *e, eng_vp *vp, cl_command_queue q, int64_t origin,
                                  int64_t window_origin)
{
  eng_resident *r = &e->device.res;
  struct eng_graph *g = r->graph;
  cl_int err = CL_SUCCESS;
  if (r->clock_stale) {
    /* The clock and the window's origin, [7] and [8] (engine_kernels.cl); the next replay's reads see them. */
    g->clock[0] = (cl_ulong)origin;
    g->clock[1] = (cl_ulong)window_origin;
    err =
      nestcl_enq_write(&vp->st.enqueued, q, r->b_status.mem, CL_FALSE, 7 * 8, sizeof g->clock, g->clock, 0, NULL, NULL);
    r->clock_stale = 0;
  }
  if (err == CL_SUCCESS) {
    nestcl_kprof *prof = vp->st.enqueued.profile;
    cl_event *ev = NULL;
    vp->st.enqueued.replays++;
    /* Timed as one command (kprof.h): a replay's kernels have no events of their own. */
    if (prof)
      nestcl_kprof_begin(prof, "command_buffer", q, &ev);
    err = g->enqueue(1, &q, g->cb, 0, NULL, ev);
    if (prof)
      nestcl_kprof_end(prof, err);
  }
  return err;
}

/*
 * Block p's history moved (grown, or replaced by a restore): the plastic
 * kernels take the new buffers, and a recorded super step, which keeps the
 * arguments it was recorded with, is recorded again. Here, above both, so
 * that the plastic part does not call back into the graph that records it.
 */
int eng_resident_repoint(nestcl_engine *e, eng_vp *vp, int p)
{
  eng_resident *r = &e->device.res;
  int rc = eng_resident_plastic_repoint(e, vp, p);
  if (!rc && r->on && r->graph) {
    eng_resident_graph_free(e);
    rc = eng_resident_graph_setup(e, vp);
  }
  return rc;
}
