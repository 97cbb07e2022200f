/*
 * The nestcl_device object, shared by the files of the device layer
 * (device.c opens it, program_cache.c builds on it, buffer.c accounts on it).
 * Nothing outside host/src sees its fields.
 */
#ifndef NESTCL_DEVICE_INTERNAL_H
#define NESTCL_DEVICE_INTERNAL_H

#include <pthread.h>

#include "nestcl/device.h"

struct nestcl_device {
  nestcl_device_info info;
  cl_context context;
  cl_command_queue *queues;
  int n_queues;
  pthread_mutex_t lock; /* guards cache stats and accounting: VPs may build/allocate in parallel */
  nestcl_cache_stats cache;
  size_t bytes_in_use[NESTCL_MEM_CLASSES];
  size_t bytes_total;
  size_t memory_limit; /* global memory, or NESTCL_DEVICE_MEMORY_LIMIT when smaller */
};

/* Fills info->preferred_wg_multiple by building a trivial kernel; ctx may be
 * NULL, then a temporary context is made. */
int nestcl_query_wg_multiple(cl_context ctx, nestcl_device_info *info);

/* Selection without the (costly) kernel-based queries; device_open does those
 * on its own context. */
int nestcl_select_device_basic(const char *spec, nestcl_device_info *out);

/* 1 when NESTCL_VERBOSE=1: the only case in which the library writes (to stderr). */
int nestcl_verbose(void);

#endif
