/*
 * The runs of sweep files (`nestcl perfmodel sweep`'s JSON lines) as the
 * model's observations: read, checked to be of one device, driver and
 * benchmark, repeats merged into medians, and fitted into a profile. Shared by
 * `perfmodel fit` and `plot` (pm_commands.c) and the calibration of
 * --gpu-fraction auto (pm_auto.c); it depends on neither.
 */
#ifndef NESTCL_PM_SWEEP_DATA_H
#define NESTCL_PM_SWEEP_DATA_H

#include <stddef.h>

#include "nestcl/pm_model.h"

typedef struct run_rec {
  nestcl_pm_config c;
  int stdp;
  double scale;
  double t, cu, cd, gu, gd, exch, wait; /* measured, per simulated second (NAN: none) */
  int repeats; /* runs of this configuration, merged into medians */
} run_rec;

typedef struct sweep_data {
  run_rec *runs;
  size_t n, cap;
  char device_name[256], device_driver[128], benchmark[64];
  int cores;
  char host[256]; /* the first line's "host" (nestcl_pm_host), "" without one */
} sweep_data;

/* Reads the JSON lines of one or more sweep files (repeats merged); CLI exit codes, after an error line. */
int pm_read_sweeps(char **files, int n_files, sweep_data *d);
/* Fits a profile to the sweep; run_pred (NULL or d->n values) gets each run's held-out wall prediction. */
int pm_fit_sweep(const sweep_data *d, int folds, nestcl_pm_profile *prof, double *run_pred);
/* Fits the runs of sweep files (repeats merged into medians) into a profile; messages on stderr. */
int pm_fit_files(char **files, int n_files, int folds, nestcl_pm_profile *prof);

/* The median of the finite values of v (reordered); NAN when none. */
double pm_median(double *v, size_t n);
/* qsort's comparison of doubles, ascending. */
int pm_cmp_double(const void *a, const void *b);
/* Whether a configuration runs on one kind of VP only. */
int pm_is_cpu_only(const nestcl_pm_config *c);
int pm_is_gpu_only(const nestcl_pm_config *c);

#endif
