/*
 * `nestcl perfmodel fit|predict|tune|plot` (docs/perfmodel.md): the sweep's
 * JSON lines become observations of the model (nestcl/pm_model.h; read and
 * fitted in pm_sweep_data.c), fitted into a profile that is stored in the
 * cache folder per device and driver; predict and tune read that profile
 * back; plot (pm_plot.c) draws with gnuplot. Their flags: pm_flags.c. Results
 * are JSON on stdout or --out, tables for people on stderr.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"
#include "nestcl/device.h"
#include "nestcl/pm_json.h"
#include "nestcl/pm_model.h"
#include "pm_commands.h"
#include "pm_flags.h"
#include "pm_plot.h"
#include "pm_profile.h"
#include "pm_sweep.h"
#include "pm_sweep_data.h"

static void print_table(const nestcl_pm_profile *p, FILE *f)
{
  fprintf(f, "perfmodel: %s on '%s' (driver %s), %d cores\n", p->benchmark, p->device_name, p->device_driver, p->cores);
  fprintf(f, "  %-10s %14s %12s\n", "parameter", "value", "std. error");
  for (int i = 0; i < NESTCL_PM_NP; ++i) {
    if (p->fitted[i] == 2) {
      fprintf(f, "  %-10s %14.6g %12s\n", nestcl_pm_param_names[i], p->p[i], "(held at 0)");
    } else if (p->fitted[i]) {
      fprintf(f, "  %-10s %14.6g %12.3g\n", nestcl_pm_param_names[i], p->p[i], p->se[i]);
    } else {
      fprintf(f, "  %-10s %14.6g %12s\n", nestcl_pm_param_names[i], p->p[i], "(not fitted)");
    }
  }
  fprintf(f, "  R^2 of the wall time on held-out runs (k-fold over runs), beside the paper's (fitted runs):\n");
  fprintf(f, "  %-13s %6s %6s %10s %10s %8s\n", "model", "runs", "folds", "held-out", "training", "paper");
  const nestcl_pm_stage *s[3] = {&p->cpu, &p->gpu, &p->co};
  const char *nm[3] = {"CPU", "GPU", "co-execution"};
  const double paper[3] = {0.991, 0.846, 0.919};
  for (int k = 0; k < 3; ++k) {
    fprintf(f, "  %-13s %6d %6d %10.4f %10.4f %8.3f\n", nm[k], s[k]->runs, s[k]->folds, s[k]->r2_cv, s[k]->r2_train,
            paper[k]);
  }
}

static void json_profile(json *j, const nestcl_pm_profile *p)
{
  json_begin_object(j);
  json_key(j, "benchmark");
  json_string(j, p->benchmark);
  json_key(j, "device_name");
  json_string(j, p->device_name);
  json_key(j, "device_driver");
  json_string(j, p->device_driver);
  json_key(j, "cores");
  json_integer(j, p->cores);
  json_key(j, "machine");
  json_string(j, p->machine);
  json_key(j, "parameters");
  json_begin_object(j);
  for (int i = 0; i < NESTCL_PM_NP; ++i) {
    json_key(j, nestcl_pm_param_names[i]);
    json_begin_object(j);
    json_key(j, "value");
    json_number(j, p->p[i]);
    json_key(j, "se");
    json_number(j, p->se[i]);
    json_key(j, "fitted");
    json_bool(j, p->fitted[i] != 0);
    json_key(j, "held_at_zero");
    json_bool(j, p->fitted[i] == 2);
    json_end_object(j);
  }
  json_end_object(j);
  json_key(j, "r2_held_out");
  json_begin_object(j);
  json_key(j, "cpu");
  json_number(j, p->cpu.r2_cv);
  json_key(j, "gpu");
  json_number(j, p->gpu.r2_cv);
  json_key(j, "co");
  json_number(j, p->co.r2_cv);
  json_end_object(j);
  json_key(j, "runs");
  json_begin_object(j);
  json_key(j, "cpu");
  json_integer(j, p->cpu.runs);
  json_key(j, "gpu");
  json_integer(j, p->gpu.runs);
  json_key(j, "co");
  json_integer(j, p->co.runs);
  json_end_object(j);
  json_key(j, "paper_r2");
  json_begin_object(j);
  json_key(j, "cpu");
  json_number(j, 0.991);
  json_key(j, "gpu");
  json_number(j, 0.846);
  json_key(j, "co");
  json_number(j, 0.919);
  json_end_object(j);
  json_end_object(j);
}

/* Writes j to path (temporary name, then rename) or stdout. */
static int emit(const json *j, const char *path)
{
  if (j->failed) {
    fprintf(stderr, "error: out of host memory\n");
    return CLI_RUNTIME;
  }
  if (!path) {
    fwrite(j->buf, 1, j->len, stdout);
    fputc('\n', stdout);
    return fflush(stdout) == 0 ? CLI_OK : CLI_RUNTIME;
  }
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  int ok = f && fwrite(j->buf, 1, j->len, f) == j->len && fputc('\n', f) != EOF;
  if (f && fclose(f) != 0)
    ok = 0;
  if (ok && rename(tmp, path) != 0)
    ok = 0;
  if (!ok) {
    fprintf(stderr, "error: cannot write %s: %s\n", path, strerror(errno));
    remove(tmp);
    return CLI_RUNTIME;
  }
  return CLI_OK;
}

/* The profile for predict and tune: --profile FILE, else the cache's for the device. */
static int load_profile(const pm_flags *f, nestcl_pm_profile *p)
{
  char path[4096];
  nestcl_device_info dev;
  int st = pm_resolve_profile(f->device, f->profile, p, path, sizeof path, &dev);
  switch (st) {
  case PM_PROFILE_OK:
    return CLI_OK;
  case PM_PROFILE_MISSING:
    fprintf(stderr,
            "error: no performance profile of '%s' (driver %s) in %s: run `nestcl perfmodel sweep` and "
            "`nestcl perfmodel fit`, or `nestcl run hpc_benchmark --gpu-fraction auto` to calibrate\n",
            dev.device_name, dev.driver_version, path);
    return CLI_USAGE;
  case PM_PROFILE_CORRUPT:
  case PM_PROFILE_NO_CACHE:
    fprintf(stderr, "error: %s\n", nestcl_last_error());
    return CLI_USAGE;
  default:
    return CLI_USAGE;
  }
}

/* The configuration that --scale/--neurons, --rate and the rest describe for hpc_benchmark. */
static int config_of(const pm_flags *f, const nestcl_pm_profile *p, nestcl_pm_config *c)
{
  if ((f->scale > 0) == (f->neurons > 0)) {
    fprintf(stderr, "error: give the network size as --scale S or --neurons N (one of them)\n");
    return -1;
  }
  pm_hpc_config(p, f->scale > 0 ? f->scale : 1.0, f->stdp, f->ranks, c);
  if (f->neurons > 0) {
    c->N = f->neurons;
    c->F = nestcl_pm_rate(f->stdp ? &p->rate_stdp : &p->rate_static, c->N);
  }
  if (f->rate >= 0) {
    c->F = f->rate;
  } else if (!isfinite(c->F)) {
    fprintf(stderr, "error: the profile has no rates for %s synapses: give --rate HZ\n", f->stdp ? "stdp" : "static");
    return -1;
  }
  return 0;
}

static void json_prediction(json *j, const nestcl_pm_config *c, const nestcl_pm_prediction *o)
{
  json_begin_object(j);
  json_key(j, "threads");
  json_integer(j, (long long)c->TC);
  json_key(j, "streams");
  json_integer(j, (long long)c->TG);
  json_key(j, "gpu_fraction");
  json_number(j, c->alpha);
  json_key(j, "wall_s_per_s");
  json_number(j, o->wall);
  json_key(j, "bound");
  json_string(j, o->bound);
  json_key(j, "phases_s_per_s");
  json_begin_object(j);
  json_key(j, "cpu_update");
  json_number(j, o->cpu_update);
  json_key(j, "cpu_deliver");
  json_number(j, o->cpu_deliver);
  json_key(j, "gpu_update");
  json_number(j, o->gpu_update);
  json_key(j, "gpu_deliver");
  json_number(j, o->gpu_deliver);
  json_key(j, "cpu_wait");
  json_number(j, o->cpu_wait);
  json_key(j, "gpu_wait");
  json_number(j, o->gpu_wait);
  json_key(j, "sharing");
  json_number(j, o->sharing);
  json_key(j, "barriers");
  json_number(j, o->barriers);
  json_key(j, "exchange");
  json_number(j, o->exchange);
  json_key(j, "mpi");
  json_number(j, o->mpi);
  json_end_object(j);
  json_end_object(j);
}

/* ---- fit ------------------------------------------------------------------ */

static int cmd_fit(int argc, char **argv)
{
  pm_flags f;
  if (pm_parse_flags(argc, argv, "FILES out profile profile-dir folds", &f)) {
    free(f.files);
    return CLI_USAGE;
  }
  if (f.help) {
    printf("usage: nestcl perfmodel fit SWEEP.jsonl... [--folds K] [--profile FILE | --profile-dir DIR]\n"
           "                            [--out FILE]\n"
           "\n"
           "Fits the CPU, GPU and co-execution models to the sweep's runs (one device), reports\n"
           "the parameters with standard errors and R^2 on held-out runs (K-fold over runs,\n"
           "default 5), and stores the profile (default: the cache folder's profile of the\n"
           "sweep's device and driver; --profile-dir: in DIR under the name the cache and the\n"
           "repository's perfmodel/profiles/ give it). The report is JSON on stdout or --out, a\n"
           "table on stderr.\n");
    free(f.files);
    return CLI_OK;
  }
  if (f.profile && f.profile_dir) {
    fprintf(stderr, "error: fit: --profile or --profile-dir, not both\n");
    free(f.files);
    return CLI_USAGE;
  }
  if (f.n_files == 0) {
    fprintf(stderr, "error: fit: which sweep files? (nestcl perfmodel fit SWEEP.jsonl)\n");
    free(f.files);
    return CLI_USAGE;
  }
  sweep_data d;
  int code = pm_read_sweeps(f.files, f.n_files, &d);
  free(f.files);
  if (code)
    return code;
  nestcl_pm_profile prof;
  double *pred = malloc(d.n * sizeof *pred);
  code = pred ? pm_fit_sweep(&d, f.folds, &prof, pred) : CLI_RUNTIME;
  char path[4096];
  if (!code) {
    char name[320];
    if (f.profile) {
      snprintf(path, sizeof path, "%s", f.profile);
    } else if (f.profile_dir) {
      if (nestcl_pm_profile_name(prof.benchmark, prof.device_name, prof.device_driver, name, sizeof name) ||
          (mkdir(f.profile_dir, 0755) != 0 && errno != EEXIST)) {
        fprintf(stderr, "error: fit: cannot make the profile's folder %s: %s\n", f.profile_dir, strerror(errno));
        code = CLI_RUNTIME;
      }
      snprintf(path, sizeof path, "%s/%s", f.profile_dir, name);
    } else if (nestcl_pm_profile_path(prof.benchmark, prof.device_name, prof.device_driver, path, sizeof path)) {
      fprintf(stderr, "error: %s\n", nestcl_last_error());
      code = CLI_RUNTIME;
    }
  }
  if (!code) {
    print_table(&prof, stderr);
    json j;
    json_init(&j);
    json_begin_object(&j);
    json_key(&j, "schema");
    json_string(&j, "nestcl-perfmodel-fit/1");
    json_key(&j, "profile_path");
    json_string(&j, path);
    json_key(&j, "profile");
    json_profile(&j, &prof);
    json_key(&j, "held_out");
    json_begin_array(&j);
    for (size_t i = 0; i < d.n; ++i) {
      const run_rec *r = &d.runs[i];
      json_begin_object(&j);
      json_key(&j, "scale");
      json_number(&j, r->scale);
      json_key(&j, "threads");
      json_integer(&j, (long long)r->c.TC);
      json_key(&j, "streams");
      json_integer(&j, (long long)r->c.TG);
      json_key(&j, "gpu_fraction");
      json_number(&j, r->c.alpha);
      json_key(&j, "synapse");
      json_string(&j, r->stdp ? "stdp" : "static");
      json_key(&j, "repeats");
      json_integer(&j, r->repeats);
      json_key(&j, "measured");
      json_number(&j, r->t);
      json_key(&j, "predicted");
      json_number(&j, pred[i]);
      json_end_object(&j);
    }
    json_end_array(&j);
    json_end_object(&j);
    /* The report first, then the profile: a failed report leaves the old profile in place. */
    code = emit(&j, f.out);
    json_free(&j);
    if (!code && nestcl_pm_profile_save(&prof, path) != 0) {
      fprintf(stderr, "error: %s\n", nestcl_last_error());
      code = CLI_RUNTIME;
    } else if (!code) {
      fprintf(stderr, "perfmodel: profile stored in %s\n", path);
    }
  }
  free(pred);
  free(d.runs);
  return code;
}

/* ---- predict and tune ------------------------------------------------------- */

/* Their flags and --help: -1 to go on, else the exit code. */
static int command_flags(int argc, char **argv, const char *allowed, const char *help, pm_flags *f)
{
  int bad = pm_parse_flags(argc, argv, allowed, f);
  free(f->files);
  f->files = NULL;
  if (bad)
    return CLI_USAGE;
  if (f->help) {
    fputs(help, stdout);
    return CLI_OK;
  }
  return -1;
}

/* Their profile and the configuration the flags describe: -1 to go on, else the exit code. */
static int command_model(const pm_flags *f, nestcl_pm_profile *p, nestcl_pm_config *c)
{
  int code = load_profile(f, p);
  if (code)
    return code;
  return config_of(f, p, c) ? CLI_USAGE : -1;
}

/* The head of their JSON: what was predicted for. */
static void json_head(json *j, const char *schema, const nestcl_pm_profile *p, const nestcl_pm_config *c, int stdp)
{
  json_key(j, "schema");
  json_string(j, schema);
  json_key(j, "device_name");
  json_string(j, p->device_name);
  json_key(j, "neurons");
  json_number(j, c->N);
  json_key(j, "rate_hz");
  json_number(j, c->F);
  json_key(j, "ranks");
  json_integer(j, (long long)c->M);
  json_key(j, "synapse");
  json_string(j, stdp ? "stdp" : "static");
}

static int cmd_predict(int argc, char **argv)
{
  pm_flags f;
  int code = command_flags(argc, argv,
                           "scale neurons rate threads streams gpu-fraction ranks synapse profile device out launch-us "
                           "wait-us",
                           "usage: nestcl perfmodel predict (--scale S | --neurons N) --threads T --streams G\n"
                           "                                [--gpu-fraction A] [--ranks M] [--synapse stdp|static]\n"
                           "                                [--rate HZ] [--profile FILE | --device SPEC] [--out FILE]\n"
                           "                                [--launch-us U] [--wait-us W]\n"
                           "\n"
                           "The predicted time of one hpc_benchmark configuration per simulated second, phase by\n"
                           "phase, from the profile (default: the cache's profile of the device). Without\n"
                           "--gpu-fraction, the best alpha for that configuration. The rate defaults to the\n"
                           "one the sweep measured at that size. latency_floor: a stream's kernel launches and\n"
                           "waits per super step in this configuration and the real-time factor they impose at\n"
                           "U us per launch (default 5) and W us per wait (default 20), whatever the device.\n",
                           &f);
  if (code >= 0)
    return code;
  if (f.threads < 0 || f.streams < 0 || f.threads + f.streams < 1) {
    fprintf(stderr, "error: predict needs --threads T and --streams G (at least one of them > 0)\n");
    return CLI_USAGE;
  }
  nestcl_pm_profile p;
  nestcl_pm_config c;
  if ((code = command_model(&f, &p, &c)) >= 0)
    return code;
  c.TC = f.threads;
  c.TG = f.streams;
  if (f.alpha >= 0) {
    c.alpha = f.alpha;
  } else {
    c.alpha = nestcl_pm_best_alpha(p.p, &c, NULL);
  }
  if (f.ranks > 1 && !p.fitted[NESTCL_PM_S_MPI]) {
    fprintf(stderr,
            "perfmodel: warning: the profile's sweep had one rank only; the MPI term is not known (taken as 0)\n");
  }
  nestcl_pm_prediction o;
  nestcl_pm_predict(p.p, &c, &o);
  json j;
  json_init(&j);
  json_begin_object(&j);
  json_head(&j, "nestcl-perfmodel-predict/1", &p, &c, f.stdp);
  json_key(&j, "prediction");
  json_prediction(&j, &c, &o);
  double launches, waits;
  nestcl_pm_loop_counts(&c, &launches, &waits);
  json_key(&j, "latency_floor");
  json_begin_object(&j);
  json_key(&j, "super_steps_per_simulated_s");
  json_number(&j, c.S);
  json_key(&j, "launches_per_super_step");
  json_number(&j, launches);
  json_key(&j, "waits_per_super_step");
  json_number(&j, waits);
  json_key(&j, "launch_us");
  json_number(&j, f.launch_us);
  json_key(&j, "wait_us");
  json_number(&j, f.wait_us);
  json_key(&j, "real_time_factor_floor");
  json_number(&j, nestcl_pm_latency_floor(&c, f.launch_us, f.wait_us));
  json_end_object(&j);
  json_end_object(&j);
  code = emit(&j, f.out);
  json_free(&j);
  return code;
}

/*
 * tune --measure K: the model's K best distinct configurations (a side
 * without neurons dropped: alpha 1 runs on streams only, alpha 0 on threads
 * only), each run --repeats times as a child `nestcl run hpc_benchmark`,
 * round by round so that drift of the machine hits all alike; the medians
 * of the measured simulation's wall time per simulated second. Returns how
 * many were measured (into cs[0..k)), or -1 after an error message.
 */
typedef struct tune_run {
  nestcl_pm_config c;
  double predicted;
  double wall[100];
  double median;
} tune_run;

/* The first f->measure distinct configurations of cs (a side without neurons dropped) into tr; their count. */
static int tune_pick(const pm_flags *f, const pm_candidate *cs, int n, tune_run *tr)
{
  int k = 0;
  for (int i = 0; i < n && k < f->measure; ++i) {
    nestcl_pm_config c = cs[i].c;
    if (c.alpha >= 1.0)
      c.TC = 0;
    if (c.alpha <= 0.0)
      c.TG = 0;
    int seen = 0;
    for (int j = 0; j < k; ++j) {
      seen |= tr[j].c.TC == c.TC && tr[j].c.TG == c.TG && fabs(tr[j].c.alpha - c.alpha) < 0.005;
    }
    if (seen)
      continue;
    tr[k].c = c;
    tr[k].predicted = cs[i].wall;
    k++;
  }
  return k;
}

/* Runs configuration t once as a child `nestcl run hpc_benchmark`; its wall time per simulated second, or -1. */
static double tune_run_once(const pm_flags *f, const char *exe, const tune_run *t, const char *res, const char *err)
{
  char a_scale[32], a_sim[32], a_pre[32], a_t[16], a_g[16], a_alpha[32];
  snprintf(a_scale, sizeof a_scale, "%.17g", f->scale);
  snprintf(a_sim, sizeof a_sim, "%.17g", f->simtime);
  snprintf(a_pre, sizeof a_pre, "%.17g", f->presim);
  snprintf(a_t, sizeof a_t, "%d", (int)t->c.TC);
  snprintf(a_g, sizeof a_g, "%d", (int)t->c.TG);
  snprintf(a_alpha, sizeof a_alpha, "%.17g", t->c.alpha);
  char *args[32];
  int m = 0;
  args[m++] = (char *)exe;
  args[m++] = "run";
  args[m++] = "hpc_benchmark";
  args[m++] = "--scale";
  args[m++] = a_scale;
  args[m++] = "--threads";
  args[m++] = a_t;
  args[m++] = "--streams";
  args[m++] = a_g;
  if (t->c.TC > 0 && t->c.TG > 0) {
    args[m++] = "--gpu-fraction";
    args[m++] = a_alpha;
  }
  args[m++] = "--ee-synapse";
  args[m++] = f->stdp ? "stdp_pl_synapse_hom" : "static";
  args[m++] = "--simtime";
  args[m++] = a_sim;
  args[m++] = "--presim";
  args[m++] = a_pre;
  args[m++] = "--record";
  args[m++] = "0";
  args[m++] = "--quiet";
  args[m++] = "--out";
  args[m++] = (char *)res;
  if (f->device) {
    args[m++] = "--device";
    args[m++] = (char *)f->device;
  }
  args[m] = NULL;
  remove(res);
  int rc = pm_run_child(args, err);
  char perr[512];
  pmj *doc = rc == 0 ? pmj_parse_file(res, perr, sizeof perr) : NULL;
  int ok = doc != NULL;
  double w = doc ? pmj_number(doc, "simulation.sim_wall_s", &ok) : NAN;
  pmj_free(doc);
  if (rc == 0 && ok && w > 0.0)
    return w / (f->simtime * 1e-3);
  char msg[1024];
  if (rc < 0)
    snprintf(msg, sizeof msg, "cannot start this executable: %s", strerror(errno));
  else if (rc != 0)
    pm_child_error(err, msg, sizeof msg);
  else
    snprintf(msg, sizeof msg, "no wall time in its results (%s)", doc ? "sim_wall_s" : perr);
  fprintf(stderr, "error: tune: the run with %d thread(s), %d stream(s) failed (exit %d): %s\n", (int)t->c.TC,
          (int)t->c.TG, rc, msg);
  return -1.0;
}

static int tune_measure(const pm_flags *f, const pm_candidate *cs, int n, tune_run *tr)
{
  int k = tune_pick(f, cs, n, tr);
  char exe[4096], dir[4096];
  const char *tmpdir = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/nestcl-tune-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
  if (pm_self_exe(exe, sizeof exe) != 0 || !mkdtemp(dir)) {
    fprintf(stderr, "error: tune: cannot find this executable or make a temporary folder: %s\n", strerror(errno));
    return -1;
  }
  char res[4200], err[4200];
  snprintf(res, sizeof res, "%s/run.json", dir);
  snprintf(err, sizeof err, "%s/run.err", dir);
  int fail = 0;
  for (int r = 0; r < f->repeats && !fail; ++r) {
    for (int i = 0; i < k && !fail; ++i) {
      fprintf(stderr, "nestcl: tune: measuring %d/%d, round %d/%d: %d thread(s), %d stream(s), alpha %.3f\n", i + 1, k,
              r + 1, f->repeats, (int)tr[i].c.TC, (int)tr[i].c.TG, tr[i].c.alpha);
      double w = tune_run_once(f, exe, &tr[i], res, err);
      fail = w < 0.0;
      if (!fail)
        tr[i].wall[r] = w;
    }
  }
  remove(res);
  remove(err);
  rmdir(dir);
  if (fail)
    return -1;
  for (int i = 0; i < k; ++i) {
    double v[100];
    memcpy(v, tr[i].wall, (size_t)f->repeats * sizeof *v);
    qsort(v, (size_t)f->repeats, sizeof *v, pm_cmp_double);
    tr[i].median = f->repeats % 2 ? v[f->repeats / 2] : 0.5 * (v[f->repeats / 2 - 1] + v[f->repeats / 2]);
  }
  return k;
}

/* tune --measure's runs: each configuration's predicted and measured times. */
static void json_tune_measured(json *j, const tune_run *tr, int k, int repeats)
{
  json_key(j, "measured");
  json_begin_array(j);
  for (int i = 0; i < k; ++i) {
    json_begin_object(j);
    json_key(j, "threads");
    json_integer(j, (long long)tr[i].c.TC);
    json_key(j, "streams");
    json_integer(j, (long long)tr[i].c.TG);
    json_key(j, "gpu_fraction");
    json_number(j, tr[i].c.alpha);
    json_key(j, "predicted_wall_s_per_s");
    json_number(j, tr[i].predicted);
    json_key(j, "wall_s_per_s");
    json_begin_array(j);
    for (int r = 0; r < repeats; ++r)
      json_number(j, tr[i].wall[r]);
    json_end_array(j);
    json_key(j, "median_wall_s_per_s");
    json_number(j, tr[i].median);
    json_end_object(j);
  }
  json_end_array(j);
}

static int cmd_tune(int argc, char **argv)
{
  pm_flags f;
  int code =
    command_flags(argc, argv,
                  "scale neurons rate ranks synapse max-threads max-streams top measure repeats "
                  "simtime presim profile device out",
                  "usage: nestcl perfmodel tune (--scale S | --neurons N) [--max-threads T] [--max-streams G]\n"
                  "                             [--ranks M] [--synapse stdp|static] [--rate HZ] [--top K]\n"
                  "                             [--measure K [--repeats R] [--simtime MS] [--presim MS]]\n"
                  "                             [--profile FILE | --device SPEC] [--out FILE]\n"
                  "\n"
                  "The best (threads, streams, alpha) for hpc_benchmark of that size on this host and\n"
                  "device, with the predicted time of the K best (default 5). Threads up to the host's\n"
                  "cores and streams up to 4 unless bounded otherwise. With --measure K (and --scale),\n"
                  "the model's K best distinct configurations are run (--repeats times each, default 3,\n"
                  "alternated; --simtime 200 and --presim 50 ms by default) and the fastest measured\n"
                  "median is recommended.\n",
                  &f);
  if (code >= 0)
    return code;
  if (f.measure > 0 && !(f.scale > 0)) {
    fprintf(stderr, "error: tune --measure runs hpc_benchmark: give its size as --scale S\n");
    return CLI_USAGE;
  }
  if (f.measure > 0 && f.ranks > 1) {
    fprintf(stderr, "error: tune --measure runs one process: --ranks must be 1\n");
    return CLI_USAGE;
  }
  nestcl_pm_profile p;
  nestcl_pm_config c;
  if ((code = command_model(&f, &p, &c)) >= 0)
    return code;
  int mt = f.max_threads >= 0 ? f.max_threads : p.cores, mg = f.max_streams >= 0 ? f.max_streams : 4;
  if (mt + mg < 1) {
    fprintf(stderr, "error: tune: --max-threads and --max-streams leave no configuration\n");
    return CLI_USAGE;
  }
  pm_candidate *cs = malloc((size_t)(mt + 1) * (size_t)(mg + 1) * sizeof *cs);
  tune_run *tr = f.measure > 0 ? calloc((size_t)f.measure, sizeof *tr) : NULL;
  if (!cs || (f.measure > 0 && !tr)) {
    free(cs);
    free(tr);
    fprintf(stderr, "error: out of host memory\n");
    return CLI_RUNTIME;
  }
  int n = pm_candidates(&p, &c, 0, mt, 0, mg, cs);
  int k = f.measure > 0 ? tune_measure(&f, cs, n, tr) : 0;
  if (k < 0) {
    free(cs);
    free(tr);
    return CLI_RUNTIME;
  }
  int best = 0;
  for (int i = 1; i < k; ++i) {
    if (tr[i].median < tr[best].median)
      best = i;
  }
  json j;
  json_init(&j);
  json_begin_object(&j);
  json_head(&j, "nestcl-perfmodel-tune/1", &p, &c, f.stdp);
  json_key(&j, "chosen_by");
  json_string(&j, k > 0 ? "measured" : "model");
  json_key(&j, "best");
  nestcl_pm_prediction o;
  const nestcl_pm_config *bc = k > 0 ? &tr[best].c : &cs[0].c;
  nestcl_pm_predict(p.p, bc, &o);
  json_prediction(&j, bc, &o);
  json_key(&j, "runners_up");
  json_begin_array(&j);
  for (int i = 1; i < n && i < f.top; ++i) {
    nestcl_pm_predict(p.p, &cs[i].c, &o);
    json_prediction(&j, &cs[i].c, &o);
  }
  json_end_array(&j);
  if (k > 0)
    json_tune_measured(&j, tr, k, f.repeats);
  json_end_object(&j);
  if (k > 0) {
    fprintf(stderr,
            "perfmodel: fastest measured of the model's %d best: --threads %d --streams %d --gpu-fraction %.3f "
            "(%.3f s per simulated s; predicted %.3f)\n",
            k, (int)bc->TC, (int)bc->TG, bc->alpha, tr[best].median, tr[best].predicted);
  } else {
    fprintf(stderr,
            "perfmodel: best for %.0f neurons: --threads %d --streams %d --gpu-fraction %.3f (%.3f s per "
            "simulated s)\n",
            c.N, (int)cs[0].c.TC, (int)cs[0].c.TG, cs[0].c.alpha, cs[0].wall);
  }
  code = emit(&j, f.out);
  json_free(&j);
  free(cs);
  free(tr);
  return code;
}

int pm_command(const char *name, int argc, char **argv)
{
  if (strcmp(name, "fit") == 0)
    return cmd_fit(argc, argv);
  if (strcmp(name, "predict") == 0)
    return cmd_predict(argc, argv);
  if (strcmp(name, "tune") == 0)
    return cmd_tune(argc, argv);
  if (strcmp(name, "plot") == 0)
    return pm_plot(argc, argv);
  return -1;
}
