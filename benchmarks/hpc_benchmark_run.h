/*
 * What the two files of `nestcl run hpc_benchmark`'s driver share: the flags
 * (hpc_opts), the network as built (hpc_net) and the run under way (hpc_run).
 * hpc_benchmark_driver.c parses, builds, simulates and reports;
 * hpc_rebalance.c is --rebalance's loop, which rebuilds the network through
 * the function the driver gives it.
 */
#ifndef NESTCL_BENCH_HPC_RUN_H
#define NESTCL_BENCH_HPC_RUN_H

#include "cli.h"
#include "hpc_benchmark.h"
#include "json.h"
#include "run_common.h"
#include "nestcl/engine.h"
#ifdef NESTCL_WITH_PERFMODEL
#include "pm_auto.h"
#endif

typedef struct hpc_opts {
  double scale, k_scale, simtime, presim, dt, delay, gpu_fraction;
  int gpu_fraction_auto;
  int threads, streams; /* -1: auto (from the performance profile) */
  const char *profile; /* --profile FILE */
  int rebalance; /* --rebalance: measure in the presimulation, repartition */
  long rebalance_rounds;
  double calibration_budget;
  const char *device;
  const char *model;
  int ee_static; /* --ee-synapse static: E->E static_synapse (the former variant) */
  long history_max;
  int
    plastic_tasks; /* nestcl_engine_config's: tasks per population of a thread's plastic delivery; -1 off, 0 default */
  double device_memory; /* bytes; 0: what the device has free */
  unsigned long seed;
  long record;
  const char *out;
  int weight_double;
  int mpi;
  int sync_interval, host_clock; /* nestcl_engine_config's; 0: the default */
  int no_command_buffer;
  int kernel_sample, persistent; /* nestcl_engine_config's */
  int quiet;
  int dry_run;
  cli_ckpt ck; /* --checkpoint-at, --checkpoint, --restore */
  cli_build build; /* --build-threads */
} hpc_opts;

/* The network (benchmarks/hpc_benchmark.c) and what building it returns. */
typedef struct hpc_net {
  hpc_network p;
  uint32_t nrec;
  nestcl_engine *e;
  int rec;
} hpc_net;

/* One run: its flags, the split chosen, the network, the measurements. */
typedef struct hpc_run {
  hpc_opts o;
  int argc;
  char **argv;
  int rank, ranks;
  hpc_net net;
  /* The split: given by flags, or chosen by the fitted performance model (docs/perfmodel.md). */
  const char *split_source;
  double predicted;
  char profile_used[4096];
#ifdef NESTCL_WITH_PERFMODEL
  pm_auto_result ar;
  int have_profile;
#endif
  /* --rebalance: its rounds (JSON lines), why it ended, its extra wall time. */
  json rb;
  const char *rebalance_why;
  double rebalance_s;
  double presim_wall, sim_wall;
  nestcl_engine_stats s0, s1;
  nestcl_vp_stats *vp0;
  nestcl_kernel_profile k0, k1; /* the streams' kernels before and after the measured part */
  nestcl_weight_stats ws;
} hpc_run;

/* Builds the network of o's split on a new engine (n->e) and prepares it; engine status codes. */
typedef int (*hpc_build_fn)(hpc_opts *o, hpc_net *n);

#ifdef NESTCL_WITH_PERFMODEL
/*
 * --rebalance's presimulation: rounds of (measure in the presimulation's
 * second half, correct the model, choose the next split, rebuild with build
 * and replay) until the split to try was measured already; its rounds in
 * r->rb, why it ended and its extra time in r. Engine status codes.
 */
int hpc_rebalance(hpc_run *r, hpc_build_fn build);
#endif

#endif
