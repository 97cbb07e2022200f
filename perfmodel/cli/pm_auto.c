/*
 * The profile behind `--gpu-fraction auto` and `--threads auto --streams
 * auto` (docs/perfmodel.md): the cache's profile of the device and driver
 * the run will use, checked against this machine; else the repository's
 * profile of this device, driver and core count (perfmodel/profiles/,
 * fitted on a real machine; nestcl_pm_profile_find); when there is neither,
 * or the cache's is corrupt or stale (another core count, another schema)
 * and the repository has none, a bounded calibration (a small sweep, in
 * child processes, then the fit) builds one first and says so on stderr.
 * Under MPI, or with the cache off, there is no way to calibrate: that is an
 * error, never a silent fallback. Which profile was used is said in words
 * (profile_note): the split line of `nestcl run` prints it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "nestcl/device.h"
#include "nestcl/pm_model.h"
#include "pm_auto.h"
#include "pm_profile.h"
#include "pm_sweep.h"
#include "pm_sweep_data.h"
#include "run_common.h"

/* Builds the profile with a bounded sweep around the run's configuration. */
static int calibrate(const char *device_spec, const nestcl_device_info *dev, const char *path, double scale, int stdp,
                     int threads, int streams, double budget, nestcl_pm_profile *p)
{
  char out[4200], th[64], st[64], bud[32], sc[96];
  /*
   * Three sizes up to the run's own, at most scale 0.2 (bounded time), at
   * least up to 0.1: smaller networks are all overhead and noise, and tell
   * nothing about the costs per neuron and per synaptic event.
   */
  double s_hi = scale < 0.2 ? scale : 0.2;
  s_hi = s_hi > 0.1 ? s_hi : 0.1;
  snprintf(sc, sizeof sc, "%.6g,%.6g,%.6g", s_hi / 4.0, s_hi / 2.0, s_hi);
  snprintf(out, sizeof out, "%s.sweep.%ld.jsonl", path, (long)getpid());
  /* Thread and stream counts 1 and 2 always (the model's terms per VP need two of each), and the run's own. */
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int t_hi = threads > 0 ? threads : (int)(cores > 1 ? cores : 2), g_hi = streams > 0 ? streams : 3;
  snprintf(th, sizeof th, t_hi > 2 ? "1,2,%d" : "1,2", t_hi);
  snprintf(st, sizeof st, g_hi > 2 ? "1,2,%d" : "1,2", g_hi);
  snprintf(bud, sizeof bud, "%g", budget);
  char *argv[32];
  int k = 0;
  argv[k++] = "sweep";
  argv[k++] = "--out";
  argv[k++] = out;
  argv[k++] = "--scales";
  argv[k++] = sc;
  argv[k++] = "--threads";
  argv[k++] = th;
  argv[k++] = "--streams";
  argv[k++] = st;
  argv[k++] = "--alphas";
  argv[k++] = "0.25,0.5,0.75";
  argv[k++] = "--synapses";
  argv[k++] = stdp ? "stdp" : "static";
  argv[k++] = "--simtime";
  argv[k++] = "50";
  argv[k++] = "--presim";
  argv[k++] = "10";
  argv[k++] = "--budget";
  argv[k++] = bud;
  argv[k++] = "--quiet";
  if (device_spec) {
    argv[k++] = "--device";
    argv[k++] = (char *)device_spec;
  }
  argv[k] = NULL;
  fprintf(stderr,
          "nestcl: no usable performance profile of '%s' (driver %s): calibrating with short runs "
          "(at most %g s), stored in %s\n",
          dev->device_name, dev->driver_version, budget, path);
  int code = pm_sweep(k, argv);
  if (code >= CLI_SIGNAL_BASE) {
    remove(out);
    return code;
  }
  if (code != CLI_OK) {
    remove(out);
    fprintf(stderr, "error: --gpu-fraction auto: the calibration failed (above); give --gpu-fraction A instead\n");
    return CLI_RUNTIME;
  }
  char *files[1] = {out};
  code = pm_fit_files(files, 1, 5, p);
  remove(out);
  if (code != CLI_OK) {
    fprintf(stderr,
            "error: --gpu-fraction auto: the calibration's runs could not be fitted (above); give "
            "--gpu-fraction A, or sweep more with `nestcl perfmodel sweep`\n");
    return code;
  }
  if (nestcl_pm_profile_save(p, path) != 0) {
    fprintf(stderr, "error: %s\n", nestcl_last_error());
    return CLI_RUNTIME;
  }
  fprintf(stderr, "nestcl: calibrated: R^2 on held-out runs %.3f (CPU), %.3f (GPU), %.3f (co-execution)\n",
          p->cpu.r2_cv, p->gpu.r2_cv, p->co.r2_cv);
  return CLI_OK;
}

/* What the repository's profiles folder holds instead of one for this device (for the messages). */
static void repository_why(const nestcl_device_info *dev, char *why, size_t cap)
{
  nestcl_pm_profile rp;
  char path[4096];
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  nestcl_pm_profile_find_repository("hpc_benchmark", dev->device_name, dev->driver_version, (int)cores, &rp, path,
                                    sizeof path, why, cap);
}

/* The profile used, in words. */
static void describe(const nestcl_pm_profile *p, const char *path, const char *kind, char *out, size_t cap)
{
  char date[32] = "?";
  time_t t = (time_t)p->created;
  struct tm tm;
  if (gmtime_r(&t, &tm)) {
    strftime(date, sizeof date, "%Y-%m-%d", &tm);
  }
  snprintf(out, cap, "%s profile %s of '%s' (driver %s, %d cores), fitted %s%s%s", kind, path, p->device_name,
           p->device_driver, p->cores, date, *p->machine ? " on " : "", p->machine);
}

int pm_auto_split(const pm_auto_request *rq, pm_auto_result *res)
{
  memset(res, 0, sizeof *res);
  int threads = rq->threads, streams = rq->streams;
  /* Nothing to choose. */
  if (threads >= 0 && streams >= 0 && (threads == 0 || streams == 0)) {
    res->threads = threads;
    res->streams = streams;
    res->alpha = threads == 0 ? 1.0 : 0.0;
    snprintf(res->source, sizeof res->source, "%s", "single kind of VP");
    res->predicted = NAN;
    return CLI_OK;
  }
  nestcl_pm_profile p;
  nestcl_device_info dev;
  int st = pm_resolve_profile(rq->device, rq->profile, &p, res->profile_path, sizeof res->profile_path, &dev);
  if (st == PM_PROFILE_ERROR) {
    return CLI_USAGE;
  }
  int calibrated = 0;
  if (st != PM_PROFILE_OK) {
    if (st == PM_PROFILE_CORRUPT) {
      fprintf(stderr, "nestcl: %s; rebuilding it\n", nestcl_last_error());
    }
    char why[2048];
    repository_why(&dev, why, sizeof why);
    if (st == PM_PROFILE_NO_CACHE || rq->mpi) {
      fprintf(stderr,
              "error: --gpu-fraction auto: no usable performance profile of '%s' (driver %s, %ld cores; "
              "repository: %s) and no way to calibrate here (%s): run `nestcl perfmodel sweep` and "
              "`nestcl perfmodel fit` first, or give --gpu-fraction A\n",
              dev.device_name, dev.driver_version, sysconf(_SC_NPROCESSORS_ONLN), why,
              st == PM_PROFILE_NO_CACHE ? "the cache folder is off or cannot be created" : "under MPI");
      return CLI_USAGE;
    }
    fprintf(stderr, "nestcl: the repository has no profile of this machine: %s\n", why);
    int code = calibrate(rq->device, &dev, res->profile_path, rq->scale, rq->stdp, threads, streams, rq->budget, &p);
    if (code != CLI_OK) {
      return code;
    }
    calibrated = 1;
  }
  res->prof = p;
  describe(&p, res->profile_path,
           rq->profile      ? "the given"
             : p.repository ? "the repository's"
             : calibrated   ? "the newly calibrated"
                            : "the cache's",
           res->profile_note, sizeof res->profile_note);
  nestcl_pm_config c;
  pm_hpc_config(&p, rq->scale, rq->stdp, rq->ranks, &c);
  if (rq->keep_alpha) {
    /* The split is given (--rebalance from a given alpha): only the profile was wanted. */
    res->threads = threads;
    res->streams = streams;
    res->alpha = rq->alpha;
    c.TC = threads;
    c.TG = streams;
    c.alpha = rq->alpha;
    res->predicted = isfinite(c.F) ? nestcl_pm_output_value(p.p, &c, NESTCL_PM_WALL) : NAN;
    snprintf(res->source, sizeof res->source, "%s", "flag");
    return CLI_OK;
  }
  if (!isfinite(c.F)) {
    fprintf(stderr, "error: --gpu-fraction auto: the profile %s has no measured rates\n", res->profile_path);
    return CLI_USAGE;
  }
  if (threads < 0 || streams < 0) {
    /* Every split the host allows: threads up to its cores, streams up to 4 (or the counts given). */
    int t_lo = threads < 0 ? 0 : threads, t_hi = threads < 0 ? p.cores : threads;
    int g_lo = streams < 0 ? 0 : streams, g_hi = streams < 0 ? 4 : streams;
    pm_candidate *cs = malloc((size_t)(t_hi - t_lo + 1) * (size_t)(g_hi - g_lo + 1) * sizeof *cs);
    if (!cs) {
      fprintf(stderr, "error: out of host memory\n");
      return CLI_RUNTIME;
    }
    pm_candidates(&p, &c, t_lo, t_hi, g_lo, g_hi, cs);
    res->threads = (int)cs[0].c.TC;
    res->streams = (int)cs[0].c.TG;
    res->alpha = cs[0].c.alpha;
    res->predicted = cs[0].wall;
    free(cs);
  } else {
    c.TC = threads;
    c.TG = streams;
    res->threads = threads;
    res->streams = streams;
    res->alpha = nestcl_pm_best_alpha(p.p, &c, &res->predicted);
  }
  snprintf(res->source, sizeof res->source, "%s",
           calibrated ? "profile (calibrated now)" : (p.repository ? "profile (repository)" : "profile"));
  return CLI_OK;
}
