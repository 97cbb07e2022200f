/*
 * nestcl device layer: finds OpenCL devices, opens one context with N command
 * queues ("GPU streams") per device, builds programs through an on-disk binary
 * cache and accounts for every buffer it allocates. Everything above it (the
 * engine, the tests, nestcl-info) reaches OpenCL through this header, so that
 * device selection, build logs and memory limits are reported in one way.
 *
 * Conventions (docs/architecture.md, "Conventions"): every function returns 0 or a negative NESTCL_E*
 * code; the message, with context, is in nestcl_last_error(). Nothing here
 * prints or exits.
 */
#ifndef NESTCL_DEVICE_H
#define NESTCL_DEVICE_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. */
#define NESTCL_OK 0
#define NESTCL_EINVAL (-1) /* bad argument or user input (usage error) */
#define NESTCL_ENODEV (-2) /* no device matches the spec */
#define NESTCL_EBUILD (-3) /* program build failed; message holds the build log */
#define NESTCL_ENOMEM (-4) /* allocation over the device's limits; message holds the sizes */
#define NESTCL_ECL (-5) /* another OpenCL error; message names the call and the code */
#define NESTCL_EIO (-6) /* file system error (cache, output files) */
#define NESTCL_ERUNTIME (-7) /* other run-time failure (overflow detected, MPI, ...) */
#define NESTCL_EINTR (-8) /* stopped on request (nestcl_engine_set_stop_flag) at the end of a super step */

/* The message of the last failure in this thread, never NULL. */
const char *nestcl_last_error(void);
/* Sets the thread's message (printf-style) and returns code; for use by all of libnestcl. */
int nestcl_set_error(int code, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 2, 3)))
#endif
  ;
/* Name of an OpenCL error code, e.g. "CL_OUT_OF_RESOURCES". */
const char *nestcl_cl_error_name(cl_int err);

/* What nestcl-info prints about one device. */
typedef struct nestcl_device_info {
  int platform_index;
  int device_index; /* index within its platform */
  int type_index; /* index among devices of the same type (cpu/gpu/accelerator) over all platforms */
  char platform_name[128];
  char device_name[256];
  char vendor[128];
  char driver_version[128];
  char device_version[128];
  const char *type; /* "cpu", "gpu", "accelerator", "other" */
  cl_uint compute_units;
  cl_ulong global_mem_bytes;
  cl_ulong max_alloc_bytes;
  int fp64; /* cl_khr_fp64 or a 1.2+ device reporting double support */
  int int64_atomics; /* cl_khr_int64_base_atomics: the ring's fixed-point sums need it */
  int int64_ext_atomics; /* cl_khr_int64_extended_atomics: not needed by any kernel; reported */
  size_t max_wg_size; /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
  cl_ulong local_mem_bytes; /* CL_DEVICE_LOCAL_MEM_SIZE (nestcl_gather uses 4 bytes; no other kernel any) */
  size_t preferred_wg_multiple; /* CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE of a trivial kernel */
  int host_unified; /* CL_DEVICE_HOST_UNIFIED_MEMORY: the device's memory is the host's (a CPU device) */
  cl_platform_id platform;
  cl_device_id device;
} nestcl_device_info;

/* All devices of all platforms. *out is malloc'ed; free() it. */
int nestcl_list_devices(nestcl_device_info **out, int *count);

/*
 * Resolves a device spec: "cpu", "gpu", "gpu:1", "<platform substring>:<index>",
 * or NULL/"" meaning $NESTCL_DEVICE, and if that is unset: the first GPU, else
 * the first device. A spec that matches nothing returns NESTCL_ENODEV with a
 * message listing every device available. A malformed spec returns NESTCL_EINVAL.
 * Details: type names and substrings are case-insensitive; a substring may
 * match the platform or the device name, and its index counts the matching
 * devices in listing order ("<substring>" alone means index 0); a bare number
 * "N" is the N-th device of nestcl_list_devices.
 */
int nestcl_select_device(const char *spec, nestcl_device_info *out);

/* One context on one device, with n_queues in-order command queues (profiling
 * enabled, so kernels can be timed from their events). */
typedef struct nestcl_device nestcl_device;

int nestcl_device_open(const char *spec, int n_queues, nestcl_device **out);
void nestcl_device_close(nestcl_device *dev);
const nestcl_device_info *nestcl_device_get_info(const nestcl_device *dev);
cl_context nestcl_device_context(const nestcl_device *dev);
cl_device_id nestcl_device_id(const nestcl_device *dev);
int nestcl_device_queue_count(const nestcl_device *dev);
cl_command_queue nestcl_device_queue(const nestcl_device *dev, int index);

/*
 * What the kernels need of a device, probed, never assumed (docs/architecture.md, "Tests and verification"):
 * double precision and 64-bit base atomics (the ring's fixed-point sums). A
 * device without one gets NESTCL_ENODEV and one message naming the device,
 * the capability and 'who' needs it. There is no slower fallback for either.
 */
int nestcl_device_require(const nestcl_device *dev, const char *who);

/*
 * The widest work-group kernel k may run with on this device, at most want:
 * the smaller of CL_KERNEL_WORK_GROUP_SIZE (which a driver lowers for a kernel
 * that needs many registers) and the device's maximum. Queried per built
 * kernel; *width is at least 1. An error names the kernel and the device.
 */
int nestcl_kernel_wg_width(const nestcl_device *dev, cl_kernel k, const char *name, size_t want, size_t *width);

/*
 * Program building with a binary cache. The key is a hash of the source,
 * the options, the device name and the driver version. The cache directory is
 * $NESTCL_CACHE_DIR, else $XDG_CACHE_HOME/nestcl, else $HOME/.cache/nestcl;
 * NESTCL_CACHE_DIR=off disables the cache. Entries are written to a temporary
 * file and renamed, so concurrent processes never see half an entry; an entry
 * whose checksum or binary does not load is rebuilt and overwritten.
 * On a build failure the message holds the device name and the full build log.
 * Every program gets "-cl-fp32-correctly-rounded-divide-sqrt"-free, fast-math-free
 * options; callers add -D values. "-cl-std=CL1.2" is added unless the options
 * already name a -cl-std. NESTCL_VERBOSE=1 logs each hit and miss on stderr.
 */
int nestcl_program_build(nestcl_device *dev, const char *source, const char *options, cl_program *out);

typedef struct nestcl_cache_stats {
  unsigned long hits; /* served from the on-disk cache */
  unsigned long misses; /* compiled from source (and stored, unless the cache is off) */
  unsigned long corrupt; /* entries found corrupt and rebuilt; each is also a miss */
} nestcl_cache_stats;
void nestcl_device_cache_stats(const nestcl_device *dev, nestcl_cache_stats *out);

/* Accounted buffers. 'what' names the buffer in error messages and in memory reports. */
typedef enum nestcl_mem_class {
  NESTCL_MEM_STATE = 0,
  NESTCL_MEM_RING,
  NESTCL_MEM_SYNAPSES,
  NESTCL_MEM_RECORDING,
  NESTCL_MEM_OTHER,
  NESTCL_MEM_CLASSES
} nestcl_mem_class;

typedef struct nestcl_buffer {
  cl_mem mem;
  size_t bytes;
  nestcl_mem_class cls;
} nestcl_buffer;

/*
 * Allocates bytes on the device. A request above the device's max allocation,
 * or above what remains of its global memory (or of NESTCL_DEVICE_MEMORY_LIMIT
 * bytes, when set and smaller; a K, M or G suffix is allowed), fails with NESTCL_ENOMEM and a message giving the sizes
 * requested, in use and available. host_ptr may be NULL; if given, the buffer is
 * initialised from it (CL_MEM_COPY_HOST_PTR). bytes == 0 allocates a 1-byte
 * buffer so kernels always get a valid argument.
 */
int nestcl_buffer_alloc(nestcl_device *dev, nestcl_mem_class cls, const char *what, size_t bytes, cl_mem_flags flags,
                        const void *host_ptr, nestcl_buffer *out);
void nestcl_buffer_free(nestcl_device *dev, nestcl_buffer *buf);
/* Bytes in use on this device, per class and in total. */
size_t nestcl_device_bytes_in_use(const nestcl_device *dev, nestcl_mem_class cls);
size_t nestcl_device_bytes_total(const nestcl_device *dev);

/*
 * Kernels timed from OpenCL profiling events (issue 41; docs/architecture.md,
 * "The device loop"). Every launch of a queue's kernels is counted by the
 * kernel's name; launches i of a kernel with i mod sample_every < 2 (two in a
 * row, so that the device's idle time between consecutive kernels is seen too;
 * sample_every 1: every launch) get an event, whose start and end give the
 * device time. A recorded super step replayed from a command buffer is one
 * entry, "command_buffer". Sampled figures are means over the timed launches:
 * device_s / profiled is the time per launch, and launches times that the
 * total.
 */
typedef struct nestcl_kernel_time {
  char name[64];
  uint64_t launches; /* every launch */
  uint64_t profiled; /* the launches timed */
  double device_s; /* their device time, summed (CL_PROFILING_COMMAND_END - START) */
} nestcl_kernel_time;

typedef struct nestcl_kernel_profile {
  int sample_every; /* 0: nothing timed (launches not counted either) */
  int n_kernels;
  nestcl_kernel_time *kernels; /* in the order of their first launch; owned (nestcl_kernel_profile_free) */
  /*
   * Consecutive commands of a queue that were both timed kernels: gaps of
   * them, and the device's idle time between one's end and the next's start.
   */
  uint64_t gaps;
  double idle_s;
} nestcl_kernel_profile;

void nestcl_kernel_profile_free(nestcl_kernel_profile *p);
/* a less b, kernel by kernel (by name) and in gaps: the measured part of a run between two profiles. */
int nestcl_kernel_profile_diff(const nestcl_kernel_profile *a, const nestcl_kernel_profile *b,
                               nestcl_kernel_profile *out);

#ifdef __cplusplus
}
#endif
#endif
