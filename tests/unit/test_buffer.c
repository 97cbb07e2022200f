/*
 * Accounted buffers: requests above the single-allocation limit or above the
 * remaining memory budget fail with NESTCL_ENOMEM and a message giving the
 * sizes, before the driver is asked; the per-class and total accounting
 * returns to zero once everything is freed. NESTCL_DEVICE_MEMORY_LIMIT is set
 * here to make the budget small enough to exhaust in a test.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"

int main(void)
{
  nestcl_device *dev;
  unsetenv("NESTCL_DEVICE_MEMORY_LIMIT");
  CHECK_OK(nestcl_device_open("cpu", 1, &dev));
  const nestcl_device_info *info = nestcl_device_get_info(dev);
  nestcl_buffer b;
  char expect[128];

  /* Above the largest single allocation. */
  size_t too_big = (size_t)info->max_alloc_bytes + 1;
  CHECK(nestcl_buffer_alloc(dev, NESTCL_MEM_SYNAPSES, "synapse weights", too_big, 0, NULL, &b) == NESTCL_ENOMEM);
  const char *msg = nestcl_last_error();
  printf("%s\n", msg);
  CHECK(strstr(msg, info->device_name) && strstr(msg, "synapse weights"));
  snprintf(expect, sizeof expect, "%zu bytes requested, 0 in use", too_big);
  CHECK(strstr(msg, expect) != NULL);
  snprintf(expect, sizeof expect, "max single allocation %llu", (unsigned long long)info->max_alloc_bytes);
  CHECK(strstr(msg, expect) != NULL);
  CHECK(b.mem == NULL && nestcl_device_bytes_total(dev) == 0);
  CHECK(nestcl_buffer_alloc(dev, NESTCL_MEM_CLASSES, "x", 8, 0, NULL, &b) == NESTCL_EINVAL);
  nestcl_device_close(dev);

  /* Above the remaining budget, with a 1 MiB limit. */
  setenv("NESTCL_DEVICE_MEMORY_LIMIT", "1M", 1);
  CHECK_OK(nestcl_device_open("cpu", 1, &dev));
  nestcl_buffer state, ring, rec, empty;
  double init[1000];
  for (int i = 0; i < 1000; i++)
    init[i] = 0.5 * i;
  CHECK_OK(nestcl_buffer_alloc(dev, NESTCL_MEM_STATE, "V_m", sizeof init, 0, init, &state));
  CHECK_OK(nestcl_buffer_alloc(dev, NESTCL_MEM_RING, "ring buffer", 600000, 0, NULL, &ring));
  CHECK_OK(nestcl_buffer_alloc(dev, NESTCL_MEM_RECORDING, "empty recorder", 0, 0, NULL, &empty));
  CHECK(empty.mem != NULL && empty.bytes == 0);
  CHECK(nestcl_device_bytes_in_use(dev, NESTCL_MEM_STATE) == sizeof init);
  CHECK(nestcl_device_bytes_in_use(dev, NESTCL_MEM_RING) == 600000);
  CHECK(nestcl_device_bytes_total(dev) == 600000 + sizeof init);

  size_t used = 600000 + sizeof init, avail = (1u << 20) - used;
  CHECK(nestcl_buffer_alloc(dev, NESTCL_MEM_RECORDING, "spike recorder", avail + 1, 0, NULL, &rec) == NESTCL_ENOMEM);
  printf("%s\n", nestcl_last_error());
  snprintf(expect, sizeof expect, "%zu bytes requested, %zu in use, %zu available", avail + 1, used, avail);
  CHECK(strstr(nestcl_last_error(), expect) != NULL);
  CHECK(nestcl_device_bytes_total(dev) == used); /* the refused request left no trace */
  CHECK_OK(nestcl_buffer_alloc(dev, NESTCL_MEM_RECORDING, "spike recorder", avail, 0, NULL, &rec));
  CHECK(nestcl_device_bytes_total(dev) == 1u << 20);

  /* The host data arrived. */
  double back[1000];
  CHECK(clEnqueueReadBuffer(nestcl_device_queue(dev, 0), state.mem, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL) ==
        CL_SUCCESS);
  CHECK(memcmp(back, init, sizeof back) == 0);

  nestcl_buffer_free(dev, &state);
  nestcl_buffer_free(dev, &ring);
  nestcl_buffer_free(dev, &rec);
  nestcl_buffer_free(dev, &empty);
  nestcl_buffer_free(dev, &empty); /* freeing twice is harmless: the handle was cleared */
  for (int c = 0; c < NESTCL_MEM_CLASSES; c++)
    CHECK(nestcl_device_bytes_in_use(dev, (nestcl_mem_class)c) == 0);
  CHECK(nestcl_device_bytes_total(dev) == 0);
  nestcl_device_close(dev);

  setenv("NESTCL_DEVICE_MEMORY_LIMIT", "lots", 1);
  CHECK(nestcl_device_open("cpu", 1, &dev) == NESTCL_EINVAL);
  printf("buffer accounting ok\n");
  return 0;
}
