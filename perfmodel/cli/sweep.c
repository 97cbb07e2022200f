/*
 * `nestcl perfmodel sweep`: runs a designed set of short configurations of a
 * benchmark (scale x ranks x synapse mix x (CPU threads, GPU streams, alpha))
 * and writes one JSON line per run with the inputs of the performance model
 * and every measured phase time (docs/perfmodel.md). Each run is a child
 * `nestcl run` process (under mpiexec for more than one rank), so that every
 * configuration starts from a fresh process as a user's run would. The order
 * is shuffled with a fixed seed, so that drift of the machine does not line up
 * with one factor and a run cut short by the time budget still covers the
 * design evenly. The lines go to a temporary file that is renamed when the
 * sweep ends; a failed run ends the sweep with its error and leaves no file.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"
#include "run_common.h"
#include "nestcl/device.h"
#include "nestcl/pm_json.h"
#include "nestcl/pm_model.h"
#include "pm_sweep.h"

extern char **environ;

#define MAX_LIST 32

typedef struct sweep_cfg {
  double scale;
  int ranks, threads, streams;
  double alpha; /* < 0: the single-kind configurations */
  int stdp;
} sweep_cfg;


/* Parses "a,b,c" into at most MAX_LIST numbers within [lo, hi]. */
int pm_parse_list(const char *flag, const char *v, double lo, double hi, double *out, int *n)
{
  *n = 0;
  if (!v || !*v) {
    fprintf(stderr, "error: %s needs a comma-separated list of numbers\n", flag);
    return -1;
  }
  const char *s = v;
  while (*s) {
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (end == s || errno || !isfinite(d) || (*end && *end != ',')) {
      fprintf(stderr, "error: %s: '%s' is not a comma-separated list of numbers\n", flag, v);
      return -1;
    }
    if (d < lo || d > hi) {
      fprintf(stderr, "error: %s: %g outside [%g, %g]\n", flag, d, lo, hi);
      return -1;
    }
    if (*n == MAX_LIST) {
      fprintf(stderr, "error: %s: more than %d values\n", flag, MAX_LIST);
      return -1;
    }
    out[(*n)++] = d;
    s = *end ? end + 1 : end;
    if (*end && !*s) {
      fprintf(stderr, "error: %s: '%s' ends with a comma\n", flag, v);
      return -1;
    }
  }
  return 0;
}

static int is_int_list(const char *flag, const double *v, int n)
{
  for (int i = 0; i < n; ++i) {
    if (v[i] != floor(v[i])) {
      fprintf(stderr, "error: %s: %g is not a whole number\n", flag, v[i]);
      return 0;
    }
  }
  return 1;
}

/* The path of this executable, for the child runs. */
int pm_self_exe(char *buf, size_t cap)
{
  ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
  if (n <= 0) {
    return -1;
  }
  buf[n] = 0;
  return 0;
}

/*
 * Runs argv as a child with stdout to /dev/null and stderr to err_path;
 * returns its exit status (or -1 when it could not be started).
 */
int pm_run_child(char *const *argv, const char *err_path)
{
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    errno = rc;
    return -1;
  }
  int status, forwarded = 0;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      break;
    }
    if (w < 0 && errno != EINTR) {
      return -1;
    }
    /* SIGINT or SIGTERM to this process (cli_stop_on_signals): the child stops too, at its next super step. */
    if (cli_signal && !forwarded) {
      kill(pid, (int)cli_signal);
      forwarded = 1;
    }
    struct timespec ts = {0, 20000000L};
    nanosleep(&ts, NULL);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* The last "error:" line of a child's stderr (or its last line). */
void pm_child_error(const char *err_path, char *out, size_t cap)
{
  snprintf(out, cap, "(no message)");
  FILE *f = fopen(err_path, "r");
  if (!f) {
    return;
  }
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
      line[--n] = 0;
    if (n) {
      snprintf(out, cap, "%s", line);
    }
  }
  fclose(f);
}

/* What a sweep line takes from one run's results: the network, the times, the VPs' mean phases. */
typedef struct sweep_run {
  double simtime, wall, NE, NI, CE, CI, rate, syn, psyn, dt, min_delay;
  size_t n_vps;
  double cu, cd, gu, gd, ser, wait, n_gpu, n_all; /* sums over the VPs */
  int nc, ng; /* CPU and GPU VPs with neurons */
} sweep_run;

/* The per-VP phases summed by kind (stream or thread); 0, or -1 when a VP lacks one. */
static int sweep_vp_sums(const pmj *vps, sweep_run *s)
{
  int ok = 1;
  for (size_t v = 0; v < vps->n; ++v) {
    const pmj *x = &vps->items[v];
    int is_gpu = pmj_string(x, "kind") && strcmp(pmj_string(x, "kind"), "stream") == 0;
    double n = pmj_number(x, "neurons", &ok);
    double upd = pmj_number(x, "phases_s.update", &ok) + pmj_number(x, "phases_s.poisson", &ok);
    double del = pmj_number(x, "phases_s.deliver", &ok);
    s->ser += pmj_number(x, "phases_s.exchange", &ok);
    s->wait += pmj_number(x, "phases_s.other_wait", &ok);
    s->n_all += n;
    if (is_gpu) {
      s->n_gpu += n;
      if (n > 0) {
        s->gu += upd;
        s->gd += del;
        s->ng++;
      }
    } else if (n > 0) {
      s->cu += upd;
      s->cd += del;
      s->nc++;
    }
  }
  s->n_vps = vps->n;
  return ok && s->n_all > 0 ? 0 : -1;
}

/* One run's results read into s; -1 with a message when a field the model needs is missing. */
static int sweep_read_run(const pmj *r, sweep_run *s)
{
  int ok = 1;
  memset(s, 0, sizeof *s);
  s->simtime = pmj_number(r, "config.simtime_ms", &ok);
  s->wall = pmj_number(r, "simulation.sim_wall_s", &ok);
  s->NE = pmj_number(r, "network.NE", &ok), s->NI = pmj_number(r, "network.NI", &ok);
  s->CE = pmj_number(r, "network.CE", &ok), s->CI = pmj_number(r, "network.CI", &ok);
  s->rate = pmj_number(r, "activity.network_rate_hz", &ok);
  s->syn = pmj_number(r, "network.synapses", &ok);
  s->psyn = pmj_number(r, "network.plastic_synapses", &ok);
  s->dt = pmj_number(r, "config.resolution_ms", &ok);
  s->min_delay = pmj_number(r, "network.min_delay_steps", &ok);
  const pmj *vps = pmj_path(r, "simulation.vps");
  if (!ok || !vps || vps->type != PMJ_ARRAY || !(s->simtime > 0.0)) {
    fprintf(stderr, "error: sweep: the results of a run lack the fields the model needs\n");
    return -1;
  }
  if (sweep_vp_sums(vps, s) != 0) {
    fprintf(stderr, "error: sweep: the per-VP phases of a run are incomplete\n");
    return -1;
  }
  return 0;
}

/* A mean per VP and simulated second, or null without such VPs. */
static void json_mean_or_null(json *j, const char *key, double sum, int n, double sim_s)
{
  json_key(j, key);
  if (n)
    json_number(j, sum / n / sim_s);
  else
    json_null(j);
}

/* The line's "inputs": the model's variables for this run. */
static void sweep_write_inputs(json *j, const sweep_run *s, const sweep_cfg *c)
{
  json_key(j, "inputs");
  json_begin_object(j);
  json_key(j, "N");
  json_number(j, s->NE + s->NI);
  json_key(j, "K");
  json_number(j, s->CE + s->CI);
  json_key(j, "F");
  json_number(j, s->rate);
  json_key(j, "M");
  json_integer(j, c->ranks);
  json_key(j, "TC");
  json_integer(j, c->threads);
  json_key(j, "TG");
  json_integer(j, c->streams);
  /* The share of the rank's neurons that the streams hold, as built (rank 0's VPs). */
  json_key(j, "alpha");
  json_number(j, s->n_gpu / s->n_all);
  json_key(j, "phi");
  json_number(j, s->syn > 0 ? s->psyn / s->syn : 0.0);
  json_key(j, "steps_per_s");
  json_number(j, 1000.0 / s->dt);
  json_key(j, "super_steps_per_s");
  json_number(j, 1000.0 / (s->dt * s->min_delay));
  json_end_object(j);
}

/* The line's "measured": times per simulated second. */
static void sweep_write_measured(json *j, const sweep_run *s, const pmj *r)
{
  int ok = 1;
  double sim_s = s->simtime * 1e-3;
  json_key(j, "measured");
  json_begin_object(j);
  json_key(j, "simtime_ms");
  json_number(j, s->simtime);
  json_key(j, "wall_s");
  json_number(j, s->wall);
  json_key(j, "t");
  json_number(j, s->wall / sim_s);
  json_mean_or_null(j, "cpu_update", s->cu, s->nc, sim_s);
  json_mean_or_null(j, "cpu_deliver", s->cd, s->nc, sim_s);
  json_mean_or_null(j, "gpu_update", s->gu, s->ng, sim_s);
  json_mean_or_null(j, "gpu_deliver", s->gd, s->ng, sim_s);
  json_key(j, "exchange");
  json_number(j, s->ser / (double)s->n_vps / sim_s);
  json_key(j, "wait");
  json_number(j, s->wait / (double)s->n_vps / sim_s);
  json_key(j, "build_s");
  json_number(j, pmj_number(r, "build_time_s.total", &ok));
  json_end_object(j);
}

/*
 * The line of one run: the model's inputs and the measured times, per
 * simulated second (docs/perfmodel.md, "Commands").
 */
static int sweep_line(json *j, const pmj *r, const sweep_cfg *c, const char *benchmark, int repeat,
                      const nestcl_device_info *dev)
{
  sweep_run s;
  if (sweep_read_run(r, &s) != 0)
    return -1;
  json_begin_object(j);
  json_key(j, "schema");
  json_string(j, "nestcl-sweep/1");
  json_key(j, "benchmark");
  json_string(j, benchmark);
  /* The device of the streams, also on CPU-only lines: a profile describes one machine with one device. */
  json_key(j, "device_name");
  json_string(j, dev->device_name);
  json_key(j, "device_driver");
  json_string(j, dev->driver_version);
  json_key(j, "cores");
  json_integer(j, sysconf(_SC_NPROCESSORS_ONLN));
  char host[512];
  nestcl_pm_host(host, sizeof host);
  json_key(j, "host");
  json_string(j, host);
  json_key(j, "repeat");
  json_integer(j, repeat);
  json_key(j, "scale");
  json_number(j, c->scale);
  json_key(j, "synapse");
  json_string(j, c->stdp ? "stdp" : "static");
  json_key(j, "alpha_set");
  if (c->alpha >= 0)
    json_number(j, c->alpha);
  else
    json_null(j);
  sweep_write_inputs(j, &s, c);
  sweep_write_measured(j, &s, r);
  json_end_object(j);
  return 0;
}

void pm_sweep_help(void)
{
  printf("usage: nestcl perfmodel sweep --out FILE [flags]\n"
         "\n"
         "Runs a designed set of short hpc_benchmark configurations and writes one JSON\n"
         "line per run (the model's inputs and every phase time) to FILE.\n"
         "\n"
         "  --out FILE          the JSON lines (written when the sweep ends)\n"
         "  --scales LIST       network scales (default 0.05,0.1,0.2,0.3,0.5)\n"
         "  --threads LIST      CPU thread counts (default 1,2)\n"
         "  --streams LIST      GPU stream counts (default 1,2,3)\n"
         "  --alphas LIST       GPU shares of the co-execution runs, each in (0, 1)\n"
         "                      (default 0.1,0.3,0.5,0.7,0.9); CPU-only and GPU-only runs\n"
         "                      (alpha 0 and 1) are always part of the design\n"
         "  --ranks LIST        MPI ranks (default 1; more than 1 runs under --mpiexec)\n"
         "  --synapses LIST     E->E synapse mixes: stdp, static (default stdp,static);\n"
         "                      each with its CPU-only, GPU-only and co-execution runs\n"
         "  --simtime MS        measured time per run (default 100)\n"
         "  --presim MS         presimulation per run (default 20)\n"
         "  --repeats N         runs per configuration (default 1)\n"
         "  --budget S          stop starting runs after S seconds (default 3600)\n"
         "  --device SPEC       OpenCL device of the streams (as `nestcl run`)\n"
         "  --mpiexec CMD       launcher for more than one rank (default mpiexec)\n"
         "  --order-seed N      seed of the run order's shuffle (default 1)\n"
         "  --dry-run           print the design (one line per run) and exit\n"
         "  --quiet             no progress line\n");
}

/* The sweep's flags. */
typedef struct sweep_opts {
  double scales[MAX_LIST], threads[MAX_LIST], streams[MAX_LIST], alphas[MAX_LIST], ranks[MAX_LIST];
  int n_scales, n_threads, n_streams, n_alphas, n_ranks;
  int syn[2], n_syn;
  double simtime, presim, budget;
  long repeats, order_seed;
  const char *out, *device, *mpiexec;
  int quiet, dry;
} sweep_opts;

static void sweep_defaults(sweep_opts *o)
{
  static const sweep_opts d = {{0.05, 0.1, 0.2, 0.3, 0.5},
                               {1, 2},
                               {1, 2, 3},
                               {0.1, 0.3, 0.5, 0.7, 0.9},
                               {1},
                               5,
                               2,
                               3,
                               5,
                               1,
                               {1, 0},
                               2,
                               100.0,
                               20.0,
                               3600.0,
                               1,
                               1,
                               NULL,
                               NULL,
                               "mpiexec",
                               0,
                               0};
  *o = d;
}

/* --synapses stdp,static; -1 after an error line. */
static int parse_synapses(sweep_opts *o, const char *v)
{
  o->n_syn = 0;
  const char *s = v ? v : "";
  while (*s) {
    size_t n = strcspn(s, ",");
    if (n == 4 && strncmp(s, "stdp", 4) == 0 && o->n_syn < 2)
      o->syn[o->n_syn++] = 1;
    else if (n == 6 && strncmp(s, "static", 6) == 0 && o->n_syn < 2)
      o->syn[o->n_syn++] = 0;
    else {
      fprintf(stderr, "error: --synapses: '%.*s' is not stdp or static (at most both, once each)\n", (int)n, s);
      return -1;
    }
    s += n + (s[n] == ',');
  }
  if (o->n_syn == 0 || (o->n_syn == 2 && o->syn[0] == o->syn[1])) {
    fprintf(stderr, "error: --synapses needs stdp, static or both\n");
    return -1;
  }
  return 0;
}

/* --simtime, --presim, --budget (seconds or ms, positive; --presim may be 0); -1 after an error line. */
static int parse_time(sweep_opts *o, const char *a, const char *v)
{
  char *end;
  double d = v ? strtod(v, &end) : NAN;
  if (!v || end == v || *end || !isfinite(d) || d < 0 || (d == 0 && strcmp(a, "--presim") != 0)) {
    fprintf(stderr, "error: %s needs a positive number (got '%s')\n", a, v ? v : "");
    return -1;
  }
  *(strcmp(a, "--simtime") == 0 ? &o->simtime : strcmp(a, "--presim") == 0 ? &o->presim : &o->budget) = d;
  return 0;
}

/* --repeats (at least 1), --order-seed; -1 after an error line. */
static int parse_count(sweep_opts *o, const char *a, const char *v)
{
  char *end;
  long l = v ? strtol(v, &end, 10) : -1;
  if (!v || end == v || *end || l < (strcmp(a, "--repeats") == 0 ? 1 : 0) || l > 1000000) {
    fprintf(stderr, "error: %s needs a whole number (got '%s')\n", a, v ? v : "");
    return -1;
  }
  *(strcmp(a, "--repeats") == 0 ? &o->repeats : &o->order_seed) = l;
  return 0;
}

/* One flag a with its value v (the next argument, NULL when none); sets *takes when a took v. -1: error, 1: help. */
static int sweep_flag(sweep_opts *o, const char *a, const char *v, int *takes)
{
  *takes = 1;
  if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
    pm_sweep_help();
    return 1;
  } else if (strcmp(a, "--out") == 0) {
    o->out = v;
  } else if (strcmp(a, "--scales") == 0) {
    return pm_parse_list(a, v, 1e-3, 1000.0, o->scales, &o->n_scales);
  } else if (strcmp(a, "--threads") == 0) {
    if (pm_parse_list(a, v, 0, 256, o->threads, &o->n_threads) || !is_int_list(a, o->threads, o->n_threads))
      return -1;
  } else if (strcmp(a, "--streams") == 0) {
    if (pm_parse_list(a, v, 0, 64, o->streams, &o->n_streams) || !is_int_list(a, o->streams, o->n_streams))
      return -1;
  } else if (strcmp(a, "--alphas") == 0) {
    return pm_parse_list(a, v, 0.0, 1.0, o->alphas, &o->n_alphas);
  } else if (strcmp(a, "--ranks") == 0) {
    if (pm_parse_list(a, v, 1, 1024, o->ranks, &o->n_ranks) || !is_int_list(a, o->ranks, o->n_ranks))
      return -1;
  } else if (strcmp(a, "--synapses") == 0) {
    return parse_synapses(o, v);
  } else if (strcmp(a, "--simtime") == 0 || strcmp(a, "--presim") == 0 || strcmp(a, "--budget") == 0) {
    return parse_time(o, a, v);
  } else if (strcmp(a, "--repeats") == 0 || strcmp(a, "--order-seed") == 0) {
    return parse_count(o, a, v);
  } else if (strcmp(a, "--device") == 0) {
    o->device = v;
  } else if (strcmp(a, "--mpiexec") == 0) {
    o->mpiexec = v;
  } else if (strcmp(a, "--quiet") == 0) {
    o->quiet = 1;
    *takes = 0;
  } else if (strcmp(a, "--dry-run") == 0) {
    o->dry = 1;
    *takes = 0;
  } else {
    fprintf(stderr, "error: unknown flag '%s' (try nestcl perfmodel sweep --help)\n", a);
    return -1;
  }
  return 0;
}

/* -1 after an error line, 1 after --help, 0 to go on. */
static int sweep_parse(int argc, char **argv, sweep_opts *o)
{
  sweep_defaults(o);
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int takes;
    int r = sweep_flag(o, a, v, &takes);
    if (r)
      return r;
    if (takes) {
      if (!v) {
        fprintf(stderr, "error: %s needs a value\n", a);
        return -1;
      }
      ++i;
    }
  }
  if (!o->out && !o->dry) {
    fprintf(stderr, "error: sweep: --out FILE is required\n");
    return -1;
  }
  return 0;
}

/* The configurations of one (scale, ranks, synapse mix) and repeat r: CPU-only, GPU-only, co-execution. */
static size_t design_cell(const sweep_opts *o, sweep_cfg c, int r, sweep_cfg *cfgs, int *rep, size_t n)
{
  for (int t = 0; t < o->n_threads; ++t) {
    if (o->threads[t] < 1)
      continue;
    c.threads = (int)o->threads[t];
    c.streams = 0;
    rep[n] = r;
    cfgs[n++] = c;
  }
  for (int g = 0; g < o->n_streams; ++g) {
    if (o->streams[g] < 1)
      continue;
    c.threads = 0;
    c.streams = (int)o->streams[g];
    rep[n] = r;
    cfgs[n++] = c;
  }
  for (int t = 0; t < o->n_threads; ++t)
    for (int g = 0; g < o->n_streams; ++g)
      for (int a = 0; a < o->n_alphas; ++a) {
        if (o->threads[t] < 1 || o->streams[g] < 1 || o->alphas[a] <= 0.0 || o->alphas[a] >= 1.0)
          continue;
        c.threads = (int)o->threads[t];
        c.streams = (int)o->streams[g];
        c.alpha = o->alphas[a];
        rep[n] = r;
        cfgs[n++] = c;
      }
  return n;
}

/* Fisher-Yates with a small LCG: the order is part of the design, fixed by the seed. */
static void shuffle(sweep_cfg *cfgs, int *rep, size_t n, long order_seed)
{
  unsigned long long st = 0x9E3779B97F4A7C15ull ^ (unsigned long long)order_seed;
  for (size_t i = n - 1; i > 0; --i) {
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    size_t k = (size_t)((st >> 33) % (i + 1));
    sweep_cfg t = cfgs[i];
    cfgs[i] = cfgs[k];
    cfgs[k] = t;
    int tr = rep[i];
    rep[i] = rep[k];
    rep[k] = tr;
  }
}

/* The design, shuffled: *cfgs and *rep (malloc'd) with *n runs; an exit code (after an error line). */
static int sweep_design(const sweep_opts *o, sweep_cfg **cfgs_out, int **rep_out, size_t *n_out)
{
  size_t cap = (size_t)o->n_scales * (size_t)o->n_ranks * (size_t)o->n_syn *
    (size_t)(o->n_threads + o->n_streams + o->n_threads * o->n_streams * o->n_alphas) * (size_t)o->repeats;
  sweep_cfg *cfgs = malloc((cap ? cap : 1) * sizeof *cfgs);
  int *rep = malloc((cap ? cap : 1) * sizeof *rep);
  if (!cfgs || !rep) {
    free(cfgs);
    free(rep);
    fprintf(stderr, "error: out of host memory\n");
    return CLI_RUNTIME;
  }
  size_t n = 0;
  for (long r = 0; r < o->repeats; ++r)
    for (int s = 0; s < o->n_scales; ++s)
      for (int m = 0; m < o->n_ranks; ++m)
        for (int y = 0; y < o->n_syn; ++y) {
          sweep_cfg c = {o->scales[s], (int)o->ranks[m], 0, 0, -1.0, o->syn[y]};
          n = design_cell(o, c, (int)r, cfgs, rep, n);
        }
  if (n == 0) {
    free(cfgs);
    free(rep);
    fprintf(
      stderr,
      "error: sweep: the design has no configurations (every thread and stream count is 0, or no alpha lies in (0, 1))\n");
    return CLI_USAGE;
  }
  shuffle(cfgs, rep, n, o->order_seed);
  *cfgs_out = cfgs;
  *rep_out = rep;
  *n_out = n;
  return CLI_OK;
}

/* A sweep under way: its design, the device, the scratch files, the lines written. */
typedef struct sweep_state {
  const sweep_opts *o;
  const sweep_cfg *cfgs;
  const int *rep;
  size_t n, done;
  nestcl_device_info dev;
  char exe[4096], dir[4096], res_path[4200], err_path[4200], tmp_out[4200];
  FILE *fo;
  double t0;
  int tty;
} sweep_state;

/* The device, this executable, the scratch folder and the temporary output; an exit code (after an error line). */
static int sweep_open(sweep_state *s)
{
  const sweep_opts *o = s->o;
  if (nestcl_select_device(o->device, &s->dev) != 0) {
    fprintf(stderr, "error: sweep: %s\n", nestcl_last_error());
    return CLI_USAGE;
  }
  const char *tmpdir = getenv("TMPDIR");
  snprintf(s->dir, sizeof s->dir, "%s/nestcl-sweep-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
  if (pm_self_exe(s->exe, sizeof s->exe) != 0 || !mkdtemp(s->dir)) {
    fprintf(stderr, "error: sweep: cannot find this executable or make a temporary folder: %s\n", strerror(errno));
    return CLI_RUNTIME;
  }
  snprintf(s->res_path, sizeof s->res_path, "%s/run.json", s->dir);
  snprintf(s->err_path, sizeof s->err_path, "%s/run.err", s->dir);
  snprintf(s->tmp_out, sizeof s->tmp_out, "%s.tmp.%ld", o->out, (long)getpid());
  s->fo = fopen(s->tmp_out, "w");
  if (!s->fo) {
    fprintf(stderr, "error: cannot write %s: %s\n", s->tmp_out, strerror(errno));
    rmdir(s->dir);
    return CLI_RUNTIME;
  }
  return CLI_OK;
}

/* The values of one run's flags, as text. */
typedef struct child_text {
  char scale[32], sim[32], pre[32], t[16], g[16], alpha[32], m[16];
} child_text;

/* The command line of run c (under the launcher for more than one rank) into args; returns its length. */
static int child_args(const sweep_state *s, const sweep_cfg *c, child_text *x, char **args)
{
  const sweep_opts *o = s->o;
  snprintf(x->scale, sizeof x->scale, "%.17g", c->scale);
  snprintf(x->sim, sizeof x->sim, "%.17g", o->simtime);
  snprintf(x->pre, sizeof x->pre, "%.17g", o->presim);
  snprintf(x->t, sizeof x->t, "%d", c->threads);
  snprintf(x->g, sizeof x->g, "%d", c->streams);
  snprintf(x->alpha, sizeof x->alpha, "%.17g", c->alpha < 0 ? (c->threads ? 0.0 : 1.0) : c->alpha);
  snprintf(x->m, sizeof x->m, "%d", c->ranks);
  int k = 0;
  if (c->ranks > 1) {
    args[k++] = (char *)o->mpiexec;
    args[k++] = "-n";
    args[k++] = x->m;
    args[k++] = "--oversubscribe";
    args[k++] = "--bind-to";
    args[k++] = "none";
    if (geteuid() == 0)
      args[k++] = "--allow-run-as-root";
  }
  args[k++] = (char *)s->exe;
  args[k++] = "run";
  args[k++] = "hpc_benchmark";
  args[k++] = "--scale";
  args[k++] = x->scale;
  args[k++] = "--simtime";
  args[k++] = x->sim;
  args[k++] = "--presim";
  args[k++] = x->pre;
  args[k++] = "--threads";
  args[k++] = x->t;
  args[k++] = "--streams";
  args[k++] = x->g;
  args[k++] = "--gpu-fraction";
  args[k++] = x->alpha;
  args[k++] = "--ee-synapse";
  args[k++] = c->stdp ? "stdp_pl_synapse_hom" : "static";
  args[k++] = "--record";
  args[k++] = "0";
  args[k++] = "--quiet";
  args[k++] = "--out";
  args[k++] = (char *)s->res_path;
  if (o->device) {
    args[k++] = "--device";
    args[k++] = (char *)o->device;
  }
  if (c->ranks > 1)
    args[k++] = "--mpi";
  args[k] = NULL;
  return k;
}

/* Run i, its line appended to the output; CLI_OK, or CLI_RUNTIME after an error line; -1: stopped by a signal. */
static int sweep_run_one(sweep_state *s, size_t i, double el)
{
  const sweep_opts *o = s->o;
  const sweep_cfg *c = &s->cfgs[i];
  child_text x;
  char *args[40];
  child_args(s, c, &x, args);
  if (!o->quiet) {
    fprintf(stderr,
            "%snestcl: sweep %zu/%zu (%.0f s): scale %g, %d rank(s), %s, %d thread(s), %d stream(s), alpha %g%s",
            s->tty ? "\r\033[K" : "", i + 1, s->n, el, c->scale, c->ranks, c->stdp ? "stdp" : "static", c->threads,
            c->streams, c->alpha < 0 ? (c->threads ? 0.0 : 1.0) : c->alpha, s->tty ? "" : "\n");
  }
  remove(s->res_path);
  int rc = pm_run_child(args, s->err_path);
  if (cli_signal)
    return -1;
  if (rc != 0) {
    char msg[1024];
    if (rc < 0) {
      snprintf(msg, sizeof msg, "cannot start '%s': %s (--mpiexec takes the launcher's path alone)", args[0],
               strerror(errno));
    } else {
      pm_child_error(s->err_path, msg, sizeof msg);
    }
    fprintf(stderr, "%serror: sweep: run %zu (scale %g, %d thread(s), %d stream(s)) failed (exit %d): %s\n",
            s->tty && !o->quiet ? "\n" : "", i + 1, c->scale, c->threads, c->streams, rc, msg);
    return CLI_RUNTIME;
  }
  char perr[512];
  pmj *r = pmj_parse_file(s->res_path, perr, sizeof perr);
  if (!r) {
    fprintf(stderr, "error: sweep: %s\n", perr);
    return CLI_RUNTIME;
  }
  json j;
  json_init(&j);
  j.compact = 1;
  int lr = sweep_line(&j, r, c, "hpc_benchmark", s->rep[i], &s->dev);
  pmj_free(r);
  int code = CLI_OK;
  if (lr || j.failed || fwrite(j.buf, 1, j.len, s->fo) != j.len || fputc('\n', s->fo) == EOF || fflush(s->fo) != 0) {
    if (!lr)
      fprintf(stderr, "error: cannot write %s: %s\n", s->tmp_out, strerror(errno));
    code = CLI_RUNTIME;
  }
  json_free(&j);
  return code;
}

/* The runs in order, until the budget, a failure or a signal; an exit code. */
static int sweep_runs(sweep_state *s)
{
  const sweep_opts *o = s->o;
  for (size_t i = 0; i < s->n; ++i) {
    if (cli_signal)
      break;
    double el = cli_now() - s->t0;
    if (el >= o->budget) {
      if (!o->quiet) {
        fprintf(stderr, "%snestcl: sweep: time budget of %g s reached after %zu of %zu runs\n", s->tty ? "\n" : "",
                o->budget, s->done, s->n);
      }
      break;
    }
    int code = sweep_run_one(s, i, el);
    if (code < 0)
      break;
    if (code != CLI_OK)
      return code;
    s->done++;
  }
  return CLI_OK;
}

/* Removes the scratch files and puts the output in place (none after a failure or a signal); an exit code. */
static int sweep_close(sweep_state *s, int code)
{
  const sweep_opts *o = s->o;
  if (!o->quiet && s->tty && code == CLI_OK)
    fputc('\n', stderr);
  remove(s->res_path);
  remove(s->err_path);
  rmdir(s->dir);
  if (fclose(s->fo) != 0 && code == CLI_OK) {
    fprintf(stderr, "error: cannot write %s: %s\n", s->tmp_out, strerror(errno));
    code = CLI_RUNTIME;
  }
  if (code == CLI_OK && cli_signal) {
    fprintf(stderr, "%serror: sweep: stopped by %s after %zu of %zu runs; no output written\n",
            s->tty && !o->quiet ? "\n" : "", cli_signal == SIGTERM ? "SIGTERM" : "SIGINT", s->done, s->n);
    code = CLI_SIGNAL_BASE + (int)cli_signal;
  }
  if (code == CLI_OK && s->done == 0) {
    fprintf(stderr, "error: sweep: no run finished within the time budget of %g s\n", o->budget);
    code = CLI_RUNTIME;
  }
  if (code == CLI_OK && rename(s->tmp_out, o->out) != 0) {
    fprintf(stderr, "error: cannot write %s: %s\n", o->out, strerror(errno));
    code = CLI_RUNTIME;
  }
  if (code != CLI_OK) {
    remove(s->tmp_out);
  } else if (!o->quiet) {
    fprintf(stderr, "nestcl: sweep: %zu runs in %.0f s -> %s\n", s->done, cli_now() - s->t0, o->out);
  }
  return code;
}

int pm_sweep(int argc, char **argv)
{
  sweep_opts o;
  int pr = sweep_parse(argc, argv, &o);
  if (pr)
    return pr > 0 ? CLI_OK : CLI_USAGE;
  sweep_cfg *cfgs;
  int *rep;
  size_t n;
  int code = sweep_design(&o, &cfgs, &rep, &n);
  if (code != CLI_OK)
    return code;
  if (o.dry) {
    for (size_t i = 0; i < n; ++i) {
      printf("scale %g ranks %d %s threads %d streams %d alpha %g\n", cfgs[i].scale, cfgs[i].ranks,
             cfgs[i].stdp ? "stdp" : "static", cfgs[i].threads, cfgs[i].streams,
             cfgs[i].alpha >= 0  ? cfgs[i].alpha
               : cfgs[i].threads ? 0.0
                                 : 1.0);
    }
  } else {
    sweep_state s;
    memset(&s, 0, sizeof s);
    s.o = &o;
    s.cfgs = cfgs;
    s.rep = rep;
    s.n = n;
    code = sweep_open(&s);
    if (code == CLI_OK) {
      s.t0 = cli_now();
      s.tty = isatty(2);
      cli_stop_on_signals(NULL);
      code = sweep_close(&s, sweep_runs(&s));
    }
  }
  free(cfgs);
  free(rep);
  return code;
}
