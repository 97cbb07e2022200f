/* `nestcl perfmodel ...`: the subcommands (perfmodel_cli.c dispatches). */
#ifndef NESTCL_PERFMODEL_CLI_H
#define NESTCL_PERFMODEL_CLI_H
int pm_parse_list(const char *flag, const char *v, double lo, double hi, double *out, int *n);
int pm_sweep(int argc, char **argv);
void pm_sweep_help(void);
/* Child runs (sweep.c): this executable's path; argv run with stdout to /dev/null and stderr to err_path
 * (its exit status, -1 when it could not start); the last line of that stderr. */
int pm_self_exe(char *buf, size_t cap);
int pm_run_child(char *const *argv, const char *err_path);
void pm_child_error(const char *err_path, char *out, size_t cap);
int cli_perfmodel(int argc, char **argv);
/* fit, predict, tune, plot; -1 for another name. */
int pm_command(const char *name, int argc, char **argv);
/* floor (pm_floor.c): the real-time factor a run's launches and waits impose. */
int pm_floor(int argc, char **argv);

#include <stddef.h>

#include "nestcl/device.h"
#include "nestcl/pm_model.h"

/* Fits the runs of sweep files (repeats merged into medians) into a profile; messages on stderr. */
int pm_fit_files(char **files, int n_files, int folds, nestcl_pm_profile *prof);

enum { PM_PROFILE_OK, PM_PROFILE_MISSING, PM_PROFILE_CORRUPT, PM_PROFILE_NO_CACHE, PM_PROFILE_ERROR };
/*
 * The profile of the device a run selects (device_spec as `--device`):
 * profile_file when given (it must name a device of this machine, the one
 * selected; PM_PROFILE_ERROR after an error line otherwise), else the cache's.
 * MISSING, CORRUPT (also stale: another core count; the reason in
 * nestcl_last_error()) and NO_CACHE leave the choice to the caller.
 */
int pm_resolve_profile(const char *device_spec, const char *profile_file, nestcl_pm_profile *p, char *path,
                       size_t cap, nestcl_device_info *dev);
/* The model's configuration of hpc_benchmark at a scale (the rate from the profile's table). */
void pm_hpc_config(const nestcl_pm_profile *p, double scale, int stdp, int ranks, nestcl_pm_config *c);

/* One (threads, streams) with its best alpha and predicted wall time. */
typedef struct pm_candidate {
  nestcl_pm_config c;
  double wall;
} pm_candidate;
/* Every (T_C, T_G) in the bounds (not both 0) with its best alpha, fastest first; returns the count. */
int pm_candidates(const nestcl_pm_profile *p, const nestcl_pm_config *base, int t_lo, int t_hi, int g_lo, int g_hi,
                  pm_candidate *out);

typedef struct pm_auto_request {
  double scale;
  int stdp;
  int threads, streams;   /* -1: auto */
  int ranks, mpi;
  const char *device;     /* spec, as --device */
  const char *profile;    /* --profile FILE, or NULL: the cache's */
  double budget;          /* seconds the calibration may take */
  int keep_alpha;         /* the split is given (alpha below): only resolve the profile */
  double alpha;
} pm_auto_request;

typedef struct pm_auto_result {
  int threads, streams;
  double alpha;
  double predicted;       /* wall seconds per simulated second (NAN: no model used) */
  char source[64];        /* "profile", "profile (calibrated now)", "single kind of VP" */
  char profile_path[4096];
  nestcl_pm_profile prof; /* the profile used (when one was) */
} pm_auto_result;

/* The split for a run: alpha (and threads/streams given as -1) from the profile, calibrating when needed. */
int pm_auto_split(const pm_auto_request *rq, pm_auto_result *res);
#endif
