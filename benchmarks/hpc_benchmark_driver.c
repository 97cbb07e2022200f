/*
 * `nestcl run hpc_benchmark`: the driver of NEST's hpc_benchmark network,
 * whose description is benchmarks/hpc_benchmark.c. Here: the flags, the split
 * (given, or chosen by the fitted performance model, and --rebalance's rounds
 * in the presimulation), presimulation and measured simulation, the E->E
 * weights (NEST's stdp_pl_synapse_hom, or static with --ee-synapse static),
 * and the results JSON (results.schema.md, through results.c), written to a
 * temporary file and renamed, so a failed run leaves no file (--rebalance's
 * rounds: hpc_rebalance.c). The steps of a run: parse and validate the flags,
 * choose the split, build, presimulate (or rebalance), simulate, measure,
 * report.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "hpc_benchmark.h"
#include "hpc_benchmark_run.h"
#include "json.h"
#include "results.h"
#include "run_common.h"
#include "nestcl/engine.h"
#include "nestcl/version.h"
#ifdef NESTCL_WITH_PERFMODEL
#include "pm_auto.h"
#endif


static void help(void)
{
  printf("usage: nestcl run hpc_benchmark [flags]\n"
         "\n"
         "NEST's hpc_benchmark (balanced random network, iaf_psc_alpha, Poisson drive;\n"
         "E->E plastic: NEST's stdp_pl_synapse_hom, translated).\n"
         "\n"
         "  --scale S            network size: NE = 9000 S, NI = 2250 S (default 0.1)\n"
         "  --k-scale K          in-degrees CE = 9000 K, CI = 2250 K, in (0, 1] (default 1, NEST's\n"
         "                       benchmark; smaller for quick checks: the Poisson drive stays)\n"
         "  --simtime MS         measured simulation time (default 250)\n"
         "  --presim MS          presimulation before it (default 50)\n"
         "  --threads N|auto     CPU threads (CPU VPs; default 0)\n"
         "  --streams N|auto     OpenCL streams on the device (GPU VPs; default 1); 'auto' for\n"
         "                       both (or either) lets the performance model choose them\n"
         "  --gpu-fraction A     share of neurons on the streams, in [0, 1], or 'auto' (the\n"
         "                       default): with threads and streams, the share the fitted\n"
         "                       performance model predicts fastest (docs/perfmodel.md)\n"
         "  --profile FILE       performance profile for 'auto' (default: the cache folder's\n"
         "                       profile of the device; calibrated first when there is none)\n"
         "  --calibration-budget S  seconds a calibration may take (default 300)\n"
         "  --rebalance          measure the wall time and the threads' and streams' busy times in\n"
         "                       the second half of the presimulation, correct the performance\n"
         "                       model by them and try its best split, until it was measured;\n"
         "                       the results are the same (the network is rebuilt with the new\n"
         "                       share and the presimulation replayed)\n"
         "  --rebalance-rounds N at most N further splits measured (default 3); the run then\n"
         "                       goes on with the fastest split measured\n"
         "  --device SPEC        OpenCL device: cpu, gpu, gpu:1, <platform>:<index>\n"
         "                       (default: $NESTCL_DEVICE, else the first GPU, else the first device)\n"
         "  --seed N             random seed (default 12345)\n"
         "  --record N           record spikes of the first N E neurons for rate and CV (default 1000)\n"
         "  --out FILE           results JSON to FILE (default: stdout)\n"
         "  --weight-type T      float (default) or double synaptic weights\n"
         "  --dt MS              resolution (default 0.1)\n"
         "  --delay MS           synaptic delay of all connections (default 1.5)\n"
         "  --model NAME         neuron model (default iaf_psc_alpha)\n"
         "  --ee-synapse S       E->E synapses: stdp_pl_synapse_hom (default, NEST's plastic\n"
         "                       benchmark) or static (static_synapse at the same initial weight)\n"
         "  --history-max N      most entries of a neuron's STDP spike history (default 4096)\n"
         "  --plastic-tasks N|off  CPU threads share their plastic delivery: each thread's is cut into\n"
         "                       N tasks (ranges of targets) per population, and a thread done with its\n"
         "                       own takes the others' open ones (default 16; off: each thread alone;\n"
         "                       the same results)\n"
         "  --device-memory B    device memory budget of the streams in bytes (suffix K, M, G; default:\n"
         "                       what the device has); plastic synapses that do not fit are delivered\n"
         "                       in batches from host memory (same results)\n"
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
         "  --dry-run            print the memory estimate (host and device, per VP) as JSON and exit;\n"
         "                       a run refuses a network that cannot fit before building it\n"
         "  --help, --version\n",
         cli_build_help);
}

static void defaults(hpc_opts *o)
{
  memset(o, 0, sizeof *o);
  o->scale = 0.1;
  o->k_scale = 1.0;
  o->simtime = 250.0;
  o->presim = 50.0;
  o->dt = 0.1;
  o->kernel_sample = 64;
  o->persistent = -1;
  cli_ckpt_init(&o->ck);
  cli_build_init(&o->build);
  o->delay = 1.5;
  o->gpu_fraction_auto = 1;
  /* The main job runs on the default OpenCL device; --threads N --streams 0 is the pure C path. */
  o->threads = 0;
  o->streams = 1;
  o->seed = 12345;
  o->record = 1000;
  o->model = "iaf_psc_alpha";
  o->history_max = 4096;
  o->calibration_budget = 300.0;
  o->rebalance_rounds = 3;
}

/* The flags' results of one flag: taken, an error (reported), --help/--version done, not this parser's. */
enum { FLAG_TAKEN = 0, FLAG_ERROR = -1, FLAG_EXIT = 1, FLAG_OTHER = 2 };

/* --gpu-fraction A|auto. */
static int parse_gpu_fraction(hpc_opts *o, const char *a, const char *x)
{
  if (x && strcmp(x, "auto") == 0) {
    o->gpu_fraction_auto = 1;
    return FLAG_TAKEN;
  }
  if (cli_parse_double(a, x, &o->gpu_fraction))
    return FLAG_ERROR;
  o->gpu_fraction_auto = 0;
  if (o->gpu_fraction < 0.0 || o->gpu_fraction > 1.0) {
    fprintf(stderr, "error: --gpu-fraction %g outside [0, 1]\n", o->gpu_fraction);
    return FLAG_ERROR;
  }
  return FLAG_TAKEN;
}

/* The run's size, times and split: --scale ... --device. */
static int parse_split_flag(hpc_opts *o, cli_args *c)
{
  const char *a = c->a;
  long l;
  if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
    help();
    return FLAG_EXIT;
  } else if (strcmp(a, "--version") == 0) {
    printf("nestcl %s\n", nestcl_version());
    return FLAG_EXIT;
  } else if (strcmp(a, "--scale") == 0) {
    if (cli_parse_double(a, cli_args_value(c), &o->scale))
      return FLAG_ERROR;
  } else if (strcmp(a, "--k-scale") == 0) {
    if (cli_parse_double(a, cli_args_value(c), &o->k_scale))
      return FLAG_ERROR;
  } else if (strcmp(a, "--simtime") == 0) {
    if (cli_parse_double(a, cli_args_value(c), &o->simtime))
      return FLAG_ERROR;
  } else if (strcmp(a, "--presim") == 0) {
    if (cli_parse_double(a, cli_args_value(c), &o->presim))
      return FLAG_ERROR;
  } else if (strcmp(a, "--dt") == 0) {
    if (cli_parse_double(a, cli_args_value(c), &o->dt))
      return FLAG_ERROR;
  } else if (strcmp(a, "--delay") == 0) {
    if (cli_parse_double(a, cli_args_value(c), &o->delay))
      return FLAG_ERROR;
  } else if ((strcmp(a, "--threads") == 0 || strcmp(a, "--streams") == 0) && cli_args_peek(c) &&
             strcmp(cli_args_peek(c), "auto") == 0) {
    (void)cli_args_value(c);
    *(strcmp(a, "--threads") == 0 ? &o->threads : &o->streams) = -1;
  } else if (strcmp(a, "--profile") == 0) {
    o->profile = cli_args_value(c);
    if (!o->profile || !*o->profile) {
      fprintf(stderr, "error: --profile needs a file name\n");
      return FLAG_ERROR;
    }
  } else if (strcmp(a, "--rebalance") == 0) {
    o->rebalance = 1;
  } else if (strcmp(a, "--rebalance-rounds") == 0) {
    if (cli_parse_long(a, cli_args_value(c), 1, 10, &o->rebalance_rounds))
      return FLAG_ERROR;
  } else if (strcmp(a, "--calibration-budget") == 0) {
    if (cli_parse_double(a, cli_args_value(c), &o->calibration_budget))
      return FLAG_ERROR;
    if (!(o->calibration_budget > 0.0)) {
      fprintf(stderr, "error: --calibration-budget must be positive\n");
      return FLAG_ERROR;
    }
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
    if (!o->device) {
      fprintf(stderr, "error: --device needs a spec\n");
      return FLAG_ERROR;
    }
  } else {
    return FLAG_OTHER;
  }
  return FLAG_TAKEN;
}

/* --device-memory B with a suffix K, M or G. */
static int parse_device_memory(hpc_opts *o, const char *x)
{
  char *end = NULL;
  errno = 0;
  double b = x ? strtod(x, &end) : 0.0;
  if (x && end != x) {
    double mul = *end == 'K' ? 1024.0 : *end == 'M' ? 1048576.0 : *end == 'G' ? 1073741824.0 : 1.0;
    end += mul > 1.0;
    b *= mul;
  }
  if (!x || errno || end == x || *end || !(b >= 1.0) || b > 1e18) {
    fprintf(stderr, "error: --device-memory needs a positive size in bytes, e.g. 512M (got '%s')\n", x ? x : "");
    return FLAG_ERROR;
  }
  o->device_memory = b;
  return FLAG_TAKEN;
}

/* The network's flags: --model, --ee-synapse, --history-max, --device-memory. */
static int parse_network_flag(hpc_opts *o, cli_args *c)
{
  const char *a = c->a;
  if (strcmp(a, "--model") == 0) {
    o->model = cli_args_value(c);
    if (!o->model) {
      fprintf(stderr, "error: --model needs a name\n");
      return FLAG_ERROR;
    }
  } else if (strcmp(a, "--ee-synapse") == 0) {
    const char *x = cli_args_value(c);
    if (x && (strcmp(x, "static") == 0 || strcmp(x, "static_synapse") == 0)) {
      o->ee_static = 1;
    } else if (x && (strcmp(x, "stdp_pl_synapse_hom") == 0 || strcmp(x, "stdp_pl_synapse_hom_hpc") == 0)) {
      o->ee_static = 0;
    } else {
      fprintf(stderr, "error: --ee-synapse must be stdp_pl_synapse_hom or static (got '%s')\n", x ? x : "");
      return FLAG_ERROR;
    }
  } else if (strcmp(a, "--history-max") == 0) {
    if (cli_parse_long(a, cli_args_value(c), 1, 1L << 24, &o->history_max))
      return FLAG_ERROR;
  } else if (strcmp(a, "--device-memory") == 0) {
    return parse_device_memory(o, cli_args_value(c));
  } else if (strcmp(a, "--plastic-tasks") == 0) {
    const char *x = cli_args_value(c);
    long l;
    if (x && strcmp(x, "off") == 0) {
      o->plastic_tasks = -1;
    } else if (cli_parse_long(a, x, 1, 4096, &l)) {
      return FLAG_ERROR;
    } else {
      o->plastic_tasks = (int)l;
    }
  } else {
    return FLAG_OTHER;
  }
  return FLAG_TAKEN;
}

/* The run's outputs and the engine's options: --seed ... --dry-run. */
static int parse_run_flag(hpc_opts *o, cli_args *c)
{
  const char *a = c->a;
  long l;
  if (strcmp(a, "--seed") == 0) {
    if (cli_parse_long(a, cli_args_value(c), 0, 0xffffffffL, &l))
      return FLAG_ERROR;
    o->seed = (unsigned long)l;
  } else if (strcmp(a, "--record") == 0) {
    if (cli_parse_long(a, cli_args_value(c), 0, LONG_MAX, &o->record))
      return FLAG_ERROR;
  } else if (strcmp(a, "--out") == 0) {
    o->out = cli_args_value(c);
    if (cli_need_path(a, o->out))
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

/* The flags together; -1 after an error line. */
static int validate(const hpc_opts *o)
{
  if (!(o->scale > 0.0) || o->scale > 1000.0) {
    fprintf(stderr, "error: --scale %g must be in (0, 1000]\n", o->scale);
    return -1;
  }
  if (!(o->k_scale > 0.0) || o->k_scale > 1.0) {
    fprintf(stderr, "error: --k-scale %g must be in (0, 1]\n", o->k_scale);
    return -1;
  }
  if (cli_check_times(o->dt, o->simtime, o->presim) || cli_ckpt_check(&o->ck, o->dt, o->presim + o->simtime)) {
    return -1;
  }
  if (o->out && cli_check_output("--out", o->out, 0)) {
    return -1; /* before the build: a run must not end in a write that fails */
  }
  if (o->rebalance && (o->ck.dir || o->ck.restore)) {
    fprintf(stderr,
            "error: --rebalance rebuilds and replays the presimulation: it does not combine with "
            "--checkpoint or --restore\n");
    return -1;
  }
  if (o->threads >= 0 && o->streams >= 0 && o->threads + o->streams < 1) {
    fprintf(stderr, "error: need at least one of --threads and --streams\n");
    return -1;
  }
  if (o->rebalance && !(o->presim > 0.0)) {
    fprintf(stderr, "error: --rebalance measures in the presimulation: give --presim > 0\n");
    return -1;
  }
  if (o->k_scale != 1.0 &&
      (o->threads < 0 || o->streams < 0 || o->rebalance ||
       (o->gpu_fraction_auto && o->threads > 0 && o->streams > 0))) {
    fprintf(stderr,
            "error: --k-scale %g: the performance model knows NEST's in-degrees only; give --threads and "
            "--streams as numbers (and --gpu-fraction with both), without --rebalance\n",
            o->k_scale);
    return -1;
  }
  if ((o->threads < 0 || o->streams < 0) && !o->gpu_fraction_auto) {
    fprintf(stderr, "error: --threads auto and --streams auto choose the split too: leave --gpu-fraction at auto\n");
    return -1;
  }
  return 0;
}

/* Returns -1 (usage error reported), 0, or 1 for --help/--version. */
static int parse(int argc, char **argv, hpc_opts *o)
{
  defaults(o);
  cli_args c;
  for (int i = 1; i < argc; i = c.i + 1) {
    cli_args_at(&c, argc, argv, i);
    int r = parse_split_flag(o, &c);
    if (r == FLAG_OTHER)
      r = parse_network_flag(o, &c);
    if (r == FLAG_OTHER)
      r = parse_run_flag(o, &c);
    if (r == FLAG_OTHER) {
      fprintf(stderr, "error: unknown flag '%s' (try --help)\n", argv[c.i]);
      return -1;
    }
    if (r != FLAG_TAKEN)
      return r;
  }
  return validate(o);
}


/*
 * Describes hpc_benchmark on a new engine with the split (threads, streams,
 * alpha) of o, and prepares it. The same flags give the same network whatever
 * the split: --rebalance builds it again with another alpha.
 */
static int make_network(hpc_opts *o, hpc_net *n)
{
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
  cfg.history_max = (uint32_t)o->history_max;
  cfg.plastic_tasks = o->plastic_tasks;
  cfg.device_memory = (size_t)o->device_memory;
  cli_build_config(&o->build, &cfg);
  if (cfg.history_capacity > cfg.history_max) {
    cfg.history_capacity = cfg.history_max;
  }
  nestcl_engine *e = NULL;
  n->rec = -1;
  int rc = nestcl_engine_create(&cfg, &e);
  n->e = e;
  if (!rc)
    cli_stop_on_signals(e);
  if (!rc)
    rc = nestcl_engine_set_models(e, nestcl_builtin_models, nestcl_builtin_model_count);
  if (!rc)
    rc = hpc_describe(e, o->model, o->delay, o->ee_static, &n->p);
  if (!rc && n->nrec > 0)
    rc = nestcl_engine_add_spike_recorder(e, n->p.pe, 0, n->nrec, &n->rec);
  /* Built, or built and restored from --restore's checkpoint. */
  if (!rc && !o->dry_run)
    rc = cli_ckpt_prepare(e, &o->ck, o->dt, o->presim + o->simtime);
  cli_build_done(&o->build);
  if (!rc && !o->dry_run)
    rc = cli_build_checksums(e, &o->build);
  return rc;
}


/* The activity of the recorded E neurons over the measured window. */
typedef struct hpc_activity {
  double sim_ms;
  size_t n_sim_spikes;
  double cv_sum;
  long cv_n;
  double rate;
} hpc_activity;

#ifdef NESTCL_WITH_PERFMODEL
/* The split from the performance profile (pm_auto.c); an exit code. */
static int auto_split(hpc_run *r)
{
  hpc_opts *o = &r->o;
  pm_auto_request rq = {o->scale,
                        !o->ee_static,
                        o->threads,
                        o->streams,
                        r->ranks,
                        o->mpi,
                        o->device,
                        o->profile,
                        o->calibration_budget,
                        !o->gpu_fraction_auto,
                        o->gpu_fraction};
  int ac = pm_auto_split(&rq, &r->ar);
  if (ac)
    return ac;
  o->threads = r->ar.threads;
  o->streams = r->ar.streams;
  o->gpu_fraction = r->ar.alpha;
  const char *src = r->ar.source;
  r->split_source = strcmp(src, "profile") == 0 ? "performance profile"
    : strcmp(src, "profile (repository)") == 0  ? "performance profile (repository)"
    : strcmp(src, "flag") == 0                  ? "flag"
    : strcmp(src, "single kind of VP") == 0     ? "single kind of VP"
                                                : "performance profile (calibrated now)";
  r->have_profile = strcmp(src, "single kind of VP") != 0;
  r->predicted = r->ar.predicted;
  snprintf(r->profile_used, sizeof r->profile_used, "%s", r->ar.profile_path);
  if (!o->quiet && r->rank == 0 && isfinite(r->predicted) && o->gpu_fraction_auto) {
    fprintf(stderr,
            "nestcl: auto split: %d thread(s), %d stream(s), gpu fraction %.3f (predicted %.2f s per "
            "simulated second; %s)\n",
            o->threads, o->streams, o->gpu_fraction, r->predicted, r->ar.profile_note);
  }
  return CLI_OK;
}
#endif

/* The split: the flags', the even one, or the performance model's; an exit code (after an error line). */
static int choose_split(hpc_run *r)
{
  hpc_opts *o = &r->o;
  r->split_source = o->gpu_fraction_auto ? "even share" : "flag";
  r->predicted = NAN;
  if (o->dry_run) {
    /* The estimate needs no performance model: the flags' split, or the even one. */
    if (o->threads < 0 || o->streams < 0) {
      fprintf(stderr, "error: --dry-run needs --threads and --streams as numbers\n");
      return CLI_USAGE;
    }
    if (o->gpu_fraction_auto)
      o->gpu_fraction = (double)o->streams / (o->threads + o->streams);
    o->rebalance = 0;
  } else if (o->gpu_fraction_auto || o->rebalance) {
#ifdef NESTCL_WITH_PERFMODEL
    return auto_split(r);
#else
    if (o->threads < 0 || o->streams < 0 || o->rebalance) {
      fprintf(stderr,
              "error: --threads/--streams auto and --rebalance need the performance model, and this nestcl "
              "was built without GSL\n");
      return CLI_USAGE;
    }
    if (o->gpu_fraction_auto)
      o->gpu_fraction = (double)o->streams / (o->threads + o->streams);
#endif
  }
  return CLI_OK;
}


/*
 * The measured simulation's activity of the recorded E neurons (a restored
 * run's: from its checkpoint on): spikes, the mean rate and the mean CV of
 * the ISIs of those with at least two. CLI_RUNTIME after an error line.
 */
static int measure_activity(const hpc_run *r, hpc_activity *a)
{
  const hpc_opts *o = &r->o;
  const uint32_t nrec = r->net.nrec;
  double win0 = o->ck.restored_ms > o->presim ? o->ck.restored_ms : o->presim;
  a->sim_ms = o->presim + o->simtime - win0;
  int64_t from_step = (int64_t)llround(win0 / o->dt);
  a->n_sim_spikes = 0;
  a->cv_sum = 0.0;
  a->cv_n = 0;
  if (r->net.rec >= 0) {
    const uint64_t *gids;
    const int64_t *steps;
    size_t n;
    nestcl_engine_spikes(r->net.e, r->net.rec, &gids, &steps, &n);
    int64_t *last = malloc(nrec * sizeof *last);
    double *sum = calloc(nrec, sizeof *sum), *sum2 = calloc(nrec, sizeof *sum2);
    long *cnt = calloc(nrec, sizeof *cnt);
    if (!last || !sum || !sum2 || !cnt) {
      fprintf(stderr, "error: out of host memory\n");
      free(last);
      free(sum);
      free(sum2);
      free(cnt);
      return CLI_RUNTIME;
    }
    for (uint32_t k = 0; k < nrec; ++k)
      last[k] = -1;
    uint64_t first;
    uint32_t npe;
    nestcl_engine_population_range(r->net.e, r->net.p.pe, &first, &npe);
    for (size_t k = 0; k < n; ++k) {
      if (steps[k] < from_step)
        continue;
      a->n_sim_spikes++;
      uint32_t i = (uint32_t)(gids[k] - first);
      if (last[i] >= 0) {
        double isi = (double)(steps[k] - last[i]) * o->dt;
        sum[i] += isi;
        sum2[i] += isi * isi;
        cnt[i]++;
      }
      last[i] = steps[k];
    }
    for (uint32_t i = 0; i < nrec; ++i) {
      if (cnt[i] >= 2) {
        double m = sum[i] / (double)cnt[i];
        double var = sum2[i] / (double)cnt[i] - m * m;
        a->cv_sum += sqrt(var > 0.0 ? var : 0.0) / m;
        a->cv_n++;
      }
    }
    free(last);
    free(sum);
    free(sum2);
    free(cnt);
  }
  a->rate = (nrec && a->sim_ms > 0) ? (double)a->n_sim_spikes / (double)nrec / (a->sim_ms * 1e-3) : 0.0;
  return CLI_OK;
}

/* config: the flags, the split and why, --rebalance's rounds, the device (results.schema.md's order). */
static void write_config(json *j, const hpc_run *r)
{
  const hpc_opts *o = &r->o;
  results_begin(j, "hpc_benchmark", r->argc, r->argv);
  json_key(j, "scale");
  json_number(j, o->scale);
  json_key(j, "simtime_ms");
  json_number(j, o->simtime);
  json_key(j, "presim_ms");
  json_number(j, o->presim);
  json_key(j, "resolution_ms");
  json_number(j, o->dt);
  json_key(j, "delay_ms");
  json_number(j, o->delay);
  json_key(j, "model");
  json_string(j, o->model);
  json_key(j, "ee_synapse");
  json_string(j, o->ee_static ? "static_synapse" : "stdp_pl_synapse_hom");
  json_key(j, "history_max");
  json_integer(j, o->history_max);
  json_key(j, "plastic_tasks");
  if (o->plastic_tasks < 0)
    json_string(j, "off");
  else
    json_integer(j, o->plastic_tasks ? o->plastic_tasks : NESTCL_PLASTIC_TASKS_DEFAULT);
  json_key(j, "device_memory");
  if (o->device_memory > 0)
    json_integer(j, (long long)o->device_memory);
  else
    json_null(j);
  json_key(j, "threads");
  json_integer(j, o->threads);
  json_key(j, "streams");
  json_integer(j, o->streams);
  json_key(j, "gpu_fraction");
  json_number(j, o->gpu_fraction);
  json_key(j, "gpu_fraction_source");
  json_string(j, r->split_source);
  json_key(j, "predicted_wall_s_per_s");
  if (isfinite(r->predicted))
    json_number(j, r->predicted);
  else
    json_null(j);
  json_key(j, "perf_profile");
  if (*r->profile_used)
    json_string(j, r->profile_used);
  else
    json_null(j);
  json_key(j, "rebalance");
  if (o->rebalance) {
    json_begin_object(j);
    json_key(j, "why");
    json_string(j, r->rebalance_why ? r->rebalance_why : "");
    json_key(j, "extra_s");
    json_number(j, r->rebalance_s);
    json_key(j, "rounds");
    if (r->rb.len && !r->rb.failed)
      json_raw(j, r->rb.buf, r->rb.len);
    else
      json_null(j);
    json_end_object(j);
  } else {
    json_null(j);
  }
  results_config_device(j, o->device, &r->s1);
  json_key(j, "seed");
  json_integer(j, (long long)o->seed);
  json_key(j, "record");
  json_integer(j, r->net.nrec);
  json_key(j, "weight_type");
  json_string(j, o->weight_double ? "double" : "float");
  results_config_loop(j, o->sync_interval, o->host_clock, !o->no_command_buffer, o->kernel_sample, o->persistent);
  cli_build_json(j, &o->build);
  json_key(j, "mpi_ranks");
  json_integer(j, r->ranks);
  cli_ckpt_json(j, &o->ck);
  results_config_end(j);
}

/* network: its size and the parameters derived from the script's. */
static void write_network(json *j, const hpc_run *r)
{
  const hpc_network *p = &r->net.p;
  const nestcl_engine_stats *s1 = &r->s1;
  json_key(j, "network");
  json_begin_object(j);
  json_key(j, "neurons");
  json_integer(j, (long long)s1->neurons);
  json_key(j, "NE");
  json_integer(j, p->NE);
  json_key(j, "NI");
  json_integer(j, p->NI);
  json_key(j, "CE");
  json_integer(j, p->CE);
  json_key(j, "CI");
  json_integer(j, p->CI);
  json_key(j, "synapses");
  json_integer(j, (long long)s1->synapses);
  json_key(j, "plastic_synapses");
  json_integer(j, (long long)s1->plastic_synapses);
  json_key(j, "psp_t_max_ms");
  json_number(j, p->t_max);
  json_key(j, "pA_per_mV");
  json_number(j, 1.0 / p->v_max);
  json_key(j, "J_E_pA");
  json_number(j, p->JE);
  json_key(j, "J_I_pA");
  json_number(j, p->JI);
  json_key(j, "poisson_rate_hz");
  json_number(j, p->p_rate);
  json_key(j, "min_delay_steps");
  json_integer(j, s1->min_delay_steps);
  cli_build_checksums_json(j, &r->o.build);
  json_end_object(j);
}

/* plasticity: the E->E synapses, their delivery, and their weights at the end (the static ones' JE). */
static void write_plasticity(json *j, const hpc_run *r)
{
  const hpc_opts *o = &r->o;
  const double JE = r->net.p.JE;
  json_key(j, "plasticity");
  json_begin_object(j);
  json_key(j, "ee_synapse");
  json_string(j, o->ee_static ? "static_synapse" : "stdp_pl_synapse_hom");
  json_key(j, "delivery");
  json_string(j, o->ee_static ? "none" : (r->s1.plastic_batched ? "batched" : "resident"));
  json_key(j, "batches");
  json_integer(j, (long long)(r->s1.plastic_batches - r->s0.plastic_batches));
  if (o->ee_static) {
    json_key(j, "ee_weight_mean_pA");
    json_number(j, JE);
    json_key(j, "ee_weight_sd_pA");
    json_number(j, 0.0);
    json_key(j, "ee_weight_min_pA");
    json_number(j, JE);
    json_key(j, "ee_weight_max_pA");
    json_number(j, JE);
    json_key(j, "ee_weight_checksum");
    json_null(j);
  } else {
    char hex[20];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)r->ws.checksum);
    json_key(j, "ee_weight_mean_pA");
    json_number(j, r->ws.mean);
    json_key(j, "ee_weight_sd_pA");
    json_number(j, r->ws.sd);
    json_key(j, "ee_weight_min_pA");
    json_number(j, r->ws.min);
    json_key(j, "ee_weight_max_pA");
    json_number(j, r->ws.max);
    json_key(j, "ee_weight_checksum");
    json_string(j, hex);
  }
  json_end_object(j);
}

/* The whole results document (results.schema.md). */
static void write_results(json *j, const hpc_run *r, const hpc_activity *a)
{
  const hpc_opts *o = &r->o;
  const nestcl_engine_stats *s1 = &r->s1;
  write_config(j, r);
  write_network(j, r);
  results_build_time(j, s1, NAN, r->o.build.peak_rss);
  results_sim sim = {&r->s0, s1, r->vp0, r->presim_wall, r->sim_wall, a->sim_ms, 1, &r->k0, &r->k1};
  results_simulation(j, &sim);
  uint64_t events = s1->synaptic_events - r->s0.synaptic_events;
  results_activity act = {s1->spikes - r->s0.spikes,
                          r->net.nrec,
                          a->n_sim_spikes,
                          events,
                          a->rate,
                          a->cv_n ? a->cv_sum / (double)a->cv_n : NAN};
  results_activity_begin(j, &act, s1, a->sim_ms, r->sim_wall);
  json_key(j, "synaptic_events_per_s_per_vp");
  json_number(j, r->sim_wall > 0 ? (double)events / r->sim_wall / (o->threads + o->streams) / r->ranks : 0.0);
  json_end_object(j);
  write_plasticity(j, r);
  results_memory_end(j, s1, 1);
}

/* The results to --out (rank 0), and the summary on stderr; an exit code. */
static int report(hpc_run *r, const hpc_activity *a)
{
  const hpc_opts *o = &r->o;
  const nestcl_engine_stats *s1 = &r->s1;
  json j;
  json_init(&j);
  write_results(&j, r, a);
  int code = CLI_OK;
  uint64_t events = s1->synaptic_events - r->s0.synaptic_events, spikes = s1->spikes - r->s0.spikes;
  if (j.failed) {
    fprintf(stderr, "error: out of host memory writing the results\n");
    code = CLI_RUNTIME;
  } else if (r->rank == 0 && cli_write_json(o->out, &j) != 0) {
    code = CLI_RUNTIME;
  } else if (!o->quiet && r->rank == 0) {
    fprintf(stderr, "nestcl: %llu spikes, %.2f Hz, CV %.3f, %.3g synaptic events/s, %.2f bytes/synapse\n",
            (unsigned long long)spikes, a->rate, a->cv_n ? a->cv_sum / (double)a->cv_n : 0.0,
            r->sim_wall > 0 ? (double)events / r->sim_wall : 0.0, s1->bytes_per_synapse);
    if (!o->ee_static) {
      fprintf(stderr, "nestcl: E->E stdp_pl_synapse_hom: weights %.4f +- %.4f pA, %.2f bytes per plastic synapse\n",
              r->ws.mean, r->ws.sd, s1->bytes_per_plastic_synapse);
    }
  }
  json_free(&j);
  return code;
}

/* Builds the network with the split (after the size's check); *code an exit code when it must stop. */
static int build(hpc_run *r, int rc, int *code)
{
  hpc_opts *o = &r->o;
  const hpc_network *p = &r->net.p;
  if (p->NE < 1 || p->NI < 1) {
    fprintf(stderr, "error: --scale %g gives %u E and %u I neurons; need at least one of each\n", o->scale, p->NE,
            p->NI);
    *code = CLI_USAGE;
    return rc;
  }
  o->build.quiet = o->quiet || r->rank != 0;
  if (!rc) {
    if (!o->quiet && r->rank == 0) {
      fprintf(stderr, "nestcl: building hpc_benchmark at scale %g: %u neurons, %.1f M synapses\n", o->scale,
              p->NE + p->NI, (double)(p->NE + p->NI) * (p->CE + p->CI) * 1e-6);
    }
    rc = make_network(o, &r->net);
  }
  if (!rc && o->dry_run) {
    rc = cli_dry_run(r->net.e, "hpc_benchmark");
    if (rc) {
      fprintf(stderr, "error: %s\n", nestcl_last_error());
      *code = cli_exit_code(rc);
    } else {
      *code = CLI_OK;
    }
  }
  return rc;
}

/* Presimulation (or --rebalance's rounds) and the measured simulation; engine status codes. */
static int simulate(hpc_run *r)
{
  hpc_opts *o = &r->o;
  int rc = 0;
  if (o->rebalance) {
#ifdef NESTCL_WITH_PERFMODEL
    rc = hpc_rebalance(r, make_network);
#endif
  } else {
    /* Times from t = 0: a restored run starts at its checkpoint's, and skips what lies before. */
    rc = cli_run_until(r->net.e, "presim", o->presim, &o->ck, o->dt, o->quiet || r->rank, &r->presim_wall);
  }
  if (!rc) {
    nestcl_engine_get_stats(r->net.e, &r->s0);
    r->vp0 = malloc((size_t)r->s0.n_vps * sizeof *r->vp0);
    if (r->vp0)
      memcpy(r->vp0, r->s0.vps, (size_t)r->s0.n_vps * sizeof *r->vp0);
    rc = nestcl_engine_kernel_profile(r->net.e, &r->k0);
  }
  if (!rc) {
    rc = cli_run_until(r->net.e, "sim", o->presim + o->simtime, &o->ck, o->dt, o->quiet || r->rank, &r->sim_wall);
  }
  return rc;
}

/* Everything after the flags: the split, the build, the runs, the results; an exit code. */
static int run(hpc_run *r, int *rc_out)
{
  hpc_opts *o = &r->o;
  /* Network parameters (BENCHMARKS.md; benchmarks/hpc_benchmark.c). */
  int rc = hpc_parameters(o->scale, o->k_scale, &r->net.p);
  *rc_out = rc;
  r->net.nrec = o->record > (long)r->net.p.NE ? r->net.p.NE : (uint32_t)o->record;
  r->net.rec = -1;
  int code = choose_split(r);
  if (code != CLI_OK)
    return code;
  code = -1;
  rc = build(r, rc, &code);
  *rc_out = rc;
  if (code >= 0)
    return code;
  if (!rc)
    rc = simulate(r);
  *rc_out = rc;
  if (rc) {
    if (r->rank == 0 || rc != NESTCL_EINTR)
      cli_report(rc, r->net.e, o->presim + o->simtime);
    return cli_exit_code(rc);
  }
  nestcl_engine_get_stats(r->net.e, &r->s1);
  if (nestcl_engine_kernel_profile(r->net.e, &r->k1))
    fprintf(stderr, "warning: no kernel table: %s\n", nestcl_last_error());
  memset(&r->ws, 0, sizeof r->ws);
  if (!o->ee_static && (rc = nestcl_engine_weight_stats(r->net.e, r->net.p.ee, &r->ws)) != 0) {
    *rc_out = rc;
    fprintf(stderr, "error: %s\n", nestcl_last_error());
    return cli_exit_code(rc);
  }
  hpc_activity a;
  code = measure_activity(r, &a);
  return code != CLI_OK ? code : report(r, &a);
}

int cli_run_hpc_benchmark(int argc, char **argv)
{
  hpc_run r;
  memset(&r, 0, sizeof r);
  int pr = parse(argc, argv, &r.o);
  if (pr) {
    return pr > 0 ? CLI_OK : CLI_USAGE;
  }
  r.argc = argc;
  r.argv = argv;
  /* From here on SIGINT and SIGTERM stop the run at the end of a super step and leave no output file. */
  cli_stop_on_signals(NULL);
  if (cli_start_mpi(r.o.mpi, &r.rank, &r.ranks) != CLI_OK)
    return CLI_USAGE;
  json_init(&r.rb);
  r.rb.compact = 1;
  int rc = 0;
  int code = run(&r, &rc);
  json_free(&r.rb);
  if (rc && code == CLI_OK) {
    fprintf(stderr, "error: %s\n", nestcl_last_error());
    code = cli_exit_code(rc);
  }
  free(r.vp0);
  cli_build_free(&r.o.build);
  nestcl_kernel_profile_free(&r.k0);
  nestcl_kernel_profile_free(&r.k1);
  nestcl_engine_destroy(r.net.e);
  cli_end_mpi(r.o.mpi);
  return code;
}
