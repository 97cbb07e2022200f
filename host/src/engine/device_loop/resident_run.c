/*
 * The device loop's simulate(): enqueue super steps without waiting, drain
 * every plan.k super steps, at the end and on a stop request (resident.c says
 * why and what the kernels do).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine_internal.h"
#include "enqueue.h"

#define AHEAD_S 0.05

typedef struct run_state {
  nestcl_engine *e;
  eng_vp *vp;
  cl_command_queue q;
  int64_t window_origin; /* the recording's steps count from here */
  int in_window; /* super steps enqueued since the last drain */
  int done; /* of which known to be finished (throttles) */
  int n_slices; /* slices enqueued since the last drain: multimeter slots 0.. */
  double t_window; /* wall time at the last drain */
  int64_t halt_at; /* the last drain found the loop halted at this super step (-1: not) */
  uint64_t halt_gid; /* for this neuron's history (resident_plastic.c) */
} run_state;

/*
 * The loop halted at the super step at halt_at (a history ring of a neuron
 * with global id gid was full): grows that ring (or fails as cycle.c would,
 * at its bound), lifts the halt and enqueues the rest of that super step.
 */
int eng_resident_plastic_resume(nestcl_engine *e, eng_vp *vp, cl_command_queue q, int64_t halt_at, uint64_t gid)
{
  eng_resident *r = &e->device.res;
  int p = 0;
  while (p < e->desc.n_pops && !(gid >= vp->blocks[p].first_gid && gid - vp->blocks[p].first_gid < vp->blocks[p].n)) {
    ++p;
  }
  if (p == e->desc.n_pops || !vp->blocks[p].hist.cap) {
    return nestcl_set_error(NESTCL_ERUNTIME, "internal: the device loop halted for neuron %llu, which has no history",
                            (unsigned long long)gid);
  }
  eng_block *b = &vp->blocks[p];
  int rc = eng_hist_grow(&b->hist, e->device.dev, vp->queue, (uint32_t)(gid - b->first_gid));
  if (!rc)
    rc = eng_resident_repoint(e, vp, p);
  if (rc) {
    return rc;
  }
  nestcl_enqueue_counts *c = &vp->st.enqueued;
  c->resumes++;
  cl_int err = nestcl_enq_write(c, q, r->b_status.mem, CL_FALSE, ENG_RES_HALT * 8, sizeof r->halt_clear, r->halt_clear,
                                0, NULL, NULL);
  if (err == CL_SUCCESS)
    err = eng_resident_enqueue_plastic(e, vp, q, halt_at);
  if (err == CL_SUCCESS) {
    err = eng_resident_enqueue_step_end(e, vp, q, halt_at, (cl_uint)((halt_at / e->clock.min_delay) & 1));
  }
  r->clock_stale = 1; /* launched one by one: the clock of the next replay is the host's */
  return err == CL_SUCCESS
    ? 0
    : nestcl_set_error(NESTCL_ECL, "resuming the device loop failed: %s", nestcl_cl_error_name(err));
}

static int cl_failed(cl_int err, const char *what)
{
  return nestcl_set_error(NESTCL_ECL, "%s failed: %s", what, nestcl_cl_error_name(err));
}

/*
 * The end of the super step at origin: gather, delivery and drive
 * (resident_merge.c), or (replay) the whole recorded super step
 * (resident_graph.c); then a marker for the throttle.
 */
static cl_int enqueue_end(run_state *s, int64_t origin, int replay)
{
  nestcl_engine *e = s->e;
  eng_resident *r = &e->device.res;
  cl_uint parity = (cl_uint)((origin / e->clock.min_delay) & 1);
  cl_int err;
  if (replay) {
    err = eng_resident_graph_enqueue(e, s->vp, s->q, origin, s->window_origin);
  } else {
    /* Launched one by one: the device's clock (for the next replay) does not move. */
    r->clock_stale = 1;
    err = eng_resident_enqueue_gather(e, s->vp, s->q, origin, s->window_origin);
    if (err == CL_SUCCESS) {
      err = eng_resident_enqueue_plastic(e, s->vp, s->q, origin);
    }
    if (err == CL_SUCCESS) {
      err = eng_resident_enqueue_step_end(e, s->vp, s->q, origin, parity);
    }
  }
  if (err == CL_SUCCESS) {
    err = clEnqueueMarkerWithWaitList(s->q, 0, NULL, &r->markers[s->in_window]);
  }
  if (err == CL_SUCCESS) {
    s->in_window++;
    err = clFlush(s->q);
  }
  return err;
}

/*
 * Keeps the host at most about AHEAD_S of super steps ahead of the device:
 * when more are queued, waits for the end of one about half-way back (the
 * work behind it stays queued).
 */
static cl_int throttle(run_state *s)
{
  eng_resident *r = &s->e->device.res;
  int ahead = r->s_per_ss > 0.0 ? (int)(AHEAD_S / r->s_per_ss) : 4;
  ahead = ahead < 2 ? 2 : ahead > r->plan.k ? r->plan.k : ahead;
  if (s->in_window - s->done < ahead) {
    return CL_SUCCESS;
  }
  int target = s->in_window - (ahead + 1) / 2 - 1;
  if (target < s->done) {
    return CL_SUCCESS;
  }
  s->vp->st.enqueued.throttles++;
  cl_int err = clWaitForEvents(1, &r->markers[target]);
  s->done = target + 1;
  r->s_per_ss = (eng_now() - s->t_window) / s->done;
  return err;
}

/* The recorded spikes of the window, super step by super step, up to (not including) the super step at stop_at. */
static int record_window(run_state *s, size_t n, int64_t stop_at)
{
  nestcl_engine *e = s->e;
  uint32_t *ent = e->device.res.rec_host;
  qsort(ent, n, 8, eng_cmp_spike); /* (gid, step) pairs: by step, then gid */
  size_t k = 0;
  while (k < n) {
    int64_t ss = ent[2 * k + 1] / (uint32_t)e->clock.min_delay;
    int64_t origin = s->window_origin + ss * e->clock.min_delay;
    size_t m = 0;
    while (k < n && ent[2 * k + 1] / (uint32_t)e->clock.min_delay == ss) {
      e->exchange.global[2 * m] = ent[2 * k];
      e->exchange.global[2 * m + 1] = ent[2 * k + 1] - (uint32_t)(ss * e->clock.min_delay);
      ++m;
      ++k;
    }
    if (stop_at >= 0 && origin >= stop_at) {
      break;
    }
    int rc = eng_record_spikes(e, e->exchange.global, m, origin);
    if (rc) {
      return rc;
    }
  }
  return 0;
}

/*
 * The first error the device kept (a failed super step at fail_at >= 0, from
 * the error words), or (lag > 0) one in the live count words of the super
 * step at origin that the run ends inside.
 */
int eng_resident_error(nestcl_engine *e, const eng_vp *vp, int64_t fail_at, int64_t origin, int lag)
{
  eng_resident *r = &e->device.res;
  for (int pass = 0; pass < 2; ++pass) {
    if ((pass == 0 && fail_at < 0) || (pass == 1 && (fail_at >= 0 || lag == 0))) {
      continue;
    }
    int64_t at = pass == 0 ? fail_at : origin;
    for (int p = 0; p < e->desc.n_pops; ++p) {
      const eng_block *b = &vp->blocks[p];
      const uint32_t *w = pass == 0 ? r->errs + ENG_RES_ERR_WORDS * p : r->counts + r->table[4 * p];
      int rc = b->n ? eng_block_failure(e, b, w, at) : 0;
      if (rc) {
        return rc;
      }
      if (b->n && w[0] > b->spike_cap) {
        return nestcl_set_error(NESTCL_ERUNTIME,
                                "spike list overflow: %u spikes of %s for a capacity of %u in the "
                                "super step at t = %.10g ms",
                                w[0], e->desc.pops[p].model->name, b->spike_cap, eng_step_ms(e, at));
      }
      if (b->n && pass == 0 && w[5]) {
        return nestcl_set_error(NESTCL_ERUNTIME, "bad spike entry from %s in the super step at t = %.10g ms",
                                e->desc.pops[p].model->name, eng_step_ms(e, at));
      }
    }
  }
  return 0;
}

/* The multimeters' samples of the window's slices, slice by slice, up to (not including) the super step at stop_at. */
static int record_slices(run_state *s, int64_t stop_at)
{
  nestcl_engine *e = s->e;
  eng_resident *r = &e->device.res;
  for (int k = 0; k < s->n_slices; ++k) {
    const int64_t *sl = r->slices + 3 * k;
    if (stop_at >= 0 && sl[0] >= stop_at) {
      break;
    }
    for (int p = 0; p < e->desc.n_pops; ++p) {
      eng_block *b = &s->vp->blocks[p];
      if (e->desc.pops[p].rec_interval_steps && b->n) {
        memcpy(b->rec, r->mm_host + (size_t)k * r->plan.mm_slot + r->mm_off[p], b->rec_elems * sizeof *b->rec);
      }
    }
    int rc = eng_record_samples(e, sl[0], (int)sl[1], (int)sl[2]);
    if (rc) {
      return rc;
    }
  }
  return 0;
}

/*
 * Waits for everything enqueued; takes the totals, the recorded spikes, the
 * multimeters' samples and the errors. origin and lag: where the run stands
 * (lag > 0: inside a super step).
 */
static int drain(run_state *s, int64_t origin, int lag)
{
  nestcl_engine *e = s->e;
  eng_resident *r = &e->device.res;
  nestcl_enqueue_counts *c = &s->vp->st.enqueued;
  uint64_t st[ENG_RES_STATUS_WORDS];
  cl_int err = nestcl_enq_read(c, s->q, r->b_status.mem, CL_FALSE, 0, sizeof st, st, 0, NULL, NULL);
  if (err == CL_SUCCESS) {
    err = nestcl_enq_read(c, s->q, r->b_errs.mem, CL_FALSE, 0, r->b_errs.bytes, r->errs, 0, NULL, NULL);
  }
  if (err == CL_SUCCESS && lag != 0) {
    err = nestcl_enq_read(c, s->q, r->b_counts.mem, CL_FALSE, 0, r->b_counts.bytes, r->counts, 0, NULL, NULL);
  }
  /*
   * The recorded spikes in the same round trip, as many as twice the last
   * window's rate predicts (the count is known only after the wait); more
   * than that take a second read.
   */
  uint64_t guess = 0;
  if (r->plan.rec_cap > 0) {
    double g = 2.0 * r->rec_per_ss * (s->in_window + (lag != 0)) + 1024.0;
    guess = g < (double)r->plan.rec_cap ? (uint64_t)g : r->plan.rec_cap;
  }
  if (err == CL_SUCCESS && guess > 0) {
    err = nestcl_enq_read(c, s->q, r->b_rec.mem, CL_FALSE, 0, guess * 8, r->rec_host, 0, NULL, NULL);
  }
  if (err == CL_SUCCESS && r->plan.mm_slot && s->n_slices) {
    err = nestcl_enq_read(c, s->q, r->b_mm.mem, CL_FALSE, 0, (size_t)s->n_slices * r->plan.mm_slot * 8, r->mm_host, 0,
                          NULL, NULL);
  }
  /* The persistent loop's barrier words: [2] says whether a barrier failed (resident_persist.c). */
  cl_uint bar[4] = {0, 0, 0, 0};
  if (err == CL_SUCCESS && r->persist) {
    err = eng_resident_persist_read(e, s->vp, s->q, bar);
  }
  if (err == CL_SUCCESS) {
    err = nestcl_enq_finish(c, s->q);
  }
  int steps_in_window = s->in_window;
  for (int k = 0; k < s->in_window; ++k) {
    clReleaseEvent(r->markers[k]);
    r->markers[k] = NULL;
  }
  double now = eng_now();
  if (s->in_window > 0) {
    r->s_per_ss = (now - s->t_window) / s->in_window;
  }
  s->t_window = now;
  s->in_window = s->done = 0;
  if (err != CL_SUCCESS) {
    return cl_failed(err, "the device loop's drain");
  }
  if (bar[2] != 0) {
    return eng_resident_persist_failed(e);
  }
  e->stats.spikes_total += st[ENG_RES_SPIKES] - r->status[ENG_RES_SPIKES];
  e->stats.events_total += st[ENG_RES_EVENTS] - r->status[ENG_RES_EVENTS];
  memcpy(r->status, st, sizeof st);
  uint64_t n = st[ENG_RES_RECORDED];
  if (n > r->plan.rec_cap) {
    return nestcl_set_error(NESTCL_ERUNTIME, "internal: %llu recorded spikes for a buffer of %llu",
                            (unsigned long long)n, (unsigned long long)r->plan.rec_cap);
  }
  int64_t fail_at = st[ENG_RES_FAILED] ? (int64_t)(st[ENG_RES_FAILED] - 1) : -1;
  /* A halt (resident_plastic.c): the super steps up to the halted one ran, and no later one; an error wins. */
  s->halt_at = st[ENG_RES_HALT] && fail_at < 0 ? (int64_t)(st[ENG_RES_HALT] - 1) : -1;
  s->halt_gid = st[ENG_RES_HALT_GID];
  const int64_t ran_to = s->halt_at >= 0 ? s->halt_at + e->clock.min_delay : -1;
  int rc = 0;
  if (steps_in_window > 0) {
    double rate = (double)n / steps_in_window;
    r->rec_per_ss = rate > r->rec_per_ss ? rate : 0.5 * (r->rec_per_ss + rate);
  }
  if (n > 0) {
    static const cl_ulong zero = 0;
    if (n > guess) {
      err = nestcl_enq_read(c, s->q, r->b_rec.mem, CL_TRUE, guess * 8, (n - guess) * 8, r->rec_host + 2 * guess, 0,
                            NULL, NULL);
    }
    if (err == CL_SUCCESS) {
      err =
        nestcl_enq_write(c, s->q, r->b_status.mem, CL_FALSE, ENG_RES_RECORDED * 8, sizeof zero, &zero, 0, NULL, NULL);
    }
    if (err != CL_SUCCESS) {
      return cl_failed(err, "reading the recorded spikes");
    }
    rc = record_window(s, (size_t)n, fail_at >= 0 ? fail_at : ran_to);
  }
  s->window_origin = s->halt_at >= 0 ? ran_to : origin;
  r->clock_stale = 1; /* the window's origin moved */
  int rc_err = eng_resident_error(e, s->vp, fail_at, origin, s->halt_at >= 0 ? 0 : lag);
  if (!rc && r->plan.mm_slot) {
    /* Nothing of the failing super step is sampled (the host clock stops before it samples). */
    rc = record_slices(s, fail_at >= 0 ? fail_at : rc_err ? origin : ran_to);
  }
  s->n_slices = 0;
  return rc_err ? rc_err : rc;
}

static int sticky(nestcl_engine *e, int rc)
{
  e->device.res.sticky = rc;
  snprintf(e->device.res.sticky_err, sizeof e->device.res.sticky_err, "%s", nestcl_last_error());
  return rc;
}

/*
 * After a drain that found the loop halted (resident_plastic.c): the rest of
 * the halted super step runs again, and the run goes on from the next one;
 * *origin, *lag and *left say where it stands then (pos0: where this call
 * started).
 */
static int resume(run_state *s, int64_t pos0, int64_t steps, int64_t *origin, int *lag, int64_t *left)
{
  nestcl_engine *e = s->e;
  int rc = eng_resident_plastic_resume(e, s->vp, s->q, s->halt_at, s->halt_gid);
  *origin = s->halt_at + e->clock.min_delay;
  *lag = 0;
  *left = steps - (*origin - pos0);
  s->halt_at = -1;
  return rc;
}

/*
 * A run that starts a super step: the list lengths start at zero, whichever
 * super step this is (after a restore, too). All the status words go, as the
 * last drain left them (the device has run nothing since; the clock words are
 * rewritten before a replay): oclgrind 21.10 takes the words of a buffer
 * outside a partial write for uninitialised (docs/oclgrind-reports.md).
 */
static cl_int write_status(run_state *s)
{
  eng_resident *r = &s->e->device.res;
  memcpy(r->status_img, r->status, sizeof r->status_img);
  r->status_img[ENG_RES_GLOBAL_N] = r->status_img[ENG_RES_GLOBAL_N + 1] = 0;
  r->status_img[ENG_RES_RECORDED] = 0;
  r->status_img[ENG_RES_HALT] = 0;
  r->status_img[ENG_RES_HALT_GID] = UINT64_MAX;
  return nestcl_enq_write(&s->vp->st.enqueued, s->q, r->b_status.mem, CL_FALSE, 0, sizeof r->status_img, r->status_img,
                          0, NULL, NULL);
}

/* The engine's clock after a run of `steps` that left `left` (a stop on request) unsimulated. */
static int advance_clock(nestcl_engine *e, int64_t steps, int64_t left)
{
  int64_t run = steps - left;
  int64_t total = (int64_t)e->clock.lag + run;
  e->clock.origin += (total / e->clock.min_delay) * e->clock.min_delay;
  e->clock.lag = (int)(total % e->clock.min_delay);
  e->clock.steps_done += run;
  if (left > 0) {
    e->clock.steps_left = left;
    return nestcl_set_error(NESTCL_EINTR,
                            "stopped on request at t = %.10g ms, the end of a super step (%lld of %lld "
                            "steps of this call)",
                            (double)(e->clock.origin + e->clock.lag) * e->desc.cfg.resolution_ms, (long long)run,
                            (long long)steps);
  }
  return 0;
}

/*
 * Whole super steps from *origin in persistent launches (resident_persist.c):
 * one launch for as many as the window has room for and the throttle lets
 * run ahead (about half of AHEAD_S, so that a stop request is seen soon),
 * its end marking each of them; then a drain or the throttle, as after a
 * launched super step. *drained: whether this ended with a drain.
 */
static int persist_steps(run_state *s, int64_t *origin, int64_t *left, int *stop, int *drained)
{
  nestcl_engine *e = s->e;
  eng_resident *r = &e->device.res;
  int64_t n = *left / e->clock.min_delay;
  int ahead = r->s_per_ss > 0.0 ? (int)(0.5 * AHEAD_S / r->s_per_ss) : 4;
  n = n < r->plan.k - s->in_window ? n : r->plan.k - s->in_window;
  n = n < ahead ? n : (ahead < 1 ? 1 : ahead);
  /* A stop request already made: one super step, as the launched loop stops at the end of the next one. */
  if (e->clock.stop_flag && *e->clock.stop_flag != 0)
    n = 1;
  cl_int err = eng_resident_persist_enqueue(e, s->vp, s->q, *origin, (int)n, s->window_origin);
  if (err != CL_SUCCESS) {
    /* Refused at the enqueue (nothing of it ran): the loop goes on launched, from this super step. */
    clFinish(s->q);
    eng_resident_persist_refused(e, err);
    return 0;
  }
  cl_event end = NULL;
  if (err == CL_SUCCESS)
    err = clEnqueueMarkerWithWaitList(s->q, 0, NULL, &end);
  for (int64_t k = 0; k < n && err == CL_SUCCESS; ++k) {
    if (k > 0)
      clRetainEvent(end);
    r->markers[s->in_window++] = end;
  }
  if (err == CL_SUCCESS)
    err = clFlush(s->q);
  if (err != CL_SUCCESS) {
    return cl_failed(err, "the persistent device loop");
  }
  *left -= n * e->clock.min_delay;
  *origin += n * e->clock.min_delay;
  *stop = e->clock.stop_flag && *e->clock.stop_flag != 0;
  *drained = 0;
  if (s->in_window >= r->plan.k || (*stop && *left > 0)) {
    *drained = 1;
    return drain(s, *origin, 0);
  }
  err = throttle(s);
  return err == CL_SUCCESS ? 0 : cl_failed(err, "the device loop's throttle");
}

int eng_resident_run(nestcl_engine *e, int64_t steps)
{
  eng_resident *r = &e->device.res;
  if (r->sticky) {
    return nestcl_set_error(r->sticky, "%s", r->sticky_err);
  }
  eng_vp *vp = &e->vps[r->vp];
  run_state s = {e, vp, nestcl_device_queue(e->device.dev, vp->queue), e->clock.origin, 0, 0, 0, eng_now(), -1, 0};
  const int64_t pos0 = e->clock.origin + e->clock.lag;
  int64_t origin = e->clock.origin, left = steps;
  int lag = e->clock.lag;
  cl_int err = lag == 0 ? write_status(&s) : CL_SUCCESS;
  int stop = 0, rc = 0, drained = 0;
  e->clock.steps_left = 0;
  double t0 = eng_now();
  for (;;) {
    while (left > 0 && err == CL_SUCCESS && !rc) {
      if (r->persist && lag == 0 && left >= e->clock.min_delay) {
        rc = persist_steps(&s, &origin, &left, &stop, &drained);
        if (stop && left > 0) {
          break;
        }
        continue;
      }
      int from = lag;
      int to = (int64_t)(e->clock.min_delay - from) < left ? e->clock.min_delay : from + (int)left;
      drained = 0;
      /* A whole super step is one replay where a command buffer was recorded. */
      const int replay = r->graph && from == 0 && to == e->clock.min_delay;
      if (!replay) {
        err = eng_resident_enqueue_update(e, vp, s.q, origin, from, to, s.n_slices);
        if (r->plan.mm_slot) {
          /* The slice's multimeter slot: k + 2 hold a window (a drain comes after k whole super steps). */
          int64_t *sl = r->slices + 3 * s.n_slices++;
          sl[0] = origin;
          sl[1] = from;
          sl[2] = to;
        }
      }
      if (err == CL_SUCCESS && to == e->clock.min_delay)
        err = enqueue_end(&s, origin, replay);
      left -= to - from;
      lag = to;
      if (lag < e->clock.min_delay || err != CL_SUCCESS) {
        break; /* the run ends inside a super step */
      }
      origin += e->clock.min_delay;
      lag = 0;
      stop = e->clock.stop_flag && *e->clock.stop_flag != 0;
      if (s.in_window >= r->plan.k || (stop && left > 0)) {
        rc = drain(&s, origin, 0);
        drained = 1;
        if (!rc && s.halt_at >= 0) {
          rc = resume(&s, pos0, steps, &origin, &lag, &left);
          drained = 0;
          continue;
        }
      } else {
        err = throttle(&s);
      }
      if (stop && left > 0) {
        break;
      }
    }
    if (err != CL_SUCCESS) {
      rc = cl_failed(err, "the device loop");
    }
    if (!rc && !drained) {
      rc = drain(&s, origin, lag);
      drained = 1;
      if (!rc && s.halt_at >= 0) {
        /* The halt came before the end: resume, and run up to the end again. */
        rc = resume(&s, pos0, steps, &origin, &lag, &left);
        drained = 0;
        if (!rc) {
          continue;
        }
      }
    }
    break;
  }
  vp->st.seconds[NESTCL_PHASE_UPDATE] += eng_now() - t0;
  if (rc) {
    return sticky(e, rc);
  }
  return advance_clock(e, steps, left);
}
