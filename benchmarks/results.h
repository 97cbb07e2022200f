/*
 * The one writer of the results JSON (results.schema.md) that every
 * benchmark's driver uses: the sections and keys the drivers share, in their
 * order. A driver writes its own keys between these calls (hpc_benchmark's
 * split and E->E weights; the populations of the benchmarks of benchmark.h),
 * so each document keeps its keys in the order the schema gives.
 */
#ifndef NESTCL_BENCH_RESULTS_H
#define NESTCL_BENCH_RESULTS_H

#include "json.h"
#include "nestcl/engine.h"

/* Opens the document and its "config" object: schema, benchmark, config.argv. */
void results_begin(json *j, const char *benchmark, int argc, char **argv);
/* config.device_spec (NULL: null), device_name, device_driver (of the streams, from the stats). */
void results_config_device(json *j, const char *device_spec, const nestcl_engine_stats *s1);
/*
 * config.sync_interval (0: null), host_clock, command_buffer, kernel_sample,
 * persistent ("auto", "on", "off"): the device loop's flags as given.
 */
void results_config_loop(json *j, int sync_interval, int host_clock, int command_buffer, int kernel_sample,
                         int persistent);
/* config.version and git_commit, and the end of "config". */
void results_config_end(json *j);

/*
 * "build_time_s": the engine's phases of building and their parts (drawing, the CSR, threads, who drew), the
 * process's peak resident set when the build was done, and wall (NAN: left out) as the driver measured it.
 */
void results_build_time(json *j, const nestcl_engine_stats *s1, double wall, long peak_rss);

/* What "simulation" reports: the stats before (s0, vp0: NULL when none were taken) and after the measured part. */
typedef struct results_sim {
  const nestcl_engine_stats *s0, *s1;
  const nestcl_vp_stats *vp0;
  double presim_wall, sim_wall, sim_ms;
  int plastic_split; /* the deliver phase split into static and plastic (hpc_benchmark) */
  /* The streams' kernel profiles before (NULL: none taken) and after the measured part (NULL: "kernels" is null). */
  const nestcl_kernel_profile *k0, *k1;
} results_sim;
/* "simulation": wall times, real-time factor, per VP phases and enqueue counts, their sums, the kernels timed. */
void results_simulation(json *j, const results_sim *r);

/*
 * Opens "activity" with spikes, recorded_neurons, recorded_spikes,
 * mean_rate_hz, network_rate_hz, cv_isi (NAN: null), synaptic_events and
 * synaptic_events_per_s; the driver adds its own keys and closes it.
 */
typedef struct results_activity {
  unsigned long long spikes, recorded_neurons, recorded_spikes, events;
  double mean_rate_hz, cv_isi;
} results_activity;
void results_activity_begin(json *j, const results_activity *a, const nestcl_engine_stats *s1, double sim_ms,
                            double sim_wall);

/* "memory" (plastic: bytes_per_plastic_synapse and history_bytes too), then the end of the document. */
void results_memory_end(json *j, const nestcl_engine_stats *s1, int plastic);

#endif
