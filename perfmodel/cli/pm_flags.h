/* The flags of `nestcl perfmodel fit|predict|tune|plot` (pm_flags.c): one parser, each command naming the ones it takes. */
#ifndef NESTCL_PM_FLAGS_H
#define NESTCL_PM_FLAGS_H

typedef struct pm_flags {
  char **files;
  int n_files;
  const char *out, *profile, *device, *out_dir;
  const char *profile_dir; /* fit --profile-dir: the profile under its own name in that folder */
  int folds;
  double scale, neurons, rate;
  int threads, streams, ranks, max_threads, max_streams;
  double alpha;
  int stdp;
  int top;
  int measure, repeats; /* tune --measure K --repeats R */
  double simtime, presim; /* their runs */
  double launch_us, wait_us; /* predict: the latency floor's costs */
  int help;
} pm_flags;

/*
 * Flags shared by the commands; `allowed` lists the ones this command takes
 * (space-separated; FILES: positional sweep files, into f->files, malloc'd).
 * Non-zero after an error line.
 */
int pm_parse_flags(int argc, char **argv, const char *allowed, pm_flags *f);
#endif
