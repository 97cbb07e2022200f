/*
 * nestcl engine: the public C API that builds and simulates a network the way a
 * NEST user does (SetKernelStatus, Create, SetStatus, Connect, Simulate), on a
 * mix of CPU threads and OpenCL streams (docs/architecture.md, "The simulation cycle", "Data
 * layouts" and "Determinism and random numbers"). Neurons are models of
 * the translator's registry (model.h); the engine never knows a model by name
 * beyond looking it up in the table it is given. Everything is described first
 * (populations, connections, inputs, recorders) and instantiated on the first
 * nestcl_engine_simulate(): the VPs get their neurons in weighted contiguous
 * blocks, each VP draws the synapses onto its own neurons into a CSR over
 * global source ids, and state, rings and synapses are made resident once.
 *
 * Random draws are keyed so that nothing depends on the partition (VPs, threads,
 * streams, ranks): key (seed, purpose), counter (global id, step), see
 * nestcl_philox.h and the per-use keying documented at each function below.
 *
 * Conventions: functions return 0 or a negative NESTCL_E* code with the
 * message in nestcl_last_error(); nothing prints or exits.
 */
#ifndef NESTCL_ENGINE_H
#define NESTCL_ENGINE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "nestcl/device.h"
#include "nestcl/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nestcl_engine nestcl_engine;

typedef enum nestcl_weight_type {
  NESTCL_WEIGHT_FLOAT = 0, /* 4 bytes per synapse (default) */
  NESTCL_WEIGHT_DOUBLE /* 8 bytes per synapse */
} nestcl_weight_type;

/* How the build's synapses reach the streams' device (nestcl_engine_config.build_upload). */
typedef enum nestcl_build_upload {
  NESTCL_BUILD_UPLOAD_AUTO = 0, /* map where the device's memory is the host's (CL_DEVICE_HOST_UNIFIED_MEMORY),
                                   else copy */
  NESTCL_BUILD_UPLOAD_MAP, /* drawn into the device buffers, mapped: no copy where the memory is the host's
                              (elsewhere the driver sends each at its unmap) */
  NESTCL_BUILD_UPLOAD_COPY /* drawn into pinned host memory and sent by non-blocking transfers */
} nestcl_build_upload;

/* Who draws a stream's synapses (nestcl_engine_config.build_on). */
typedef enum nestcl_build_on {
  NESTCL_BUILD_ON_AUTO = 0, /* the device where it is a GPU or accelerator, else the host's threads */
  NESTCL_BUILD_ON_HOST,
  NESTCL_BUILD_ON_DEVICE /* the device, for every projection it can draw */
} nestcl_build_on;

typedef struct nestcl_engine_config {
  double resolution_ms; /* simulation step h (NEST's resolution); default 0.1 */
  double min_delay_ms; /* 0: the smallest delay of all connections */
  double max_delay_ms; /* 0: the largest delay of all connections */
  uint32_t seed; /* key[0] of every random stream; default 12345 */
  int cpu_threads; /* T_C: CPU VPs, each one OpenMP thread (default 1) */
  int gpu_streams; /* T_G: OpenCL VPs, each one command queue on the device (default 0) */
  const char *device; /* device spec for the streams (device.h); NULL: the default */
  double gpu_fraction; /* alpha in [0, 1]: share of each population on the streams;
                            negative: T_G / (T_C + T_G). Must be 0 without streams and 1
                            without threads. */
  nestcl_weight_type weight_type;
  int use_mpi; /* with an MPI build: split the network over MPI_COMM_WORLD's ranks
                            (MPI must be initialised by the caller) */
  /*
   * Postsynaptic spike history of the targets of STDP synapses (nestcl_history.h):
   * a ring of history_capacity entries per neuron to start with (default 64),
   * doubled when a neuron needs more, up to history_max (default 4096); beyond
   * that the run stops with an error naming the neuron and the bound.
   */
  uint32_t history_capacity;
  uint32_t history_max;
  /*
   * Device memory budget of this process's streams in bytes (0: what the
   * device has free). When the plastic synapses do not fit it with the rest,
   * they stay in host memory and are delivered in batches (the rows one time
   * stamp's spikes touch), as large as the budget allows; bit-identical to
   * resident delivery.
   */
  size_t device_memory;
  /*
   * The device loop (one stream VP on one rank, static synapses): the stream
   * runs whole super steps on the device and the host enqueues ahead,
   * draining the recorded spikes and multimeter samples and checking for
   * errors once every sync_interval super steps at most (default 250: 0), at
   * the end of simulate() and when asked to stop. host_clock: 1 runs the loop
   * that waits for the device every super step instead (for comparison).
   */
  int sync_interval;
  int host_clock;
  /*
   * 1 (default): in the device loop, where the device offers
   * cl_khr_command_buffer, record one super step's kernels once and replay
   * them (one enqueue per super step); 0: launch each kernel.
   */
  int command_buffer;
  /*
   * Host threads that draw the synapses at the build (docs/architecture.md,
   * "Building the network"): 0 (default) every core the process may run on
   * (its affinity mask); at most 1024. The network is the same on any number.
   */
  int build_threads;
  /*
   * A stream's synapses are drawn straight into memory its device reads, and
   * each block's go to the device while the next is drawn: build_upload says
   * how (default auto). The network is the same either way.
   */
  nestcl_build_upload build_upload;
  /*
   * A stream's projections of fixed_total_number, pairwise_bernoulli and
   * fixed_indegree (with multapses) can be drawn by its device instead, the
   * same network bit for bit (docs/architecture.md, "Building the network"):
   * build_on says where (default auto).
   */
  nestcl_build_on build_on;
  /*
   * Progress of a long build (NULL: none): called by the thread that builds
   * (prepare, or the first simulate()), from its own part of the drawing,
   * about twice a second once a second has passed, with the share of the
   * synapses' draws done (by the rules' expectations; it may stop short of 1)
   * and the seconds since the synapses began. Nothing of the engine may be
   * called from it.
   */
  void (*build_progress)(void *arg, double fraction, double seconds);
  void *build_progress_arg;
  /*
   * Kernels timed from profiling events on the streams (issue 41,
   * nestcl_kernel_profile in device.h): launches i of each kernel with
   * i mod kernel_sample < 2 get an event (default 64: about 3 % of the
   * launches, so that the events cost under 2 % of a GPU run); 1: every
   * launch; 0: none (nor are launches counted by kernel).
   */
  int kernel_sample;
  /*
   * The persistent device loop (issue 41): in the device loop, one launch
   * runs many super steps, its phases separated by grid barriers, where the
   * device runs all its work-groups at once (one per compute unit), the
   * populations are of one model and there are no plastic synapses or
   * multimeters. -1 (default): on GPUs; 1: on any device (a CPU device runs
   * one work-group per thread); 0: never (--no-persistent). A barrier that
   * does not complete within a bound stops the run with an error naming the
   * device, never a hang, and the process's later device loops launch.
   */
  int persistent;
  /*
   * CPU threads share their plastic delivery (issue 42): each CPU VP's is cut
   * into tasks, plastic_tasks ranges of target neurons per population (0: the
   * default, NESTCL_PLASTIC_TASKS_DEFAULT; at most 4096), and a thread that has run its own takes the
   * others' open tasks instead of waiting for them. -1: each thread delivers
   * its own VP's synapses alone (NEST's way). The results are the same.
   */
  int plastic_tasks;
} nestcl_engine_config;

#define NESTCL_PLASTIC_TASKS_DEFAULT 16

void nestcl_engine_config_defaults(nestcl_engine_config *c);

/* Validates the configuration (alpha in [0,1], positive resolution, ...). */
int nestcl_engine_create(const nestcl_engine_config *c, nestcl_engine **out);
void nestcl_engine_destroy(nestcl_engine *e);

/*
 * The models populations may use, looked up by name. The table is not copied
 * and must outlive the engine. The driver passes nestcl_builtin_models; tests
 * may pass their own.
 */
int nestcl_engine_set_models(nestcl_engine *e, const nestcl_model *const *models, int count);

/* A value that is constant or drawn per neuron / per synapse. */
typedef enum nestcl_dist_kind {
  NESTCL_DIST_CONSTANT = 0, /* a */
  NESTCL_DIST_NORMAL, /* mean a, standard deviation b */
  NESTCL_DIST_UNIFORM, /* [a, b) */
  NESTCL_DIST_NORMAL_CLIPPED /* normal(a, b) redrawn until in [lo, hi] (as NEST's redraw) */
} nestcl_dist_kind;

typedef struct nestcl_value {
  nestcl_dist_kind kind;
  double a, b;
  double lo, hi;
} nestcl_value;

nestcl_value nestcl_constant(double v);
nestcl_value nestcl_normal(double mean, double sd);
nestcl_value nestcl_uniform(double low, double high);
nestcl_value nestcl_normal_clipped(double mean, double sd, double lo, double hi);

/*
 * Creates n neurons of the named model; their global ids follow those of the
 * populations created before. K is the receptor count for multi-receptor
 * models (ignored otherwise). *pop receives the population's handle.
 */
int nestcl_engine_create_population(nestcl_engine *e, const char *model, uint32_t n, uint32_t K, int *pop);
/* Global id of neuron 0 of the population, and its size. */
int nestcl_engine_population_range(const nestcl_engine *e, int pop, uint64_t *first_gid, uint32_t *n);

/*
 * SetStatus: sets a parameter or state variable by its NEST name (the model's
 * set_status) on every neuron of the population, in the order of the calls,
 * before pre_run. A drawn value of the k-th call for neuron gid uses the stream
 * key (seed, NESTCL_RNG_PURPOSE_INIT), counter (gid, k).
 */
int nestcl_engine_set(nestcl_engine *e, int pop, const char *name, nestcl_value v);

typedef enum nestcl_rule {
  NESTCL_RULE_FIXED_INDEGREE = 0,
  NESTCL_RULE_FIXED_OUTDEGREE,
  NESTCL_RULE_ALL_TO_ALL,
  NESTCL_RULE_ONE_TO_ONE,
  NESTCL_RULE_FIXED_TOTAL_NUMBER, /* N synapses, each (source, target) uniform; multapses must be allowed (as NEST) */
  NESTCL_RULE_PAIRWISE_BERNOULLI /* each (source, target) pair independently with probability p; no multapses */
} nestcl_rule;

typedef struct nestcl_conn_spec {
  nestcl_rule rule;
  uint32_t degree; /* in- or out-degree of the fixed_in/outdegree rules */
  int allow_autapses; /* NEST's defaults: 1 */
  int allow_multapses; /* NEST's defaults: 1 */
  uint64_t N; /* fixed_total_number: the number of synapses */
  double p; /* pairwise_bernoulli: the probability, in [0, 1] */
} nestcl_conn_spec;

typedef struct nestcl_syn_spec {
  nestcl_value weight; /* pA (or the model's unit); the sign picks the receptor through route_spike */
  nestcl_value delay_ms; /* rounded to steps as NEST does */
  long rport; /* receptor port passed to route_spike (0 for most models) */
} nestcl_syn_spec;

/*
 * Connect(sources, targets, conn_spec, syn_spec) with static synapses.
 * Random draws (projection p = order of the Connect calls) use the key
 * (seed, NESTCL_RNG_PURPOSE_CONNECT) and the counter
 *   id   = target gid (fixed_indegree, all_to_all, one_to_one, pairwise_bernoulli) or source gid
 *          (fixed_outdegree), or 2^40 | c for chunk c of the targets (fixed_total_number, below),
 *   step = p << 34 | kind << 32 | j
 * with kind 0: the partner draws (word a % 4 of block step j = a / 4, a = attempt),
 * kind 1: the weight and kind 2: the delay of the row's j-th synapse.
 * So a synapse never depends on which VP builds it.
 *
 * fixed_total_number cuts the targets into chunks of NESTCL_FTN_CHUNK neurons
 * (by index in the population, whatever the partition) and splits N over the
 * chunks by conditional binomials (chunk c gets Binomial(remaining N, its share
 * of the remaining targets), drawn with id 2^41 | c, kind 3), which is the
 * multinomial of N uniform targets; within a chunk each synapse draws a source
 * and a target uniformly (two words per attempt; an autapse, when forbidden, is
 * redrawn whole, as NEST does). pairwise_bernoulli walks each target's
 * sources with geometric gaps (one uniform per synapse), so each pair is in
 * with probability p independently. Weights and delays are redrawn until in
 * [lo, hi] for NESTCL_DIST_NORMAL_CLIPPED (NEST's redraw); 1000 draws outside
 * fail the build, as NEST's redraw does.
 */
#define NESTCL_FTN_CHUNK 256u
int nestcl_engine_connect(nestcl_engine *e, int source_pop, int target_pop, const nestcl_conn_spec *conn,
                          const nestcl_syn_spec *syn);

/*
 * The synapse models Connect may name (nestcl-translate's registry
 * nestcl_builtin_synapses, or a test's own), looked up by name; the table is
 * not copied and must outlive the engine.
 */
int nestcl_engine_set_synapse_models(nestcl_engine *e, const nestcl_synapse_model *const *models, int count);

/* A synapse parameter or common property by its NEST name ("alpha", "tau_plus", "Wmax", ...). */
typedef struct nestcl_syn_param {
  const char *name;
  double value;
} nestcl_syn_param;

/*
 * Connect(sources, targets, conn_spec, {"synapse_model": model, params...}).
 * model NULL, "static_synapse" or "static_synapse_hpc": the static CSR, as
 * nestcl_engine_connect. Any other name: a translated synapse model of the
 * table above, whose send() runs for every (synapse, presynaptic spike) on the
 * VP that owns the target (C path or device), in spike-time order per synapse.
 * The weight (drawn as for static synapses, the same draws) and the delay come
 * from syn; params are constants applied in order through the model's
 * set_status to every synapse of the projection and its common properties
 * (rejected names or values fail here). Per-source state (nestcl_syn_field
 * roles) is kept once per source row, per-synapse state per synapse. The
 * target model must add a spike's weight unchanged to a channel chosen by its
 * sign (handle(SpikeEvent&) of NEST's current-based models). Targets of
 * synapses that read the spike history get one; their tau_minus is the
 * population's "tau_minus" setting (default 20 ms, as NEST's ArchivingNode).
 * *proj (may be NULL) receives the projection's handle.
 */
int nestcl_engine_connect_synapse(nestcl_engine *e, int source_pop, int target_pop, const nestcl_conn_spec *conn,
                                  const nestcl_syn_spec *syn, const char *model, const nestcl_syn_param *params,
                                  int n_params, int *proj);

/*
 * The weights of a projection of translated synapses, over all ranks (a
 * collective call under MPI): count, mean, standard deviation, extremes, and a
 * checksum of the multiset of (source, target, weight bits). Mean and sd are
 * computed from exact integer sums (weights rounded to 2^-16), so that like
 * the checksum they do not depend on the partition.
 */
typedef struct nestcl_weight_stats {
  uint64_t n;
  double mean, sd, min, max;
  uint64_t checksum;
} nestcl_weight_stats;
int nestcl_engine_weight_stats(nestcl_engine *e, int proj, nestcl_weight_stats *out);

/*
 * Checksums of the built synapses: what shows that two builds made the same
 * network (on any number of build threads, drawn on the host or the device,
 * on any split). One entry per pair of source and target populations with
 * static synapses (all static projections between them together: their
 * synapses share the target block's CSR) in the order of their first
 * Connect, then one per projection of translated synapses. Each sum runs over
 * the synapses as a multiset, keyed by global ids, so it does not depend on
 * the split; the layout hash follows the arrays in their order on the VPs and
 * so compares two builds of the same split (threads, streams, fraction,
 * ranks) slot for slot. Weights are the current ones (a plastic synapse's
 * change as it learns). Up to cap entries into out, *n: how many there are.
 * Collective under MPI (sums over every rank).
 */
typedef struct nestcl_synapse_checksum {
  int proj; /* a projection of translated synapses; -1: static synapses from source_pop onto target_pop */
  int source_pop, target_pop;
  uint64_t synapses;
  uint64_t sources; /* sum over the synapses of a hash of the source's global id */
  uint64_t targets; /* ... of (source, target, the target's ring channel) */
  uint64_t weights; /* ... of (source, target, the weight's bits as a double) */
  uint64_t delays; /* ... of (source, target, the delay in steps) */
  uint64_t layout; /* the arrays in their order: equal only between builds of one split */
} nestcl_synapse_checksum;
int nestcl_engine_synapse_checksums(nestcl_engine *e, nestcl_synapse_checksum *out, int cap, int *n);

/*
 * GetConnections of a projection of translated synapses on this rank: source
 * and target global ids, current weight and delay (steps) of each synapse,
 * written to the arrays (each of at least cap entries) grouped by VP, then
 * source. *n receives the count; with NULL arrays only the count is given.
 */
int nestcl_engine_connections(nestcl_engine *e, int proj, uint64_t *source, uint64_t *target, double *weight,
                              int64_t *delay_steps, size_t cap, size_t *n);

/*
 * poisson_generator connected all_to_all to the population: every target gets
 * its own train, drawn on the device at each step s with key
 * (seed, NESTCL_RNG_PURPOSE_POISSON), counter (gid | g << 40, s), g = index of
 * the generator; k spikes at s add k * weight at s + delay.
 */
int nestcl_engine_add_poisson(nestcl_engine *e, int target_pop, double rate_hz, double weight, double delay_ms,
                              long rport);
/*
 * The same, active only at the steps s with start_ms < s h <= stop_ms (NEST's
 * poisson_generator start and stop; stop may be INFINITY); the draws at the
 * active steps are those of an always-active generator.
 */
int nestcl_engine_add_poisson_window(nestcl_engine *e, int target_pop, double rate_hz, double weight, double delay_ms,
                                     long rport, double start_ms, double stop_ms);
/* dc_generator: amplitude (pA) through the model's route_current at every step. */
int nestcl_engine_add_dc(nestcl_engine *e, int target_pop, double amplitude, double delay_ms);

/* spike_recorder on neurons [first, first + count) of the population (local indices). */
int nestcl_engine_add_spike_recorder(nestcl_engine *e, int pop, uint32_t first, uint32_t count, int *rec);
/*
 * multimeter on neurons [first, first + count) of the population, sampling the
 * named recordables (NEST names or C++ member names of the model's recordable
 * fields) every interval_ms, at the end of each step whose (step + 1) is a
 * multiple of the interval in steps (the model's record_data hook).
 */
int nestcl_engine_add_multimeter(nestcl_engine *e, int pop, uint32_t first, uint32_t count,
                                 const char *const *recordables, int n_recordables, double interval_ms, int *rec);

/*
 * Builds the network on the first call (validation, partition, connectivity,
 * device upload), then advances time by t_ms (a multiple of the resolution).
 * May be called repeatedly; state carries over. A neuron whose update()
 * throws (model.h, Failures) stops the run in that super step with
 * NESTCL_ERUNTIME, "<model> neuron <gid> at t = <ms> ms: <failure> (status
 * <status>)", t the start of the failing step; the engine stays failed. Under
 * MPI every rank stops with it: the failing rank with that message, the
 * others with "rank <r>: " and the same (any run-time error of one rank stops
 * all so, none is left waiting in a collective).
 */
int nestcl_engine_simulate(nestcl_engine *e, double t_ms);
/*
 * A stop request: when *flag is non-zero at the end of a super step (after its
 * delivery and recording), simulate() returns NESTCL_EINTR there, with the
 * engine's clock at that super step's end (nestcl_engine_time_ms) and
 * consistent, so a later simulate() continues from it. A signal handler may
 * set the flag. Under MPI every rank must register a flag (the ranks agree on
 * the stop in one collective per super step) and all stop at the same step.
 * NULL removes it.
 */
void nestcl_engine_set_stop_flag(nestcl_engine *e, const volatile sig_atomic_t *flag);
/*
 * Admission (nestcl_engine_prepare() does it before building): the bytes the
 * network will need on this rank, from its description alone, by VP and class
 * (NESTCL_MEM_*), counted as nestcl_engine_stats counts what the build
 * allocates: device_bytes on the streams, host_bytes on the CPU VPs; and the
 * host memory the build needs at its peak (every VP's host arrays, the
 * streams' before their upload, and the rank's spike lists). Synapse counts
 * are the rules' expectations. prepare() refuses a network whose host peak
 * exceeds the available memory (MemAvailable, shared by the ranks of the
 * machine) or whose device bytes exceed the device's memory or budget (when
 * its plastic synapses cannot go batched), with NESTCL_ENOMEM and a message
 * giving needed, available and what would make it fit. The environment
 * variable NESTCL_NO_ADMISSION turns the refusal off (for measuring).
 */
#define NESTCL_ESTIMATE_MAX_VPS 64
typedef struct nestcl_vp_estimate {
  int is_gpu;
  uint32_t neurons;
  size_t device_bytes[NESTCL_MEM_CLASSES];
  size_t host_bytes[NESTCL_MEM_CLASSES];
} nestcl_vp_estimate;
typedef struct nestcl_memory_estimate {
  int rank, n_ranks, n_vps;
  uint64_t neurons; /* whole network */
  double synapses, plastic_synapses; /* expected, this rank */
  size_t device_bytes[NESTCL_MEM_CLASSES]; /* this rank's streams */
  size_t device_plastic_bytes; /* of which plastic synapses (batched when they do not fit) */
  size_t host_bytes[NESTCL_MEM_CLASSES]; /* this rank's CPU VPs */
  size_t host_build_bytes; /* this rank's host peak while building */
  size_t host_available, device_available; /* 0: unknown / no device */
  char device_name[256];
  nestcl_vp_estimate vps[NESTCL_ESTIMATE_MAX_VPS]; /* the first NESTCL_ESTIMATE_MAX_VPS VPs */
} nestcl_memory_estimate;
int nestcl_engine_estimate(nestcl_engine *e, nestcl_memory_estimate *out);
/*
 * Checkpoint and restart (docs/checkpoint-format.md). nestcl_engine_checkpoint
 * writes the engine's dynamic state to dir/rank-<r>-of-<R>.nestcl-ckpt, one
 * file per MPI rank (a collective call under MPI), each under a temporary name
 * renamed when complete, with a CRC-32 over header and payload; rank files of
 * another rank count in dir are removed. Only at the end of a super step (the
 * clock a multiple of the min delay; else NESTCL_EINVAL). The state is kept
 * by global ids: neurons' fields, the ring buffers, the static synapses (as
 * (source, target, channel, delay, weight) records), the plastic synapses'
 * state, per-source state and the spike histories.
 *
 * nestcl_engine_restore, on an engine described exactly as the one that wrote
 * the checkpoint (same populations, parameters, connections, inputs,
 * resolution, delays, weight type and seed; the split may differ: threads,
 * streams, gpu_fraction, ranks) and not yet simulated: reads and checks every
 * rank file of dir (any rank count), builds the network (prepare), checks that
 * the rebuilt synapses match the files and loads the state; the clock is then
 * the checkpoint's and simulate() continues bit for bit as the uninterrupted
 * run would have. Recorders start empty. Refused with NESTCL_EINVAL (NESTCL_EIO
 * when unreadable) and a message naming the file and what is wrong: a missing
 * rank file, a truncated or corrupt file (checksum), a wrong magic or version,
 * another network ("the checkpoint was written for another network", with both
 * hashes), synapses that do not match. On any failure the engine is left
 * unbuilt (its description untouched), never half loaded. Collective under MPI.
 */
int nestcl_engine_checkpoint(nestcl_engine *e, const char *dir);
int nestcl_engine_restore(nestcl_engine *e, const char *dir);
/* The engine's clock: simulated time so far, ms. */
double nestcl_engine_time_ms(const nestcl_engine *e);
/* Builds without simulating (for measuring build time and memory). */
int nestcl_engine_prepare(nestcl_engine *e);

/* Spikes recorded so far: (gid, step) pairs sorted by step, then gid. Spike time = (step + 1) * h. */
int nestcl_engine_spikes(const nestcl_engine *e, int rec, const uint64_t **gids, const int64_t **steps, size_t *n);
/*
 * Multimeter samples: n_samples rows of (step, gid) in time order, then gid;
 * values[row * n_recordables + r]. Sample time = (step + 1) * h.
 */
int nestcl_engine_samples(const nestcl_engine *e, int rec, const int64_t **steps, const uint64_t **gids,
                          const double **values, size_t *n_samples, int *n_recordables);

/*
 * Phases of the cycle, timed per VP. update: the neuron update; poisson: the
 * Poisson/DC drive; exchange: collecting the VP's spike list (read back from
 * the device, sorted) plus the serial gather of all VPs' lists (and MPI), which
 * every VP needs before it can deliver; deliver: the VP's CSR walk into its
 * ring; other: the recorders (spike recorders fed from the global list,
 * multimeter draining) and time spent waiting for the slowest VP (at the
 * threads' barriers, and in the first MPI collective for the slowest rank),
 * the latter also given alone as wait_seconds.
 */
typedef enum nestcl_phase {
  NESTCL_PHASE_UPDATE = 0,
  NESTCL_PHASE_DELIVER,
  NESTCL_PHASE_EXCHANGE,
  NESTCL_PHASE_POISSON,
  NESTCL_PHASE_OTHER,
  NESTCL_PHASES
} nestcl_phase;

const char *nestcl_phase_name(nestcl_phase p);

/*
 * What a stream VP asked of its device (issue 29): kernel launches, waits for
 * the device (clFinish, clWaitForEvents, blocking transfers), transfers and
 * their bytes in each direction. The latency of launches and waits, not the
 * kernels, bounds a GPU run with short super steps (perfmodel). 0 on CPU VPs.
 */
typedef struct nestcl_enqueue_counts {
  uint64_t launches, waits;
  /*
   * The device loop's waits that keep work queued behind them (it waits for
   * the end of an earlier super step so as not to run more than about 50 ms
   * ahead of the device): the device does not idle for them; not in waits.
   */
  uint64_t throttles;
  uint64_t replays; /* recorded super steps enqueued (cl_khr_command_buffer): not in launches */
  /*
   * Super steps the device loop resumed: a spike history's ring was full, so
   * the device stopped there until the host had grown it (plastic synapses).
   */
  uint64_t resumes;
  uint64_t writes, reads; /* transfers host -> device, device -> host */
  uint64_t bytes_written, bytes_read;
  /* Super steps run inside the persistent loop's launches (each launch in launches, once, for many of them). */
  uint64_t persistent_steps;
  /*
   * Internal: the kernel profile the VP's launches are timed into (NULL:
   * none; always NULL in the copies nestcl_engine_get_stats gives out; read
   * the profile with nestcl_engine_kernel_profile).
   */
  struct nestcl_kprof *profile;
} nestcl_enqueue_counts;

typedef struct nestcl_vp_stats {
  int is_gpu;
  uint32_t neurons; /* local neurons of this VP (all populations) */
  uint64_t synapses; /* synapses onto them */
  double seconds[NESTCL_PHASES];
  double wait_seconds; /* at barriers, waiting for other VPs; included in seconds[NESTCL_PHASE_OTHER] */
  double
    plastic_seconds; /* delivery through translated (plastic) synapses; included in seconds[NESTCL_PHASE_DELIVER] */
  uint64_t plastic_batches; /* batches of batched plastic delivery (0: resident) */
  /* CPU VPs: plastic delivery tasks this VP's thread ran (nestcl_engine_config.plastic_tasks), and of those the
     ones of other VPs, taken over while they were still busy */
  uint64_t plastic_tasks, plastic_tasks_other;
  /* CPU VPs: the thread's CPU time in those tasks (the wall time is in plastic_seconds, with the rest of the
     delivery): less than the wall time where the thread did not run all the while */
  double plastic_cpu_seconds;
  uint64_t plastic_synapses; /* of the synapses onto this VP's neurons */
  nestcl_enqueue_counts enqueued; /* since the build, simulate() only (not checkpoints or weight reads) */
} nestcl_vp_stats;

typedef struct nestcl_engine_stats {
  int rank, n_ranks;
  int n_vps; /* VPs of this rank */
  const nestcl_vp_stats *vps;
  uint64_t neurons; /* whole network */
  uint64_t synapses; /* whole network (summed over ranks) */
  uint64_t local_synapses; /* this rank */
  uint64_t spikes; /* emitted by all neurons since the build */
  uint64_t synaptic_events; /* synapses walked for those spikes, whole network */
  int64_t steps; /* simulated steps */
  double build_nodes_s, build_connections_s, build_upload_s;
  /* Of build_connections_s: drawing the synapses (both passes), and assembling the CSR's rows between them. */
  double build_draw_s, build_csr_s;
  int build_threads; /* host threads that drew them */
  int build_device_csrs, build_host_csrs; /* static CSRs (one per block) and plastic sets drawn by the device, host */
  double simulate_s; /* wall time inside simulate() */
  /* Bytes of this rank by class (NESTCL_MEM_*): on the device (streams) and in host memory (CPU VPs). */
  size_t device_bytes[NESTCL_MEM_CLASSES];
  size_t host_bytes[NESTCL_MEM_CLASSES];
  double bytes_per_synapse; /* synapse bytes (CSR: row pointers, targets, weights, delays) / local synapses */
  uint64_t plastic_synapses; /* translated (plastic) synapses, whole network */
  double bytes_per_plastic_synapse; /* their bytes (row pointers, targets, delays, per-synapse and per-source
                                       state) / their count, this rank; the spike history is apart */
  size_t history_bytes; /* postsynaptic spike histories of this rank */
  int plastic_batched; /* plastic synapses of some stream delivered in batches (device memory budget) */
  uint64_t plastic_batches; /* batches run so far, this rank */
  const char *device_name; /* NULL without streams */
  const char *device_driver;
  int min_delay_steps, max_delay_steps;
  int device_loop; /* the stream runs whole super steps and the host enqueues ahead (config: host_clock) */
  int sync_interval; /* then: super steps between its drains, at most (config, or fewer for the recording) */
  int command_buffer; /* then: whole super steps replayed from a command buffer */
  int persistent_groups; /* then: work-groups of the persistent loop's launches (0: it launches per phase) */
} nestcl_engine_stats;

int nestcl_engine_get_stats(const nestcl_engine *e, nestcl_engine_stats *out);
/*
 * The kernels this rank's streams launched since the build, by name, and the
 * device's idle time between them (config.kernel_sample; device.h). out is
 * the caller's (nestcl_kernel_profile_free); waits for the timed launches
 * still on the device. Without streams or with kernel_sample 0, no kernels.
 */
int nestcl_engine_kernel_profile(const nestcl_engine *e, nestcl_kernel_profile *out);

/*
 * The peak of the PSP (mV) of a unit (1 pA) alpha-shaped current in an
 * iaf_psc_alpha neuron at rest, and the time of the peak (ms): the conversion
 * of hpc_benchmark (BENCHMARKS.md) is J[pA] = J[mV] / v_max. Uses the -1 branch
 * of Lambert's W, computed by Halley iterations.
 */
int nestcl_alpha_psp_peak(double tau_m, double tau_syn, double C_m, double *t_max, double *v_max);
/* W_{-1}(x) for x in [-1/e, 0). */
double nestcl_lambert_wm1(double x);

#ifdef __cplusplus
}
#endif
#endif
