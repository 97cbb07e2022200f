/*
 * What the drivers of `nestcl run` share (benchmarks/runner.c for the
 * benchmarks of benchmark.h, benchmarks/hpc_benchmark_driver.c for
 * hpc_benchmark) and the perfmodel's commands use: the walk over the flags and
 * their values, the times' checks, MPI's start and end, simulation in pieces
 * with a progress line, the stop on SIGINT and SIGTERM, the results' byte and
 * phase objects, and output files that appear only complete (written under a
 * temporary name, renamed at the end).
 */
#ifndef NESTCL_CLI_RUN_COMMON_H
#define NESTCL_CLI_RUN_COMMON_H

#include <signal.h>
#include <stdio.h>

#include "json.h"
#include "nestcl/engine.h"

/* Exit code of a run stopped by SIGINT or SIGTERM (128 + the signal, as shells report it). */
#define CLI_SIGNAL_BASE 128

/* Flag values; -1 after an "error: ..." line on stderr. */
int cli_parse_double(const char *flag, const char *v, double *out);
int cli_parse_long(const char *flag, const char *v, long lo, long hi, long *out);
int cli_need_path(const char *flag, const char *v);
/*
 * Before the run, so that it does not end in a write that fails: a file can
 * be written at path (its folder exists and takes new files; an existing
 * path is a writable file), or (folder) a folder can be made or filled there
 * (an existing one writable, else its parent taking new folders); -1 after an
 * error line naming flag.
 */
int cli_check_output(const char *flag, const char *path, int folder);
/*
 * Walks a command's flags: each "--flag=value" is split into its flag and
 * value; a flag given as "--flag value" takes the next argument when it asks
 * for one. The drivers' parsers test c.a against their flags in turn.
 */
typedef struct cli_args {
  int argc;
  char **argv;
  int i; /* the current argument */
  const char *a; /* its flag (without "=value") */
  const char *v; /* its "=value", or NULL */
  char flag[64];
} cli_args;
/* Points c at argv[i]. */
void cli_args_at(cli_args *c, int argc, char **argv, int i);
/* The flag's value: its "=value", else the next argument (taken), else NULL. */
const char *cli_args_value(cli_args *c);
/* The value without taking it: its "=value", else the next argument, else NULL. */
const char *cli_args_peek(const cli_args *c);

/* --dt in (0, 10] ms; --simtime and --presim non-negative multiples of it (NEST refuses others); -1 after an error line. */
int cli_check_times(double dt, double simtime, double presim);

double cli_now(void);

/* --mpi: joins the ranks (*rank 0 of *ranks 1 without it); CLI_USAGE after an error line in a build without MPI. */
int cli_start_mpi(int mpi, int *rank, int *ranks);
/* Leaves the ranks that cli_start_mpi joined. */
void cli_end_mpi(int mpi);

/*
 * SIGINT and SIGTERM set cli_signal (the signal's number); the engine given to
 * cli_stop_on_signals() then stops at the end of the current super step.
 */
extern volatile sig_atomic_t cli_signal;
void cli_stop_on_signals(nestcl_engine *e);
/* The exit code for an engine status: usage errors 2, a stop on a signal 128 + its number, others 1. */
int cli_exit_code(int rc);
/* One "error: ..." line for an engine status (the engine's message; for a stop, the signal and where). */
void cli_report(int rc, const nestcl_engine *e, double total_ms);

/* Simulates t_ms in pieces of about 5 % (whole steps), with a progress line on stderr unless quiet. */
int cli_simulate_progress(nestcl_engine *e, const char *what, double t_ms, double dt, int quiet, double *wall);

/* --dry-run: the engine's admission estimate (nestcl_engine_estimate) as JSON on stdout; engine status codes. */
int cli_dry_run(nestcl_engine *e, const char *benchmark);

/*
 * Checkpoint and restart (docs/checkpoint-format.md): --checkpoint-at MS
 * --checkpoint DIR write the engine's state at MS (counted from t = 0, the
 * presimulation included; a multiple of the min delay) and go on; --restore
 * DIR continues a run from its checkpoint (the same network flags needed; the
 * split may differ). The results then cover the continued part only.
 */
typedef struct cli_ckpt {
  double at_ms; /* --checkpoint-at; negative: none */
  const char *dir; /* --checkpoint */
  const char *restore; /* --restore */
  int done; /* the checkpoint was written */
  double restored_ms; /* the clock after building (the checkpoint's time with --restore, else 0) */
} cli_ckpt;
void cli_ckpt_init(cli_ckpt *c);
/* Whether a is one of the three flags. */
int cli_ckpt_is_flag(const char *a);
/* Its value; -1 after an error line. */
int cli_ckpt_flag(cli_ckpt *c, const char *a, const char *v);
/* After parsing: both of --checkpoint-at and --checkpoint or neither, MS a multiple of dt in [0, end_ms], DIR one that
   can be made or filled; -1 after an error line. */
int cli_ckpt_check(const cli_ckpt *c, double dt, double end_ms);
/*
 * Builds (prepare), or with --restore builds and restores; then checks that a
 * restored clock lies within the run (end_ms) and before --checkpoint-at, and
 * that --checkpoint-at is a multiple of the min delay. Engine status codes
 * (NESTCL_EINVAL for those checks).
 */
int cli_ckpt_prepare(nestcl_engine *e, cli_ckpt *c, double dt, double end_ms);
/*
 * Simulates from the engine's clock to until_ms (absolute), with a progress
 * line, writing the checkpoint on the way when its time lies in that stretch
 * (a note on stderr unless quiet); nothing when the clock is there already.
 * *wall: the simulation's wall time (the checkpoint's writing left out).
 */
int cli_run_until(nestcl_engine *e, const char *what, double until_ms, cli_ckpt *c, double dt, int quiet, double *wall);
/* The config keys checkpoint_at_ms and restored_from_ms (null when not used). */
void cli_ckpt_json(json *j, const cli_ckpt *c);

/*
 * The build's flags every run shares (docs/architecture.md, "Building the
 * network"): --build-threads N, the host threads that draw the synapses
 * (default: every core the process may use), --build-upload, how a
 * stream's synapses reach its device, and --build-on, who draws them,
 * validated when given (the network depends on none of them);
 * --synapse-checksums, the built synapses' checksums in the results, which
 * show it.
 */
typedef struct cli_build {
  long threads; /* 0: every core */
  nestcl_build_upload upload; /* --build-upload auto|map|copy */
  nestcl_build_on on; /* --build-on auto|host|device */
  int checksums; /* --synapse-checksums: the built synapses' checksums into the results */
  nestcl_synapse_checksum *sums;
  int n_sums;
  int quiet; /* no progress lines (set by the driver: --quiet, or not rank 0) */
  int printed, last; /* the progress lines so far */
  long peak_rss; /* bytes: the process's peak resident set when the build was done */
} cli_build;
void cli_build_init(cli_build *b);
/* Whether a is one of the build's flags. */
int cli_build_is_flag(const char *a);
/* The flag c->a and its value, if it takes one; -1 after an error line. */
int cli_build_flag(cli_build *b, cli_args *c);
/* The flags into the engine's configuration, and the progress lines of a long build (unless quiet). */
void cli_build_config(cli_build *b, nestcl_engine_config *cfg);
/* After the build: the progress line ended, the peak resident set taken. */
void cli_build_done(cli_build *b);
/* The config keys build_threads (null: every core), build_upload and build_on. */
void cli_build_json(json *j, const cli_build *b);
/* After the build, with --synapse-checksums: the synapses' checksums (nestcl_engine_synapse_checksums); engine codes. */
int cli_build_checksums(nestcl_engine *e, cli_build *b);
/* The network's key synapse_checksums, when they were taken. */
void cli_build_checksums_json(json *j, const cli_build *b);
void cli_build_free(cli_build *b);
/* The flags' lines of --help. */
extern const char cli_build_help[];

void cli_write_bytes(json *j, const size_t *b);
/* The phases, and the part of "other" spent waiting at barriers (not a phase of its own: no double count). */
void cli_write_phases(json *j, const double *s, double wait);
/* sum += a - b, field by field: a VP's counts of the measured part. */
void cli_enqueued_add(nestcl_enqueue_counts *sum, const nestcl_enqueue_counts *a, const nestcl_enqueue_counts *b);
/* The enqueue counts (launches, waits, transfers, bytes) in total and per super step (super_steps: the
 * measured steps over min_delay, a fraction when the presimulation ends inside a super step). */
void cli_write_enqueued(json *j, const nestcl_enqueue_counts *c, double super_steps);

/* Output files, each to "<path>.tmp.<pid>" first, renamed together at the end. */
#define CLI_MAX_OUTPUTS 8
typedef struct cli_outputs {
  char *tmp[CLI_MAX_OUTPUTS], *path[CLI_MAX_OUTPUTS];
  int n;
} cli_outputs;
/* The temporary name for path (malloc'd; NULL when out of memory). */
char *cli_tmp_name(const char *path);
/* Takes over tmp (malloc'd) as the temporary file of path; -1 (error line) when full. */
int cli_outputs_add(cli_outputs *o, char *tmp, const char *path);
/* Opens path's temporary file for writing and registers it; NULL after an error line. */
FILE *cli_outputs_open(cli_outputs *o, const char *path);
/* Closes f, -1 after an error line if anything written to it failed. */
int cli_close_checked(FILE *f, const char *path);
/* Removes every temporary file. */
void cli_outputs_drop(cli_outputs *o);
/* Renames every temporary file to its path (none, and -1 after an error line, if a signal came). */
int cli_outputs_commit(cli_outputs *o);
/* j to path through a temporary file, or to stdout when path is NULL; -1 after an error line. */
int cli_write_json(const char *path, const json *j);

#endif
