/*
 * Device discovery, selection and opening. Devices are enumerated over all
 * platforms in the order the ICD loader gives; a spec ("gpu:1", "pocl:0", ...)
 * picks one of them. Selection errors list every device, because the person who
 * typed a wrong --device needs to see what the machine actually has. An open
 * device owns one context and N in-order queues: one per GPU stream (VP).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "device_internal.h"

int nestcl_verbose(void)
{
  const char *v = getenv("NESTCL_VERBOSE");
  return v && strcmp(v, "1") == 0;
}

static const char *type_name(cl_device_type t)
{
  if (t & CL_DEVICE_TYPE_GPU)
    return "gpu";
  if (t & CL_DEVICE_TYPE_CPU)
    return "cpu";
  if (t & CL_DEVICE_TYPE_ACCELERATOR)
    return "accelerator";
  return "other";
}

/* Device extension strings can be kilobytes long, so they are fetched at their size. */
static int has_extension(cl_device_id d, const char *ext)
{
  size_t n = 0;
  if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &n) != CL_SUCCESS || n == 0)
    return 0;
  char *s = malloc(n + 1);
  if (!s)
    return 0;
  int found = 0;
  if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, n, s, NULL) == CL_SUCCESS) {
    s[n] = '\0';
    size_t len = strlen(ext);
    for (const char *p = s; (p = strstr(p, ext)) != NULL; p += len)
      if ((p == s || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0')) {
        found = 1;
        break;
      }
  }
  free(s);
  return found;
}

static int fill_info(cl_platform_id p, cl_device_id d, nestcl_device_info *di)
{
  cl_device_type type = 0;
  cl_device_fp_config fp64 = 0;
  cl_int err = clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof di->platform_name, di->platform_name, NULL);
  if (err == CL_SUCCESS)
    err = clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof di->device_name, di->device_name, NULL);
  if (err == CL_SUCCESS)
    err = clGetDeviceInfo(d, CL_DEVICE_VENDOR, sizeof di->vendor, di->vendor, NULL);
  if (err == CL_SUCCESS)
    err = clGetDeviceInfo(d, CL_DRIVER_VERSION, sizeof di->driver_version, di->driver_version, NULL);
  if (err == CL_SUCCESS)
    err = clGetDeviceInfo(d, CL_DEVICE_VERSION, sizeof di->device_version, di->device_version, NULL);
  if (err == CL_SUCCESS)
    err = clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  if (err == CL_SUCCESS)
    err = clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof di->compute_units, &di->compute_units, NULL);
  if (err == CL_SUCCESS)
    err = clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof di->global_mem_bytes, &di->global_mem_bytes, NULL);
  if (err == CL_SUCCESS)
    err = clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof di->max_alloc_bytes, &di->max_alloc_bytes, NULL);
  if (err != CL_SUCCESS)
    return nestcl_set_error(NESTCL_ECL, "clGetDeviceInfo failed: %s (%d)", nestcl_cl_error_name(err), err);
  /* Names are fixed-size here; a driver that filled them to the brim gave no terminator. */
  di->platform_name[sizeof di->platform_name - 1] = '\0';
  di->device_name[sizeof di->device_name - 1] = '\0';
  di->vendor[sizeof di->vendor - 1] = '\0';
  di->driver_version[sizeof di->driver_version - 1] = '\0';
  di->device_version[sizeof di->device_version - 1] = '\0';
  if (clGetDeviceInfo(d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL) != CL_SUCCESS)
    fp64 = 0;
  di->type = type_name(type);
  di->fp64 = fp64 != 0 || has_extension(d, "cl_khr_fp64");
  di->int64_atomics = has_extension(d, "cl_khr_int64_base_atomics");
  di->int64_ext_atomics = has_extension(d, "cl_khr_int64_extended_atomics");
  if (clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof di->max_wg_size, &di->max_wg_size, NULL) != CL_SUCCESS)
    di->max_wg_size = 1;
  if (clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof di->local_mem_bytes, &di->local_mem_bytes, NULL) !=
      CL_SUCCESS)
    di->local_mem_bytes = 0;
  cl_bool unified = CL_FALSE;
  if (clGetDeviceInfo(d, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL) != CL_SUCCESS)
    unified = CL_FALSE;
  di->host_unified = unified == CL_TRUE;
  di->preferred_wg_multiple = 0;
  di->platform = p;
  di->device = d;
  return 0;
}

/* All devices, without the kernel-based queries. */
static int enumerate(nestcl_device_info **out, int *count)
{
  *out = NULL;
  *count = 0;
  cl_uint np = 0;
  cl_int err = clGetPlatformIDs(0, NULL, &np);
  if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR: an ICD loader with no ICD installed */ || np == 0)
    return 0;
  if (err != CL_SUCCESS)
    return nestcl_set_error(NESTCL_ECL, "clGetPlatformIDs failed: %s (%d)", nestcl_cl_error_name(err), err);
  cl_platform_id *plats = calloc(np, sizeof *plats);
  if (!plats)
    return nestcl_set_error(NESTCL_ERUNTIME, "out of host memory");
  err = clGetPlatformIDs(np, plats, NULL);
  if (err != CL_SUCCESS) {
    free(plats);
    return nestcl_set_error(NESTCL_ECL, "clGetPlatformIDs failed: %s (%d)", nestcl_cl_error_name(err), err);
  }
  nestcl_device_info *list = NULL;
  int n = 0, rc = 0;
  for (cl_uint pi = 0; pi < np && rc == 0; pi++) {
    cl_uint nd = 0;
    /* A platform without devices answers CL_DEVICE_NOT_FOUND; that is no error. */
    if (clGetDeviceIDs(plats[pi], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0)
      continue;
    cl_device_id *devs = calloc(nd, sizeof *devs);
    nestcl_device_info *grown = realloc(list, (size_t)(n + (int)nd) * sizeof *list);
    if (!devs || !grown) {
      free(devs);
      rc = nestcl_set_error(NESTCL_ERUNTIME, "out of host memory");
      break;
    }
    list = grown;
    err = clGetDeviceIDs(plats[pi], CL_DEVICE_TYPE_ALL, nd, devs, NULL);
    if (err != CL_SUCCESS)
      rc = nestcl_set_error(NESTCL_ECL, "clGetDeviceIDs failed: %s (%d)", nestcl_cl_error_name(err), err);
    for (cl_uint di = 0; di < nd && rc == 0; di++) {
      nestcl_device_info *info = &list[n];
      memset(info, 0, sizeof *info);
      rc = fill_info(plats[pi], devs[di], info);
      if (rc)
        break;
      info->platform_index = (int)pi;
      info->device_index = (int)di;
      info->type_index = 0;
      for (int k = 0; k < n; k++)
        if (strcmp(list[k].type, info->type) == 0)
          info->type_index++;
      n++;
    }
    free(devs);
  }
  free(plats);
  if (rc) {
    free(list);
    return rc;
  }
  *out = list;
  *count = n;
  return 0;
}

int nestcl_query_wg_multiple(cl_context ctx, nestcl_device_info *info)
{
  static const char *src = "__kernel void nestcl_probe(__global float *x) { x[get_global_id(0)] *= 2.0f; }\n";
  cl_int err = CL_SUCCESS;
  cl_context own = NULL;
  cl_program prog = NULL;
  cl_kernel k = NULL;
  const char *call = "clCreateContext";
  if (!ctx) {
    own = clCreateContext(NULL, 1, &info->device, NULL, NULL, &err);
    ctx = own;
  }
  if (err == CL_SUCCESS) {
    call = "clCreateProgramWithSource";
    prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  }
  if (err == CL_SUCCESS) {
    call = "clBuildProgram";
    err = clBuildProgram(prog, 1, &info->device, "-cl-std=CL1.2", NULL, NULL);
  }
  if (err == CL_SUCCESS) {
    call = "clCreateKernel";
    k = clCreateKernel(prog, "nestcl_probe", &err);
  }
  if (err == CL_SUCCESS) {
    call = "clGetKernelWorkGroupInfo";
    err = clGetKernelWorkGroupInfo(k, info->device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                   sizeof info->preferred_wg_multiple, &info->preferred_wg_multiple, NULL);
  }
  if (k)
    clReleaseKernel(k);
  if (prog)
    clReleaseProgram(prog);
  if (own)
    clReleaseContext(own);
  if (err != CL_SUCCESS)
    return nestcl_set_error(NESTCL_ECL, "device %s: %s failed while probing the work-group multiple: %s (%d)",
                            info->device_name, call, nestcl_cl_error_name(err), err);
  return 0;
}

/* Listing must work even when one device's compiler is broken: that is when
 * people run nestcl-info. Such a device shows a work-group multiple of 0. */
int nestcl_list_devices(nestcl_device_info **out, int *count)
{
  if (!out || !count)
    return nestcl_set_error(NESTCL_EINVAL, "nestcl_list_devices: NULL argument");
  int rc = enumerate(out, count);
  for (int i = 0; rc == 0 && i < *count; i++)
    nestcl_query_wg_multiple(NULL, &(*out)[i]);
  return rc;
}

/* Appends the device table to msg, as used in every "no such device" error. */
static void describe_devices(char *msg, size_t cap, const nestcl_device_info *list, int n)
{
  size_t len = strlen(msg);
  if (n == 0) {
    snprintf(msg + len, cap - len, "\nno OpenCL devices found (is an ICD such as pocl-opencl-icd installed?)");
    return;
  }
  len += (size_t)snprintf(msg + len, cap - len, "\navailable devices (index, type, platform, name):");
  for (int i = 0; i < n && len < cap; i++)
    len += (size_t)snprintf(msg + len, cap - len, "\n  %d  %s:%d  %s  %s", i, list[i].type, list[i].type_index,
                            list[i].platform_name, list[i].device_name);
  if (len < cap)
    snprintf(msg + len, cap - len,
             "\nspecs: cpu, gpu, gpu:1, <platform or device name substring>:<index>, or an index above");
}

static int contains_nocase(const char *hay, const char *needle)
{
  size_t n = strlen(needle);
  for (; *hay; hay++) {
    size_t i = 0;
    while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
      i++;
    if (i == n)
      return 1;
  }
  return n == 0;
}

/* Parses "123" strictly; -1 when it is not a plain non-negative decimal. */
static long parse_index(const char *s)
{
  if (!*s || strlen(s) > 9)
    return -1;
  for (const char *p = s; *p; p++)
    if (!isdigit((unsigned char)*p))
      return -1;
  return strtol(s, NULL, 10);
}

/* Index into list of the device spec names; NESTCL_ENODEV when none matches,
 * NESTCL_EINVAL (message set) when the spec is malformed. */
static int match_spec(const char *spec, const char *origin, const nestcl_device_info *list, int n)
{
  char name[256];
  long index = 0;
  const char *colon = strrchr(spec, ':');
  size_t name_len = colon ? (size_t)(colon - spec) : strlen(spec);
  if (colon)
    index = parse_index(colon + 1);
  if (name_len >= sizeof name || index < 0 || (colon && name_len == 0))
    return nestcl_set_error(NESTCL_EINVAL,
                            "malformed device spec '%s'%s: expected cpu, gpu, gpu:1, <platform>:<index> or <index>",
                            spec, origin);
  memcpy(name, spec, name_len);
  name[name_len] = '\0';

  long global = colon ? -1 : parse_index(name);
  if (global >= 0)
    return global < n ? (int)global : NESTCL_ENODEV;

  int by_type = strcasecmp(name, "cpu") == 0 || strcasecmp(name, "gpu") == 0 || strcasecmp(name, "accelerator") == 0;
  long seen = 0;
  for (int i = 0; i < n; i++) {
    int hit = by_type ? strcasecmp(list[i].type, name) == 0
                      : contains_nocase(list[i].platform_name, name) || contains_nocase(list[i].device_name, name);
    if (hit && seen++ == index)
      return i;
  }
  return NESTCL_ENODEV;
}

int nestcl_select_device_basic(const char *spec, nestcl_device_info *out)
{
  if (!out)
    return nestcl_set_error(NESTCL_EINVAL, "nestcl_select_device: NULL output");
  const char *origin = "";
  if (!spec || !*spec) {
    spec = getenv("NESTCL_DEVICE");
    origin = " (from NESTCL_DEVICE)";
  }
  nestcl_device_info *list;
  int n, rc = enumerate(&list, &n);
  if (rc)
    return rc;
  int pick = -1;
  if (!spec || !*spec) { /* default: the first GPU, else the first device of any kind */
    for (int i = 0; i < n && pick < 0; i++)
      if (strcmp(list[i].type, "gpu") == 0)
        pick = i;
    if (pick < 0 && n > 0)
      pick = 0;
    if (pick < 0) {
      char msg[512] = "no OpenCL device to select";
      describe_devices(msg, sizeof msg, list, n);
      free(list);
      return nestcl_set_error(NESTCL_ENODEV, "%s", msg);
    }
  } else {
    pick = match_spec(spec, origin, list, n);
    if (pick == NESTCL_EINVAL) {
      free(list);
      return pick;
    }
    if (pick == NESTCL_ENODEV) {
      char msg[8192];
      snprintf(msg, sizeof msg, "no OpenCL device matches '%s'%s", spec, origin);
      describe_devices(msg, sizeof msg, list, n);
      free(list);
      return nestcl_set_error(NESTCL_ENODEV, "%s", msg);
    }
  }
  *out = list[pick];
  free(list);
  return 0;
}

int nestcl_select_device(const char *spec, nestcl_device_info *out)
{
  int rc = nestcl_select_device_basic(spec, out);
  if (rc == 0)
    nestcl_query_wg_multiple(NULL, out); /* as in nestcl_list_devices: 0 when the probe fails */
  return rc;
}

/* NESTCL_DEVICE_MEMORY_LIMIT: bytes, optionally with a K, M or G (binary) suffix. */
static int memory_limit_from_env(size_t *limit)
{
  const char *s = getenv("NESTCL_DEVICE_MEMORY_LIMIT");
  if (!s || !*s)
    return 0;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  int shift = 0;
  if (*end == 'K' || *end == 'k')
    shift = 10, end++;
  else if (*end == 'M' || *end == 'm')
    shift = 20, end++;
  else if (*end == 'G' || *end == 'g')
    shift = 30, end++;
  if (errno || end == s || *end || s[0] == '-' || (shift && v > (~0ULL >> shift)))
    return nestcl_set_error(NESTCL_EINVAL, "NESTCL_DEVICE_MEMORY_LIMIT='%s' is not a byte count", s);
  v <<= shift;
  if (v < *limit)
    *limit = (size_t)v;
  return 0;
}

int nestcl_device_open(const char *spec, int n_queues, nestcl_device **out)
{
  if (!out)
    return nestcl_set_error(NESTCL_EINVAL, "nestcl_device_open: NULL output");
  *out = NULL;
  if (n_queues < 1 || n_queues > 1024)
    return nestcl_set_error(NESTCL_EINVAL, "nestcl_device_open: %d queues requested (1..1024)", n_queues);
  nestcl_device *dev = calloc(1, sizeof *dev);
  if (!dev)
    return nestcl_set_error(NESTCL_ERUNTIME, "out of host memory");
  int rc = nestcl_select_device_basic(spec, &dev->info);
  if (rc) {
    free(dev);
    return rc;
  }
  dev->memory_limit = (size_t)dev->info.global_mem_bytes;
  rc = memory_limit_from_env(&dev->memory_limit);
  if (rc) {
    free(dev);
    return rc;
  }
  pthread_mutex_init(&dev->lock, NULL);
  cl_int err;
  dev->context = clCreateContext(NULL, 1, &dev->info.device, NULL, NULL, &err);
  if (err != CL_SUCCESS) {
    rc = nestcl_set_error(NESTCL_ECL, "device %s: clCreateContext failed: %s (%d)", dev->info.device_name,
                          nestcl_cl_error_name(err), err);
    dev->context = NULL;
    nestcl_device_close(dev);
    return rc;
  }
  dev->queues = calloc((size_t)n_queues, sizeof *dev->queues);
  if (!dev->queues) {
    nestcl_device_close(dev);
    return nestcl_set_error(NESTCL_ERUNTIME, "out of host memory");
  }
  for (; dev->n_queues < n_queues; dev->n_queues++) {
    /* Profiling is on so that the engine and the perfmodel can time kernels from events. */
    cl_command_queue q = clCreateCommandQueue(dev->context, dev->info.device, CL_QUEUE_PROFILING_ENABLE, &err);
    if (err != CL_SUCCESS) {
      rc = nestcl_set_error(NESTCL_ECL, "device %s: clCreateCommandQueue (queue %d of %d) failed: %s (%d)",
                            dev->info.device_name, dev->n_queues, n_queues, nestcl_cl_error_name(err), err);
      nestcl_device_close(dev);
      return rc;
    }
    dev->queues[dev->n_queues] = q;
  }
  rc = nestcl_query_wg_multiple(dev->context, &dev->info);
  if (rc) {
    nestcl_device_close(dev);
    return rc;
  }
  *out = dev;
  return 0;
}

void nestcl_device_close(nestcl_device *dev)
{
  if (!dev)
    return;
  for (int i = 0; i < dev->n_queues; i++) {
    clFinish(dev->queues[i]);
    clReleaseCommandQueue(dev->queues[i]);
  }
  free(dev->queues);
  if (dev->context)
    clReleaseContext(dev->context);
  pthread_mutex_destroy(&dev->lock);
  free(dev);
}

const nestcl_device_info *nestcl_device_get_info(const nestcl_device *dev)
{
  return &dev->info;
}
cl_context nestcl_device_context(const nestcl_device *dev)
{
  return dev->context;
}
cl_device_id nestcl_device_id(const nestcl_device *dev)
{
  return dev->info.device;
}
int nestcl_device_queue_count(const nestcl_device *dev)
{
  return dev->n_queues;
}

cl_command_queue nestcl_device_queue(const nestcl_device *dev, int index)
{
  return index >= 0 && index < dev->n_queues ? dev->queues[index] : NULL;
}

int nestcl_device_require(const nestcl_device *dev, const char *who)
{
  const nestcl_device_info *di = &dev->info;
  const char *missing = !di->fp64 ? "double precision (cl_khr_fp64)"
    : !di->int64_atomics          ? "64-bit integer atomics (cl_khr_int64_base_atomics)"
                                  : NULL;
  if (missing)
    return nestcl_set_error(NESTCL_ENODEV, "device '%s' lacks %s, which %s needs; no fallback exists", di->device_name,
                            missing, who);
  return 0;
}

int nestcl_kernel_wg_width(const nestcl_device *dev, cl_kernel k, const char *name, size_t want, size_t *width)
{
  size_t limit = 0;
  cl_int err = clGetKernelWorkGroupInfo(k, dev->info.device, CL_KERNEL_WORK_GROUP_SIZE, sizeof limit, &limit, NULL);
  if (err != CL_SUCCESS)
    return nestcl_set_error(NESTCL_ECL, "device '%s': CL_KERNEL_WORK_GROUP_SIZE of kernel %s: %s (%d)",
                            dev->info.device_name, name, nestcl_cl_error_name(err), err);
  if (dev->info.max_wg_size && dev->info.max_wg_size < limit)
    limit = dev->info.max_wg_size;
  size_t w = want < limit ? want : limit;
  *width = w ? w : 1;
  if (nestcl_verbose() && w < want)
    fprintf(stderr, "nestcl: device '%s': kernel %s runs work-groups of %zu, not %zu (the device's limit)\n",
            dev->info.device_name, name, *width, want);
  return 0;
}
