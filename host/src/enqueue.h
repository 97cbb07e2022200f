/*
 * The OpenCL calls of the simulation loop, counted (nestcl_enqueue_counts,
 * nestcl/engine.h): each wrapper makes the one call and adds it to c, which
 * may be NULL. A
 * blocking transfer is a wait as well as a transfer. Each VP counts into its
 * own struct, so the VPs' threads share nothing here. Where the counts carry
 * a kernel profile (kprof.h, issue 41), launches are timed through it and the
 * other commands move its sequence on.
 */
#ifndef NESTCL_ENQUEUE_H
#define NESTCL_ENQUEUE_H

#include "nestcl/device.h"
#include "nestcl/engine.h"
#include "kprof.h"

static inline cl_int nestcl_enq_launch(nestcl_enqueue_counts *c, cl_command_queue q, cl_kernel k, cl_uint dim,
                                       const size_t *global, const size_t *local, cl_uint n_wait, const cl_event *wait,
                                       cl_event *done)
{
  if (c) {
    c->launches++;
    if (c->profile)
      return nestcl_kprof_launch(c->profile, q, k, dim, global, local, n_wait, wait, done);
  }
  return clEnqueueNDRangeKernel(q, k, dim, NULL, global, local, n_wait, wait, done);
}

static inline cl_int nestcl_enq_finish(nestcl_enqueue_counts *c, cl_command_queue q)
{
  if (c)
    c->waits++;
  cl_int err = clFinish(q);
  if (c && c->profile) {
    nestcl_kprof_other(c->profile);
    nestcl_kprof_poll(c->profile, 0);
  }
  return err;
}

static inline cl_int nestcl_enq_wait(nestcl_enqueue_counts *c, cl_uint n, const cl_event *events)
{
  if (c) {
    c->waits++;
    if (c->profile)
      nestcl_kprof_other(c->profile);
  }
  return clWaitForEvents(n, events);
}

static inline cl_int nestcl_enq_write(nestcl_enqueue_counts *c, cl_command_queue q, cl_mem m, cl_bool blocking,
                                      size_t offset, size_t bytes, const void *src, cl_uint n_wait,
                                      const cl_event *wait, cl_event *done)
{
  if (c) {
    c->writes++;
    c->bytes_written += bytes;
    c->waits += blocking ? 1u : 0u;
    if (c->profile)
      nestcl_kprof_other(c->profile);
  }
  return clEnqueueWriteBuffer(q, m, blocking, offset, bytes, src, n_wait, wait, done);
}

static inline cl_int nestcl_enq_read(nestcl_enqueue_counts *c, cl_command_queue q, cl_mem m, cl_bool blocking,
                                     size_t offset, size_t bytes, void *dst, cl_uint n_wait, const cl_event *wait,
                                     cl_event *done)
{
  if (c) {
    c->reads++;
    c->bytes_read += bytes;
    c->waits += blocking ? 1u : 0u;
    if (c->profile)
      nestcl_kprof_other(c->profile);
  }
  return clEnqueueReadBuffer(q, m, blocking, offset, bytes, dst, n_wait, wait, done);
}

#endif
