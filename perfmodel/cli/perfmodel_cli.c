/*
 * `nestcl perfmodel sweep|fit|predict|tune|plot`: the performance model's
 * command line (docs/perfmodel.md). This file dispatches; sweep.c runs the
 * designed configurations, pm_commands.c fits, predicts and tunes (their
 * flags: pm_flags.c), pm_plot.c plots (pm_sweep_data.c reads and fits sweep
 * lines, pm_profile.c finds a device's profile), pm_floor.c bounds the
 * real-time factor; pm_auto.c is the split of `nestcl run --gpu-fraction
 * auto`.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "perfmodel_cli.h"
#include "pm_commands.h"
#include "pm_floor.h"
#include "pm_profile.h"
#include "pm_sweep.h"

static void usage(FILE *f)
{
  fprintf(f,
          "usage: nestcl perfmodel <command> [flags]\n"
          "\n"
          "  sweep     run a designed set of short configurations, one JSON line each\n"
          "  fit       fit the CPU, GPU and co-execution models to sweep lines; store the profile\n"
          "  predict   the time of one configuration, phase by phase\n"
          "  tune      the best (threads, streams, alpha) for a network size on this hardware\n"
          "  plot      gnuplot PNGs: measured against predicted, time against alpha, phases\n"
          "  floor     the real-time factor a run's kernel launches and device waits impose\n"
          "  profiles  the profiles there are for the device (repository, cache) and the one a run uses\n"
          "\n"
          "`nestcl perfmodel <command> --help` lists a command's flags.\n");
}

int cli_perfmodel(int argc, char **argv)
{
  if (argc < 2) {
    usage(stderr);
    return CLI_USAGE;
  }
  const char *c = argv[1];
  if (strcmp(c, "--help") == 0 || strcmp(c, "-h") == 0) {
    usage(stdout);
    return CLI_OK;
  }
  if (strcmp(c, "sweep") == 0)
    return pm_sweep(argc - 1, argv + 1);
  if (strcmp(c, "floor") == 0)
    return pm_floor(argc - 1, argv + 1);
  if (strcmp(c, "profiles") == 0)
    return pm_profiles(argc - 1, argv + 1);
  int rc = pm_command(c, argc - 1, argv + 1);
  if (rc >= 0)
    return rc;
  fprintf(stderr, "error: perfmodel: unknown command '%s' (sweep, fit, predict, tune, plot, floor, profiles)\n", c);
  return CLI_USAGE;
}
