/*
 * What the drivers of `nestcl run` share (runner.c for the benchmarks of
 * benchmarks/, hpc_benchmark.c for hpc_benchmark): flag values, the times'
 * checks, simulation in pieces with a progress line, the stop on SIGINT and
 * SIGTERM, the results' byte and phase objects, and output files that appear
 * only complete (written under a temporary name, renamed at the end).
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
/* --dt in (0, 10] ms; --simtime and --presim non-negative multiples of it (NEST refuses others); -1 after an error line. */
int cli_check_times(double dt, double simtime, double presim);

double cli_now(void);

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

void cli_write_bytes(json *j, const size_t *b);
/* The phases, and the part of "other" spent waiting at barriers (not a phase of its own: no double count). */
void cli_write_phases(json *j, const double *s, double wait);

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
