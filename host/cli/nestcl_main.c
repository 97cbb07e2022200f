/*
 * nestcl: the command-line driver of the engine. `nestcl run <benchmark>
 * [flags]` builds and simulates one of the benchmark networks of benchmarks/
 * and writes the results JSON (benchmarks/results.schema.md). A benchmark is
 * one file in benchmarks/ and one line of the table below. Usage errors exit
 * 2, run-time errors 1, each with one "error: ..." line on stderr.
 */
#include <stdio.h>
#include <string.h>

#include "benchmark.h"
#include "cli.h"
#include "hpc_benchmark.h"
#include "nestcl/version.h"
#include "perfmodel_cli.h"

/* The benchmarks: hpc_benchmark has its own driver (performance model, rebalancing); the others the shared runner. */
static const struct {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);
  const bench_def *def;
} benchmarks[] = {
  {"hpc_benchmark", "NEST's balanced random network (iaf_psc_alpha, STDP, Poisson drive)", cli_run_hpc_benchmark, NULL},
  {"microcircuit", NULL, NULL, &bench_microcircuit},
};
#define N_BENCHMARKS (int)(sizeof benchmarks / sizeof benchmarks[0])

static void usage(FILE *f)
{
  fprintf(f,
          "usage: nestcl run <benchmark> [flags]\n"
          "       nestcl perfmodel <command> [flags]   (sweep, fit, predict, tune, plot)\n"
          "       nestcl --help | --version\n"
          "\n"
          "benchmarks:\n");
  for (int k = 0; k < N_BENCHMARKS; ++k) {
    fprintf(f, "  %-15s %s\n", benchmarks[k].name,
            benchmarks[k].def ? benchmarks[k].def->summary : benchmarks[k].summary);
  }
  fprintf(f, "\n`nestcl run <benchmark> --help` lists its flags.\n");
}

static void list_names(FILE *f)
{
  for (int k = 0; k < N_BENCHMARKS; ++k)
    fprintf(f, "%s%s", k ? ", " : "", benchmarks[k].name);
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    usage(stderr);
    return CLI_USAGE;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    usage(stdout);
    return CLI_OK;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("nestcl %s\n", nestcl_version());
    return CLI_OK;
  }
  if (strcmp(argv[1], "perfmodel") == 0) {
#ifdef NESTCL_WITH_PERFMODEL
    return cli_perfmodel(argc - 1, argv + 1);
#else
    fprintf(stderr, "error: perfmodel: this nestcl was built without GSL (install libgsl-dev and rebuild)\n");
    return CLI_USAGE;
#endif
  }
  if (strcmp(argv[1], "run") != 0) {
    fprintf(stderr, "error: unknown command '%s' (try --help)\n", argv[1]);
    return CLI_USAGE;
  }
  if (argc < 3) {
    fprintf(stderr, "error: run: which benchmark? (");
    list_names(stderr);
    fprintf(stderr, ")\n");
    return CLI_USAGE;
  }
  for (int k = 0; k < N_BENCHMARKS; ++k) {
    if (strcmp(argv[2], benchmarks[k].name) == 0) {
      return benchmarks[k].def ? cli_run_benchmark(benchmarks[k].def, argc - 2, argv + 2)
                               : benchmarks[k].run(argc - 2, argv + 2);
    }
  }
  if (strcmp(argv[2], "--help") == 0) {
    usage(stdout);
    return CLI_OK;
  }
  fprintf(stderr, "error: unknown benchmark '%s' (available: ", argv[2]);
  list_names(stderr);
  fprintf(stderr, ")\n");
  return CLI_USAGE;
}
