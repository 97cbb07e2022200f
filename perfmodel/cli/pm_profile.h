/* The profile of a run's device and the model's hpc_benchmark configurations (pm_profile.c). */
#ifndef NESTCL_PM_PROFILE_H
#define NESTCL_PM_PROFILE_H

#include <stddef.h>

#include "nestcl/device.h"
#include "nestcl/pm_model.h"

enum { PM_PROFILE_OK, PM_PROFILE_MISSING, PM_PROFILE_CORRUPT, PM_PROFILE_NO_CACHE, PM_PROFILE_ERROR };
/*
 * The profile of the device a run selects (device_spec as `--device`):
 * profile_file when given (it must name a device of this machine, the one
 * selected; PM_PROFILE_ERROR after an error line otherwise), else the cache's.
 * MISSING, CORRUPT (also stale: another core count; the reason in
 * nestcl_last_error()) and NO_CACHE leave the choice to the caller.
 */
int pm_resolve_profile(const char *device_spec, const char *profile_file, nestcl_pm_profile *p, char *path, size_t cap,
                       nestcl_device_info *dev);
/* The model's configuration of hpc_benchmark at a scale (the rate from the profile's table). */
void pm_hpc_config(const nestcl_pm_profile *p, double scale, int stdp, int ranks, nestcl_pm_config *c);

/* One (threads, streams) with its best alpha and predicted wall time. */
typedef struct pm_candidate {
  nestcl_pm_config c;
  double wall;
} pm_candidate;
/* Every (T_C, T_G) in the bounds (not both 0) with its best alpha, fastest first; returns the count. */
/* `nestcl perfmodel profiles`: the repository's and the cache's profiles of the device, and the one a run uses. */
int pm_profiles(int argc, char **argv);
int pm_candidates(const nestcl_pm_profile *p, const nestcl_pm_config *base, int t_lo, int t_hi, int g_lo, int g_hi,
                  pm_candidate *out);
#endif
