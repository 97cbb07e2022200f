/* The `nestcl` driver's commands (nestcl_main.c dispatches, each file implements one). */
#ifndef NESTCL_CLI_H
#define NESTCL_CLI_H
/* Exit codes of DESIGN.md §6. */
#define CLI_OK 0
#define CLI_RUNTIME 1
#define CLI_USAGE 2
int cli_run_hpc_benchmark(int argc, char **argv);
struct bench_def;
/* `nestcl run <name>` for a benchmark of benchmarks/ (benchmark.h), through the shared runner. */
int cli_run_benchmark(const struct bench_def *b, int argc, char **argv);
void cli_hpc_benchmark_help(void);
#endif
