/*
 * The flags of the perfmodel's commands (pm_flags.h): their defaults, their
 * values' ranges, and which command takes which.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_flags.h"

static int parse_num(const char *flag, const char *v, double lo, double hi, double *out)
{
  char *end;
  errno = 0;
  double d = v ? strtod(v, &end) : NAN;
  if (!v || end == v || *end || errno || !isfinite(d) || d < lo || d > hi) {
    fprintf(stderr, "error: %s needs a number in [%g, %g] (got '%s')\n", flag, lo, hi, v ? v : "");
    return -1;
  }
  *out = d;
  return 0;
}

static int parse_int(const char *flag, const char *v, int lo, int hi, int *out)
{
  double d;
  if (parse_num(flag, v, lo, hi, &d))
    return -1;
  if (d != floor(d)) {
    fprintf(stderr, "error: %s needs a whole number (got '%s')\n", flag, v);
    return -1;
  }
  *out = (int)d;
  return 0;
}

/* The flags' defaults. */
static void pm_flags_defaults(pm_flags *f)
{
  memset(f, 0, sizeof *f);
  f->folds = 5;
  f->threads = -1;
  f->streams = -1;
  f->ranks = 1;
  f->alpha = -1.0;
  f->stdp = 1;
  f->rate = -1.0;
  f->max_threads = -1;
  f->max_streams = -1;
  f->top = 5;
  f->repeats = 3;
  f->simtime = 200.0;
  f->presim = 50.0;
  f->launch_us = 5.0;
  f->wait_us = 20.0;
}

/* A numeric flag's value into f: 0, -1 after a message, 1 when a is not a numeric flag. */
static int pm_number_flag(const char *a, const char *v, pm_flags *f)
{
  static const struct {
    const char *flag;
    double lo, hi;
    size_t off;
  } nums[] = {
    {"--scale", 1e-6, 1e6, offsetof(pm_flags, scale)},      {"--neurons", 1, 1e12, offsetof(pm_flags, neurons)},
    {"--rate", 0, 1e4, offsetof(pm_flags, rate)},           {"--simtime", 1.0, 1e7, offsetof(pm_flags, simtime)},
    {"--presim", 0.0, 1e7, offsetof(pm_flags, presim)},     {"--gpu-fraction", 0, 1, offsetof(pm_flags, alpha)},
    {"--launch-us", 0, 1e6, offsetof(pm_flags, launch_us)}, {"--wait-us", 0, 1e6, offsetof(pm_flags, wait_us)}};
  static const struct {
    const char *flag;
    int lo, hi;
    size_t off;
  } ints[] = {{"--folds", 2, 1000, offsetof(pm_flags, folds)},
              {"--threads", 0, 256, offsetof(pm_flags, threads)},
              {"--streams", 0, 64, offsetof(pm_flags, streams)},
              {"--ranks", 1, 1 << 20, offsetof(pm_flags, ranks)},
              {"--max-threads", 0, 256, offsetof(pm_flags, max_threads)},
              {"--max-streams", 0, 64, offsetof(pm_flags, max_streams)},
              {"--top", 1, 1000, offsetof(pm_flags, top)},
              {"--measure", 1, 64, offsetof(pm_flags, measure)},
              {"--repeats", 1, 100, offsetof(pm_flags, repeats)}};
  for (size_t k = 0; k < sizeof nums / sizeof nums[0]; ++k)
    if (strcmp(a, nums[k].flag) == 0)
      return parse_num(a, v, nums[k].lo, nums[k].hi, (double *)((char *)f + nums[k].off));
  for (size_t k = 0; k < sizeof ints / sizeof ints[0]; ++k)
    if (strcmp(a, ints[k].flag) == 0)
      return parse_int(a, v, ints[k].lo, ints[k].hi, (int *)((char *)f + ints[k].off));
  return 1;
}

/* One flag a with its value v into f: 0, or -1 after a message. */
static int pm_flag_value(const char *a, const char *v, pm_flags *f)
{
  if (strcmp(a, "--out") == 0)
    f->out = v;
  else if (strcmp(a, "--profile") == 0)
    f->profile = v;
  else if (strcmp(a, "--profile-dir") == 0)
    f->profile_dir = v;
  else if (strcmp(a, "--device") == 0)
    f->device = v;
  else if (strcmp(a, "--out-dir") == 0)
    f->out_dir = v;
  else if (strcmp(a, "--sweep") == 0)
    f->files[f->n_files++] = (char *)v;
  else if (strcmp(a, "--synapse") == 0) {
    if (strcmp(v, "stdp") == 0 || strcmp(v, "stdp_pl_synapse_hom") == 0)
      f->stdp = 1;
    else if (strcmp(v, "static") == 0)
      f->stdp = 0;
    else {
      fprintf(stderr, "error: --synapse must be stdp or static (got '%s')\n", v);
      return -1;
    }
  } else {
    return pm_number_flag(a, v, f) < 0 ? -1 : 0;
  }
  return 0;
}

/* Flags shared by the commands; `allowed` lists the ones this command takes (space-separated). */
int pm_parse_flags(int argc, char **argv, const char *allowed, pm_flags *f)
{
  pm_flags_defaults(f);
  f->files = malloc((size_t)(argc > 0 ? argc : 1) * sizeof *f->files);
  if (!f->files)
    return -1;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      f->help = 1;
      return 0;
    }
    if (strncmp(a, "--", 2) != 0) {
      if (!strstr(allowed, "FILES")) {
        fprintf(stderr, "error: unexpected argument '%s'\n", a);
        return -1;
      }
      f->files[f->n_files++] = argv[i];
      continue;
    }
    char key[48];
    snprintf(key, sizeof key, " %s ", a + 2);
    char al[512];
    snprintf(al, sizeof al, " %s ", allowed);
    if (!strstr(al, key)) {
      fprintf(stderr, "error: unknown flag '%s' (try --help)\n", a);
      return -1;
    }
    const char *v = i + 1 < argc ? argv[++i] : NULL;
    if (!v) {
      fprintf(stderr, "error: %s needs a value\n", a);
      return -1;
    }
    if (pm_flag_value(a, v, f) != 0)
      return -1;
  }
  return 0;
}
