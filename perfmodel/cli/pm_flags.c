/*
 * The flags of the perfmodel's commands (pm_flags.h): their defaults, their
 * values' ranges, and which command takes which.
 */
#include <errno.h>
#include <math.h>
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

/* Flags shared by the commands; `allowed` lists the ones this command takes (space-separated). */
int pm_parse_flags(int argc, char **argv, const char *allowed, pm_flags *f)
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
    int rc = 0;
    if (strcmp(a, "--out") == 0)
      f->out = v;
    else if (strcmp(a, "--profile") == 0)
      f->profile = v;
    else if (strcmp(a, "--device") == 0)
      f->device = v;
    else if (strcmp(a, "--out-dir") == 0)
      f->out_dir = v;
    else if (strcmp(a, "--sweep") == 0)
      f->files[f->n_files++] = (char *)v;
    else if (strcmp(a, "--folds") == 0)
      rc = parse_int(a, v, 2, 1000, &f->folds);
    else if (strcmp(a, "--scale") == 0)
      rc = parse_num(a, v, 1e-6, 1e6, &f->scale);
    else if (strcmp(a, "--neurons") == 0)
      rc = parse_num(a, v, 1, 1e12, &f->neurons);
    else if (strcmp(a, "--rate") == 0)
      rc = parse_num(a, v, 0, 1e4, &f->rate);
    else if (strcmp(a, "--threads") == 0)
      rc = parse_int(a, v, 0, 256, &f->threads);
    else if (strcmp(a, "--streams") == 0)
      rc = parse_int(a, v, 0, 64, &f->streams);
    else if (strcmp(a, "--ranks") == 0)
      rc = parse_int(a, v, 1, 1 << 20, &f->ranks);
    else if (strcmp(a, "--max-threads") == 0)
      rc = parse_int(a, v, 0, 256, &f->max_threads);
    else if (strcmp(a, "--max-streams") == 0)
      rc = parse_int(a, v, 0, 64, &f->max_streams);
    else if (strcmp(a, "--top") == 0)
      rc = parse_int(a, v, 1, 1000, &f->top);
    else if (strcmp(a, "--measure") == 0)
      rc = parse_int(a, v, 1, 64, &f->measure);
    else if (strcmp(a, "--repeats") == 0)
      rc = parse_int(a, v, 1, 100, &f->repeats);
    else if (strcmp(a, "--simtime") == 0)
      rc = parse_num(a, v, 1.0, 1e7, &f->simtime);
    else if (strcmp(a, "--presim") == 0)
      rc = parse_num(a, v, 0.0, 1e7, &f->presim);
    else if (strcmp(a, "--gpu-fraction") == 0)
      rc = parse_num(a, v, 0, 1, &f->alpha);
    else if (strcmp(a, "--launch-us") == 0)
      rc = parse_num(a, v, 0, 1e6, &f->launch_us);
    else if (strcmp(a, "--wait-us") == 0)
      rc = parse_num(a, v, 0, 1e6, &f->wait_us);
    else if (strcmp(a, "--synapse") == 0) {
      if (strcmp(v, "stdp") == 0 || strcmp(v, "stdp_pl_synapse_hom") == 0)
        f->stdp = 1;
      else if (strcmp(v, "static") == 0)
        f->stdp = 0;
      else {
        fprintf(stderr, "error: --synapse must be stdp or static (got '%s')\n", v);
        rc = -1;
      }
    }
    if (rc)
      return -1;
  }
  return 0;
}
