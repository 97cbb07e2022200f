/*
 * Where `nestcl perfmodel predict|tune` and `nestcl run --gpu-fraction auto`
 * get their profile, and what the model says of hpc_benchmark's
 * configurations: the profile of the selected device (a given file, the
 * cache's, or the repository's), the model's configuration at a scale, and
 * the (threads, streams) candidates ranked by predicted wall time; and
 * `nestcl perfmodel profiles`, which says what there is and which one a run
 * would use.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"
#include "pm_flags.h"
#include "pm_profile.h"
#include "run_common.h"

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

/* ---- nestcl perfmodel profiles ------------------------------------------------ */

/* One profile's description: its file, what it is of, when and where it was fitted. */
static void json_entry(json *j, const char *file, const nestcl_pm_profile *p, int matches)
{
  char date[32] = "";
  time_t t = (time_t)p->created;
  struct tm tm;
  if (gmtime_r(&t, &tm)) {
    strftime(date, sizeof date, "%Y-%m-%d", &tm);
  }
  json_begin_object(j);
  json_key(j, "file");
  json_string(j, file);
  json_key(j, "benchmark");
  json_string(j, p->benchmark);
  json_key(j, "device_name");
  json_string(j, p->device_name);
  json_key(j, "device_driver");
  json_string(j, p->device_driver);
  json_key(j, "cores");
  json_integer(j, p->cores);
  json_key(j, "date");
  json_string(j, date);
  json_key(j, "machine");
  json_string(j, p->machine);
  json_key(j, "this_machine");
  json_bool(j, matches);
  json_end_object(j);
}

/* The repository's folder and every profile in it, each marked whether it is of this machine's device. */
static void json_repository(json *j, const nestcl_device_info *dev)
{
  char dir[PATH_MAX];
  int have = nestcl_pm_repository(dir, sizeof dir) == 0;
  json_key(j, "repository");
  if (have)
    json_string(j, dir);
  else
    json_null(j);
  json_key(j, "repository_profiles");
  json_begin_array(j);
  char **names = NULL;
  size_t n = 0;
  if (have && nestcl_pm_list_profiles(dir, &names, &n) == 0) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    for (size_t k = 0; k < n; ++k) {
      char file[PATH_MAX + 256];
      snprintf(file, sizeof file, "%s/%s", dir, names[k]);
      nestcl_pm_profile p;
      if (nestcl_pm_profile_load(file, NULL, NULL, &p) == 0) {
        json_entry(j, file, &p,
                   strcmp(p.device_name, dev->device_name) == 0 && strcmp(p.device_driver, dev->driver_version) == 0 &&
                     p.cores == cores);
      }
      free(names[k]);
    }
  }
  free(names);
  json_end_array(j);
}

int pm_profiles(int argc, char **argv)
{
  pm_flags f;
  int bad = pm_parse_flags(argc, argv, "device out", &f);
  free(f.files); /* no files: the flags keep pointers into argv only */
  if (bad)
    return CLI_USAGE;
  if (f.help) {
    printf("usage: nestcl perfmodel profiles [--device SPEC] [--out FILE]\n"
           "\n"
           "The performance profiles there are for the device (as `nestcl run --device`): the\n"
           "repository's (fitted on real machines, in share/nestcl/perfmodel/profiles beside this\n"
           "binary), each marked whether it is of this device, driver and core count, the cache's,\n"
           "and the one `--gpu-fraction auto` would use. JSON on stdout or --out.\n");
    return CLI_OK;
  }
  nestcl_device_info dev;
  if (nestcl_select_device(f.device, &dev)) {
    fprintf(stderr, "error: %s\n", nestcl_last_error());
    return CLI_USAGE;
  }
  json j;
  json_init(&j);
  json_begin_object(&j);
  json_key(&j, "schema");
  json_string(&j, "nestcl-perfmodel-profiles/1");
  json_key(&j, "device_name");
  json_string(&j, dev.device_name);
  json_key(&j, "device_driver");
  json_string(&j, dev.driver_version);
  json_key(&j, "cores");
  json_integer(&j, sysconf(_SC_NPROCESSORS_ONLN));
  json_repository(&j, &dev);
  char cache[4096], path[4096];
  json_key(&j, "cache_profile");
  if (nestcl_pm_profile_path("hpc_benchmark", dev.device_name, dev.driver_version, cache, sizeof cache) == 0)
    json_string(&j, cache);
  else
    json_null(&j);
  nestcl_pm_profile p;
  json_key(&j, "used");
  if (nestcl_pm_profile_find("hpc_benchmark", dev.device_name, dev.driver_version, &p, path, sizeof path) ==
      NESTCL_PM_FOUND) {
    json_entry(&j, path, &p, 1);
  } else {
    json_null(&j);
  }
  json_end_object(&j);
  int code = CLI_OK;
  if (j.failed) {
    fprintf(stderr, "error: out of host memory\n");
    code = CLI_RUNTIME;
  } else if (cli_write_json(f.out, &j)) {
    code = CLI_RUNTIME;
  }
  json_free(&j);
  return code;
}
