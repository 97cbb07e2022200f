/*
 * Where `nestcl perfmodel predict|tune` and `nestcl run --gpu-fraction auto`
 * get their profile, and what the model says of hpc_benchmark's
 * configurations: the profile of the selected device (a given file, or the
 * cache's), the model's configuration at a scale, and the (threads, streams)
 * candidates ranked by predicted wall time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_profile.h"

int pm_resolve_profile(const char *device_spec, const char *profile_file, nestcl_pm_profile *p, char *path, size_t cap,
                       nestcl_device_info *dev)
{
  int rc = nestcl_select_device(device_spec, dev);
  if (rc) {
    fprintf(stderr, "error: %s\n", nestcl_last_error());
    return PM_PROFILE_ERROR;
  }
  if (profile_file) {
    snprintf(path, cap, "%s", profile_file);
    rc = nestcl_pm_profile_load(profile_file, NULL, NULL, p);
    if (rc) {
      fprintf(stderr, "error: %s\n", nestcl_last_error());
      return PM_PROFILE_ERROR;
    }
    /* A profile given by hand must name a device this machine has. */
    nestcl_device_info *all = NULL;
    int n = 0, found = 0;
    if (nestcl_list_devices(&all, &n) == 0) {
      for (int i = 0; i < n; ++i) {
        found |=
          strcmp(all[i].device_name, p->device_name) == 0 && strcmp(all[i].driver_version, p->device_driver) == 0;
      }
    }
    free(all);
    if (!found) {
      fprintf(stderr,
              "error: profile %s is of device '%s' (driver %s), which this machine does not have "
              "(nestcl-info lists the devices)\n",
              profile_file, p->device_name, p->device_driver);
      return PM_PROFILE_ERROR;
    }
    if (strcmp(p->device_name, dev->device_name) != 0 || strcmp(p->device_driver, dev->driver_version) != 0) {
      fprintf(stderr, "error: profile %s is of device '%s' (driver %s), but the run uses '%s' (driver %s)\n",
              profile_file, p->device_name, p->device_driver, dev->device_name, dev->driver_version);
      return PM_PROFILE_ERROR;
    }
    return PM_PROFILE_OK;
  }
  switch (nestcl_pm_profile_find("hpc_benchmark", dev->device_name, dev->driver_version, p, path, cap)) {
  case NESTCL_PM_FOUND:
    return PM_PROFILE_OK;
  case NESTCL_PM_NO_CACHE:
    return PM_PROFILE_NO_CACHE;
  case NESTCL_PM_MISSING:
    return PM_PROFILE_MISSING;
  default:
    return PM_PROFILE_CORRUPT;
  }
}

void pm_hpc_config(const nestcl_pm_profile *p, double scale, int stdp, int ranks, nestcl_pm_config *c)
{
  /* hpc_benchmark: NE = 9000 S and NI = 2250 S, truncated as the benchmark does. */
  nestcl_pm_hpc_config(p, floor(9000.0 * scale) + floor(2250.0 * scale), stdp, ranks, c);
}

static int cmp_candidate(const void *a, const void *b)
{
  double x = ((const pm_candidate *)a)->wall, y = ((const pm_candidate *)b)->wall;
  return x < y ? -1 : x > y;
}

int pm_candidates(const nestcl_pm_profile *p, const nestcl_pm_config *base, int t_lo, int t_hi, int g_lo, int g_hi,
                  pm_candidate *out)
{
  int n = 0;
  for (int t = t_lo; t <= t_hi; ++t) {
    for (int g = g_lo; g <= g_hi; ++g) {
      if (t + g < 1)
        continue;
      pm_candidate k;
      k.c = *base;
      k.c.TC = t;
      k.c.TG = g;
      k.c.alpha = nestcl_pm_best_alpha(p->p, &k.c, &k.wall);
      out[n++] = k;
    }
  }
  qsort(out, (size_t)n, sizeof *out, cmp_candidate);
  return n;
}
