/*
 * Kernel profiles (kprof.h, issue 41): launches counted by kernel name, a
 * sample of them timed from profiling events. What it costs per launch is
 * what decides the design: an unsampled launch is one lookup of the kernel
 * object in a small open-addressing table and two increments; only a sampled
 * one creates an event, and events are read later, from the oldest, once the
 * device has run them (a status query, never a wait in the loop), so the
 * host's enqueueing is not slowed down by the device. The name of a kernel
 * object is asked of OpenCL once, and again at each sampled launch, so that
 * a handle that a released kernel left to another is caught (every launch is
 * sampled under --profile-kernels, so its counts are exact).
 */
#include "kprof.h"

#include <stdlib.h>
#include <string.h>

typedef struct kp_key {
  cl_kernel k; /* NULL: empty */
  int name; /* index into names */
} kp_key;

typedef struct kp_pending {
  cl_event ev;
  cl_command_queue q;
  uint64_t seq; /* the queue's command number (for the gaps) */
  int name;
} kp_pending;

struct nestcl_kprof {
  int every;
  nestcl_kernel_time *names;
  int n_names, cap_names;
  kp_key *keys;
  size_t n_keys, cap_keys; /* cap_keys a power of two */
  kp_pending *pend;
  size_t head, n_pend, cap_pend; /* pend[head .. n_pend) wait to be read */
  uint64_t seq; /* commands so far */
  /* the last timed command read: its number, queue and end, for the gap to the next */
  uint64_t last_seq;
  cl_command_queue last_q;
  cl_ulong last_end;
  int have_last;
  uint64_t gaps;
  cl_ulong idle_ns;
  /* nestcl_kprof_begin's command until nestcl_kprof_end */
  cl_event begun_ev;
  cl_command_queue begun_q;
  int begun_name, begun_timed;
};

nestcl_kprof *nestcl_kprof_create(int sample_every)
{
  if (sample_every < 1) {
    return NULL;
  }
  nestcl_kprof *p = calloc(1, sizeof *p);
  if (!p) {
    return NULL;
  }
  p->every = sample_every;
  p->cap_keys = 64;
  p->keys = calloc(p->cap_keys, sizeof *p->keys);
  if (!p->keys) {
    free(p);
    return NULL;
  }
  return p;
}

void nestcl_kprof_destroy(nestcl_kprof *p)
{
  if (!p) {
    return;
  }
  for (size_t i = p->head; i < p->n_pend; ++i) {
    clReleaseEvent(p->pend[i].ev);
  }
  free(p->pend);
  free(p->keys);
  free(p->names);
  free(p);
}

static size_t key_slot(const nestcl_kprof *p, cl_kernel k)
{
  uintptr_t h = (uintptr_t)k;
  h ^= h >> 17;
  h *= (uintptr_t)0x9E3779B97F4A7C15ull;
  size_t i = (size_t)(h >> 7) & (p->cap_keys - 1);
  while (p->keys[i].k && p->keys[i].k != k) {
    i = (i + 1) & (p->cap_keys - 1);
  }
  return i;
}

/* The names' index of name, added (with no launches) when new; -1 when out of memory. */
static int name_index(nestcl_kprof *p, const char *name)
{
  for (int i = 0; i < p->n_names; ++i) {
    if (strcmp(p->names[i].name, name) == 0) {
      return i;
    }
  }
  if (p->n_names == p->cap_names) {
    int cap = p->cap_names ? 2 * p->cap_names : 16;
    nestcl_kernel_time *n = realloc(p->names, (size_t)cap * sizeof *n);
    if (!n) {
      return -1;
    }
    p->names = n;
    p->cap_names = cap;
  }
  nestcl_kernel_time *t = &p->names[p->n_names];
  memset(t, 0, sizeof *t);
  strncpy(t->name, name, sizeof t->name - 1);
  return p->n_names++;
}

/* The kernel's function name (truncated to the table's width). */
static void kernel_name(cl_kernel k, char *name, size_t cap)
{
  size_t len = 0;
  name[0] = 0;
  if (clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 0, NULL, &len) != CL_SUCCESS || len == 0) {
    return;
  }
  char *full = malloc(len + 1);
  if (full && clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, len, full, NULL) == CL_SUCCESS) {
    full[len] = 0;
    strncpy(name, full, cap - 1);
    name[cap - 1] = 0;
  }
  free(full);
}

static int grow_keys(nestcl_kprof *p)
{
  kp_key *old = p->keys;
  size_t old_cap = p->cap_keys;
  p->keys = calloc(2 * old_cap, sizeof *p->keys);
  if (!p->keys) {
    p->keys = old;
    return -1;
  }
  p->cap_keys = 2 * old_cap;
  for (size_t i = 0; i < old_cap; ++i) {
    if (old[i].k) {
      p->keys[key_slot(p, old[i].k)] = old[i];
    }
  }
  free(old);
  return 0;
}

/* Kernel k's name index (asked of OpenCL when k is new, or when verify); -1 when out of memory. */
static int kernel_index(nestcl_kprof *p, cl_kernel k, int verify)
{
  size_t i = key_slot(p, k);
  if (p->keys[i].k && !verify) {
    return p->keys[i].name;
  }
  char name[sizeof p->names[0].name];
  kernel_name(k, name, sizeof name);
  if (p->keys[i].k && strcmp(p->names[p->keys[i].name].name, name) == 0) {
    return p->keys[i].name;
  }
  int n = name_index(p, name);
  if (n < 0) {
    return -1;
  }
  if (!p->keys[i].k) {
    if (2 * (p->n_keys + 1) > p->cap_keys) {
      if (grow_keys(p)) {
        return -1;
      }
      i = key_slot(p, k);
    }
    p->n_keys++;
  }
  p->keys[i].k = k;
  p->keys[i].name = n;
  return n;
}

static int push(nestcl_kprof *p, cl_event ev, cl_command_queue q, int name)
{
  if (p->n_pend == p->cap_pend) {
    if (p->head > 0) {
      memmove(p->pend, p->pend + p->head, (p->n_pend - p->head) * sizeof *p->pend);
      p->n_pend -= p->head;
      p->head = 0;
    }
    if (p->n_pend == p->cap_pend) {
      size_t cap = p->cap_pend ? 2 * p->cap_pend : 256;
      kp_pending *n = realloc(p->pend, cap * sizeof *n);
      if (!n) {
        return -1;
      }
      p->pend = n;
      p->cap_pend = cap;
    }
  }
  p->pend[p->n_pend++] = (kp_pending){ev, q, p->seq, name};
  return 0;
}

/* One timed command read: its time, and the gap since the timed command just before it on its queue. */
static void account(nestcl_kprof *p, const kp_pending *c)
{
  cl_ulong t0 = 0, t1 = 0;
  cl_int err = clGetEventProfilingInfo(c->ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
  err |= clGetEventProfilingInfo(c->ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
  if (err != CL_SUCCESS || t1 < t0) {
    p->have_last = 0;
    return;
  }
  nestcl_kernel_time *t = &p->names[c->name];
  t->profiled++;
  t->device_s += (double)(t1 - t0) * 1e-9;
  if (p->have_last && c->seq == p->last_seq + 1 && c->q == p->last_q) {
    p->gaps++;
    p->idle_ns += t0 > p->last_end ? t0 - p->last_end : 0;
  }
  p->have_last = 1;
  p->last_seq = c->seq;
  p->last_q = c->q;
  p->last_end = t1;
}

void nestcl_kprof_poll(nestcl_kprof *p, int wait)
{
  if (!p) {
    return;
  }
  while (p->head < p->n_pend) {
    kp_pending *c = &p->pend[p->head];
    cl_int st = CL_COMPLETE;
    if (wait) {
      clWaitForEvents(1, &c->ev);
    }
    if (clGetEventInfo(c->ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) != CL_SUCCESS) {
      st = -1;
    }
    if (st > CL_COMPLETE) {
      return; /* not run yet: neither are the ones after it (in-order queues) */
    }
    if (st == CL_COMPLETE) {
      account(p, c);
    } else {
      p->have_last = 0; /* failed: no time */
    }
    clReleaseEvent(c->ev);
    p->head++;
  }
  p->head = p->n_pend = 0;
}

cl_int nestcl_kprof_launch(nestcl_kprof *p, cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *global,
                           const size_t *local, cl_uint n_wait, const cl_event *wait, cl_event *done)
{
  p->seq++;
  int n = kernel_index(p, k, 0);
  if (n < 0) {
    return clEnqueueNDRangeKernel(q, k, dim, NULL, global, local, n_wait, wait, done);
  }
  uint64_t i = p->names[n].launches;
  if (p->every > 1 && i % (uint64_t)p->every >= 2u) {
    p->names[n].launches++;
    return clEnqueueNDRangeKernel(q, k, dim, NULL, global, local, n_wait, wait, done);
  }
  /* Sampled: check the name again (a released kernel's handle may now be another's). */
  n = kernel_index(p, k, 1);
  if (n < 0) {
    return clEnqueueNDRangeKernel(q, k, dim, NULL, global, local, n_wait, wait, done);
  }
  p->names[n].launches++;
  nestcl_kprof_poll(p, 0);
  cl_event ev = NULL;
  cl_int err = clEnqueueNDRangeKernel(q, k, dim, NULL, global, local, n_wait, wait, &ev);
  if (err != CL_SUCCESS) {
    return err;
  }
  if (done) {
    clRetainEvent(ev);
    *done = ev;
  }
  if (push(p, ev, q, n)) {
    clReleaseEvent(ev);
  }
  return CL_SUCCESS;
}

void nestcl_kprof_begin(nestcl_kprof *p, const char *name, cl_command_queue q, cl_event **ev)
{
  *ev = NULL;
  p->seq++;
  p->begun_timed = 0;
  p->begun_name = name_index(p, name);
  if (p->begun_name < 0) {
    return;
  }
  uint64_t i = p->names[p->begun_name].launches++;
  if (p->every == 1 || i % (uint64_t)p->every < 2u) {
    nestcl_kprof_poll(p, 0);
    p->begun_timed = 1;
    p->begun_ev = NULL;
    p->begun_q = q;
    *ev = &p->begun_ev;
  }
}

void nestcl_kprof_end(nestcl_kprof *p, cl_int err)
{
  if (p->begun_timed && err == CL_SUCCESS && p->begun_ev) {
    if (push(p, p->begun_ev, p->begun_q, p->begun_name)) {
      clReleaseEvent(p->begun_ev);
    }
  }
  p->begun_timed = 0;
  p->begun_ev = NULL;
}

void nestcl_kprof_other(nestcl_kprof *p)
{
  p->seq++;
}

int nestcl_kprof_add_to(nestcl_kprof *p, nestcl_kernel_profile *out)
{
  if (!p) {
    return 0;
  }
  nestcl_kprof_poll(p, 1);
  out->sample_every = p->every;
  for (int i = 0; i < p->n_names; ++i) {
    const nestcl_kernel_time *t = &p->names[i];
    int j = 0;
    while (j < out->n_kernels && strcmp(out->kernels[j].name, t->name) != 0) {
      ++j;
    }
    if (j == out->n_kernels) {
      nestcl_kernel_time *n = realloc(out->kernels, (size_t)(out->n_kernels + 1) * sizeof *n);
      if (!n) {
        return nestcl_set_error(NESTCL_ENOMEM, "out of host memory for the kernel profile");
      }
      out->kernels = n;
      memset(&n[j], 0, sizeof n[j]);
      memcpy(n[j].name, t->name, sizeof n[j].name);
      out->n_kernels++;
    }
    out->kernels[j].launches += t->launches;
    out->kernels[j].profiled += t->profiled;
    out->kernels[j].device_s += t->device_s;
  }
  out->gaps += p->gaps;
  out->idle_s += (double)p->idle_ns * 1e-9;
  return 0;
}

void nestcl_kernel_profile_free(nestcl_kernel_profile *p)
{
  if (p) {
    free(p->kernels);
    memset(p, 0, sizeof *p);
  }
}

int nestcl_kernel_profile_diff(const nestcl_kernel_profile *a, const nestcl_kernel_profile *b,
                               nestcl_kernel_profile *out)
{
  memset(out, 0, sizeof *out);
  out->sample_every = a->sample_every;
  out->kernels = calloc((size_t)(a->n_kernels ? a->n_kernels : 1), sizeof *out->kernels);
  if (!out->kernels) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory for the kernel profile");
  }
  for (int i = 0; i < a->n_kernels; ++i) {
    nestcl_kernel_time t = a->kernels[i];
    for (int j = 0; b && j < b->n_kernels; ++j) {
      if (strcmp(b->kernels[j].name, t.name) == 0) {
        t.launches -= b->kernels[j].launches;
        t.profiled -= b->kernels[j].profiled;
        t.device_s -= b->kernels[j].device_s;
      }
    }
    if (t.launches > 0) {
      out->kernels[out->n_kernels++] = t;
    }
  }
  out->gaps = a->gaps - (b ? b->gaps : 0);
  out->idle_s = a->idle_s - (b ? b->idle_s : 0.0);
  return 0;
}
