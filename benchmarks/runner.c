/*
 * `nestcl run <benchmark>` for the benchmarks of benchmarks/ (benchmark.h):
 * the flags every benchmark shares, the engine's configuration, presimulation
 * and simulation with a progress line, and the outputs: the results JSON
 * (benchmarks/results.schema.md: phases, real-time factor, memory, and per
 * population rate, CV of ISI and synchrony), the spikes in NEST's ASCII
 * recording format (--spikes), and gnuplot PNGs (--plots: a raster of the last
 * 200 ms, rates beside NEST's reference). Every output is written under a
 * temporary name and renamed only when all of them were written, so a failed
 * run leaves none. Usage errors exit 2, run-time errors 1, each with one
 * "error: ..." line.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef NESTCL_WITH_MPI
#include <mpi.h>
#endif

#include "benchmark.h"
#include "cli.h"
#include "json.h"
#include "run_common.h"
#include "nestcl/engine.h"
#include "nestcl/version.h"

#ifndef NESTCL_GIT_COMMIT
#define NESTCL_GIT_COMMIT ""
#endif

/* NEST's spike_recorder with record_to ascii writes this format (RecordingBackendASCII version 2). */
#define NEST_ASCII_VERSION "2"
#define NEST_FORMAT_VERSION "3.10.0"

typedef struct run_opts {
  int threads, streams;
  double gpu_fraction; /* negative: the even split */
  const char *device;
  unsigned long seed;
  double simtime, presim, dt;
  const char *out, *spikes, *plots;
  int weight_double;
  int mpi, quiet, dry_run;
  int sync_interval, host_clock; /* nestcl_engine_config's; 0: the default */
  int no_command_buffer;
  cli_ckpt ck;
} run_opts;

void bench_info_add(bench_network *net, const char *name, double value)
{
  if (net->n_info < BENCH_MAX_INFO) {
    snprintf(net->info[net->n_info].name, sizeof net->info[net->n_info].name, "%s", name);
    net->info[net->n_info].value = value;
    net->n_info++;
  }
}

static void help(const bench_def *b)
{
  printf("usage: nestcl run %s [flags]\n\n%s.\n\n%s"
         "  --simtime MS         measured simulation time (default %g)\n"
         "  --presim MS          presimulation before it (default %g)\n"
         "  --threads N          CPU threads (CPU VPs; default 0)\n"
         "  --streams N          OpenCL streams on the device (GPU VPs; default 1)\n"
         "  --gpu-fraction A     share of neurons on the streams, in [0, 1], or 'auto' (default):\n"
         "                       the even split streams / (threads + streams)\n"
         "  --device SPEC        OpenCL device: cpu, gpu, gpu:1, <platform>:<index>\n"
         "                       (default: $NESTCL_DEVICE, else the first GPU, else the first device)\n"
         "  --seed N             random seed (default 12345)\n"
         "  --dt MS              resolution (default 0.1)\n"
         "  --weight-type T      float (default) or double synaptic weights\n"
         "  --out FILE           results JSON to FILE (default: stdout)\n"
         "  --dry-run            print the memory estimate (host and device, per VP) as JSON and exit;\n"
         "                       a run refuses a network that cannot fit before building it\n"
         "  --spikes FILE        spikes of the recorded populations in NEST's ASCII format\n"
         "                       (spike_recorder, record_to ascii: sender and time_ms)\n"
         "  --plots DIR          gnuplot PNGs into DIR: <benchmark>_raster.png (last 200 ms)\n"
         "                       and <benchmark>_rates.png (rates beside NEST's reference)\n"
         "  --sync-interval N    the device loop (one stream, static synapses, no multimeter) waits\n"
         "                       for the device every N super steps at most (default 250; fewer\n"
         "                       when the spike recording for N would take more than 256 MiB)\n"
         "  --host-clock         wait for the device every super step instead (the former loop)\n"
         "  --no-command-buffer  launch the device loop's kernels one by one, also where the device\n"
         "                       offers cl_khr_command_buffer (default: replay a recorded super step)\n"
         "  --mpi                split the network over the MPI ranks (run under mpiexec)\n"
         "  --checkpoint-at MS   write a checkpoint at MS (from t = 0, the presimulation included;\n"
         "                       a multiple of the min delay) into the folder of --checkpoint DIR\n"
         "  --restore DIR        continue from the checkpoint in DIR (the same network flags; the\n"
         "                       split may differ); the results cover the continued part only\n"
         "  --quiet              no progress line\n"
         "  --help, --version\n",
         b->name, b->summary, b->flags_help, b->default_simtime_ms, b->default_presim_ms);
}

/* Returns -1 (usage error reported), 0, or 1 for --help/--version. */
static int parse(const bench_def *b, int argc, char **argv, run_opts *o, void *bo)
{
  memset(o, 0, sizeof *o);
  o->streams = 1;
  o->gpu_fraction = -1.0;
  o->seed = 12345;
  o->simtime = b->default_simtime_ms;
  o->presim = b->default_presim_ms;
  o->dt = 0.1;
  cli_ckpt_init(&o->ck);
  b->defaults(bo);
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *v = NULL;
    char flag[64];
    const char *eq = strchr(a, '=');
    if (strncmp(a, "--", 2) == 0 && eq && (size_t)(eq - a) < sizeof flag) {
      memcpy(flag, a, (size_t)(eq - a));
      flag[eq - a] = 0;
      v = eq + 1;
      a = flag;
    }
    long l;
#define VALUE() (v ? v : (i + 1 < argc ? argv[++i] : NULL))
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      help(b);
      return 1;
    } else if (strcmp(a, "--version") == 0) {
      printf("nestcl %s\n", nestcl_version());
      return 1;
    } else if (strcmp(a, "--simtime") == 0) {
      if (cli_parse_double(a, VALUE(), &o->simtime)) return -1;
    } else if (strcmp(a, "--presim") == 0) {
      if (cli_parse_double(a, VALUE(), &o->presim)) return -1;
    } else if (strcmp(a, "--dt") == 0) {
      if (cli_parse_double(a, VALUE(), &o->dt)) return -1;
    } else if (strcmp(a, "--threads") == 0) {
      if (cli_parse_long(a, VALUE(), 0, 256, &l)) return -1;
      o->threads = (int)l;
    } else if (strcmp(a, "--streams") == 0) {
      if (cli_parse_long(a, VALUE(), 0, 64, &l)) return -1;
      o->streams = (int)l;
    } else if (strcmp(a, "--gpu-fraction") == 0) {
      const char *x = VALUE();
      if (x && strcmp(x, "auto") == 0) {
        o->gpu_fraction = -1.0;
      } else {
        if (cli_parse_double(a, x, &o->gpu_fraction)) return -1;
        if (o->gpu_fraction < 0.0 || o->gpu_fraction > 1.0) {
          fprintf(stderr, "error: --gpu-fraction %g outside [0, 1]\n", o->gpu_fraction);
          return -1;
        }
      }
    } else if (strcmp(a, "--device") == 0) {
      o->device = VALUE();
      if (!o->device || !*o->device) {
        fprintf(stderr, "error: --device needs a spec\n");
        return -1;
      }
    } else if (strcmp(a, "--seed") == 0) {
      if (cli_parse_long(a, VALUE(), 0, 0xffffffffL, &l)) return -1;
      o->seed = (unsigned long)l;
    } else if (strcmp(a, "--out") == 0) {
      o->out = VALUE();
      if (cli_need_path(a, o->out)) return -1;
    } else if (strcmp(a, "--spikes") == 0) {
      o->spikes = VALUE();
      if (cli_need_path(a, o->spikes)) return -1;
    } else if (strcmp(a, "--plots") == 0) {
      o->plots = VALUE();
      if (cli_need_path(a, o->plots)) return -1;
    } else if (strcmp(a, "--weight-type") == 0) {
      const char *x = VALUE();
      if (x && strcmp(x, "float") == 0) {
        o->weight_double = 0;
      } else if (x && strcmp(x, "double") == 0) {
        o->weight_double = 1;
      } else {
        fprintf(stderr, "error: --weight-type must be float or double\n");
        return -1;
      }
    } else if (strcmp(a, "--sync-interval") == 0) {
      long l2;
      if (cli_parse_long(a, VALUE(), 1, 1000000, &l2)) return -1;
      o->sync_interval = (int)l2;
    } else if (strcmp(a, "--host-clock") == 0) {
      o->host_clock = 1;
    } else if (strcmp(a, "--no-command-buffer") == 0) {
      o->no_command_buffer = 1;
    } else if (strcmp(a, "--mpi") == 0) {
      o->mpi = 1;
    } else if (cli_ckpt_is_flag(a)) {
      if (cli_ckpt_flag(&o->ck, a, VALUE())) return -1;
    } else if (strcmp(a, "--quiet") == 0) {
      o->quiet = 1;
    } else if (strcmp(a, "--dry-run") == 0) {
      o->dry_run = 1;
    } else {
      const char *next = v ? v : (i + 1 < argc ? argv[i + 1] : NULL);
      int r = b->parse_flag(bo, a, next);
      if (r == -1) {
        return -1;
      }
      if (r == -2) {
        fprintf(stderr, "error: unknown flag '%s' (try --help)\n", argv[i]);
        return -1;
      }
      if (r == 0 && v) {
        fprintf(stderr, "error: %s takes no value\n", a);
        return -1;
      }
      if (r == 1 && !v) {
        ++i;
      }
    }
#undef VALUE
  }
  if (cli_check_times(o->dt, o->simtime, o->presim) || cli_ckpt_check(&o->ck, o->dt, o->presim + o->simtime)) {
    return -1;
  }
  if (o->threads + o->streams < 1) {
    fprintf(stderr, "error: need at least one of --threads and --streams\n");
    return -1;
  }
  if (o->gpu_fraction < 0.0) {
    o->gpu_fraction = (double)o->streams / (double)(o->threads + o->streams);
  } else if (o->streams == 0 && o->gpu_fraction > 0.0) {
    fprintf(stderr, "error: --gpu-fraction %g with no GPU streams\n", o->gpu_fraction);
    return -1;
  } else if (o->threads == 0 && o->gpu_fraction < 1.0) {
    fprintf(stderr, "error: --gpu-fraction %g with no CPU threads: the streams must take all neurons\n",
            o->gpu_fraction);
    return -1;
  }
  return b->validate(bo);
}

/* One recorded spike: global id, step, population. */
typedef struct spike {
  uint64_t gid;
  int64_t step;
  int pop;
} spike;

static int spike_cmp(const void *a, const void *b)
{
  const spike *x = a, *y = b;
  if (x->step != y->step) return x->step < y->step ? -1 : 1;
  return x->gid < y->gid ? -1 : x->gid > y->gid;
}

/* Runs gnuplot on a script; 0 when it exited 0. */
static int run_gnuplot(const char *script)
{
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    FILE *n = freopen("/dev/null", "w", stdout);
    (void)n;
    execlp("gnuplot", "gnuplot", script, (char *)NULL);
    _exit(127);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Population colours (E, I alternate as in the microcircuit; more than 8 cycle). */
static const char *const pop_colours[8] = {"#595289", "#af143c", "#3f7fbf", "#e0762f",
                                           "#2e8b57", "#b8860b", "#6a5acd", "#c71585"};

typedef struct pop_stats {
  uint64_t first;
  uint32_t n;
  uint64_t spikes;
  double rate, cv, synchrony;
  long cv_n;
} pop_stats;

/*
 * The two PNGs. Data go to a scratch folder beside the outputs; gnuplot
 * writes each PNG to its temporary name, renamed with the other outputs.
 */
static int make_plots(const bench_def *b, const run_opts *o, const bench_network *net, const pop_stats *ps,
                      const spike *sp, size_t n_sp, int64_t end_step, cli_outputs *pend)
{
  char dir[4200], data[4300], script[4300], png[4300];
  if (mkdir(o->plots, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "error: --plots: cannot create %s: %s\n", o->plots, strerror(errno));
    return -1;
  }
  snprintf(dir, sizeof dir, "%s/.nestcl-plot.%ld", o->plots, (long)getpid());
  if (mkdir(dir, 0777) != 0) {
    fprintf(stderr, "error: --plots: cannot create %s: %s\n", dir, strerror(errno));
    return -1;
  }
  int rc = 0;
  /* Raster: the last 200 ms; the first population at the top, as NEST's example draws it. */
  uint64_t total = 0;
  for (int k = 0; k < net->n_pops; ++k) {
    if (net->analyse[k]) total += ps[k].n;
  }
  int64_t from = end_step - (int64_t)llround(200.0 / o->dt);
  snprintf(data, sizeof data, "%s/raster.dat", dir);
  FILE *f = fopen(data, "w");
  double ypos[BENCH_MAX_POPS];
  if (f) {
    uint64_t above = 0;
    for (int k = 0; k < net->n_pops; ++k) {
      if (!net->analyse[k]) continue;
      ypos[k] = (double)(total - above) - 0.5 * ps[k].n;
      int any = 0;
      for (size_t s = 0; s < n_sp; ++s) {
        if (sp[s].pop != k || sp[s].step < from || sp[s].step >= end_step) continue;
        fprintf(f, "%.3f %llu\n", (double)(sp[s].step + 1) * o->dt,
                (unsigned long long)(total - above - (sp[s].gid - ps[k].first)));
        any = 1;
      }
      if (!any) fprintf(f, "NaN NaN\n");
      fprintf(f, "\n\n");
      above += ps[k].n;
    }
    if (fclose(f) != 0) rc = -1;
  } else {
    rc = -1;
  }
  char *tmp_png = NULL;
  if (!rc) {
    snprintf(png, sizeof png, "%s/%s_raster.png", o->plots, b->name);
    tmp_png = cli_tmp_name(png);
    snprintf(script, sizeof script, "%s/raster.gp", dir);
    f = fopen(script, "w");
    if (f && tmp_png) {
      fprintf(f, "set terminal pngcairo size 900,700 noenhanced font ',11'\nset output '%s'\n", tmp_png);
      fprintf(f, "set title 'nestcl %s: spikes of the last 200 ms'\nset xlabel 'time (ms)'\nset key off\n", b->name);
      fprintf(f, "set xrange [%.3f:%.3f]\nset yrange [0:%llu]\nset ytics (", (double)from * o->dt,
              (double)end_step * o->dt, (unsigned long long)total + 1);
      int first = 1;
      for (int k = 0; k < net->n_pops; ++k) {
        if (!net->analyse[k]) continue;
        fprintf(f, "%s'%s' %.1f", first ? "" : ", ", net->pop_name[k], ypos[k]);
        first = 0;
      }
      fprintf(f, ")\nplot ");
      int idx = 0;
      first = 1;
      for (int k = 0; k < net->n_pops; ++k) {
        if (!net->analyse[k]) continue;
        fprintf(f, "%s'%s' index %d using 1:2 with points pt 7 ps 0.15 lc rgb '%s' title '%s'", first ? "" : ", ", data, idx,
                pop_colours[k % 8], net->pop_name[k]);
        first = 0;
        idx++;
      }
      fprintf(f, "\nunset output\n");
      rc = fclose(f) != 0 ? -1 : 0;
    } else {
      if (f) fclose(f);
      rc = -1;
    }
    if (!rc) {
      int g = run_gnuplot(script);
      if (g != 0) {
        fprintf(stderr, "error: --plots: %s\n",
                g == 127 ? "gnuplot not found (install gnuplot-nox: scripts/setup)" : "gnuplot failed on the raster");
        remove(tmp_png);
        rc = -2;
      } else {
        if (cli_outputs_add(pend, tmp_png, png)) rc = -2;
        tmp_png = NULL;
      }
    }
  }
  free(tmp_png);
  tmp_png = NULL;
  /* Rates: per population, nestcl beside NEST's reference. */
  if (!rc) {
    snprintf(data, sizeof data, "%s/rates.dat", dir);
    f = fopen(data, "w");
    if (f) {
      for (int k = 0; k < net->n_pops; ++k) {
        if (!net->analyse[k]) continue;
        if (isfinite(net->ref_rate_hz[k])) {
          fprintf(f, "%s %.6f %.6f\n", net->pop_name[k], ps[k].rate, net->ref_rate_hz[k]);
        } else {
          fprintf(f, "%s %.6f NaN\n", net->pop_name[k], ps[k].rate);
        }
      }
      rc = fclose(f) != 0 ? -1 : 0;
    } else {
      rc = -1;
    }
  }
  if (!rc) {
    snprintf(png, sizeof png, "%s/%s_rates.png", o->plots, b->name);
    tmp_png = cli_tmp_name(png);
    snprintf(script, sizeof script, "%s/rates.gp", dir);
    f = fopen(script, "w");
    if (f && tmp_png) {
      fprintf(f, "set terminal pngcairo size 900,500 noenhanced font ',11'\nset output '%s'\n", tmp_png);
      fprintf(f, "set title 'nestcl %s: firing rate per population'\nset ylabel 'rate (spikes/s)'\n"
                 "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
                 "set boxwidth 0.9\nset yrange [0:*]\nset key top left\nset grid ytics\n",
              b->name);
      fprintf(f, "plot '%s' using 2:xtic(1) title 'nestcl' lc rgb '#595289', '' using 3 title "
                 "'NEST reference (full scale)' lc rgb '#af143c'\nunset output\n",
              data);
      rc = fclose(f) != 0 ? -1 : 0;
    } else {
      if (f) fclose(f);
      rc = -1;
    }
    if (!rc) {
      int g = run_gnuplot(script);
      if (g != 0) {
        fprintf(stderr, "error: --plots: %s\n",
                g == 127 ? "gnuplot not found (install gnuplot-nox: scripts/setup)" : "gnuplot failed on the rates");
        remove(tmp_png);
        rc = -2;
      } else {
        if (cli_outputs_add(pend, tmp_png, png)) rc = -2;
        tmp_png = NULL;
      }
    }
  }
  free(tmp_png);
  if (rc == -1) {
    fprintf(stderr, "error: --plots: cannot write into %s: %s\n", dir, strerror(errno));
  }
  snprintf(data, sizeof data, "%s/raster.dat", dir);
  remove(data);
  snprintf(data, sizeof data, "%s/rates.dat", dir);
  remove(data);
  snprintf(data, sizeof data, "%s/raster.gp", dir);
  remove(data);
  snprintf(data, sizeof data, "%s/rates.gp", dir);
  remove(data);
  rmdir(dir);
  return rc ? -1 : 0;
}

int cli_run_benchmark(const bench_def *b, int argc, char **argv)
{
  run_opts o;
  void *bo = calloc(1, b->opts_size);
  if (!bo) {
    fprintf(stderr, "error: out of host memory\n");
    return CLI_RUNTIME;
  }
  int pr = parse(b, argc, argv, &o, bo);
  if (pr) {
    free(bo);
    return pr > 0 ? CLI_OK : CLI_USAGE;
  }
  /* From here on SIGINT and SIGTERM stop the run at the end of a super step and leave no output file. */
  cli_stop_on_signals(NULL);
  int rank = 0, ranks = 1;
#ifdef NESTCL_WITH_MPI
  if (o.mpi) {
    int provided;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  }
#else
  if (o.mpi) {
    fprintf(stderr, "error: --mpi: this nestcl was built without MPI\n");
    free(bo);
    return CLI_USAGE;
  }
#endif
  int code = CLI_OK, rc;
  json j;
  json_init(&j);
  cli_outputs pend = {{0}, {0}, 0};
  bench_network net;
  memset(&net, 0, sizeof net);
  int rec[BENCH_MAX_POPS];
  pop_stats ps[BENCH_MAX_POPS];
  memset(ps, 0, sizeof ps);
  spike *sp = NULL;
  nestcl_vp_stats *vp0 = NULL;

  nestcl_engine_config cfg;
  nestcl_engine_config_defaults(&cfg);
  cfg.resolution_ms = o.dt;
  cfg.seed = (uint32_t)o.seed;
  cfg.cpu_threads = o.threads;
  cfg.gpu_streams = o.streams;
  cfg.gpu_fraction = o.gpu_fraction;
  cfg.device = o.device;
  cfg.weight_type = o.weight_double ? NESTCL_WEIGHT_DOUBLE : NESTCL_WEIGHT_FLOAT;
  cfg.use_mpi = o.mpi;
  cfg.sync_interval = o.sync_interval;
  cfg.host_clock = o.host_clock;
  cfg.command_buffer = !o.no_command_buffer;
  nestcl_engine *e = NULL;
  bench_common common = {o.dt, o.simtime, o.presim};
  double t_build0 = cli_now();
  rc = nestcl_engine_create(&cfg, &e);
  if (!rc) cli_stop_on_signals(e);
  if (!rc) rc = nestcl_engine_set_models(e, nestcl_builtin_models, nestcl_builtin_model_count);
  if (!rc) rc = b->build(bo, &common, e, &net);
  for (int k = 0; k < net.n_pops && !rc; ++k) {
    rec[k] = -1;
    nestcl_engine_population_range(e, net.pop[k], &ps[k].first, &ps[k].n);
    if (net.analyse[k]) rc = nestcl_engine_add_spike_recorder(e, net.pop[k], 0, ps[k].n, &rec[k]);
  }
  if (!rc && o.dry_run) {
    rc = cli_dry_run(e, b->name);
    if (rc) {
      fprintf(stderr, "error: %s\n", nestcl_last_error());
      code = cli_exit_code(rc);
    }
    goto done;
  }
  if (!rc && !o.quiet && rank == 0) {
    uint64_t n = 0;
    for (int k = 0; k < net.n_pops; ++k) n += ps[k].n;
    fprintf(stderr, "nestcl: building %s: %llu neurons\n", b->name, (unsigned long long)n);
  }
  if (!rc) rc = cli_ckpt_prepare(e, &o.ck, o.dt, o.presim + o.simtime);
  double build_wall = cli_now() - t_build0;
  double presim_wall = 0.0, sim_wall = 0.0;
  nestcl_engine_stats s0, s1;
  /* Times from t = 0: a restored run starts at its checkpoint's, and skips what lies before. */
  if (!rc) rc = cli_run_until(e, "presim", o.presim, &o.ck, o.dt, o.quiet || rank, &presim_wall);
  if (!rc) {
    nestcl_engine_get_stats(e, &s0);
    vp0 = malloc((size_t)(s0.n_vps ? s0.n_vps : 1) * sizeof *vp0);
    if (vp0) memcpy(vp0, s0.vps, (size_t)s0.n_vps * sizeof *vp0);
    else rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  if (!rc) rc = cli_run_until(e, "sim", o.presim + o.simtime, &o.ck, o.dt, o.quiet || rank, &sim_wall);
  if (rc) {
    if (rank == 0 || rc != NESTCL_EINTR) cli_report(rc, e, o.presim + o.simtime);
    code = cli_exit_code(rc);
    goto done;
  }
  nestcl_engine_get_stats(e, &s1);

  /*
   * Activity per population over the measured window [presim, presim + simtime), of which a restored run has
   * only the part from its checkpoint on (sim_ms of it).
   */
  double win0 = o.ck.restored_ms > o.presim ? o.ck.restored_ms : o.presim;
  double sim_ms = o.presim + o.simtime - win0;
  int64_t from_step = (int64_t)llround(win0 / o.dt), end_step = (int64_t)llround((o.presim + o.simtime) / o.dt);
  size_t n_sp = 0, cap_sp = 0;
  for (int k = 0; k < net.n_pops; ++k) {
    if (!net.analyse[k]) continue;
    const uint64_t *gids;
    const int64_t *steps;
    size_t n;
    nestcl_engine_spikes(e, rec[k], &gids, &steps, &n);
    if (n_sp + n > cap_sp) {
      cap_sp = (n_sp + n) * 2 + 16;
      spike *t = realloc(sp, cap_sp * sizeof *sp);
      if (!t) {
        fprintf(stderr, "error: out of host memory\n");
        code = CLI_RUNTIME;
        goto done;
      }
      sp = t;
    }
    pop_stats *p = &ps[k];
    int64_t *last = malloc((size_t)(p->n ? p->n : 1) * sizeof *last);
    double *sum = calloc(p->n ? p->n : 1, sizeof *sum), *sum2 = calloc(p->n ? p->n : 1, sizeof *sum2);
    long *cnt = calloc(p->n ? p->n : 1, sizeof *cnt);
    int64_t bin = (int64_t)llround(3.0 / o.dt), n_bins = (end_step - from_step + bin - 1) / (bin ? bin : 1);
    double *hist = calloc((size_t)(n_bins > 0 ? n_bins : 1), sizeof *hist);
    if (!last || !sum || !sum2 || !cnt || !hist) {
      free(last); free(sum); free(sum2); free(cnt); free(hist);
      fprintf(stderr, "error: out of host memory\n");
      code = CLI_RUNTIME;
      goto done;
    }
    for (uint32_t i = 0; i < p->n; ++i) last[i] = -1;
    uint32_t sync_n = p->n < 1000 ? p->n : 1000;
    for (size_t s = 0; s < n; ++s) {
      sp[n_sp].gid = gids[s];
      sp[n_sp].step = steps[s];
      sp[n_sp].pop = k;
      n_sp++;
      if (steps[s] < from_step || steps[s] >= end_step) continue;
      uint32_t i = (uint32_t)(gids[s] - p->first);
      p->spikes++;
      if (i < sync_n && bin > 0) hist[(steps[s] - from_step) / bin] += 1.0;
      if (last[i] >= 0) {
        double isi = (double)(steps[s] - last[i]) * o.dt;
        sum[i] += isi;
        sum2[i] += isi * isi;
        cnt[i]++;
      }
      last[i] = steps[s];
    }
    double cv_sum = 0.0;
    for (uint32_t i = 0; i < p->n; ++i) {
      if (cnt[i] >= 2) {
        double m = sum[i] / (double)cnt[i];
        double var = sum2[i] / (double)cnt[i] - m * m;
        cv_sum += sqrt(var > 0.0 ? var : 0.0) / m;
        p->cv_n++;
      }
    }
    p->cv = p->cv_n ? cv_sum / (double)p->cv_n : NAN;
    p->rate = sim_ms > 0.0 && p->n ? (double)p->spikes / (double)p->n / (sim_ms * 1e-3) : 0.0;
    /* Synchrony (Potjans & Diesmann 2014): variance over mean of the spike count of 1000 neurons in 3 ms bins. */
    double hm = 0.0, hv = 0.0;
    for (int64_t q = 0; q < n_bins; ++q) hm += hist[q];
    hm = n_bins > 0 ? hm / (double)n_bins : 0.0;
    for (int64_t q = 0; q < n_bins; ++q) hv += (hist[q] - hm) * (hist[q] - hm);
    hv = n_bins > 0 ? hv / (double)n_bins : 0.0;
    p->synchrony = hm > 0.0 ? hv / hm : NAN;
    free(last); free(sum); free(sum2); free(cnt); free(hist);
  }
  qsort(sp, n_sp, sizeof *sp, spike_cmp);

  uint64_t an_neurons = 0, an_spikes = 0;
  double cv_all = 0.0;
  long cv_all_n = 0;
  for (int k = 0; k < net.n_pops; ++k) {
    if (!net.analyse[k]) continue;
    an_neurons += ps[k].n;
    an_spikes += ps[k].spikes;
    if (ps[k].cv_n) {
      cv_all += ps[k].cv * (double)ps[k].cv_n;
      cv_all_n += ps[k].cv_n;
    }
  }
  uint64_t events = s1.synaptic_events - s0.synaptic_events, spikes = s1.spikes - s0.spikes;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);

  json_begin_object(&j);
  json_key(&j, "schema"); json_string(&j, "nestcl-results/1");
  json_key(&j, "benchmark"); json_string(&j, b->name);
  json_key(&j, "config");
  json_begin_object(&j);
  json_key(&j, "argv"); json_begin_array(&j);
  for (int k = 0; k < argc; ++k) json_string(&j, argv[k]);
  json_end_array(&j);
  json_key(&j, "simtime_ms"); json_number(&j, o.simtime);
  json_key(&j, "presim_ms"); json_number(&j, o.presim);
  json_key(&j, "resolution_ms"); json_number(&j, o.dt);
  json_key(&j, "threads"); json_integer(&j, o.threads);
  json_key(&j, "streams"); json_integer(&j, o.streams);
  json_key(&j, "gpu_fraction"); json_number(&j, o.gpu_fraction);
  json_key(&j, "device_spec"); if (o.device) json_string(&j, o.device); else json_null(&j);
  json_key(&j, "device_name"); if (s1.device_name) json_string(&j, s1.device_name); else json_null(&j);
  json_key(&j, "device_driver"); if (s1.device_driver) json_string(&j, s1.device_driver); else json_null(&j);
  json_key(&j, "seed"); json_integer(&j, (long long)o.seed);
  json_key(&j, "weight_type"); json_string(&j, o.weight_double ? "double" : "float");
  json_key(&j, "mpi_ranks"); json_integer(&j, ranks);
  json_key(&j, "sync_interval"); if (o.sync_interval) json_integer(&j, o.sync_interval); else json_null(&j);
  json_key(&j, "host_clock"); json_bool(&j, o.host_clock);
  json_key(&j, "command_buffer"); json_bool(&j, !o.no_command_buffer);
  cli_ckpt_json(&j, &o.ck);
  json_key(&j, "spikes_file"); if (o.spikes) json_string(&j, o.spikes); else json_null(&j);
  json_key(&j, "plots_dir"); if (o.plots) json_string(&j, o.plots); else json_null(&j);
  json_key(&j, "version"); json_string(&j, nestcl_version());
  json_key(&j, "git_commit"); if (*NESTCL_GIT_COMMIT) json_string(&j, NESTCL_GIT_COMMIT); else json_null(&j);
  json_end_object(&j);

  json_key(&j, "network");
  json_begin_object(&j);
  json_key(&j, "neurons"); json_integer(&j, (long long)s1.neurons);
  json_key(&j, "synapses"); json_integer(&j, (long long)s1.synapses);
  json_key(&j, "min_delay_steps"); json_integer(&j, s1.min_delay_steps);
  json_key(&j, "max_delay_steps"); json_integer(&j, s1.max_delay_steps);
  for (int k = 0; k < net.n_info; ++k) {
    json_key(&j, net.info[k].name);
    json_number(&j, net.info[k].value);
  }
  json_key(&j, "populations");
  json_begin_array(&j);
  for (int k = 0; k < net.n_pops; ++k) {
    json_begin_object(&j);
    json_key(&j, "name"); json_string(&j, net.pop_name[k]);
    json_key(&j, "neurons"); json_integer(&j, ps[k].n);
    json_key(&j, "first_node_id"); json_integer(&j, (long long)ps[k].first + 1);
    json_end_object(&j);
  }
  json_end_array(&j);
  json_end_object(&j);

  json_key(&j, "build_time_s");
  json_begin_object(&j);
  json_key(&j, "nodes"); json_number(&j, s1.build_nodes_s);
  json_key(&j, "connections"); json_number(&j, s1.build_connections_s);
  json_key(&j, "upload"); json_number(&j, s1.build_upload_s);
  json_key(&j, "total"); json_number(&j, s1.build_nodes_s + s1.build_connections_s + s1.build_upload_s);
  json_key(&j, "wall"); json_number(&j, build_wall);
  json_end_object(&j);

  json_key(&j, "simulation");
  json_begin_object(&j);
  json_key(&j, "presim_wall_s"); json_number(&j, presim_wall);
  json_key(&j, "sim_wall_s"); json_number(&j, sim_wall);
  json_key(&j, "real_time_factor"); json_number(&j, sim_ms > 0 ? sim_wall / (sim_ms * 1e-3) : 0.0);
  json_key(&j, "vps");
  json_begin_array(&j);
  double tot[NESTCL_PHASES] = {0}, tot_wait = 0.0;
  nestcl_enqueue_counts enq = {0}; /* this rank's streams, the measured part */
  const double super_steps = s1.min_delay_steps > 0 ? (double)(s1.steps - s0.steps) / s1.min_delay_steps : 0.0;
  for (int v = 0; v < s1.n_vps; ++v) {
    double ph[NESTCL_PHASES];
    for (int p = 0; p < NESTCL_PHASES; ++p) {
      ph[p] = s1.vps[v].seconds[p] - vp0[v].seconds[p];
      tot[p] += ph[p];
    }
    double wait = s1.vps[v].wait_seconds - vp0[v].wait_seconds;
    tot_wait += wait;
    json_begin_object(&j);
    json_key(&j, "kind"); json_string(&j, s1.vps[v].is_gpu ? "stream" : "thread");
    json_key(&j, "neurons"); json_integer(&j, s1.vps[v].neurons);
    json_key(&j, "synapses"); json_integer(&j, (long long)s1.vps[v].synapses);
    json_key(&j, "phases_s"); cli_write_phases(&j, ph, wait);
    nestcl_enqueue_counts vq = {0};
    cli_enqueued_add(&vq, &s1.vps[v].enqueued, &vp0[v].enqueued);
    cli_enqueued_add(&enq, &vq, &(nestcl_enqueue_counts){0});
    json_key(&j, "enqueued"); cli_write_enqueued(&j, &vq, super_steps);
    json_end_object(&j);
  }
  json_end_array(&j);
  json_key(&j, "enqueued"); cli_write_enqueued(&j, &enq, super_steps);
  json_key(&j, "device_loop"); json_bool(&j, s1.device_loop);
  json_key(&j, "sync_interval"); if (s1.device_loop) json_integer(&j, s1.sync_interval); else json_null(&j);
  json_key(&j, "command_buffer"); json_bool(&j, s1.command_buffer);
  json_key(&j, "phases_sum_s"); cli_write_phases(&j, tot, tot_wait);
  json_end_object(&j);

  json_key(&j, "activity");
  json_begin_object(&j);
  json_key(&j, "spikes"); json_integer(&j, (long long)spikes);
  json_key(&j, "recorded_neurons"); json_integer(&j, (long long)an_neurons);
  json_key(&j, "recorded_spikes"); json_integer(&j, (long long)an_spikes);
  json_key(&j, "mean_rate_hz");
  json_number(&j, an_neurons && sim_ms > 0 ? (double)an_spikes / (double)an_neurons / (sim_ms * 1e-3) : 0.0);
  json_key(&j, "network_rate_hz");
  json_number(&j, sim_ms > 0 ? (double)spikes / (double)s1.neurons / (sim_ms * 1e-3) : 0.0);
  json_key(&j, "cv_isi"); if (cv_all_n) json_number(&j, cv_all / (double)cv_all_n); else json_null(&j);
  json_key(&j, "synaptic_events"); json_integer(&j, (long long)events);
  json_key(&j, "synaptic_events_per_s"); json_number(&j, sim_wall > 0 ? (double)events / sim_wall : 0.0);
  json_key(&j, "populations");
  json_begin_array(&j);
  for (int k = 0; k < net.n_pops; ++k) {
    if (!net.analyse[k]) continue;
    json_begin_object(&j);
    json_key(&j, "name"); json_string(&j, net.pop_name[k]);
    json_key(&j, "neurons"); json_integer(&j, ps[k].n);
    json_key(&j, "spikes"); json_integer(&j, (long long)ps[k].spikes);
    json_key(&j, "rate_hz"); json_number(&j, ps[k].rate);
    json_key(&j, "cv_isi"); if (isfinite(ps[k].cv)) json_number(&j, ps[k].cv); else json_null(&j);
    json_key(&j, "cv_neurons"); json_integer(&j, ps[k].cv_n);
    json_key(&j, "synchrony"); if (isfinite(ps[k].synchrony)) json_number(&j, ps[k].synchrony); else json_null(&j);
    json_key(&j, "nest_reference_rate_hz");
    if (isfinite(net.ref_rate_hz[k])) json_number(&j, net.ref_rate_hz[k]); else json_null(&j);
    json_end_object(&j);
  }
  json_end_array(&j);
  json_end_object(&j);

  json_key(&j, "memory");
  json_begin_object(&j);
  json_key(&j, "device_bytes"); cli_write_bytes(&j, s1.device_bytes);
  json_key(&j, "host_vp_bytes"); cli_write_bytes(&j, s1.host_bytes);
  json_key(&j, "bytes_per_synapse"); json_number(&j, s1.bytes_per_synapse);
  json_key(&j, "host_peak_rss_bytes"); json_integer(&j, (long long)ru.ru_maxrss * 1024);
  json_end_object(&j);
  json_end_object(&j);
  if (j.failed) {
    fprintf(stderr, "error: out of host memory writing the results\n");
    code = CLI_RUNTIME;
    goto done;
  }

  if (rank == 0) {
    if (o.spikes) {
      FILE *f = cli_outputs_open(&pend, o.spikes);
      if (!f) {
        code = CLI_RUNTIME;
        goto done;
      }
      /* NEST's RecordingBackendASCII: two header lines, the column names, then sender and time (3 decimals). */
      fprintf(f, "# NEST version: %s (written by nestcl %s)\n# RecordingBackendASCII version: %s\nsender\ttime_ms\n",
              NEST_FORMAT_VERSION, nestcl_version(), NEST_ASCII_VERSION);
      for (size_t s = 0; s < n_sp; ++s) {
        fprintf(f, "%llu\t%.3f\n", (unsigned long long)sp[s].gid + 1, (double)(sp[s].step + 1) * o.dt);
      }
      if (cli_close_checked(f, o.spikes)) {
        code = CLI_RUNTIME;
        goto done;
      }
    }
    if (o.plots && make_plots(b, &o, &net, ps, sp, n_sp, end_step, &pend)) {
      code = CLI_RUNTIME;
      goto done;
    }
    if (o.out) {
      FILE *f = cli_outputs_open(&pend, o.out);
      if (!f) {
        code = CLI_RUNTIME;
        goto done;
      }
      fwrite(j.buf, 1, j.len, f);
      fputc('\n', f);
      if (cli_close_checked(f, o.out)) {
        code = CLI_RUNTIME;
        goto done;
      }
    }
    if (cli_outputs_commit(&pend)) {
      code = CLI_RUNTIME;
      goto done;
    }
    if (!o.out) {
      fwrite(j.buf, 1, j.len, stdout);
      fputc('\n', stdout);
      fflush(stdout);
    }
    if (!o.quiet) {
      fprintf(stderr, "nestcl: %s: real-time factor %.2f, %.3g synaptic events/s, %.2f bytes/synapse\n", b->name,
              sim_ms > 0 ? sim_wall / (sim_ms * 1e-3) : 0.0, sim_wall > 0 ? (double)events / sim_wall : 0.0,
              s1.bytes_per_synapse);
      for (int k = 0; k < net.n_pops; ++k) {
        if (!net.analyse[k]) continue;
        fprintf(stderr, "nestcl:   %-5s %6u neurons  %7.3f Hz  CV %.3f  synchrony %.2f\n", net.pop_name[k], ps[k].n,
                ps[k].rate, ps[k].cv, ps[k].synchrony);
      }
    }
  }

done:
  cli_outputs_drop(&pend);
  free(sp);
  free(vp0);
  json_free(&j);
  nestcl_engine_destroy(e);
  free(bo);
#ifdef NESTCL_WITH_MPI
  if (o.mpi) MPI_Finalize();
#endif
  return code;
}
