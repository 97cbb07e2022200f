/*
 * `nestcl run hpc_benchmark`: the driver of NEST's hpc_benchmark network,
 * whose description is benchmarks/hpc_benchmark.c. Here: the flags, the split
 * (given, or chosen by the fitted performance model, and --rebalance's rounds
 * in the presimulation), presimulation and measured simulation, the E->E
 * weights (NEST's stdp_pl_synapse_hom, or static with --ee-synapse static),
 * and the results JSON (benchmarks/results.schema.md), written to a temporary
 * file and renamed, so a failed run leaves no file.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifdef NESTCL_WITH_MPI
#include <mpi.h>
#endif

#include "cli.h"
#include "hpc_benchmark.h"
#include "json.h"
#include "run_common.h"
#include "nestcl/engine.h"
#include "nestcl/version.h"
#ifdef NESTCL_WITH_PERFMODEL
#include "pm_auto.h"
#include "pm_profile.h"
#endif

#ifndef NESTCL_GIT_COMMIT
#define NESTCL_GIT_COMMIT ""
#endif

typedef struct hpc_opts {
  double scale, simtime, presim, dt, delay, gpu_fraction;
  int gpu_fraction_auto;
  int threads, streams;   /* -1: auto (from the performance profile) */
  const char *profile;    /* --profile FILE */
  int rebalance;          /* --rebalance: measure in the presimulation, repartition */
  long rebalance_rounds;
  double calibration_budget;
  const char *device;
  const char *model;
  int ee_static;         /* --ee-synapse static: E->E static_synapse (the former variant) */
  long history_max;
  double device_memory;  /* bytes; 0: what the device has free */
  unsigned long seed;
  long record;
  const char *out;
  int weight_double;
  int mpi;
  int sync_interval, host_clock; /* nestcl_engine_config's; 0: the default */
  int no_command_buffer;
  int quiet;
  int dry_run;
  cli_ckpt ck;           /* --checkpoint-at, --checkpoint, --restore */
} hpc_opts;

void cli_hpc_benchmark_help(void)
{
  printf("usage: nestcl run hpc_benchmark [flags]\n"
         "\n"
         "NEST's hpc_benchmark (balanced random network, iaf_psc_alpha, Poisson drive;\n"
         "E->E plastic: NEST's stdp_pl_synapse_hom, translated).\n"
         "\n"
         "  --scale S            network size: NE = 9000 S, NI = 2250 S (default 0.1)\n"
         "  --simtime MS         measured simulation time (default 250)\n"
         "  --presim MS          presimulation before it (default 50)\n"
         "  --threads N|auto     CPU threads (CPU VPs; default 0)\n"
         "  --streams N|auto     OpenCL streams on the device (GPU VPs; default 1); 'auto' for\n"
         "                       both (or either) lets the performance model choose them\n"
         "  --gpu-fraction A     share of neurons on the streams, in [0, 1], or 'auto' (the\n"
         "                       default): with threads and streams, the share the fitted\n"
         "                       performance model predicts fastest (perfmodel/README.md)\n"
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
         "  --device-memory B    device memory budget of the streams in bytes (suffix K, M, G; default:\n"
         "                       what the device has); plastic synapses that do not fit are delivered\n"
         "                       in batches from host memory (same results)\n"
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
         "  --dry-run            print the memory estimate (host and device, per VP) as JSON and exit;\n"
         "                       a run refuses a network that cannot fit before building it\n"
         "  --help, --version\n");
}

/* Returns -1 (usage error reported), 0, or 1 for --help/--version. */
static int parse(int argc, char **argv, hpc_opts *o)
{
  memset(o, 0, sizeof *o);
  o->scale = 0.1;
  o->simtime = 250.0;
  o->presim = 50.0;
  o->dt = 0.1;
  cli_ckpt_init(&o->ck);
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
      cli_hpc_benchmark_help();
      return 1;
    } else if (strcmp(a, "--version") == 0) {
      printf("nestcl %s\n", nestcl_version());
      return 1;
    } else if (strcmp(a, "--scale") == 0) {
      if (cli_parse_double(a, VALUE(), &o->scale)) return -1;
    } else if (strcmp(a, "--simtime") == 0) {
      if (cli_parse_double(a, VALUE(), &o->simtime)) return -1;
    } else if (strcmp(a, "--presim") == 0) {
      if (cli_parse_double(a, VALUE(), &o->presim)) return -1;
    } else if (strcmp(a, "--dt") == 0) {
      if (cli_parse_double(a, VALUE(), &o->dt)) return -1;
    } else if (strcmp(a, "--delay") == 0) {
      if (cli_parse_double(a, VALUE(), &o->delay)) return -1;
    } else if ((strcmp(a, "--threads") == 0 || strcmp(a, "--streams") == 0) && (v || i + 1 < argc) &&
               strcmp(v ? v : argv[i + 1], "auto") == 0) {
      (void)VALUE();
      *(strcmp(a, "--threads") == 0 ? &o->threads : &o->streams) = -1;
    } else if (strcmp(a, "--profile") == 0) {
      o->profile = VALUE();
      if (!o->profile || !*o->profile) {
        fprintf(stderr, "error: --profile needs a file name\n");
        return -1;
      }
    } else if (strcmp(a, "--rebalance") == 0) {
      o->rebalance = 1;
    } else if (strcmp(a, "--rebalance-rounds") == 0) {
      if (cli_parse_long(a, VALUE(), 1, 10, &o->rebalance_rounds)) return -1;
    } else if (strcmp(a, "--calibration-budget") == 0) {
      if (cli_parse_double(a, VALUE(), &o->calibration_budget)) return -1;
      if (!(o->calibration_budget > 0.0)) {
        fprintf(stderr, "error: --calibration-budget must be positive\n");
        return -1;
      }
    } else if (strcmp(a, "--threads") == 0) {
      if (cli_parse_long(a, VALUE(), 0, 256, &l)) return -1;
      o->threads = (int)l;
    } else if (strcmp(a, "--streams") == 0) {
      if (cli_parse_long(a, VALUE(), 0, 64, &l)) return -1;
      o->streams = (int)l;
    } else if (strcmp(a, "--gpu-fraction") == 0) {
      const char *x = VALUE();
      if (x && strcmp(x, "auto") == 0) {
        o->gpu_fraction_auto = 1;
      } else {
        if (cli_parse_double(a, x, &o->gpu_fraction)) return -1;
        o->gpu_fraction_auto = 0;
        if (o->gpu_fraction < 0.0 || o->gpu_fraction > 1.0) {
          fprintf(stderr, "error: --gpu-fraction %g outside [0, 1]\n", o->gpu_fraction);
          return -1;
        }
      }
    } else if (strcmp(a, "--device") == 0) {
      o->device = VALUE();
      if (!o->device) {
        fprintf(stderr, "error: --device needs a spec\n");
        return -1;
      }
    } else if (strcmp(a, "--model") == 0) {
      o->model = VALUE();
      if (!o->model) {
        fprintf(stderr, "error: --model needs a name\n");
        return -1;
      }
    } else if (strcmp(a, "--ee-synapse") == 0) {
      const char *x = VALUE();
      if (x && (strcmp(x, "static") == 0 || strcmp(x, "static_synapse") == 0)) {
        o->ee_static = 1;
      } else if (x && (strcmp(x, "stdp_pl_synapse_hom") == 0 || strcmp(x, "stdp_pl_synapse_hom_hpc") == 0)) {
        o->ee_static = 0;
      } else {
        fprintf(stderr, "error: --ee-synapse must be stdp_pl_synapse_hom or static (got '%s')\n", x ? x : "");
        return -1;
      }
    } else if (strcmp(a, "--history-max") == 0) {
      if (cli_parse_long(a, VALUE(), 1, 1L << 24, &o->history_max)) return -1;
    } else if (strcmp(a, "--device-memory") == 0) {
      const char *x = VALUE();
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
        return -1;
      }
      o->device_memory = b;
    } else if (strcmp(a, "--seed") == 0) {
      if (cli_parse_long(a, VALUE(), 0, 0xffffffffL, &l)) return -1;
      o->seed = (unsigned long)l;
    } else if (strcmp(a, "--record") == 0) {
      if (cli_parse_long(a, VALUE(), 0, LONG_MAX, &o->record)) return -1;
    } else if (strcmp(a, "--out") == 0) {
      o->out = VALUE();
      if (cli_need_path(a, o->out)) return -1;
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
      fprintf(stderr, "error: unknown flag '%s' (try --help)\n", argv[i]);
      return -1;
    }
#undef VALUE
  }
  if (!(o->scale > 0.0) || o->scale > 1000.0) {
    fprintf(stderr, "error: --scale %g must be in (0, 1000]\n", o->scale);
    return -1;
  }
  if (cli_check_times(o->dt, o->simtime, o->presim) || cli_ckpt_check(&o->ck, o->dt, o->presim + o->simtime)) {
    return -1;
  }
  if (o->rebalance && (o->ck.dir || o->ck.restore)) {
    fprintf(stderr, "error: --rebalance rebuilds and replays the presimulation: it does not combine with "
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
  if ((o->threads < 0 || o->streams < 0) && !o->gpu_fraction_auto) {
    fprintf(stderr, "error: --threads auto and --streams auto choose the split too: leave --gpu-fraction at auto\n");
    return -1;
  }
  return 0;
}

/*
 * The presimulation in two halves; the second's busy time (update, drive and
 * delivery, not waiting) of one CPU VP and one stream, means over the VPs of
 * each kind (and over the ranks), per simulated second. The first half is
 * left out: the first super steps pay for warming caches and queues.
 */
static int presim_measured(nestcl_engine *e, const hpc_opts *o, int quiet, double *wall, double *window,
                           double *cpu_busy, double *gpu_busy)
{
  double half = o->dt * floor(o->presim / 2.0 / o->dt), w1 = 0.0, w2 = 0.0;
  int rc = half > 0.0 ? cli_simulate_progress(e, "presim", half, o->dt, quiet, &w1) : 0;
  nestcl_engine_stats a, b;
  nestcl_engine_get_stats(e, &a);
  nestcl_vp_stats *before = malloc((size_t)a.n_vps * sizeof *before);
  if (!before) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  memcpy(before, a.vps, (size_t)a.n_vps * sizeof *before);
  double rest = o->presim - half;
  if (!rc) rc = cli_simulate_progress(e, "presim", rest, o->dt, quiet, &w2);
  double sum[2] = {0.0, 0.0}, cnt[2] = {0.0, 0.0};
  if (!rc) {
    nestcl_engine_get_stats(e, &b);
    for (int v = 0; v < b.n_vps; ++v) {
      if (b.vps[v].neurons == 0) continue;
      double busy = 0.0;
      for (int p = 0; p < NESTCL_PHASES; ++p) {
        if (p == NESTCL_PHASE_UPDATE || p == NESTCL_PHASE_POISSON || p == NESTCL_PHASE_DELIVER) {
          busy += b.vps[v].seconds[p] - before[v].seconds[p];
        }
      }
      sum[b.vps[v].is_gpu] += busy;
      cnt[b.vps[v].is_gpu] += 1.0;
    }
  }
  free(before);
#ifdef NESTCL_WITH_MPI
  if (!rc && o->mpi) {
    double in[4] = {sum[0], sum[1], cnt[0], cnt[1]}, out[4];
    MPI_Allreduce(in, out, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    sum[0] = out[0]; sum[1] = out[1]; cnt[0] = out[2]; cnt[1] = out[3];
    /* Every rank decides alike: the slowest rank's window. */
    double w_max = w2;
    MPI_Allreduce(&w2, &w_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    w2 = w_max;
  }
#endif
  double sim_s = rest * 1e-3;
  *cpu_busy = cnt[0] > 0 && sim_s > 0 ? sum[0] / cnt[0] / sim_s : 0.0;
  *gpu_busy = cnt[1] > 0 && sim_s > 0 ? sum[1] / cnt[1] / sim_s : 0.0;
  *window = sim_s > 0 ? w2 / sim_s : 0.0;
  *wall = w1 + w2;
  return rc;
}

/* The network (benchmarks/hpc_benchmark.c) and what building it returns. */
typedef struct hpc_net {
  hpc_network p;
  uint32_t nrec;
  nestcl_engine *e;
  int rec;
} hpc_net;

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
  cfg.history_max = (uint32_t)o->history_max;
  cfg.device_memory = (size_t)o->device_memory;
  if (cfg.history_capacity > cfg.history_max) {
    cfg.history_capacity = cfg.history_max;
  }
  nestcl_engine *e = NULL;
  n->rec = -1;
  int rc = nestcl_engine_create(&cfg, &e);
  n->e = e;
  if (!rc) cli_stop_on_signals(e);
  if (!rc) rc = nestcl_engine_set_models(e, nestcl_builtin_models, nestcl_builtin_model_count);
  if (!rc) rc = hpc_describe(e, o->model, o->delay, o->ee_static, &n->p);
  if (!rc && n->nrec > 0) rc = nestcl_engine_add_spike_recorder(e, n->p.pe, 0, n->nrec, &n->rec);
  /* Built, or built and restored from --restore's checkpoint. */
  if (!rc && !o->dry_run) rc = cli_ckpt_prepare(e, &o->ck, o->dt, o->presim + o->simtime);
  return rc;
}

int cli_run_hpc_benchmark(int argc, char **argv)
{
  hpc_opts o;
  int pr = parse(argc, argv, &o);
  if (pr) {
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
    return CLI_USAGE;
  }
#endif
  int code = CLI_OK;
  nestcl_engine *e = NULL;
  json j, rb;
  json_init(&j);
  json_init(&rb);
  rb.compact = 1;

  /* Network parameters (BENCHMARKS.md; benchmarks/hpc_benchmark.c). */
  hpc_net net;
  memset(&net, 0, sizeof net);
  int rc = hpc_parameters(o.scale, &net.p);
  const uint32_t NE = net.p.NE, NI = net.p.NI, CE = net.p.CE, CI = net.p.CI;
  const double t_max = net.p.t_max, v_max = net.p.v_max, JE = net.p.JE, JI = net.p.JI, p_rate = net.p.p_rate;
  uint32_t nrec = o.record > (long)NE ? NE : (uint32_t)o.record;
  net.nrec = nrec;
  net.rec = -1;

  /* The split: given by flags, or chosen by the fitted performance model (perfmodel/README.md). */
  const char *split_source = o.gpu_fraction_auto ? "even share" : "flag";
  double predicted = NAN;
  char profile_used[4096] = "";
#ifdef NESTCL_WITH_PERFMODEL
  pm_auto_result ar;
  memset(&ar, 0, sizeof ar);
  int have_profile = 0;
#endif
  if (o.dry_run) {
    /* The estimate needs no performance model: the flags' split, or the even one. */
    if (o.threads < 0 || o.streams < 0) {
      fprintf(stderr, "error: --dry-run needs --threads and --streams as numbers\n");
      code = CLI_USAGE;
      goto done;
    }
    if (o.gpu_fraction_auto) o.gpu_fraction = (double)o.streams / (o.threads + o.streams);
    o.rebalance = 0;
  } else if (o.gpu_fraction_auto || o.rebalance) {
#ifdef NESTCL_WITH_PERFMODEL
    pm_auto_request rq = {o.scale, !o.ee_static, o.threads, o.streams, ranks, o.mpi, o.device, o.profile,
                          o.calibration_budget, !o.gpu_fraction_auto, o.gpu_fraction};
    int ac = pm_auto_split(&rq, &ar);
    if (ac) {
      code = ac;
      goto done;
    }
    o.threads = ar.threads;
    o.streams = ar.streams;
    o.gpu_fraction = ar.alpha;
    split_source = strcmp(ar.source, "profile") == 0           ? "performance profile"
                   : strcmp(ar.source, "flag") == 0              ? "flag"
                   : strcmp(ar.source, "single kind of VP") == 0 ? "single kind of VP"
                                                                 : "performance profile (calibrated now)";
    have_profile = strcmp(ar.source, "single kind of VP") != 0;
    predicted = ar.predicted;
    snprintf(profile_used, sizeof profile_used, "%s", ar.profile_path);
    if (!o.quiet && rank == 0 && isfinite(predicted) && o.gpu_fraction_auto) {
      fprintf(stderr, "nestcl: auto split: %d thread(s), %d stream(s), gpu fraction %.3f (predicted %.2f s per "
                      "simulated second; %s)\n", o.threads, o.streams, o.gpu_fraction, predicted, profile_used);
    }
#else
    if (o.threads < 0 || o.streams < 0 || o.rebalance) {
      fprintf(stderr, "error: --threads/--streams auto and --rebalance need the performance model, and this nestcl "
                      "was built without GSL\n");
      code = CLI_USAGE;
      goto done;
    }
    if (o.gpu_fraction_auto) o.gpu_fraction = (double)o.streams / (o.threads + o.streams);
#endif
  }

  if (NE < 1 || NI < 1) {
    fprintf(stderr, "error: --scale %g gives %u E and %u I neurons; need at least one of each\n", o.scale, NE, NI);
    code = CLI_USAGE;
    goto done;
  }
  if (!rc) {
    if (!o.quiet && rank == 0) {
      fprintf(stderr, "nestcl: building hpc_benchmark at scale %g: %u neurons, %.1f M synapses\n", o.scale, NE + NI,
              (double)(NE + NI) * (CE + CI) * 1e-6);
    }
    rc = make_network(&o, &net);
    e = net.e;
  }
  if (!rc && o.dry_run) {
    rc = cli_dry_run(e, "hpc_benchmark");
    if (rc) {
      fprintf(stderr, "error: %s\n", nestcl_last_error());
      code = cli_exit_code(rc);
    }
    goto done;
  }
  double presim_wall = 0.0, sim_wall = 0.0;
  nestcl_engine_stats s0, s1;
  nestcl_vp_stats *vp0 = NULL;
  /* --rebalance: rounds of (measure in the presimulation, choose alpha, rebuild and replay). */
  double rebalance_s = 0.0;
  const char *rebalance_why = NULL;
  if (!rc && o.rebalance) {
#ifdef NESTCL_WITH_PERFMODEL
    if (o.threads == 0 || o.streams == 0 || !have_profile) {
      rebalance_why = "nothing to rebalance: one kind of VP";
      rc = cli_simulate_progress(e, "presim", o.presim, o.dt, o.quiet || rank, &presim_wall);
    } else {
      nestcl_pm_config pc;
      pm_hpc_config(&ar.prof, o.scale, !o.ee_static, ranks, &pc);
      pc.TC = o.threads;
      pc.TG = o.streams;
      json_begin_array(&rb);
      double t_rb = 0.0;
      nestcl_pm_measured meas[NESTCL_PM_BALANCE_MAX];
      int n_meas = 0;
      for (long round = 0; !rc; ++round) {
        double cpu_busy = 0.0, gpu_busy = 0.0, window = 0.0;
        rc = presim_measured(e, &o, o.quiet || rank, &presim_wall, &window, &cpu_busy, &gpu_busy);
        if (rc) break;
        nestcl_pm_measured *m = &meas[n_meas++];
        m->alpha = o.gpu_fraction;
        m->wall = window;
        m->cpu_busy = cpu_busy;
        m->gpu_busy = gpu_busy;
        nestcl_pm_balance bal;
        rc = nestcl_pm_balance_fit(ar.prof.p, &pc, meas, n_meas, &bal);
        if (rc) break;
        /*
         * The next split: the corrected model's best, unless a split that near
         * was measured already; then the neighbours of the fastest measured
         * split, 0.1 either side (the side the model prefers first).
         */
        int best = 0;
        for (int i = 1; i < n_meas; ++i) {
          if (meas[i].wall < meas[best].wall) best = i;
        }
        double cand[3] = {bal.alpha, meas[best].alpha - 0.1, meas[best].alpha + 0.1};
        {
          double q[NESTCL_PM_NP];
          nestcl_pm_balance_params(ar.prof.p, bal.s, q);
          nestcl_pm_config x = pc;
          x.alpha = cand[1];
          double w1 = nestcl_pm_output_value(q, &x, NESTCL_PM_WALL);
          x.alpha = cand[2];
          if (nestcl_pm_output_value(q, &x, NESTCL_PM_WALL) < w1) {
            double t = cand[1];
            cand[1] = cand[2];
            cand[2] = t;
          }
        }
        /*
         * Where the loop ends: the fastest split measured. (Ending on the
         * corrected model's best unless a split measured 5 % faster did worse
         * on the plastic network, whose rate still climbs in the
         * presimulation: the correction fitted there misleads.)
         */
        double next = meas[best].alpha;
        int apply = 0;
        const char *what = "the fastest split measured";
        for (int k = 0; k < 3 && round < o.rebalance_rounds && n_meas < NESTCL_PM_BALANCE_MAX && !apply; ++k) {
          if (cand[k] < 0.0 || cand[k] > 1.0) continue;
          int seen = 0;
          for (int i = 0; i < n_meas; ++i) seen |= fabs(meas[i].alpha - cand[k]) <= 0.02;
          if (seen) continue;
          next = cand[k];
          apply = 1;
          what = k == 0 ? "the corrected model's best" : "a neighbour of the fastest split measured";
        }
        json_begin_object(&rb);
        json_key(&rb, "alpha"); json_number(&rb, o.gpu_fraction);
        json_key(&rb, "wall_s_per_s"); json_number(&rb, window);
        json_key(&rb, "cpu_busy_s_per_s"); json_number(&rb, cpu_busy);
        json_key(&rb, "gpu_busy_s_per_s"); json_number(&rb, gpu_busy);
        json_key(&rb, "correction"); json_number(&rb, bal.s);
        json_key(&rb, "scale"); json_number(&rb, bal.b);
        json_key(&rb, "predicted_here_s_per_s"); json_number(&rb, bal.here);
        json_key(&rb, "model_alpha"); json_number(&rb, bal.alpha);
        json_key(&rb, "model_wall_s_per_s"); json_number(&rb, bal.wall);
        json_key(&rb, "applied"); json_bool(&rb, apply || next != o.gpu_fraction);
        json_key(&rb, "next_alpha"); json_number(&rb, next);
        json_end_object(&rb);
        if (!o.quiet && rank == 0) {
          fprintf(stderr, "nestcl: rebalance %ld: alpha %.3f took %.3f s per simulated s (a thread busy %.3f s, a "
                          "stream %.3f s); the corrected model's best is alpha %.3f (%.3f s); next: %s, alpha %.3f\n",
                  round + 1, o.gpu_fraction, window, cpu_busy, gpu_busy, bal.alpha, bal.wall, what, next);
        }
        if (!apply) {
          static char why[256];
          snprintf(why, sizeof why, "%s; kept %s",
                   round >= o.rebalance_rounds ? "rounds exhausted"
                                               : "the model's best and the fastest split's neighbours measured",
                   what);
          rebalance_why = why;
        }
        if (next == o.gpu_fraction) break;
        /* The results do not depend on the split: a new build with the new alpha, the same presimulation again. */
        double t0 = presim_wall;
        double c0 = cli_now();
        nestcl_engine_destroy(e);
        e = NULL;
        o.gpu_fraction = next;
        rc = make_network(&o, &net);
        e = net.e;
        t_rb += cli_now() - c0 + t0;
        if (!apply) {
          /* Back to the split kept: the presimulation once more, unmeasured. */
          if (!rc) rc = cli_simulate_progress(e, "presim", o.presim, o.dt, o.quiet || rank, &presim_wall);
          break;
        }
      }
      json_end_array(&rb);
      rebalance_s = t_rb;
      split_source = "rebalanced";
      predicted = NAN;
    }
#endif
  } else if (!rc) {
    /* Times from t = 0: a restored run starts at its checkpoint's, and skips what lies before. */
    rc = cli_run_until(e, "presim", o.presim, &o.ck, o.dt, o.quiet || rank, &presim_wall);
  }
  if (!rc) {
    nestcl_engine_get_stats(e, &s0);
    vp0 = malloc((size_t)s0.n_vps * sizeof *vp0);
    if (vp0) memcpy(vp0, s0.vps, (size_t)s0.n_vps * sizeof *vp0);
  }
  if (!rc) rc = cli_run_until(e, "sim", o.presim + o.simtime, &o.ck, o.dt, o.quiet || rank, &sim_wall);
  if (rc) {
    if (rank == 0 || rc != NESTCL_EINTR) cli_report(rc, e, o.presim + o.simtime);
    code = cli_exit_code(rc);
    free(vp0);
    goto done;
  }
  nestcl_engine_get_stats(e, &s1);
  nestcl_weight_stats ws;
  memset(&ws, 0, sizeof ws);
  if (!o.ee_static && (rc = nestcl_engine_weight_stats(e, net.p.ee, &ws)) != 0) {
    fprintf(stderr, "error: %s\n", nestcl_last_error());
    code = cli_exit_code(rc);
    free(vp0);
    goto done;
  }

  /* Activity of the recorded E neurons over the measured window (a restored run's: from its checkpoint on). */
  double win0 = o.ck.restored_ms > o.presim ? o.ck.restored_ms : o.presim;
  double sim_ms = o.presim + o.simtime - win0;
  int64_t from_step = (int64_t)llround(win0 / o.dt);
  size_t n_sim_spikes = 0;
  double cv_sum = 0.0;
  long cv_n = 0;
  if (net.rec >= 0) {
    const uint64_t *gids;
    const int64_t *steps;
    size_t n;
    nestcl_engine_spikes(e, net.rec, &gids, &steps, &n);
    int64_t *last = malloc(nrec * sizeof *last);
    double *sum = calloc(nrec, sizeof *sum), *sum2 = calloc(nrec, sizeof *sum2);
    long *cnt = calloc(nrec, sizeof *cnt);
    if (!last || !sum || !sum2 || !cnt) {
      fprintf(stderr, "error: out of host memory\n");
      code = CLI_RUNTIME;
      free(last); free(sum); free(sum2); free(cnt); free(vp0);
      goto done;
    }
    for (uint32_t k = 0; k < nrec; ++k) last[k] = -1;
    uint64_t first;
    uint32_t npe;
    nestcl_engine_population_range(e, net.p.pe, &first, &npe);
    for (size_t k = 0; k < n; ++k) {
      if (steps[k] < from_step) continue;
      n_sim_spikes++;
      uint32_t i = (uint32_t)(gids[k] - first);
      if (last[i] >= 0) {
        double isi = (double)(steps[k] - last[i]) * o.dt;
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
        cv_sum += sqrt(var > 0.0 ? var : 0.0) / m;
        cv_n++;
      }
    }
    free(last); free(sum); free(sum2); free(cnt);
  }
  double rate = (nrec && sim_ms > 0) ? (double)n_sim_spikes / (double)nrec / (sim_ms * 1e-3) : 0.0;
  uint64_t events = s1.synaptic_events - s0.synaptic_events;
  uint64_t spikes = s1.spikes - s0.spikes;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);

  json_begin_object(&j);
  json_key(&j, "schema"); json_string(&j, "nestcl-results/1");
  json_key(&j, "benchmark"); json_string(&j, "hpc_benchmark");
  json_key(&j, "config");
  json_begin_object(&j);
  json_key(&j, "argv"); json_begin_array(&j);
  for (int k = 0; k < argc; ++k) json_string(&j, argv[k]);
  json_end_array(&j);
  json_key(&j, "scale"); json_number(&j, o.scale);
  json_key(&j, "simtime_ms"); json_number(&j, o.simtime);
  json_key(&j, "presim_ms"); json_number(&j, o.presim);
  json_key(&j, "resolution_ms"); json_number(&j, o.dt);
  json_key(&j, "delay_ms"); json_number(&j, o.delay);
  json_key(&j, "model"); json_string(&j, o.model);
  json_key(&j, "ee_synapse"); json_string(&j, o.ee_static ? "static_synapse" : "stdp_pl_synapse_hom");
  json_key(&j, "history_max"); json_integer(&j, o.history_max);
  json_key(&j, "device_memory"); if (o.device_memory > 0) json_integer(&j, (long long)o.device_memory); else json_null(&j);
  json_key(&j, "threads"); json_integer(&j, o.threads);
  json_key(&j, "streams"); json_integer(&j, o.streams);
  json_key(&j, "gpu_fraction"); json_number(&j, o.gpu_fraction);
  json_key(&j, "gpu_fraction_source"); json_string(&j, split_source);
  json_key(&j, "predicted_wall_s_per_s"); if (isfinite(predicted)) json_number(&j, predicted); else json_null(&j);
  json_key(&j, "perf_profile"); if (*profile_used) json_string(&j, profile_used); else json_null(&j);
  json_key(&j, "rebalance");
  if (o.rebalance) {
    json_begin_object(&j);
    json_key(&j, "why"); json_string(&j, rebalance_why ? rebalance_why : "");
    json_key(&j, "extra_s"); json_number(&j, rebalance_s);
    json_key(&j, "rounds");
    if (rb.len && !rb.failed) json_raw(&j, rb.buf, rb.len); else json_null(&j);
    json_end_object(&j);
  } else {
    json_null(&j);
  }
  json_key(&j, "device_spec"); if (o.device) json_string(&j, o.device); else json_null(&j);
  json_key(&j, "device_name"); if (s1.device_name) json_string(&j, s1.device_name); else json_null(&j);
  json_key(&j, "device_driver"); if (s1.device_driver) json_string(&j, s1.device_driver); else json_null(&j);
  json_key(&j, "seed"); json_integer(&j, (long long)o.seed);
  json_key(&j, "record"); json_integer(&j, nrec);
  json_key(&j, "weight_type"); json_string(&j, o.weight_double ? "double" : "float");
  json_key(&j, "sync_interval"); if (o.sync_interval) json_integer(&j, o.sync_interval); else json_null(&j);
  json_key(&j, "host_clock"); json_bool(&j, o.host_clock);
  json_key(&j, "command_buffer"); json_bool(&j, !o.no_command_buffer);
  json_key(&j, "mpi_ranks"); json_integer(&j, ranks);
  cli_ckpt_json(&j, &o.ck);
  json_key(&j, "version"); json_string(&j, nestcl_version());
  json_key(&j, "git_commit"); if (*NESTCL_GIT_COMMIT) json_string(&j, NESTCL_GIT_COMMIT); else json_null(&j);
  json_end_object(&j);

  json_key(&j, "network");
  json_begin_object(&j);
  json_key(&j, "neurons"); json_integer(&j, (long long)s1.neurons);
  json_key(&j, "NE"); json_integer(&j, NE);
  json_key(&j, "NI"); json_integer(&j, NI);
  json_key(&j, "CE"); json_integer(&j, CE);
  json_key(&j, "CI"); json_integer(&j, CI);
  json_key(&j, "synapses"); json_integer(&j, (long long)s1.synapses);
  json_key(&j, "plastic_synapses"); json_integer(&j, (long long)s1.plastic_synapses);
  json_key(&j, "psp_t_max_ms"); json_number(&j, t_max);
  json_key(&j, "pA_per_mV"); json_number(&j, 1.0 / v_max);
  json_key(&j, "J_E_pA"); json_number(&j, JE);
  json_key(&j, "J_I_pA"); json_number(&j, JI);
  json_key(&j, "poisson_rate_hz"); json_number(&j, p_rate);
  json_key(&j, "min_delay_steps"); json_integer(&j, s1.min_delay_steps);
  json_end_object(&j);

  json_key(&j, "build_time_s");
  json_begin_object(&j);
  json_key(&j, "nodes"); json_number(&j, s1.build_nodes_s);
  json_key(&j, "connections"); json_number(&j, s1.build_connections_s);
  json_key(&j, "upload"); json_number(&j, s1.build_upload_s);
  json_key(&j, "total"); json_number(&j, s1.build_nodes_s + s1.build_connections_s + s1.build_upload_s);
  json_end_object(&j);

  json_key(&j, "simulation");
  json_begin_object(&j);
  json_key(&j, "presim_wall_s"); json_number(&j, presim_wall);
  json_key(&j, "sim_wall_s"); json_number(&j, sim_wall);
  json_key(&j, "real_time_factor"); json_number(&j, sim_ms > 0 ? sim_wall / (sim_ms * 1e-3) : 0.0);
  json_key(&j, "vps");
  json_begin_array(&j);
  double tot[NESTCL_PHASES] = {0}, tot_wait = 0.0, tot_plastic = 0.0;
  nestcl_enqueue_counts enq = {0}; /* this rank's streams, the measured part */
  const double super_steps =
      s1.min_delay_steps > 0 ? (double)(s1.steps - (vp0 ? s0.steps : 0)) / s1.min_delay_steps : 0.0;
  for (int v = 0; v < s1.n_vps; ++v) {
    double ph[NESTCL_PHASES];
    for (int p = 0; p < NESTCL_PHASES; ++p) {
      ph[p] = s1.vps[v].seconds[p] - (vp0 ? vp0[v].seconds[p] : 0.0);
      tot[p] += ph[p];
    }
    double wait = s1.vps[v].wait_seconds - (vp0 ? vp0[v].wait_seconds : 0.0);
    tot_wait += wait;
    double plastic = s1.vps[v].plastic_seconds - (vp0 ? vp0[v].plastic_seconds : 0.0);
    tot_plastic += plastic;
    json_begin_object(&j);
    json_key(&j, "kind"); json_string(&j, s1.vps[v].is_gpu ? "stream" : "thread");
    json_key(&j, "neurons"); json_integer(&j, s1.vps[v].neurons);
    json_key(&j, "synapses"); json_integer(&j, (long long)s1.vps[v].synapses);
    json_key(&j, "phases_s"); cli_write_phases(&j, ph, wait);
    json_key(&j, "deliver_static_s"); json_number(&j, ph[NESTCL_PHASE_DELIVER] - plastic);
    json_key(&j, "deliver_plastic_s"); json_number(&j, plastic);
    nestcl_enqueue_counts vq = {0};
    cli_enqueued_add(&vq, &s1.vps[v].enqueued, vp0 ? &vp0[v].enqueued : &vq);
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
  json_key(&j, "deliver_static_s"); json_number(&j, tot[NESTCL_PHASE_DELIVER] - tot_plastic);
  json_key(&j, "deliver_plastic_s"); json_number(&j, tot_plastic);
  json_end_object(&j);
  free(vp0);

  json_key(&j, "activity");
  json_begin_object(&j);
  json_key(&j, "spikes"); json_integer(&j, (long long)spikes);
  json_key(&j, "recorded_neurons"); json_integer(&j, nrec);
  json_key(&j, "recorded_spikes"); json_integer(&j, (long long)n_sim_spikes);
  json_key(&j, "mean_rate_hz"); json_number(&j, rate);
  json_key(&j, "network_rate_hz"); json_number(&j, sim_ms > 0 ? (double)spikes / (double)s1.neurons / (sim_ms * 1e-3) : 0.0);
  json_key(&j, "cv_isi"); if (cv_n) json_number(&j, cv_sum / (double)cv_n); else json_null(&j);
  json_key(&j, "synaptic_events"); json_integer(&j, (long long)events);
  json_key(&j, "synaptic_events_per_s"); json_number(&j, sim_wall > 0 ? (double)events / sim_wall : 0.0);
  json_key(&j, "synaptic_events_per_s_per_vp"); json_number(&j, sim_wall > 0 ? (double)events / sim_wall / (o.threads + o.streams) / ranks : 0.0);
  json_end_object(&j);

  json_key(&j, "plasticity");
  json_begin_object(&j);
  json_key(&j, "ee_synapse"); json_string(&j, o.ee_static ? "static_synapse" : "stdp_pl_synapse_hom");
  json_key(&j, "delivery"); json_string(&j, o.ee_static ? "none" : (s1.plastic_batched ? "batched" : "resident"));
  json_key(&j, "batches"); json_integer(&j, (long long)(s1.plastic_batches - s0.plastic_batches));
  if (o.ee_static) {
    json_key(&j, "ee_weight_mean_pA"); json_number(&j, JE);
    json_key(&j, "ee_weight_sd_pA"); json_number(&j, 0.0);
    json_key(&j, "ee_weight_min_pA"); json_number(&j, JE);
    json_key(&j, "ee_weight_max_pA"); json_number(&j, JE);
    json_key(&j, "ee_weight_checksum"); json_null(&j);
  } else {
    char hex[20];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)ws.checksum);
    json_key(&j, "ee_weight_mean_pA"); json_number(&j, ws.mean);
    json_key(&j, "ee_weight_sd_pA"); json_number(&j, ws.sd);
    json_key(&j, "ee_weight_min_pA"); json_number(&j, ws.min);
    json_key(&j, "ee_weight_max_pA"); json_number(&j, ws.max);
    json_key(&j, "ee_weight_checksum"); json_string(&j, hex);
  }
  json_end_object(&j);

  json_key(&j, "memory");
  json_begin_object(&j);
  json_key(&j, "device_bytes"); cli_write_bytes(&j, s1.device_bytes);
  json_key(&j, "host_vp_bytes"); cli_write_bytes(&j, s1.host_bytes);
  json_key(&j, "bytes_per_synapse"); json_number(&j, s1.bytes_per_synapse);
  json_key(&j, "bytes_per_plastic_synapse"); json_number(&j, s1.bytes_per_plastic_synapse);
  json_key(&j, "history_bytes"); json_integer(&j, (long long)s1.history_bytes);
  json_key(&j, "host_peak_rss_bytes"); json_integer(&j, (long long)ru.ru_maxrss * 1024);
  json_end_object(&j);
  json_end_object(&j);

  if (j.failed) {
    fprintf(stderr, "error: out of host memory writing the results\n");
    code = CLI_RUNTIME;
  } else if (rank == 0 && cli_write_json(o.out, &j) != 0) {
    code = CLI_RUNTIME;
  } else if (!o.quiet && rank == 0) {
    fprintf(stderr, "nestcl: %llu spikes, %.2f Hz, CV %.3f, %.3g synaptic events/s, %.2f bytes/synapse\n",
            (unsigned long long)spikes, rate, cv_n ? cv_sum / (double)cv_n : 0.0,
            sim_wall > 0 ? (double)events / sim_wall : 0.0, s1.bytes_per_synapse);
    if (!o.ee_static) {
      fprintf(stderr, "nestcl: E->E stdp_pl_synapse_hom: weights %.4f +- %.4f pA, %.2f bytes per plastic synapse\n",
              ws.mean, ws.sd, s1.bytes_per_plastic_synapse);
    }
  }

done:
  json_free(&rb);
  if (rc && code == CLI_OK) {
    fprintf(stderr, "error: %s\n", nestcl_last_error());
    code = cli_exit_code(rc);
  }
  json_free(&j);
  nestcl_engine_destroy(e);
#ifdef NESTCL_WITH_MPI
  if (o.mpi) {
    MPI_Finalize();
  }
#endif
  return code;
}
