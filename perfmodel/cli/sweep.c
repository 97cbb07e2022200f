/*
 * `nestcl perfmodel sweep`: runs a designed set of short configurations of a
 * benchmark (scale x ranks x synapse mix x (CPU threads, GPU streams, alpha))
 * and writes one JSON line per run with the inputs of the performance model
 * and every measured phase time (perfmodel/README.md). Each run is a child
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
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
    if (n) {
      snprintf(out, cap, "%s", line);
    }
  }
  fclose(f);
}

/*
 * The line of one run: the model's inputs and the measured times, per
 * simulated second (perfmodel/README.md, "sweep lines").
 */
static int sweep_line(json *j, const pmj *r, const sweep_cfg *c, const char *benchmark, int repeat,
                      const nestcl_device_info *dev)
{
  int ok = 1;
  double simtime = pmj_number(r, "config.simtime_ms", &ok);
  double wall = pmj_number(r, "simulation.sim_wall_s", &ok);
  double NE = pmj_number(r, "network.NE", &ok), NI = pmj_number(r, "network.NI", &ok);
  double CE = pmj_number(r, "network.CE", &ok), CI = pmj_number(r, "network.CI", &ok);
  double rate = pmj_number(r, "activity.network_rate_hz", &ok);
  double syn = pmj_number(r, "network.synapses", &ok);
  double psyn = pmj_number(r, "network.plastic_synapses", &ok);
  double dt = pmj_number(r, "config.resolution_ms", &ok);
  double min_delay = pmj_number(r, "network.min_delay_steps", &ok);
  const pmj *vps = pmj_path(r, "simulation.vps");
  if (!ok || !vps || vps->type != PMJ_ARRAY || !(simtime > 0.0)) {
    fprintf(stderr, "error: sweep: the results of a run lack the fields the model needs\n");
    return -1;
  }
  double sim_s = simtime * 1e-3;
  /* Means over the VPs of each kind, per simulated second. */
  double cu = 0, cd = 0, gu = 0, gd = 0, ser = 0, wait = 0, n_gpu = 0, n_all = 0;
  int nc = 0, ng = 0;
  for (size_t v = 0; v < vps->n; ++v) {
    const pmj *x = &vps->items[v];
    int is_gpu = pmj_string(x, "kind") && strcmp(pmj_string(x, "kind"), "stream") == 0;
    double n = pmj_number(x, "neurons", &ok);
    double upd = pmj_number(x, "phases_s.update", &ok) + pmj_number(x, "phases_s.poisson", &ok);
    double del = pmj_number(x, "phases_s.deliver", &ok);
    ser += pmj_number(x, "phases_s.exchange", &ok);
    wait += pmj_number(x, "phases_s.other_wait", &ok);
    n_all += n;
    if (is_gpu) {
      n_gpu += n;
      if (n > 0) { gu += upd; gd += del; ng++; }
    } else if (n > 0) {
      cu += upd; cd += del; nc++;
    }
  }
  if (!ok || !(n_all > 0)) {
    fprintf(stderr, "error: sweep: the per-VP phases of a run are incomplete\n");
    return -1;
  }
  json_begin_object(j);
  json_key(j, "schema"); json_string(j, "nestcl-sweep/1");
  json_key(j, "benchmark"); json_string(j, benchmark);
  /* The device of the streams, also on CPU-only lines: a profile describes one machine with one device. */
  json_key(j, "device_name"); json_string(j, dev->device_name);
  json_key(j, "device_driver"); json_string(j, dev->driver_version);
  json_key(j, "cores"); json_integer(j, sysconf(_SC_NPROCESSORS_ONLN));
  json_key(j, "repeat"); json_integer(j, repeat);
  json_key(j, "scale"); json_number(j, c->scale);
  json_key(j, "synapse"); json_string(j, c->stdp ? "stdp" : "static");
  json_key(j, "alpha_set"); if (c->alpha >= 0) json_number(j, c->alpha); else json_null(j);
  json_key(j, "inputs");
  json_begin_object(j);
  json_key(j, "N"); json_number(j, NE + NI);
  json_key(j, "K"); json_number(j, CE + CI);
  json_key(j, "F"); json_number(j, rate);
  json_key(j, "M"); json_integer(j, c->ranks);
  json_key(j, "TC"); json_integer(j, c->threads);
  json_key(j, "TG"); json_integer(j, c->streams);
  /* The share of the rank's neurons that the streams hold, as built (rank 0's VPs). */
  json_key(j, "alpha"); json_number(j, n_gpu / n_all);
  json_key(j, "phi"); json_number(j, syn > 0 ? psyn / syn : 0.0);
  json_key(j, "steps_per_s"); json_number(j, 1000.0 / dt);
  json_key(j, "super_steps_per_s"); json_number(j, 1000.0 / (dt * min_delay));
  json_end_object(j);
  json_key(j, "measured");
  json_begin_object(j);
  json_key(j, "simtime_ms"); json_number(j, simtime);
  json_key(j, "wall_s"); json_number(j, wall);
  json_key(j, "t"); json_number(j, wall / sim_s);
  json_key(j, "cpu_update"); if (nc) json_number(j, cu / nc / sim_s); else json_null(j);
  json_key(j, "cpu_deliver"); if (nc) json_number(j, cd / nc / sim_s); else json_null(j);
  json_key(j, "gpu_update"); if (ng) json_number(j, gu / ng / sim_s); else json_null(j);
  json_key(j, "gpu_deliver"); if (ng) json_number(j, gd / ng / sim_s); else json_null(j);
  json_key(j, "exchange"); json_number(j, ser / (double)vps->n / sim_s);
  json_key(j, "wait"); json_number(j, wait / (double)vps->n / sim_s);
  json_key(j, "build_s"); json_number(j, pmj_number(r, "build_time_s.total", &ok));
  json_end_object(j);
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

int pm_sweep(int argc, char **argv)
{
  double scales[MAX_LIST] = {0.05, 0.1, 0.2, 0.3, 0.5}, threads[MAX_LIST] = {1, 2}, streams[MAX_LIST] = {1, 2, 3};
  double alphas[MAX_LIST] = {0.1, 0.3, 0.5, 0.7, 0.9}, ranks[MAX_LIST] = {1};
  int n_scales = 5, n_threads = 2, n_streams = 3, n_alphas = 5, n_ranks = 1;
  int syn[2] = {1, 0}, n_syn = 2;
  double simtime = 100.0, presim = 20.0, budget = 3600.0;
  long repeats = 1, order_seed = 1;
  const char *out = NULL, *device = NULL, *mpiexec = "mpiexec";
  int quiet = 0, dry = 0;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int takes = 1;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      pm_sweep_help();
      return CLI_OK;
    } else if (strcmp(a, "--out") == 0) {
      out = v;
    } else if (strcmp(a, "--scales") == 0) {
      if (pm_parse_list(a, v, 1e-3, 1000.0, scales, &n_scales)) return CLI_USAGE;
    } else if (strcmp(a, "--threads") == 0) {
      if (pm_parse_list(a, v, 0, 256, threads, &n_threads) || !is_int_list(a, threads, n_threads)) return CLI_USAGE;
    } else if (strcmp(a, "--streams") == 0) {
      if (pm_parse_list(a, v, 0, 64, streams, &n_streams) || !is_int_list(a, streams, n_streams)) return CLI_USAGE;
    } else if (strcmp(a, "--alphas") == 0) {
      if (pm_parse_list(a, v, 0.0, 1.0, alphas, &n_alphas)) return CLI_USAGE;
    } else if (strcmp(a, "--ranks") == 0) {
      if (pm_parse_list(a, v, 1, 1024, ranks, &n_ranks) || !is_int_list(a, ranks, n_ranks)) return CLI_USAGE;
    } else if (strcmp(a, "--synapses") == 0) {
      n_syn = 0;
      const char *s = v ? v : "";
      while (*s) {
        size_t n = strcspn(s, ",");
        if (n == 4 && strncmp(s, "stdp", 4) == 0 && n_syn < 2) syn[n_syn++] = 1;
        else if (n == 6 && strncmp(s, "static", 6) == 0 && n_syn < 2) syn[n_syn++] = 0;
        else {
          fprintf(stderr, "error: --synapses: '%.*s' is not stdp or static (at most both, once each)\n", (int)n, s);
          return CLI_USAGE;
        }
        s += n + (s[n] == ',');
      }
      if (n_syn == 0 || (n_syn == 2 && syn[0] == syn[1])) {
        fprintf(stderr, "error: --synapses needs stdp, static or both\n");
        return CLI_USAGE;
      }
    } else if (strcmp(a, "--simtime") == 0 || strcmp(a, "--presim") == 0 || strcmp(a, "--budget") == 0) {
      char *end;
      double d = v ? strtod(v, &end) : NAN;
      if (!v || end == v || *end || !isfinite(d) || d < 0 || (d == 0 && strcmp(a, "--presim") != 0)) {
        fprintf(stderr, "error: %s needs a positive number (got '%s')\n", a, v ? v : "");
        return CLI_USAGE;
      }
      *(strcmp(a, "--simtime") == 0 ? &simtime : strcmp(a, "--presim") == 0 ? &presim : &budget) = d;
    } else if (strcmp(a, "--repeats") == 0 || strcmp(a, "--order-seed") == 0) {
      char *end;
      long l = v ? strtol(v, &end, 10) : -1;
      if (!v || end == v || *end || l < (strcmp(a, "--repeats") == 0 ? 1 : 0) || l > 1000000) {
        fprintf(stderr, "error: %s needs a whole number (got '%s')\n", a, v ? v : "");
        return CLI_USAGE;
      }
      *(strcmp(a, "--repeats") == 0 ? &repeats : &order_seed) = l;
    } else if (strcmp(a, "--device") == 0) {
      device = v;
    } else if (strcmp(a, "--mpiexec") == 0) {
      mpiexec = v;
    } else if (strcmp(a, "--quiet") == 0) {
      quiet = 1;
      takes = 0;
    } else if (strcmp(a, "--dry-run") == 0) {
      dry = 1;
      takes = 0;
    } else {
      fprintf(stderr, "error: unknown flag '%s' (try nestcl perfmodel sweep --help)\n", a);
      return CLI_USAGE;
    }
    if (takes) {
      if (!v) {
        fprintf(stderr, "error: %s needs a value\n", a);
        return CLI_USAGE;
      }
      ++i;
    }
  }
  if (!out && !dry) {
    fprintf(stderr, "error: sweep: --out FILE is required\n");
    return CLI_USAGE;
  }

  /* The design. */
  size_t cap = (size_t)n_scales * (size_t)n_ranks * (size_t)n_syn * (size_t)(n_threads + n_streams + n_threads * n_streams * n_alphas) * (size_t)repeats;
  sweep_cfg *cfgs = malloc((cap ? cap : 1) * sizeof *cfgs);
  int *rep = malloc((cap ? cap : 1) * sizeof *rep);
  if (!cfgs || !rep) {
    free(cfgs);
    free(rep);
    fprintf(stderr, "error: out of host memory\n");
    return CLI_RUNTIME;
  }
  size_t n = 0;
  for (long r = 0; r < repeats; ++r)
    for (int s = 0; s < n_scales; ++s)
      for (int m = 0; m < n_ranks; ++m)
        for (int y = 0; y < n_syn; ++y) {
          sweep_cfg c = {scales[s], (int)ranks[m], 0, 0, -1.0, syn[y]};
          for (int t = 0; t < n_threads; ++t) {
            if (threads[t] < 1) continue;
            c.threads = (int)threads[t];
            c.streams = 0;
            rep[n] = (int)r;
            cfgs[n++] = c;
          }
          for (int g = 0; g < n_streams; ++g) {
            if (streams[g] < 1) continue;
            c.threads = 0;
            c.streams = (int)streams[g];
            rep[n] = (int)r;
            cfgs[n++] = c;
          }
          for (int t = 0; t < n_threads; ++t)
            for (int g = 0; g < n_streams; ++g)
              for (int a = 0; a < n_alphas; ++a) {
                if (threads[t] < 1 || streams[g] < 1 || alphas[a] <= 0.0 || alphas[a] >= 1.0) continue;
                c.threads = (int)threads[t];
                c.streams = (int)streams[g];
                c.alpha = alphas[a];
                rep[n] = (int)r;
                cfgs[n++] = c;
              }
        }
  if (n == 0) {
    free(cfgs);
    free(rep);
    fprintf(stderr, "error: sweep: the design has no configurations (every thread and stream count is 0, or no alpha lies in (0, 1))\n");
    return CLI_USAGE;
  }
  /* Fisher-Yates with a small LCG: the order is part of the design, fixed by the seed. */
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
  if (dry) {
    for (size_t i = 0; i < n; ++i) {
      printf("scale %g ranks %d %s threads %d streams %d alpha %g\n", cfgs[i].scale, cfgs[i].ranks,
             cfgs[i].stdp ? "stdp" : "static", cfgs[i].threads, cfgs[i].streams,
             cfgs[i].alpha >= 0 ? cfgs[i].alpha : cfgs[i].threads ? 0.0 : 1.0);
    }
    free(cfgs);
    free(rep);
    return CLI_OK;
  }

  nestcl_device_info dev;
  if (nestcl_select_device(device, &dev) != 0) {
    free(cfgs);
    free(rep);
    fprintf(stderr, "error: sweep: %s\n", nestcl_last_error());
    return CLI_USAGE;
  }
  char exe[4096];
  const char *tmpdir = getenv("TMPDIR");
  char dirbuf[4096];
  snprintf(dirbuf, sizeof dirbuf, "%s/nestcl-sweep-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
  if (pm_self_exe(exe, sizeof exe) != 0 || !mkdtemp(dirbuf)) {
    free(cfgs);
    free(rep);
    fprintf(stderr, "error: sweep: cannot find this executable or make a temporary folder: %s\n", strerror(errno));
    return CLI_RUNTIME;
  }
  char res_path[4200], err_path[4200], tmp_out[4200];
  snprintf(res_path, sizeof res_path, "%s/run.json", dirbuf);
  snprintf(err_path, sizeof err_path, "%s/run.err", dirbuf);
  snprintf(tmp_out, sizeof tmp_out, "%s.tmp.%ld", out, (long)getpid());
  FILE *fo = fopen(tmp_out, "w");
  if (!fo) {
    fprintf(stderr, "error: cannot write %s: %s\n", tmp_out, strerror(errno));
    rmdir(dirbuf);
    free(cfgs);
    free(rep);
    return CLI_RUNTIME;
  }
  int code = CLI_OK;
  double t0 = cli_now();
  size_t done = 0;
  int tty = isatty(2);
  cli_stop_on_signals(NULL);
  for (size_t i = 0; i < n; ++i) {
    if (cli_signal) {
      break;
    }
    double el = cli_now() - t0;
    if (el >= budget) {
      if (!quiet) fprintf(stderr, "%snestcl: sweep: time budget of %g s reached after %zu of %zu runs\n", tty ? "\n" : "", budget, done, n);
      break;
    }
    const sweep_cfg *c = &cfgs[i];
    char a_scale[32], a_sim[32], a_pre[32], a_t[16], a_g[16], a_alpha[32], a_m[16];
    snprintf(a_scale, sizeof a_scale, "%.17g", c->scale);
    snprintf(a_sim, sizeof a_sim, "%.17g", simtime);
    snprintf(a_pre, sizeof a_pre, "%.17g", presim);
    snprintf(a_t, sizeof a_t, "%d", c->threads);
    snprintf(a_g, sizeof a_g, "%d", c->streams);
    snprintf(a_alpha, sizeof a_alpha, "%.17g", c->alpha < 0 ? (c->threads ? 0.0 : 1.0) : c->alpha);
    snprintf(a_m, sizeof a_m, "%d", c->ranks);
    char *args[40];
    int k = 0;
    if (c->ranks > 1) {
      args[k++] = (char *)mpiexec;
      args[k++] = "-n";
      args[k++] = a_m;
      args[k++] = "--oversubscribe";
      args[k++] = "--bind-to";
      args[k++] = "none";
      if (geteuid() == 0) args[k++] = "--allow-run-as-root";
    }
    args[k++] = exe;
    args[k++] = "run";
    args[k++] = "hpc_benchmark";
    args[k++] = "--scale"; args[k++] = a_scale;
    args[k++] = "--simtime"; args[k++] = a_sim;
    args[k++] = "--presim"; args[k++] = a_pre;
    args[k++] = "--threads"; args[k++] = a_t;
    args[k++] = "--streams"; args[k++] = a_g;
    args[k++] = "--gpu-fraction"; args[k++] = a_alpha;
    args[k++] = "--ee-synapse"; args[k++] = c->stdp ? "stdp_pl_synapse_hom" : "static";
    args[k++] = "--record"; args[k++] = "0";
    args[k++] = "--quiet";
    args[k++] = "--out"; args[k++] = res_path;
    if (device) { args[k++] = "--device"; args[k++] = (char *)device; }
    if (c->ranks > 1) args[k++] = "--mpi";
    args[k] = NULL;
    if (!quiet) {
      fprintf(stderr, "%snestcl: sweep %zu/%zu (%.0f s): scale %g, %d rank(s), %s, %d thread(s), %d stream(s), alpha %g%s",
              tty ? "\r\033[K" : "", i + 1, n, el, c->scale, c->ranks, c->stdp ? "stdp" : "static", c->threads, c->streams,
              c->alpha < 0 ? (c->threads ? 0.0 : 1.0) : c->alpha, tty ? "" : "\n");
    }
    remove(res_path);
    int rc = pm_run_child(args, err_path);
    if (cli_signal) {
      break;
    }
    if (rc != 0) {
      char msg[1024];
      if (rc < 0) {
        snprintf(msg, sizeof msg, "cannot start '%s': %s (--mpiexec takes the launcher's path alone)", args[0],
                 strerror(errno));
      } else {
        pm_child_error(err_path, msg, sizeof msg);
      }
      fprintf(stderr, "%serror: sweep: run %zu (scale %g, %d thread(s), %d stream(s)) failed (exit %d): %s\n", tty && !quiet ? "\n" : "",
              i + 1, c->scale, c->threads, c->streams, rc, msg);
      code = CLI_RUNTIME;
      break;
    }
    char perr[512];
    pmj *r = pmj_parse_file(res_path, perr, sizeof perr);
    if (!r) {
      fprintf(stderr, "error: sweep: %s\n", perr);
      code = CLI_RUNTIME;
      break;
    }
    json j;
    json_init(&j);
    j.compact = 1;
    int lr = sweep_line(&j, r, c, "hpc_benchmark", rep[i], &dev);
    pmj_free(r);
    if (lr || j.failed || fwrite(j.buf, 1, j.len, fo) != j.len || fputc('\n', fo) == EOF || fflush(fo) != 0) {
      if (!lr) fprintf(stderr, "error: cannot write %s: %s\n", tmp_out, strerror(errno));
      json_free(&j);
      code = CLI_RUNTIME;
      break;
    }
    json_free(&j);
    done++;
  }
  if (!quiet && tty && code == CLI_OK) fputc('\n', stderr);
  remove(res_path);
  remove(err_path);
  rmdir(dirbuf);
  if (fclose(fo) != 0 && code == CLI_OK) {
    fprintf(stderr, "error: cannot write %s: %s\n", tmp_out, strerror(errno));
    code = CLI_RUNTIME;
  }
  if (code == CLI_OK && cli_signal) {
    fprintf(stderr, "%serror: sweep: stopped by %s after %zu of %zu runs; no output written\n", tty && !quiet ? "\n" : "",
            cli_signal == SIGTERM ? "SIGTERM" : "SIGINT", done, n);
    code = CLI_SIGNAL_BASE + (int)cli_signal;
  }
  if (code == CLI_OK && done == 0) {
    fprintf(stderr, "error: sweep: no run finished within the time budget of %g s\n", budget);
    code = CLI_RUNTIME;
  }
  if (code == CLI_OK && rename(tmp_out, out) != 0) {
    fprintf(stderr, "error: cannot write %s: %s\n", out, strerror(errno));
    code = CLI_RUNTIME;
  }
  if (code != CLI_OK) {
    remove(tmp_out);
  } else if (!quiet) {
    fprintf(stderr, "nestcl: sweep: %zu runs in %.0f s -> %s\n", done, cli_now() - t0, out);
  }
  free(cfgs);
  free(rep);
  return code;
}
