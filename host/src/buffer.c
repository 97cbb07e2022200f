/*
 * Accounted device buffers. OpenCL drivers often accept an allocation they
 * cannot back and fail later, at the first kernel that touches it, with an
 * error that names neither the buffer nor the sizes. So every allocation is
 * checked here first against the device's single-allocation limit and against
 * what remains of its global memory (or of NESTCL_DEVICE_MEMORY_LIMIT), and the
 * refusal says which buffer, how much, and how much is left.
 */
#include <string.h>

#include "device_internal.h"

static int refuse(const nestcl_device *dev, const char *what, size_t req, size_t used, const char *why)
{
  size_t avail = used < dev->memory_limit ? dev->memory_limit - used : 0;
  return nestcl_set_error(NESTCL_ENOMEM,
                          "device %s: cannot allocate %s: %zu bytes requested, %zu in use, %zu available "
                          "(max single allocation %llu)%s",
                          dev->info.device_name, what, req, used, avail, (unsigned long long)dev->info.max_alloc_bytes,
                          why);
}

int nestcl_buffer_alloc(nestcl_device *dev, nestcl_mem_class cls, const char *what, size_t bytes, cl_mem_flags flags,
                        const void *host_ptr, nestcl_buffer *out)
{
  if (!dev || !out)
    return nestcl_set_error(NESTCL_EINVAL, "nestcl_buffer_alloc: NULL argument");
  memset(out, 0, sizeof *out);
  if (!what)
    what = "buffer";
  if ((int)cls < 0 || cls >= NESTCL_MEM_CLASSES)
    return nestcl_set_error(NESTCL_EINVAL, "nestcl_buffer_alloc(%s): memory class %d out of range", what, (int)cls);

  /* Reserve before allocating, so that parallel callers cannot both pass the check. */
  pthread_mutex_lock(&dev->lock);
  size_t used = dev->bytes_total;
  int over = bytes > dev->info.max_alloc_bytes || bytes > dev->memory_limit || used > dev->memory_limit - bytes;
  if (!over) {
    dev->bytes_total += bytes;
    dev->bytes_in_use[cls] += bytes;
  }
  pthread_mutex_unlock(&dev->lock);
  if (over)
    return refuse(dev, what, bytes, used, "");

  if (!(flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY)))
    flags |= CL_MEM_READ_WRITE;
  if (host_ptr && !(flags & CL_MEM_USE_HOST_PTR))
    flags |= CL_MEM_COPY_HOST_PTR;
  cl_int err;
  /* A zero-byte buffer is invalid in OpenCL; kernels still need a valid argument. */
  cl_mem mem = clCreateBuffer(dev->context, flags, bytes ? bytes : 1, bytes ? (void *)host_ptr : NULL, &err);
  if (err != CL_SUCCESS) {
    pthread_mutex_lock(&dev->lock);
    dev->bytes_total -= bytes;
    dev->bytes_in_use[cls] -= bytes;
    pthread_mutex_unlock(&dev->lock);
    if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY ||
        err == CL_INVALID_BUFFER_SIZE)
      return refuse(dev, what, bytes, used,
                    err == CL_INVALID_BUFFER_SIZE ? ": the driver refused the size" : ": the driver is out of memory");
    return nestcl_set_error(NESTCL_ECL, "device %s: clCreateBuffer(%s, %zu bytes) failed: %s (%d)",
                            dev->info.device_name, what, bytes, nestcl_cl_error_name(err), err);
  }
  out->mem = mem;
  out->bytes = bytes;
  out->cls = cls;
  return 0;
}

void nestcl_buffer_free(nestcl_device *dev, nestcl_buffer *buf)
{
  if (!dev || !buf || !buf->mem)
    return;
  clReleaseMemObject(buf->mem);
  pthread_mutex_lock(&dev->lock);
  dev->bytes_total -= buf->bytes;
  dev->bytes_in_use[buf->cls] -= buf->bytes;
  pthread_mutex_unlock(&dev->lock);
  memset(buf, 0, sizeof *buf);
}

size_t nestcl_device_bytes_in_use(const nestcl_device *dev, nestcl_mem_class cls)
{
  if ((int)cls < 0 || cls >= NESTCL_MEM_CLASSES)
    return 0;
  pthread_mutex_lock((pthread_mutex_t *)&dev->lock);
  size_t n = dev->bytes_in_use[cls];
  pthread_mutex_unlock((pthread_mutex_t *)&dev->lock);
  return n;
}

size_t nestcl_device_bytes_total(const nestcl_device *dev)
{
  pthread_mutex_lock((pthread_mutex_t *)&dev->lock);
  size_t n = dev->bytes_total;
  pthread_mutex_unlock((pthread_mutex_t *)&dev->lock);
  return n;
}
