/*
 * The interface between a benchmark network (one file in benchmarks/, built on
 * the public engine API only) and the command-line runner (benchmarks/runner.c),
 * which owns everything the benchmarks share: the common flags (threads,
 * streams, split, device, MPI, seed, times, outputs), the engine's
 * configuration, the presimulation and simulation, the per-population
 * activity (rate, CV of ISI, synchrony), the results JSON, the NEST ASCII spike
 * file and the plots. A benchmark describes its network on the engine it is
 * given, names its populations, and may take flags of its own.
 */
#ifndef NESTCL_BENCHMARK_H
#define NESTCL_BENCHMARK_H

#include <stddef.h>

#include "nestcl/engine.h"

#define BENCH_MAX_POPS 16
#define BENCH_MAX_INFO 64

/* A number the benchmark reports in the JSON's "network" object (name: a JSON key). */
typedef struct bench_info {
  char name[48];
  double value;
} bench_info;

/* What a benchmark's build returns: its populations and figures. */
typedef struct bench_network {
  int n_pops;
  const char *pop_name[BENCH_MAX_POPS];
  int pop[BENCH_MAX_POPS]; /* engine handles */
  double ref_rate_hz[BENCH_MAX_POPS]; /* NEST's reference rate of the population (NAN: none) */
  int analyse[BENCH_MAX_POPS]; /* recorded and analysed (rate, CV, synchrony, spike file, plots) */
  int n_info;
  bench_info info[BENCH_MAX_INFO];
} bench_network;

/* The flags the runner parsed that a network depends on. */
typedef struct bench_common {
  double resolution_ms;
  double simtime_ms, presim_ms;
} bench_common;

typedef struct bench_def {
  const char *name;
  const char *summary; /* one line for `nestcl --help` */
  const char *flags_help; /* the benchmark's own flags, lines of "  --flag ...  text\n" */
  size_t opts_size;
  double default_simtime_ms, default_presim_ms;
  void (*defaults)(void *opts);
  /*
   * One flag (value: its argument, NULL if none was given). Returns 0 when the
   * flag was taken without a value, 1 when it took the value, -1 after an
   * "error: ..." line on stderr, -2 when the flag is not the benchmark's.
   */
  int (*parse_flag)(void *opts, const char *flag, const char *value);
  /* Checks the flags together; -1 after an "error: ..." line. */
  int (*validate)(const void *opts);
  /* Describes the network on e (created and configured by the runner); engine status codes. */
  int (*build)(const void *opts, const bench_common *c, nestcl_engine *e, bench_network *net);
} bench_def;

void bench_info_add(bench_network *net, const char *name, double value);

/* `nestcl run <name>` for a benchmark of this interface, through the shared runner (runner.c). */
int cli_run_benchmark(const bench_def *b, int argc, char **argv);

extern const bench_def bench_microcircuit;

#endif
