/*
 * nestcl's performance model (issue 10, docs/architecture.md, "The performance model"): the paper's CPU, GPU
 * and co-execution model (../../shared/papers/004 §6.2, eqs. (1)-(12)) in
 * nestcl's terms, with what nestcl has and the paper lacked. One simulated
 * second of a configuration costs, per VP:
 *
 *   CPU thread (n_C = N (1 - alpha) / T_C neurons on it):
 *     update   c_update n_C                                   (eqs. 1, 5: update and Poisson drive)
 *     deliver  c_step S + (c_spike + c_pspike phi) R + (c_event (1 - phi) + c_plastic phi) F K n_C
 *              (main loop per super step, all spikes, relevant synaptic events split
 *               into static and plastic delivery; plastic delivery's cost per spike)
 *   GPU stream (T_G streams share one device holding n_G = N alpha neurons):
 *     update   (g_step + g_launch T_G) S + g_update n_G      (eq. 3, with the launch overhead per stream)
 *     deliver  g_dlaunch T_G S + (g_spike T_G + g_pspike phi) R + (g_event (1 - phi) + g_plastic phi) F K n_G
 *              (host<->device traffic: every stream takes the whole spike list each super step)
 *
 * with R = F N the spikes per second (F the measured rate, N all neurons),
 * S super steps per second and phi the plastic share of the synapses. The
 * process's wall time per simulated second is
 *
 *     max(c, g, (T_C c + kappa g) / P) + s_step (T_C + T_G) S + s_spike R + s_mpi R (M - 1)
 *
 * (c, g: one CPU VP's and one stream's update + deliver; P the host's cores;
 * kappa the host-core seconds one device second costs, ~0 for a discrete GPU,
 * ~P for an OpenCL CPU device such as PoCL that shares the cores; then the
 * barriers per VP and super step, the serial exchange per spike and MPI). The
 * first two terms of the max are eqs. (10)-(12); the third is the extension
 * that co-execution on shared cores needs: the threads' work and the host
 * time the device's work costs must both fit on the P cores. (An earlier
 * form slowed the whole overlap by (T_C + kappa) / P; it fitted the plastic
 * runs as well but put the static network's best split at 0.43 where 0.2 is
 * measured: a device with few neurons keeps few cores busy.) The wait at the barriers that the
 * model predicts is the difference between the max and each side.
 *
 * Fitting follows the paper: the CPU parameters (and the serial ones) on
 * CPU-only runs, the GPU parameters on GPU-only runs with the shared ones
 * kept, then kappa on co-execution runs. Phase times measured per VP enter
 * the CPU and GPU fits beside the wall time, since the wall time alone cannot
 * tell the update's cost per neuron from the delivery's per synaptic event
 * when the rate and the in-degree hardly change.
 */
#ifndef NESTCL_PM_MODEL_H
#define NESTCL_PM_MODEL_H

#include <stddef.h>

#include "nestcl/perfmodel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The inputs of one configuration. */
typedef struct nestcl_pm_config {
  double N; /* neurons of the network (all ranks) */
  double K; /* in-degree */
  double F; /* mean rate, Hz */
  double M; /* MPI ranks */
  double TC; /* CPU threads per rank */
  double TG; /* GPU streams per rank */
  double alpha; /* share of a rank's neurons on its streams */
  double phi; /* plastic share of the synapses */
  double S; /* super steps per simulated second */
  double P; /* host cores per rank */
} nestcl_pm_config;

/* What a measured value is: the wall time or one phase of one VP kind (per simulated second). */
typedef enum nestcl_pm_output {
  NESTCL_PM_WALL,
  NESTCL_PM_CPU_UPDATE,
  NESTCL_PM_CPU_DELIVER,
  NESTCL_PM_GPU_UPDATE,
  NESTCL_PM_GPU_DELIVER,
  NESTCL_PM_OUTPUTS
} nestcl_pm_output;

enum {
  NESTCL_PM_C_UPDATE,
  NESTCL_PM_C_STEP,
  NESTCL_PM_C_SPIKE,
  NESTCL_PM_C_PSPIKE,
  NESTCL_PM_C_EVENT,
  NESTCL_PM_C_PLASTIC,
  NESTCL_PM_G_UPDATE,
  NESTCL_PM_G_STEP,
  NESTCL_PM_G_LAUNCH,
  NESTCL_PM_G_DLAUNCH,
  NESTCL_PM_G_SPIKE,
  NESTCL_PM_G_PSPIKE,
  NESTCL_PM_G_EVENT,
  NESTCL_PM_G_PLASTIC,
  NESTCL_PM_S_STEP,
  NESTCL_PM_S_SPIKE,
  NESTCL_PM_S_MPI,
  NESTCL_PM_KAPPA,
  NESTCL_PM_NP
};
extern const char *const nestcl_pm_param_names[NESTCL_PM_NP];
extern const char *const nestcl_pm_output_names[NESTCL_PM_OUTPUTS];

/* One configuration predicted phase by phase (seconds per simulated second). */
typedef struct nestcl_pm_prediction {
  double cpu_update, cpu_deliver, gpu_update, gpu_deliver; /* one VP of each kind; 0 where none */
  double cpu_vp, gpu_vp; /* c and g */
  double sharing; /* what shared cores add: max(0, (T_C c + kappa g) / P - max(c, g)) */
  double busy; /* max(c, g) + sharing */
  double cpu_wait, gpu_wait; /* busy - c, busy - g: at the barriers */
  double barriers, exchange, mpi;
  double wall;
  const char *bound; /* "cpu" or "gpu": the slower side */
} nestcl_pm_prediction;

void nestcl_pm_predict(const double *p, const nestcl_pm_config *c, nestcl_pm_prediction *out);
/*
 * The latency floor (latency.c): a stream's kernel launches and waits per
 * super step for the configuration (the engine's loop for hpc_benchmark), and
 * the wall seconds per simulated second they cost at launch_us and wait_us.
 */
void nestcl_pm_loop_counts(const nestcl_pm_config *c, double *launches, double *waits);
double nestcl_pm_latency_floor(const nestcl_pm_config *c, double launch_us, double wait_us);
/* One output of a configuration. */
double nestcl_pm_output_value(const double *p, const nestcl_pm_config *c, nestcl_pm_output o);

/* One measured value. */
typedef struct nestcl_pm_obs {
  nestcl_pm_config c;
  nestcl_pm_output out;
  double y;
  int run; /* values of one run share it (held out together) */
} nestcl_pm_obs;

/* The rate a benchmark runs at, against N (from the sweep; predictions need it before a run). */
#define NESTCL_PM_RATE_POINTS 32
typedef struct nestcl_pm_rate_table {
  int n;
  double N[NESTCL_PM_RATE_POINTS], F[NESTCL_PM_RATE_POINTS]; /* ascending N */
} nestcl_pm_rate_table;
double nestcl_pm_rate(const nestcl_pm_rate_table *t, double N);

typedef struct nestcl_pm_stage {
  int runs; /* runs fitted (0: the stage had no data; its parameters stay 0) */
  double r2_cv; /* R^2 of the wall time on held-out runs */
  double r2_train; /* on the runs fitted, for information */
  int folds;
} nestcl_pm_stage;

/* The fitted model of one device on one host, as stored (pm_profile.c). */
typedef struct nestcl_pm_profile {
  char device_name[256];
  char device_driver[128];
  char benchmark[64];
  int cores;
  double p[NESTCL_PM_NP], se[NESTCL_PM_NP];
  int fitted[NESTCL_PM_NP]; /* determined by the data (else fixed at 0) */
  nestcl_pm_stage cpu, gpu, co;
  nestcl_pm_rate_table rate_stdp, rate_static;
  double created; /* seconds since the epoch */
  char machine[256]; /* the host the sweep ran on (nestcl_pm_host); "" when the profile does not say */
  int repository; /* nestcl_pm_profile_find took it from the repository's profiles, not the cache */
} nestcl_pm_profile;

/*
 * Fits the three stages to n observations (CPU-only, GPU-only and
 * co-execution runs are told apart by T_C, T_G and alpha) with
 * cross-validation over `folds` folds of runs. held_out (NULL or n values)
 * receives each observation's held-out prediction (NAN where its stage had no
 * cross-validation). Errors: no CPU-only and no GPU-only runs; a stage whose
 * runs cannot determine its parameters (the message names the parameter).
 */
int nestcl_pm_fit_profile(const nestcl_pm_obs *obs, size_t n, int folds, nestcl_pm_profile *prof, double *held_out);

/* The profile's file: <cache>/perfmodel/<benchmark>--<device>--<driver>.json (names made file-safe). */
int nestcl_pm_profile_path(const char *benchmark, const char *device_name, const char *driver, char *out, size_t cap);
/* Its file name alone, <benchmark>--<device>--<driver>.json, as the cache and the repository's profiles name it. */
int nestcl_pm_profile_name(const char *benchmark, const char *device_name, const char *driver, char *out, size_t cap);
/* This host in words, for a profile's "machine": the CPU model, the cores, the kernel and the architecture. */
void nestcl_pm_host(char *out, size_t cap);
/*
 * The profile of benchmark on one device for this host (its core count): the
 * cache's; where the cache has no usable one, the repository's (the
 * profiles fitted on real machines that perfmodel/profiles/ holds, installed
 * as <prefix>/share/nestcl/perfmodel/profiles: nestcl_pm_repository),
 * marked prof->repository. NESTCL_PM_FOUND, or why not: NESTCL_PM_NO_CACHE
 * (the cache is off), NESTCL_PM_MISSING (no file at path), NESTCL_PM_UNUSABLE
 * (corrupt or stale; nestcl_last_error() says which). path receives the file
 * used, else the cache's.
 */
enum { NESTCL_PM_FOUND, NESTCL_PM_NO_CACHE, NESTCL_PM_MISSING, NESTCL_PM_UNUSABLE };
int nestcl_pm_profile_find(const char *benchmark, const char *device_name, const char *driver, nestcl_pm_profile *prof,
                           char *path, size_t cap);
/*
 * The folder of the repository's profiles: $NESTCL_PERFMODEL_PROFILES ("off":
 * none), else share/nestcl/perfmodel/profiles found relative to the binary or
 * library this code is in (bin/ or lib/ of an install or of a build tree;
 * lib/<multiarch>/ too). 0, or -1 when there is none.
 */
int nestcl_pm_repository(char *dir, size_t cap);
/* The *.json file names in dir, sorted, malloc'd (each, and the array); 0, or -1 when dir cannot be read. */
int nestcl_pm_list_profiles(const char *dir, char ***names, size_t *n);
/*
 * The repository's profile of benchmark for a device, driver and host of
 * `cores` cores: NESTCL_PM_FOUND (prof, path), else NESTCL_PM_MISSING; why
 * (may be NULL) then says what the folder held instead (profiles of other
 * devices, drivers or core counts, unreadable ones), or that there is none.
 */
int nestcl_pm_profile_find_repository(const char *benchmark, const char *device_name, const char *driver, int cores,
                                      nestcl_pm_profile *prof, char *path, size_t cap, char *why, size_t why_cap);
/* Writes atomically (temporary file and rename). */
int nestcl_pm_profile_save(const nestcl_pm_profile *prof, const char *path);
/*
 * Loads and validates: the schema, every parameter by name and finite, the
 * stages' figures. device_name/driver (NULL: any) must match; a mismatch is
 * NESTCL_ENODEV ("profile of another device"), anything malformed
 * NESTCL_EINVAL with the reason.
 */
int nestcl_pm_profile_load(const char *path, const char *device_name, const char *driver, nestcl_pm_profile *prof);

/*
 * hpc_benchmark's configuration of N neurons (in-degree 11250, delay 1.5 ms,
 * dt 0.1 ms, the profile's measured rate for that size and mix; the plastic
 * share E->E of it with stdp) on `ranks` ranks, one per host; threads,
 * streams and alpha 0.
 */
void nestcl_pm_hpc_config(const nestcl_pm_profile *p, double N, int stdp, int ranks, nestcl_pm_config *c);

/* The best split for a network: the alpha in [0, 1] that minimises the predicted wall time. */
double nestcl_pm_best_alpha(const double *p, const nestcl_pm_config *c, double *wall);

/*
 * Rebalancing (perfmodel/src/balance.c): what a run measured at one split,
 * per simulated second, corrects the model for this network on this host.
 */
typedef struct nestcl_pm_measured {
  double alpha; /* the split measured */
  double wall; /* wall seconds of the window; 0: not measured */
  double cpu_busy; /* one CPU VP's busy seconds (update, Poisson drive, delivery); 0: none */
  double gpu_busy; /* one stream's */
} nestcl_pm_measured;

#define NESTCL_PM_BALANCE_MAX 32
#define NESTCL_PM_BUSY_ALPHA_MIN 0.15
typedef struct nestcl_pm_balance {
  double s; /* the CPU's costs times s, the streams' divided by s */
  double b; /* the wall time times b */
  double alpha; /* the corrected model's best split */
  double wall; /* its predicted wall time */
  double here; /* the corrected model's wall time at the last measured split */
  int n_wall, n_busy;
} nestcl_pm_balance;

/* The parameters with correction s applied (q: NESTCL_PM_NP values). */
void nestcl_pm_balance_params(const double *p, double s, double *q);
/* s from one split's busy times (bounded to [1/4, 4]); 0 where a side is idle. */
double nestcl_pm_busy_correction(const double *p, const nestcl_pm_config *c, double cpu_busy, double gpu_busy);
/* Fits s and b to n measured splits of configuration c (alpha aside) and proposes the best split. */
int nestcl_pm_balance_fit(const double *p, const nestcl_pm_config *c, const nestcl_pm_measured *m, int n,
                          nestcl_pm_balance *out);

#ifdef __cplusplus
}
#endif
#endif
