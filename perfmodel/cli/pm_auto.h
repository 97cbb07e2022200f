/*
 * The split of a `nestcl run hpc_benchmark` with --gpu-fraction auto or
 * --threads/--streams auto (pm_auto.c): from the device's profile, calibrated
 * first when there is none.
 */
#ifndef NESTCL_PM_AUTO_H
#define NESTCL_PM_AUTO_H

#include "nestcl/pm_model.h"

typedef struct pm_auto_request {
  double scale;
  int stdp;
  int threads, streams; /* -1: auto */
  int ranks, mpi;
  const char *device; /* spec, as --device */
  const char *profile; /* --profile FILE, or NULL: the cache's */
  double budget; /* seconds the calibration may take */
  int keep_alpha; /* the split is given (alpha below): only resolve the profile */
  double alpha;
} pm_auto_request;

typedef struct pm_auto_result {
  int threads, streams;
  double alpha;
  double predicted; /* wall seconds per simulated second (NAN: no model used) */
  char source[64]; /* "profile", "profile (repository)", "profile (calibrated now)", "single kind of VP" */
  char profile_path[4096];
  char profile_note[5120]; /* which profile, in words: where it comes from, its device, machine and date */
  nestcl_pm_profile prof; /* the profile used (when one was) */
} pm_auto_result;

/* The split for a run: alpha (and threads/streams given as -1) from the profile, calibrating when needed. */
int pm_auto_split(const pm_auto_request *rq, pm_auto_result *res);
#endif
