/*
 * nestcl: the command-line driver of the engine. `nestcl run hpc_benchmark
 * [flags]` builds and simulates NEST's hpc_benchmark network and writes the
 * results JSON (benchmarks/results.schema.md). Usage errors exit 2, run-time
 * errors 1, each with one "error: ..." line on stderr.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "nestcl/version.h"
#include "perfmodel_cli.h"

static void usage(FILE *f)
{
  fprintf(f,
          "usage: nestcl run <benchmark> [flags]\n"
          "       nestcl perfmodel <command> [flags]   (sweep, fit, predict, tune, plot)\n"
          "       nestcl --help | --version\n"
          "\n"
          "benchmarks:\n"
          "  hpc_benchmark   NEST's balanced random network (iaf_psc_alpha, Poisson drive)\n"
          "\n"
          "`nestcl run hpc_benchmark --help` lists the flags.\n");
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
    fprintf(stderr, "error: run: which benchmark? (hpc_benchmark)\n");
    return CLI_USAGE;
  }
  if (strcmp(argv[2], "hpc_benchmark") == 0) {
    return cli_run_hpc_benchmark(argc - 2, argv + 2);
  }
  if (strcmp(argv[2], "--help") == 0) {
    usage(stdout);
    return CLI_OK;
  }
  fprintf(stderr, "error: unknown benchmark '%s' (available: hpc_benchmark)\n", argv[2]);
  return CLI_USAGE;
}
