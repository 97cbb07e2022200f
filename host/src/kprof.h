/*
 * A queue's kernels timed from OpenCL profiling events (issue 41;
 * nestcl_kernel_profile in nestcl/device.h says what is measured). The
 * counted wrappers of enqueue.h hand every launch of a VP (or block) to its
 * profile when it has one: the launch is counted under its kernel's name,
 * and a sampled one gets an event, kept until the device has run it and then
 * read for its start and end. Every other counted command (a transfer, a
 * wait) moves the queue's sequence on, so that the idle time between two
 * kernels is taken only where nothing came between them. The queues are
 * created with CL_QUEUE_PROFILING_ENABLE (device.c). One profile belongs to
 * one thread (a VP's); nothing here locks.
 */
#ifndef NESTCL_KPROF_H
#define NESTCL_KPROF_H

#include "nestcl/device.h"

typedef struct nestcl_kprof nestcl_kprof;

/* A profile timing launches i of each kernel with i mod sample_every < 2 (1: all); NULL when out of memory. */
nestcl_kprof *nestcl_kprof_create(int sample_every);
/* Releases the events still pending (their times are lost) and the profile. */
void nestcl_kprof_destroy(nestcl_kprof *p);

/* clEnqueueNDRangeKernel of k on q, counted and, when sampled, timed; done as there. */
cl_int nestcl_kprof_launch(nestcl_kprof *p, cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *global,
                           const size_t *local, cl_uint n_wait, const cl_event *wait, cl_event *done);
/*
 * A command that is not a kernel launch, named for the table (a replayed
 * command buffer, "command_buffer"): *ev receives where to put its event,
 * NULL when this one is not timed; after enqueueing it, nestcl_kprof_end.
 */
void nestcl_kprof_begin(nestcl_kprof *p, const char *name, cl_command_queue q, cl_event **ev);
void nestcl_kprof_end(nestcl_kprof *p, cl_int err);
/* A transfer or a wait (counted by enqueue.h): the next kernel does not follow a timed one directly. */
void nestcl_kprof_other(nestcl_kprof *p);
/* Reads the events the device has run (wait: waits for all of them first). */
void nestcl_kprof_poll(nestcl_kprof *p, int wait);
/* Adds p's kernels (by name) and gaps to out (sample_every set from p); 0 or NESTCL_ENOMEM. */
int nestcl_kprof_add_to(nestcl_kprof *p, nestcl_kernel_profile *out);

#endif
