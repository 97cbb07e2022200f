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
 * "error: ..." line. The steps of a run: parse and validate the flags, build,
 * simulate, analyse the populations, write the outputs (the results JSON
 * through results.c).
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

#include "benchmark.h"
#include "cli.h"
#include "json.h"
#include "results.h"
#include "run_common.h"
#include "nestcl/engine.h"
#include "nestcl/version.h"

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
  int kernel_sample, persistent; /* nestcl_engine_config's */
  cli_ckpt ck;
  cli_build build;
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
         "  --kernel-sample N    time launches i of each kernel with i mod N < 2 from profiling\n"
         "                       events (simulation.kernels; default 64; 0: no kernel table)\n"
         "  --profile-kernels    time every launch (--kernel-sample 1)\n"
         "  --persistent         the device loop runs many super steps per launch, its phases\n"
         "                       separated by grid barriers, on any device where it can (default:\n"
         "                       on GPUs; one stream, one model, static synapses, no multimeter)\n"
         "  --no-persistent      launch the device loop's kernels per phase\n"
         "%s"
         "  --mpi                split the network over the MPI ranks (run under mpiexec)\n"
         "  --checkpoint-at MS   write a checkpoint at MS (from t = 0, the presimulation included;\n"
         "                       a multiple of the min delay) into the folder of --checkpoint DIR\n"
         "  --restore DIR        continue from the checkpoint in DIR (the same network flags; the\n"
         "                       split may differ); the results cover the continued part only\n"
         "  --quiet              no progress line\n"
         "  --help, --version\n",
         b->name, b->summary, b->flags_help, b->default_simtime_ms, b->default_presim_ms, cli_build_help);
}

/* A flag's result: taken, an error (reported), --help/--version done, not the runner's. */
enum { FLAG_TAKEN = 0, FLAG_ERROR = -1, FLAG_EXIT = 1, FLAG_OTHER = 2 };

static void defaults(const bench_def *b, run_opts *o, void *bo)
{
  memset(o, 0, sizeof *o);
  o->streams = 1;
  o->gpu_fraction = -1.0;
  o->seed = 12345;
  o->simtime = b->default_simtime_ms;
  o->presim = b->default_presim_ms;
  o->dt = 0.1;
  o->kernel_sample = 64;
  o->persistent = -1;
  cli_ckpt_init(&o->ck);
  cli_build_init(&o->build);
  b->defaults(bo);
}

/* --gpu-fraction A|auto. */
static int parse_gpu_fraction(run_opts *o, const char *a, const char *x)
{
  if (x && strcmp(x, "auto") == 0) {
    o->gpu_fraction = -1.0;
    return FLAG_TAKEN;
  }
  if (cli_parse_double(a, x, &o->gpu_fraction))
    return FLAG_ERROR;
  if (o->gpu_fraction < 0.0 || o->gpu_fraction > 1.0) {
    fprintf(stderr, "error: --gpu-fraction %g outside [0, 1]\n", o->gpu_fraction);
    return FLAG_ERROR;
  }
  return FLAG_TAKEN;
}

/* Times, split, device, seed: --help ... --seed. */
static int parse_run_flag(const bench_def *b, run_opts *o, cli_args *c)
{
  const char *a = c->a;
  long l;
  if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
    help(b);
    return FLAG_EXIT;
  } else if (strcmp(a, "--version") == 0) {
    printf("nestcl %s\n", nestcl_version());
    return FLAG_EXIT;
  } else if (strcmp(a, "--simtime") == 0) {
    if (cli_parse_double(a, cli_args_value(c), &o->simtime))
      return FLAG_ERROR;
  } else if (strcmp(a, "--presim") == 0) {
    if (cli_parse_double(a, cli_args_value(c), &o->presim))
      return FLAG_ERROR;
  } else if (strcmp(a, "--dt") == 0) {
    if (cli_parse_double(a, cli_args_value(c), &o->dt))
      return FLAG_ERROR;
  } else if (strcmp(a, "--threads") == 0) {
    if (cli_parse_long(a, cli_args_value(c), 0, 256, &l))
      return FLAG_ERROR;
    o->threads = (int)l;
  } else if (strcmp(a, "--streams") == 0) {
    if (cli_parse_long(a, cli_args_value(c), 0, 64, &l))
      return FLAG_ERROR;
    o->streams = (int)l;
  } else if (strcmp(a, "--gpu-fraction") == 0) {
    return parse_gpu_fraction(o, a, cli_args_value(c));
  } else if (strcmp(a, "--device") == 0) {
    o->device = cli_args_value(c);
    if (!o->device || !*o->device) {
      fprintf(stderr, "error: --device needs a spec\n");
      return FLAG_ERROR;
    }
  } else if (strcmp(a, "--seed") == 0) {
    if (cli_parse_long(a, cli_args_value(c), 0, 0xffffffffL, &l))
      return FLAG_ERROR;
    o->seed = (unsigned long)l;
  } else {
    return FLAG_OTHER;
  }
  return FLAG_TAKEN;
}

/* Outputs and the engine's options: --out ... --dry-run. */
static int parse_output_flag(run_opts *o, cli_args *c)
{
  const char *a = c->a;
  long l;
  if (strcmp(a, "--out") == 0) {
    o->out = cli_args_value(c);
    if (cli_need_path(a, o->out))
      return FLAG_ERROR;
  } else if (strcmp(a, "--spikes") == 0) {
    o->spikes = cli_args_value(c);
    if (cli_need_path(a, o->spikes))
      return FLAG_ERROR;
  } else if (strcmp(a, "--plots") == 0) {
    o->plots = cli_args_value(c);
    if (cli_need_path(a, o->plots))
      return FLAG_ERROR;
  } else if (strcmp(a, "--weight-type") == 0) {
    const char *x = cli_args_value(c);
    if (x && strcmp(x, "float") == 0) {
      o->weight_double = 0;
    } else if (x && strcmp(x, "double") == 0) {
      o->weight_double = 1;
    } else {
      fprintf(stderr, "error: --weight-type must be float or double\n");
      return FLAG_ERROR;
    }
  } else if (strcmp(a, "--sync-interval") == 0) {
    if (cli_parse_long(a, cli_args_value(c), 1, 1000000, &l))
      return FLAG_ERROR;
    o->sync_interval = (int)l;
  } else if (strcmp(a, "--host-clock") == 0) {
    o->host_clock = 1;
  } else if (strcmp(a, "--no-command-buffer") == 0) {
    o->no_command_buffer = 1;
  } else if (strcmp(a, "--kernel-sample") == 0) {
    if (cli_parse_long(a, cli_args_value(c), 0, 1000000, &l))
      return FLAG_ERROR;
    o->kernel_sample = (int)l;
  } else if (strcmp(a, "--profile-kernels") == 0) {
    o->kernel_sample = 1;
  } else if (strcmp(a, "--persistent") == 0) {
    o->persistent = 1;
  } else if (strcmp(a, "--no-persistent") == 0) {
    o->persistent = 0;
  } else if (strcmp(a, "--mpi") == 0) {
    o->mpi = 1;
  } else if (cli_ckpt_is_flag(a)) {
    if (cli_ckpt_flag(&o->ck, a, cli_args_value(c)))
      return FLAG_ERROR;
  } else if (cli_build_is_flag(a)) {
    if (cli_build_flag(&o->build, c))
      return FLAG_ERROR;
  } else if (strcmp(a, "--quiet") == 0) {
    o->quiet = 1;
  } else if (strcmp(a, "--dry-run") == 0) {
    o->dry_run = 1;
  } else {
    return FLAG_OTHER;
  }
  return FLAG_TAKEN;
}

/* A flag of the benchmark's own (bench_def.parse_flag), or an unknown one. */
static int parse_benchmark_flag(const bench_def *b, void *bo, cli_args *c)
{
  int r = b->parse_flag(bo, c->a, cli_args_peek(c));
  if (r == -1) {
    return FLAG_ERROR;
  }
  if (r == -2) {
    fprintf(stderr, "error: unknown flag '%s' (try --help)\n", c->argv[c->i]);
    return FLAG_ERROR;
  }
  if (r == 0 && c->v) {
    fprintf(stderr, "error: %s takes no value\n", c->a);
    return FLAG_ERROR;
  }
  if (r == 1 && !c->v) {
    c->i++;
  }
  return FLAG_TAKEN;
}

/* The flags together, the even split for 'auto', then the benchmark's checks; -1 after an error line. */
static int validate(const bench_def *b, run_opts *o, const void *bo)
{
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
  if ((o->out && cli_check_output("--out", o->out, 0)) || (o->spikes && cli_check_output("--spikes", o->spikes, 0)) ||
      (o->plots && cli_check_output("--plots", o->plots, 1))) {
    return -1; /* before the build: a run must not end in a write that fails */
  }
  return b->validate(bo);
}

/* Returns -1 (usage error reported), 0, or 1 for --help/--version. */
static int parse(const bench_def *b, int argc, char **argv, run_opts *o, void *bo)
{
  defaults(b, o, bo);
  cli_args c;
  for (int i = 1; i < argc; i = c.i + 1) {
    cli_args_at(&c, argc, argv, i);
    int r = parse_run_flag(b, o, &c);
    if (r == FLAG_OTHER)
      r = parse_output_flag(o, &c);
    if (r == FLAG_OTHER)
      r = parse_benchmark_flag(b, bo, &c);
    if (r != FLAG_TAKEN)
      return r;
  }
  return validate(b, o, bo);
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
  if (x->step != y->step)
    return x->step < y->step ? -1 : 1;
  return x->gid < y->gid ? -1 : x->gid > y->gid;
}

/* Runs gnuplot on a script; 0 when it exited 0. */
static int run_gnuplot(const char *script)
{
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    FILE *n = freopen("/dev/null", "w", stdout);
    (void)n;
    execlp("gnuplot", "gnuplot", script, (char *)NULL);
    _exit(127);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR)
      return -1;
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

/* What the two plots draw from, and the scratch folder's files. */
typedef struct plot_ctx {
  const bench_def *b;
  const run_opts *o;
  const bench_network *net;
  const pop_stats *ps;
  const spike *sp;
  size_t n_sp;
  int64_t from, end_step; /* the raster's window, in steps */
  uint64_t total; /* analysed neurons */
  double ypos[BENCH_MAX_POPS];
  char dir[4200], data[4300];
} plot_ctx;

/* The raster's data: the last 200 ms; the first population at the top, as NEST's example draws it. */
static int raster_data(plot_ctx *p)
{
  const bench_network *net = p->net;
  p->total = 0;
  for (int k = 0; k < net->n_pops; ++k) {
    if (net->analyse[k])
      p->total += p->ps[k].n;
  }
  p->from = p->end_step - (int64_t)llround(200.0 / p->o->dt);
  snprintf(p->data, sizeof p->data, "%s/raster.dat", p->dir);
  FILE *f = fopen(p->data, "w");
  if (!f)
    return -1;
  uint64_t above = 0;
  for (int k = 0; k < net->n_pops; ++k) {
    if (!net->analyse[k])
      continue;
    p->ypos[k] = (double)(p->total - above) - 0.5 * p->ps[k].n;
    int any = 0;
    for (size_t s = 0; s < p->n_sp; ++s) {
      const spike *x = &p->sp[s];
      if (x->pop != k || x->step < p->from || x->step >= p->end_step)
        continue;
      fprintf(f, "%.3f %llu\n", (double)(x->step + 1) * p->o->dt,
              (unsigned long long)(p->total - above - (x->gid - p->ps[k].first)));
      any = 1;
    }
    if (!any)
      fprintf(f, "NaN NaN\n");
    fprintf(f, "\n\n");
    above += p->ps[k].n;
  }
  return fclose(f) != 0 ? -1 : 0;
}

static void raster_script(FILE *f, const char *tmp_png, const plot_ctx *p)
{
  const bench_network *net = p->net;
  fprintf(f, "set terminal pngcairo size 900,700 noenhanced font ',11'\nset output '%s'\n", tmp_png);
  fprintf(f, "set title 'nestcl %s: spikes of the last 200 ms'\nset xlabel 'time (ms)'\nset key off\n", p->b->name);
  fprintf(f, "set xrange [%.3f:%.3f]\nset yrange [0:%llu]\nset ytics (", (double)p->from * p->o->dt,
          (double)p->end_step * p->o->dt, (unsigned long long)p->total + 1);
  int first = 1;
  for (int k = 0; k < net->n_pops; ++k) {
    if (!net->analyse[k])
      continue;
    fprintf(f, "%s'%s' %.1f", first ? "" : ", ", net->pop_name[k], p->ypos[k]);
    first = 0;
  }
  fprintf(f, ")\nplot ");
  int idx = 0;
  first = 1;
  for (int k = 0; k < net->n_pops; ++k) {
    if (!net->analyse[k])
      continue;
    fprintf(f, "%s'%s' index %d using 1:2 with points pt 7 ps 0.15 lc rgb '%s' title '%s'", first ? "" : ", ", p->data,
            idx, pop_colours[k % 8], net->pop_name[k]);
    first = 0;
    idx++;
  }
  fprintf(f, "\nunset output\n");
}

/* The rates' data: per population, nestcl beside NEST's reference. */
static int rates_data(plot_ctx *p)
{
  const bench_network *net = p->net;
  snprintf(p->data, sizeof p->data, "%s/rates.dat", p->dir);
  FILE *f = fopen(p->data, "w");
  if (!f)
    return -1;
  for (int k = 0; k < net->n_pops; ++k) {
    if (!net->analyse[k])
      continue;
    if (isfinite(net->ref_rate_hz[k])) {
      fprintf(f, "%s %.6f %.6f\n", net->pop_name[k], p->ps[k].rate, net->ref_rate_hz[k]);
    } else {
      fprintf(f, "%s %.6f NaN\n", net->pop_name[k], p->ps[k].rate);
    }
  }
  return fclose(f) != 0 ? -1 : 0;
}

static void rates_script(FILE *f, const char *tmp_png, const plot_ctx *p)
{
  fprintf(f, "set terminal pngcairo size 900,500 noenhanced font ',11'\nset output '%s'\n", tmp_png);
  fprintf(f,
          "set title 'nestcl %s: firing rate per population'\nset ylabel 'rate (spikes/s)'\n"
          "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
          "set boxwidth 0.9\nset yrange [0:*]\nset key top left\nset grid ytics\n",
          p->b->name);
  fprintf(f,
          "plot '%s' using 2:xtic(1) title 'nestcl' lc rgb '#595289', '' using 3 title "
          "'NEST reference (full scale)' lc rgb '#af143c'\nunset output\n",
          p->data);
}

/*
 * <plots>/<benchmark>_<name>.png: the script (written by script_fn) into the
 * scratch folder, gnuplot on it, the PNG registered with the other outputs.
 * failed: the message when gnuplot fails. -1 when a file could not be written,
 * -2 after an error line.
 */
static int render(const plot_ctx *p, const char *name, const char *failed,
                  void (*script_fn)(FILE *, const char *, const plot_ctx *), cli_outputs *pend)
{
  char script[4300], png[4300];
  snprintf(png, sizeof png, "%s/%s_%s.png", p->o->plots, p->b->name, name);
  char *tmp_png = cli_tmp_name(png);
  snprintf(script, sizeof script, "%s/%s.gp", p->dir, name);
  FILE *f = fopen(script, "w");
  int rc;
  if (f && tmp_png) {
    script_fn(f, tmp_png, p);
    rc = fclose(f) != 0 ? -1 : 0;
  } else {
    if (f)
      fclose(f);
    rc = -1;
  }
  if (!rc) {
    int g = run_gnuplot(script);
    if (g != 0) {
      fprintf(stderr, "error: --plots: %s\n",
              g == 127 ? "gnuplot not found (install gnuplot-nox: scripts/setup)" : failed);
      remove(tmp_png);
      rc = -2;
    } else {
      if (cli_outputs_add(pend, tmp_png, png))
        rc = -2;
      tmp_png = NULL;
    }
  }
  free(tmp_png);
  return rc;
}

/*
 * The two PNGs. Data go to a scratch folder beside the outputs; gnuplot
 * writes each PNG to its temporary name, renamed with the other outputs.
 */
static int make_plots(const bench_def *b, const run_opts *o, const bench_network *net, const pop_stats *ps,
                      const spike *sp, size_t n_sp, int64_t end_step, cli_outputs *pend)
{
  plot_ctx p;
  memset(&p, 0, sizeof p);
  p.b = b;
  p.o = o;
  p.net = net;
  p.ps = ps;
  p.sp = sp;
  p.n_sp = n_sp;
  p.end_step = end_step;
  if (mkdir(o->plots, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "error: --plots: cannot create %s: %s\n", o->plots, strerror(errno));
    return -1;
  }
  snprintf(p.dir, sizeof p.dir, "%s/.nestcl-plot.%ld", o->plots, (long)getpid());
  if (mkdir(p.dir, 0777) != 0) {
    fprintf(stderr, "error: --plots: cannot create %s: %s\n", p.dir, strerror(errno));
    return -1;
  }
  int rc = raster_data(&p);
  if (!rc)
    rc = render(&p, "raster", "gnuplot failed on the raster", raster_script, pend);
  if (!rc)
    rc = rates_data(&p);
  if (!rc)
    rc = render(&p, "rates", "gnuplot failed on the rates", rates_script, pend);
  if (rc == -1) {
    fprintf(stderr, "error: --plots: cannot write into %s: %s\n", p.dir, strerror(errno));
  }
  static const char *const scratch[] = {"raster.dat", "rates.dat", "raster.gp", "rates.gp"};
  for (int k = 0; k < 4; ++k) {
    snprintf(p.data, sizeof p.data, "%s/%s", p.dir, scratch[k]);
    remove(p.data);
  }
  rmdir(p.dir);
  return rc ? -1 : 0;
}

/* One run of a benchmark: its flags, engine, network, measurements and pending outputs. */
typedef struct bench_run {
  const bench_def *b;
  void *bo; /* the benchmark's own options */
  run_opts o;
  int argc;
  char **argv;
  int rank, ranks;
  nestcl_engine *e;
  bench_network net;
  int rec[BENCH_MAX_POPS];
  pop_stats ps[BENCH_MAX_POPS];
  spike *sp; /* the analysed populations' spikes, sorted by step and id */
  size_t n_sp, cap_sp;
  nestcl_vp_stats *vp0;
  nestcl_engine_stats s0, s1;
  nestcl_kernel_profile k0, k1; /* the streams' kernels before and after the measured part */
  double build_wall, presim_wall, sim_wall;
  /* The measured window [presim, presim + simtime), of which a restored run has only the part from its checkpoint on. */
  double sim_ms;
  int64_t from_step, end_step;
  cli_outputs pend;
} bench_run;

/*
 * Creates the engine, describes the benchmark's network and its spike
 * recorders; --dry-run then prints the estimate (*code set); else builds (or
 * restores). Engine status codes.
 */
static int build(bench_run *r, int *code)
{
  const run_opts *o = &r->o;
  nestcl_engine_config cfg;
  nestcl_engine_config_defaults(&cfg);
  cfg.resolution_ms = o->dt;
  cfg.seed = (uint32_t)o->seed;
  cfg.cpu_threads = o->threads;
  cfg.gpu_streams = o->streams;
  cfg.gpu_fraction = o->gpu_fraction;
  cfg.device = o->device;
  cfg.weight_type = o->weight_double ? NESTCL_WEIGHT_DOUBLE : NESTCL_WEIGHT_FLOAT;
  cfg.use_mpi = o->mpi;
  cfg.sync_interval = o->sync_interval;
  cfg.host_clock = o->host_clock;
  cfg.command_buffer = !o->no_command_buffer;
  cfg.kernel_sample = o->kernel_sample;
  cfg.persistent = o->persistent;
  r->o.build.quiet = o->quiet || r->rank != 0;
  cli_build_config(&r->o.build, &cfg);
  bench_common common = {o->dt, o->simtime, o->presim};
  double t_build0 = cli_now();
  int rc = nestcl_engine_create(&cfg, &r->e);
  if (!rc)
    cli_stop_on_signals(r->e);
  if (!rc)
    rc = nestcl_engine_set_models(r->e, nestcl_builtin_models, nestcl_builtin_model_count);
  if (!rc)
    rc = r->b->build(r->bo, &common, r->e, &r->net);
  for (int k = 0; k < r->net.n_pops && !rc; ++k) {
    r->rec[k] = -1;
    nestcl_engine_population_range(r->e, r->net.pop[k], &r->ps[k].first, &r->ps[k].n);
    if (r->net.analyse[k])
      rc = nestcl_engine_add_spike_recorder(r->e, r->net.pop[k], 0, r->ps[k].n, &r->rec[k]);
  }
  if (!rc && o->dry_run) {
    rc = cli_dry_run(r->e, r->b->name);
    if (rc) {
      fprintf(stderr, "error: %s\n", nestcl_last_error());
      *code = cli_exit_code(rc);
    } else {
      *code = CLI_OK;
    }
    return rc;
  }
  if (!rc && !o->quiet && r->rank == 0) {
    uint64_t n = 0;
    for (int k = 0; k < r->net.n_pops; ++k)
      n += r->ps[k].n;
    fprintf(stderr, "nestcl: building %s: %llu neurons\n", r->b->name, (unsigned long long)n);
  }
  if (!rc)
    rc = cli_ckpt_prepare(r->e, &r->o.ck, o->dt, o->presim + o->simtime);
  cli_build_done(&r->o.build);
  if (!rc)
    rc = cli_build_checksums(r->e, &r->o.build);
  r->build_wall = cli_now() - t_build0;
  return rc;
}

/* Presimulation and the measured simulation, with the stats before the latter; engine status codes. */
static int simulate(bench_run *r)
{
  run_opts *o = &r->o;
  /* Times from t = 0: a restored run starts at its checkpoint's, and skips what lies before. */
  int rc = cli_run_until(r->e, "presim", o->presim, &o->ck, o->dt, o->quiet || r->rank, &r->presim_wall);
  if (!rc) {
    nestcl_engine_get_stats(r->e, &r->s0);
    r->vp0 = malloc((size_t)(r->s0.n_vps ? r->s0.n_vps : 1) * sizeof *r->vp0);
    if (r->vp0)
      memcpy(r->vp0, r->s0.vps, (size_t)r->s0.n_vps * sizeof *r->vp0);
    else
      rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  if (!rc)
    rc = nestcl_engine_kernel_profile(r->e, &r->k0);
  if (!rc)
    rc = cli_run_until(r->e, "sim", o->presim + o->simtime, &o->ck, o->dt, o->quiet || r->rank, &r->sim_wall);
  return rc;
}

/* Rate and CV of ISI of population k from its spikes' ISI sums, once its spikes were counted. */
static void pop_cv_rate(bench_run *r, pop_stats *p, const double *sum, const double *sum2, const long *cnt)
{
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
  p->rate = r->sim_ms > 0.0 && p->n ? (double)p->spikes / (double)p->n / (r->sim_ms * 1e-3) : 0.0;
}

/* Synchrony (Potjans & Diesmann 2014): variance over mean of the spike count of 1000 neurons in 3 ms bins. */
static double synchrony(const double *hist, int64_t n_bins)
{
  double hm = 0.0, hv = 0.0;
  for (int64_t q = 0; q < n_bins; ++q)
    hm += hist[q];
  hm = n_bins > 0 ? hm / (double)n_bins : 0.0;
  for (int64_t q = 0; q < n_bins; ++q)
    hv += (hist[q] - hm) * (hist[q] - hm);
  hv = n_bins > 0 ? hv / (double)n_bins : 0.0;
  return hm > 0.0 ? hv / hm : NAN;
}

/* Population k's spikes appended to r->sp, and its spikes, rate, CV and synchrony in the window; CLI exit codes. */
static int analyse_pop(bench_run *r, int k)
{
  const uint64_t *gids;
  const int64_t *steps;
  size_t n;
  nestcl_engine_spikes(r->e, r->rec[k], &gids, &steps, &n);
  if (r->n_sp + n > r->cap_sp) {
    r->cap_sp = (r->n_sp + n) * 2 + 16;
    spike *t = realloc(r->sp, r->cap_sp * sizeof *r->sp);
    if (!t) {
      fprintf(stderr, "error: out of host memory\n");
      return CLI_RUNTIME;
    }
    r->sp = t;
  }
  pop_stats *p = &r->ps[k];
  const double dt = r->o.dt;
  const int64_t from_step = r->from_step, end_step = r->end_step;
  int64_t *last = malloc((size_t)(p->n ? p->n : 1) * sizeof *last);
  double *sum = calloc(p->n ? p->n : 1, sizeof *sum), *sum2 = calloc(p->n ? p->n : 1, sizeof *sum2);
  long *cnt = calloc(p->n ? p->n : 1, sizeof *cnt);
  int64_t bin = (int64_t)llround(3.0 / dt), n_bins = (end_step - from_step + bin - 1) / (bin ? bin : 1);
  double *hist = calloc((size_t)(n_bins > 0 ? n_bins : 1), sizeof *hist);
  if (!last || !sum || !sum2 || !cnt || !hist) {
    free(last);
    free(sum);
    free(sum2);
    free(cnt);
    free(hist);
    fprintf(stderr, "error: out of host memory\n");
    return CLI_RUNTIME;
  }
  for (uint32_t i = 0; i < p->n; ++i)
    last[i] = -1;
  uint32_t sync_n = p->n < 1000 ? p->n : 1000;
  for (size_t s = 0; s < n; ++s) {
    r->sp[r->n_sp++] = (spike){gids[s], steps[s], k};
    if (steps[s] < from_step || steps[s] >= end_step)
      continue;
    uint32_t i = (uint32_t)(gids[s] - p->first);
    p->spikes++;
    if (i < sync_n && bin > 0)
      hist[(steps[s] - from_step) / bin] += 1.0;
    if (last[i] >= 0) {
      double isi = (double)(steps[s] - last[i]) * dt;
      sum[i] += isi;
      sum2[i] += isi * isi;
      cnt[i]++;
    }
    last[i] = steps[s];
  }
  pop_cv_rate(r, p, sum, sum2, cnt);
  p->synchrony = synchrony(hist, n_bins);
  free(last);
  free(sum);
  free(sum2);
  free(cnt);
  free(hist);
  return CLI_OK;
}

/* The activity of every analysed population over the measured window; CLI exit codes. */
static int analyse(bench_run *r)
{
  const run_opts *o = &r->o;
  double win0 = o->ck.restored_ms > o->presim ? o->ck.restored_ms : o->presim;
  r->sim_ms = o->presim + o->simtime - win0;
  r->from_step = (int64_t)llround(win0 / o->dt);
  r->end_step = (int64_t)llround((o->presim + o->simtime) / o->dt);
  for (int k = 0; k < r->net.n_pops; ++k) {
    if (!r->net.analyse[k])
      continue;
    int code = analyse_pop(r, k);
    if (code != CLI_OK)
      return code;
  }
  qsort(r->sp, r->n_sp, sizeof *r->sp, spike_cmp);
  return CLI_OK;
}

/* config: the shared flags, the device, the outputs (results.schema.md's order). */
static void write_config(json *j, const bench_run *r)
{
  const run_opts *o = &r->o;
  results_begin(j, r->b->name, r->argc, r->argv);
  json_key(j, "simtime_ms");
  json_number(j, o->simtime);
  json_key(j, "presim_ms");
  json_number(j, o->presim);
  json_key(j, "resolution_ms");
  json_number(j, o->dt);
  json_key(j, "threads");
  json_integer(j, o->threads);
  json_key(j, "streams");
  json_integer(j, o->streams);
  json_key(j, "gpu_fraction");
  json_number(j, o->gpu_fraction);
  results_config_device(j, o->device, &r->s1);
  json_key(j, "seed");
  json_integer(j, (long long)o->seed);
  json_key(j, "weight_type");
  json_string(j, o->weight_double ? "double" : "float");
  json_key(j, "mpi_ranks");
  json_integer(j, r->ranks);
  results_config_loop(j, o->sync_interval, o->host_clock, !o->no_command_buffer, o->kernel_sample, o->persistent);
  cli_build_json(j, &o->build);
  cli_ckpt_json(j, &o->ck);
  json_key(j, "spikes_file");
  if (o->spikes)
    json_string(j, o->spikes);
  else
    json_null(j);
  json_key(j, "plots_dir");
  if (o->plots)
    json_string(j, o->plots);
  else
    json_null(j);
  results_config_end(j);
}

/* network: its size, the benchmark's figures, its populations. */
static void write_network(json *j, const bench_run *r)
{
  const bench_network *net = &r->net;
  json_key(j, "network");
  json_begin_object(j);
  json_key(j, "neurons");
  json_integer(j, (long long)r->s1.neurons);
  json_key(j, "synapses");
  json_integer(j, (long long)r->s1.synapses);
  json_key(j, "min_delay_steps");
  json_integer(j, r->s1.min_delay_steps);
  json_key(j, "max_delay_steps");
  json_integer(j, r->s1.max_delay_steps);
  for (int k = 0; k < net->n_info; ++k) {
    json_key(j, net->info[k].name);
    json_number(j, net->info[k].value);
  }
  cli_build_checksums_json(j, &r->o.build);
  json_key(j, "populations");
  json_begin_array(j);
  for (int k = 0; k < net->n_pops; ++k) {
    json_begin_object(j);
    json_key(j, "name");
    json_string(j, net->pop_name[k]);
    json_key(j, "neurons");
    json_integer(j, r->ps[k].n);
    json_key(j, "first_node_id");
    json_integer(j, (long long)r->ps[k].first + 1);
    json_end_object(j);
  }
  json_end_array(j);
  json_end_object(j);
}

/* activity: over the analysed populations together, then each. */
static void write_activity(json *j, const bench_run *r)
{
  const bench_network *net = &r->net;
  const pop_stats *ps = r->ps;
  uint64_t an_neurons = 0, an_spikes = 0;
  double cv_all = 0.0;
  long cv_all_n = 0;
  for (int k = 0; k < net->n_pops; ++k) {
    if (!net->analyse[k])
      continue;
    an_neurons += ps[k].n;
    an_spikes += ps[k].spikes;
    if (ps[k].cv_n) {
      cv_all += ps[k].cv * (double)ps[k].cv_n;
      cv_all_n += ps[k].cv_n;
    }
  }
  results_activity a = {r->s1.spikes - r->s0.spikes,
                        an_neurons,
                        an_spikes,
                        r->s1.synaptic_events - r->s0.synaptic_events,
                        an_neurons && r->sim_ms > 0 ? (double)an_spikes / (double)an_neurons / (r->sim_ms * 1e-3) : 0.0,
                        cv_all_n ? cv_all / (double)cv_all_n : NAN};
  results_activity_begin(j, &a, &r->s1, r->sim_ms, r->sim_wall);
  json_key(j, "populations");
  json_begin_array(j);
  for (int k = 0; k < net->n_pops; ++k) {
    if (!net->analyse[k])
      continue;
    json_begin_object(j);
    json_key(j, "name");
    json_string(j, net->pop_name[k]);
    json_key(j, "neurons");
    json_integer(j, ps[k].n);
    json_key(j, "spikes");
    json_integer(j, (long long)ps[k].spikes);
    json_key(j, "rate_hz");
    json_number(j, ps[k].rate);
    json_key(j, "cv_isi");
    if (isfinite(ps[k].cv))
      json_number(j, ps[k].cv);
    else
      json_null(j);
    json_key(j, "cv_neurons");
    json_integer(j, ps[k].cv_n);
    json_key(j, "synchrony");
    if (isfinite(ps[k].synchrony))
      json_number(j, ps[k].synchrony);
    else
      json_null(j);
    json_key(j, "nest_reference_rate_hz");
    if (isfinite(net->ref_rate_hz[k]))
      json_number(j, net->ref_rate_hz[k]);
    else
      json_null(j);
    json_end_object(j);
  }
  json_end_array(j);
  json_end_object(j);
}

/* The whole results document (results.schema.md). */
static void write_results(json *j, const bench_run *r)
{
  write_config(j, r);
  write_network(j, r);
  results_build_time(j, &r->s1, r->build_wall, r->o.build.peak_rss);
  results_sim sim = {&r->s0, &r->s1, r->vp0, r->presim_wall, r->sim_wall, r->sim_ms, 0, &r->k0, &r->k1};
  results_simulation(j, &sim);
  write_activity(j, r);
  results_memory_end(j, &r->s1, 0);
}

/* --spikes: NEST's RecordingBackendASCII: two header lines, the column names, then sender and time (3 decimals). */
static int write_spikes(bench_run *r)
{
  FILE *f = cli_outputs_open(&r->pend, r->o.spikes);
  if (!f)
    return -1;
  fprintf(f, "# NEST version: %s (written by nestcl %s)\n# RecordingBackendASCII version: %s\nsender\ttime_ms\n",
          NEST_FORMAT_VERSION, nestcl_version(), NEST_ASCII_VERSION);
  for (size_t s = 0; s < r->n_sp; ++s) {
    fprintf(f, "%llu\t%.3f\n", (unsigned long long)r->sp[s].gid + 1, (double)(r->sp[s].step + 1) * r->o.dt);
  }
  return cli_close_checked(f, r->o.spikes);
}

/* The outputs (rank 0): spikes, plots and results, renamed together, then the summary on stderr; an exit code. */
static int write_outputs(bench_run *r, const json *j)
{
  const run_opts *o = &r->o;
  if (o->spikes && write_spikes(r))
    return CLI_RUNTIME;
  if (o->plots && make_plots(r->b, o, &r->net, r->ps, r->sp, r->n_sp, r->end_step, &r->pend))
    return CLI_RUNTIME;
  if (o->out) {
    FILE *f = cli_outputs_open(&r->pend, o->out);
    if (!f)
      return CLI_RUNTIME;
    fwrite(j->buf, 1, j->len, f);
    fputc('\n', f);
    if (cli_close_checked(f, o->out))
      return CLI_RUNTIME;
  }
  if (cli_outputs_commit(&r->pend))
    return CLI_RUNTIME;
  if (!o->out) {
    fwrite(j->buf, 1, j->len, stdout);
    fputc('\n', stdout);
    fflush(stdout);
  }
  if (!o->quiet) {
    uint64_t events = r->s1.synaptic_events - r->s0.synaptic_events;
    fprintf(stderr, "nestcl: %s: real-time factor %.2f, %.3g synaptic events/s, %.2f bytes/synapse\n", r->b->name,
            r->sim_ms > 0 ? r->sim_wall / (r->sim_ms * 1e-3) : 0.0,
            r->sim_wall > 0 ? (double)events / r->sim_wall : 0.0, r->s1.bytes_per_synapse);
    for (int k = 0; k < r->net.n_pops; ++k) {
      if (!r->net.analyse[k])
        continue;
      fprintf(stderr, "nestcl:   %-5s %6u neurons  %7.3f Hz  CV %.3f  synchrony %.2f\n", r->net.pop_name[k], r->ps[k].n,
              r->ps[k].rate, r->ps[k].cv, r->ps[k].synchrony);
    }
  }
  return CLI_OK;
}

/* Everything after the flags: build, simulate, analyse, write; an exit code. */
static int run(bench_run *r)
{
  int code = -1;
  int rc = build(r, &code);
  if (code >= 0)
    return code;
  if (!rc)
    rc = simulate(r);
  if (rc) {
    if (r->rank == 0 || rc != NESTCL_EINTR)
      cli_report(rc, r->e, r->o.presim + r->o.simtime);
    return cli_exit_code(rc);
  }
  nestcl_engine_get_stats(r->e, &r->s1);
  if (nestcl_engine_kernel_profile(r->e, &r->k1))
    fprintf(stderr, "warning: no kernel table: %s\n", nestcl_last_error());
  code = analyse(r);
  if (code != CLI_OK)
    return code;
  json j;
  json_init(&j);
  write_results(&j, r);
  if (j.failed) {
    fprintf(stderr, "error: out of host memory writing the results\n");
    code = CLI_RUNTIME;
  } else if (r->rank == 0) {
    code = write_outputs(r, &j);
  }
  json_free(&j);
  return code;
}

int cli_run_benchmark(const bench_def *b, int argc, char **argv)
{
  bench_run *r = calloc(1, sizeof *r);
  void *bo = calloc(1, b->opts_size);
  if (!r || !bo) {
    free(r);
    free(bo);
    fprintf(stderr, "error: out of host memory\n");
    return CLI_RUNTIME;
  }
  r->b = b;
  r->bo = bo;
  r->argc = argc;
  r->argv = argv;
  int pr = parse(b, argc, argv, &r->o, bo);
  int code = pr > 0 ? CLI_OK : CLI_USAGE;
  /* From here on SIGINT and SIGTERM stop the run at the end of a super step and leave no output file. */
  if (!pr)
    cli_stop_on_signals(NULL);
  if (!pr && (code = cli_start_mpi(r->o.mpi, &r->rank, &r->ranks)) == CLI_OK) {
    code = run(r);
    cli_outputs_drop(&r->pend);
    nestcl_engine_destroy(r->e);
    cli_end_mpi(r->o.mpi);
  }
  cli_build_free(&r->o.build);
  free(r->sp);
  free(r->vp0);
  nestcl_kernel_profile_free(&r->k0);
  nestcl_kernel_profile_free(&r->k1);
  free(bo);
  free(r);
  return code;
}
