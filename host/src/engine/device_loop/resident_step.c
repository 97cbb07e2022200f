/*
 * One stream beside CPU threads or other ranks (issue 29, deliverable 4): the
 * host still meets the other VPs every super step, but the stream waits for
 * its device once per super step. It runs the device loop's kernels
 * (resident.c): the merged update per slice, without waiting; at the end of a
 * super step the gather compacts its spikes into (gid, lag) pairs, which come
 * back with the status and error words in one round trip (the one wait), the
 * length guessed from the last super steps (a second read when more); after
 * the exchange the global list and its length go to the device without
 * waiting, and one launch delivers and drives. The next super step's update
 * queues behind it: nothing else waits within a run. A run that ends with a
 * whole super step waits once more at its end (eng_resident_run_end): that
 * super step's delivery, history append and plastic delivery read host arrays
 * that the engine may change or free as soon as simulate() returns (one that
 * ends inside a super step waited for its counts already).
 */
#include <stdlib.h>
#include <string.h>

#include "../engine_internal.h"
#include "enqueue.h"

static int cl_failed(cl_int err, const char *what)
{
  return nestcl_set_error(NESTCL_ECL, "%s failed: %s", what, nestcl_cl_error_name(err));
}

static cl_uint parity_of(const nestcl_engine *e, int64_t origin)
{
  return (cl_uint)((origin / e->clock.min_delay) & 1);
}

int eng_resident_update(nestcl_engine *e, eng_vp *vp, int64_t origin, int from, int to)
{
  cl_command_queue q = nestcl_device_queue(e->device.dev, vp->queue);
  double t0 = eng_now();
  cl_int err = CL_SUCCESS;
  if (from == 0 && origin == e->clock.origin && e->clock.lag == 0) {
    /* The run's first super step: the list lengths start at zero (after a restore, too). */
    static const cl_ulong zero2[2] = {0, 0};
    err = nestcl_enq_write(&vp->st.enqueued, q, e->device.res.b_status.mem, CL_FALSE, 0, sizeof zero2, zero2, 0, NULL,
                           NULL);
  }
  if (err == CL_SUCCESS) {
    err = eng_resident_enqueue_update(e, vp, q, origin, from, to, 0);
  }
  if (err == CL_SUCCESS) {
    err = clFlush(q);
  }
  e->device.res.queued = 1;
  vp->st.seconds[NESTCL_PHASE_UPDATE] += eng_now() - t0;
  return err == CL_SUCCESS ? 0 : cl_failed(err, "update kernel");
}

int eng_resident_collect(nestcl_engine *e, eng_vp *vp, int64_t origin)
{
  eng_resident *r = &e->device.res;
  nestcl_enqueue_counts *c = &vp->st.enqueued;
  cl_command_queue q = nestcl_device_queue(e->device.dev, vp->queue);
  cl_uint parity = parity_of(e, origin);
  cl_int err = eng_resident_enqueue_gather(e, vp, q, origin, origin);
  /* Status, errors and (a guess of) the list in one round trip. */
  uint64_t st[8];
  double g = 2.0 * r->rec_per_ss + 1024.0;
  size_t guess = g < (double)vp->out_cap ? (size_t)g : vp->out_cap;
  if (err == CL_SUCCESS)
    err = nestcl_enq_read(c, q, r->b_status.mem, CL_FALSE, 0, sizeof st, st, 0, NULL, NULL);
  if (err == CL_SUCCESS)
    err = nestcl_enq_read(c, q, r->b_errs.mem, CL_FALSE, 0, r->b_errs.bytes, r->errs, 0, NULL, NULL);
  if (err == CL_SUCCESS && guess) {
    err = nestcl_enq_read(c, q, vp->b_global.mem, CL_FALSE, 0, guess * 8, vp->out, 0, NULL, NULL);
  }
  /* Plastic synapses: the history lengths too (eng_resident_plastic_step). */
  if (err == CL_SUCCESS)
    err = eng_resident_enqueue_hist_lengths(e, vp, q);
  if (err == CL_SUCCESS)
    err = nestcl_enq_finish(c, q);
  if (err != CL_SUCCESS) {
    return cl_failed(err, "collecting the stream's spikes");
  }
  r->queued = 0;
  if (st[ENG_RES_FAILED]) {
    int rc = eng_resident_error(e, vp, (int64_t)(st[ENG_RES_FAILED] - 1), origin, 0);
    return rc ? rc : nestcl_set_error(NESTCL_ERUNTIME, "the stream's update failed (no failure record)");
  }
  size_t n = (size_t)st[ENG_RES_GLOBAL_N + parity];
  if (n > vp->out_cap) {
    return nestcl_set_error(NESTCL_ERUNTIME, "internal: %zu spikes for the stream's list of %zu", n, vp->out_cap);
  }
  if (n > guess) {
    err =
      nestcl_enq_read(c, q, vp->b_global.mem, CL_TRUE, guess * 8, (n - guess) * 8, vp->out + 2 * guess, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
      return cl_failed(err, "collecting the stream's spikes");
    }
  }
  r->rec_per_ss = (double)n > r->rec_per_ss ? (double)n : 0.5 * (r->rec_per_ss + (double)n);
  vp->n_out = n;
  qsort(vp->out, n, 2 * sizeof(uint32_t), eng_cmp_spike);
  return 0;
}

int eng_resident_deliver(nestcl_engine *e, eng_vp *vp, int64_t origin)
{
  eng_resident *r = &e->device.res;
  nestcl_enqueue_counts *c = &vp->st.enqueued;
  cl_command_queue q = nestcl_device_queue(e->device.dev, vp->queue);
  cl_uint parity = parity_of(e, origin);
  /* The host's list and length stay as they are until this queue's next wait (the next collect). */
  r->n_upload = e->exchange.n_global_spikes;
  cl_int err = CL_SUCCESS;
  if (r->n_upload) {
    err = nestcl_enq_write(c, q, vp->b_global.mem, CL_FALSE, 0, r->n_upload * 8, e->exchange.global, 0, NULL, NULL);
  }
  if (err == CL_SUCCESS) {
    err = nestcl_enq_write(c, q, r->b_status.mem, CL_FALSE, (ENG_RES_GLOBAL_N + parity) * 8, sizeof r->n_upload,
                           &r->n_upload, 0, NULL, NULL);
  }
  if (err == CL_SUCCESS)
    err = eng_resident_enqueue_step_end(e, vp, q, origin, parity);
  if (err == CL_SUCCESS)
    err = clFlush(q);
  r->queued = 1; /* and the plastic step's history append and delivery follow, without a wait either */
  return err == CL_SUCCESS ? 0 : cl_failed(err, "delivery kernel");
}

int eng_resident_partial(nestcl_engine *e, eng_vp *vp, int64_t origin, int lag)
{
  eng_resident *r = &e->device.res;
  cl_command_queue q = nestcl_device_queue(e->device.dev, vp->queue);
  cl_int err =
    nestcl_enq_read(&vp->st.enqueued, q, r->b_counts.mem, CL_TRUE, 0, r->b_counts.bytes, r->counts, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    return cl_failed(err, "reading the stream's counts");
  }
  r->queued = 0;
  return eng_resident_error(e, vp, -1, origin, lag);
}

void eng_resident_run_end(nestcl_engine *e)
{
  eng_resident *r = &e->device.res;
  if (!r->on || r->full || !r->queued) {
    return;
  }
  eng_vp *vp = &e->vps[r->vp];
  double t0 = eng_now();
  cl_int err = nestcl_enq_finish(&vp->st.enqueued, nestcl_device_queue(e->device.dev, vp->queue));
  vp->st.seconds[NESTCL_PHASE_DELIVER] += eng_now() - t0;
  r->queued = 0;
  if (err != CL_SUCCESS && !vp->status) {
    eng_vp_fail(vp, cl_failed(err, "the stream's last super step"));
  }
}
