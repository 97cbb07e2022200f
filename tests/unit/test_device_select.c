/*
 * Device listing, spec resolution and opening, on whatever OpenCL devices the
 * machine has (PoCL's CPU device at least). Wrong specs must fail with the
 * right code and a message that lists the devices; NESTCL_DEVICE must be
 * honoured when no spec is given.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int main(void)
{
  nestcl_device_info *list;
  int n;
  CHECK_OK(nestcl_list_devices(&list, &n));
  CHECK(n >= 1);
  for (int i = 0; i < n; i++) {
    CHECK(list[i].device_name[0] && list[i].platform_name[0]);
    CHECK(list[i].max_alloc_bytes > 0 && list[i].max_alloc_bytes <= list[i].global_mem_bytes);
    CHECK(list[i].preferred_wg_multiple >= 1);
    CHECK(list[i].compute_units >= 1);
  }
  const nestcl_device_info first = list[0];
  free(list);

  nestcl_device_info d;
  unsetenv("NESTCL_DEVICE");
  CHECK_OK(nestcl_select_device(NULL, &d));
  CHECK(d.preferred_wg_multiple >= 1);
  /* "<type>:<index>" of any device finds that device again. */
  char spec[64];
  snprintf(spec, sizeof spec, "%s:%d", first.type, first.type_index);
  CHECK_OK(nestcl_select_device(spec, &d));
  CHECK(d.device == first.device);
  CHECK_OK(nestcl_select_device("0", &d));
  CHECK(d.device == first.device);

  /* A case-insensitive substring of the platform name, with an index. */
  char sub[8];
  for (int i = 0; i < 4; i++)
    sub[i] = (char)toupper((unsigned char)first.platform_name[i]);
  strcpy(sub + 4, ":0");
  CHECK_OK(nestcl_select_device(sub, &d));

  CHECK(nestcl_select_device("nosuch:3", &d) == NESTCL_ENODEV);
  CHECK(strstr(nestcl_last_error(), "nosuch:3") && strstr(nestcl_last_error(), first.device_name) &&
        strstr(nestcl_last_error(), first.platform_name));
  CHECK(nestcl_select_device("cpu:999", &d) == NESTCL_ENODEV);
  CHECK(nestcl_select_device("999", &d) == NESTCL_ENODEV);
  CHECK(nestcl_select_device("gpu:x", &d) == NESTCL_EINVAL);
  CHECK(nestcl_select_device(":1", &d) == NESTCL_EINVAL);
  CHECK(nestcl_select_device("cpu:", &d) == NESTCL_EINVAL);
  CHECK(nestcl_select_device("cpu:-1", &d) == NESTCL_EINVAL);

  setenv("NESTCL_DEVICE", "nosuch", 1);
  CHECK(nestcl_select_device("", &d) == NESTCL_ENODEV);
  CHECK(strstr(nestcl_last_error(), "NESTCL_DEVICE") != NULL);
  CHECK_OK(nestcl_select_device(spec, &d)); /* an explicit spec wins over the variable */
  setenv("NESTCL_DEVICE", spec, 1);
  CHECK_OK(nestcl_select_device(NULL, &d));
  CHECK(d.device == first.device);
  unsetenv("NESTCL_DEVICE");

  nestcl_device *dev;
  CHECK(nestcl_device_open(spec, 0, &dev) == NESTCL_EINVAL);
  CHECK_OK(nestcl_device_open(spec, 3, &dev));
  CHECK(nestcl_device_queue_count(dev) == 3);
  for (int q = 0; q < 3; q++)
    CHECK(nestcl_device_queue(dev, q) != NULL);
  CHECK(nestcl_device_queue(dev, 0) != nestcl_device_queue(dev, 1));
  CHECK(nestcl_device_queue(dev, 3) == NULL);
  CHECK(nestcl_device_id(dev) == first.device);
  CHECK(nestcl_device_context(dev) != NULL);
  CHECK(strcmp(nestcl_device_get_info(dev)->device_name, first.device_name) == 0);
  CHECK(nestcl_device_get_info(dev)->preferred_wg_multiple >= 1);
  nestcl_device_close(dev);
  printf("device selection ok (%d device(s))\n", n);
  return 0;
}
