/* What the drivers of `nestcl run` share: see run_common.h. */
#include "run_common.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef NESTCL_WITH_MPI
#include <mpi.h>
#endif

#include "cli.h"

int cli_parse_double(const char *flag, const char *v, double *out)
{
  char *end;
  errno = 0;
  double d = v ? strtod(v, &end) : 0.0;
  if (!v || errno || end == v || *end || !isfinite(d)) {
    fprintf(stderr, "error: %s needs a number (got '%s')\n", flag, v ? v : "");
    return -1;
  }
  *out = d;
  return 0;
}

int cli_parse_long(const char *flag, const char *v, long lo, long hi, long *out)
{
  char *end;
  errno = 0;
  long l = v ? strtol(v, &end, 10) : 0;
  if (!v || errno || end == v || *end) {
    fprintf(stderr, "error: %s needs an integer (got '%s')\n", flag, v ? v : "");
    return -1;
  }
  if (l < lo || l > hi) {
    fprintf(stderr, "error: %s %ld outside [%ld, %ld]\n", flag, l, lo, hi);
    return -1;
  }
  *out = l;
  return 0;
}

int cli_need_path(const char *flag, const char *v)
{
  if (!v || !*v) {
    fprintf(stderr, "error: %s needs a file name\n", flag);
    return -1;
  }
  return 0;
}

/* The folder that holds path ("." where it names none), into buf of size n. */
static void parent_of(const char *path, char *buf, size_t n)
{
  snprintf(buf, n, "%s", path);
  size_t len = strlen(buf);
  while (len > 1 && buf[len - 1] == '/') /* "dir/" names dir */
    buf[--len] = '\0';
  char *slash = strrchr(buf, '/');
  if (!slash)
    snprintf(buf, n, ".");
  else if (slash == buf)
    buf[1] = '\0'; /* "/x": the root */
  else
    *slash = '\0';
}

/* Why path cannot take what is asked (a folder: new entries; else: writing), or NULL. */
static const char *unwritable(const char *path, int want_folder)
{
  struct stat st;
  if (stat(path, &st) != 0)
    return strerror(errno);
  if ((S_ISDIR(st.st_mode) != 0) != (want_folder != 0))
    return want_folder ? "not a folder" : "a folder, not a file";
  return access(path, want_folder ? W_OK | X_OK : W_OK) != 0 ? strerror(errno) : NULL;
}

int cli_check_output(const char *flag, const char *path, int folder)
{
  struct stat st;
  char dir[4096];
  const char *why = strlen(path) >= sizeof dir ? "the path is too long" : NULL;
  if (!why && stat(path, &st) == 0) {
    why = unwritable(path, folder); /* it exists: it is written (or filled) in place */
  } else if (!why) {
    parent_of(path, dir, sizeof dir); /* it is made: its folder takes it */
    const char *w = unwritable(dir, 1);
    if (w) {
      fprintf(stderr, "error: %s %s: cannot make it in %s: %s\n", flag, path, dir, w);
      return -1;
    }
  }
  if (why) {
    fprintf(stderr, "error: %s %s: %s\n", flag, path, why);
    return -1;
  }
  return 0;
}

/* Whether t is a whole number of steps dt (to 1e-9 relative, as the engine's simulate() checks). */
static int whole_steps(double t, double dt)
{
  double n = floor(t / dt + 0.5);
  return fabs(n * dt - t) <= 1e-9 * (t > 1.0 ? t : 1.0);
}

void cli_args_at(cli_args *c, int argc, char **argv, int i)
{
  c->argc = argc;
  c->argv = argv;
  c->i = i;
  c->a = argv[i];
  c->v = NULL;
  const char *eq = strchr(c->a, '=');
  if (strncmp(c->a, "--", 2) == 0 && eq && (size_t)(eq - c->a) < sizeof c->flag) {
    memcpy(c->flag, c->a, (size_t)(eq - c->a));
    c->flag[eq - c->a] = 0;
    c->v = eq + 1;
    c->a = c->flag;
  }
}

const char *cli_args_value(cli_args *c)
{
  return c->v ? c->v : (c->i + 1 < c->argc ? c->argv[++c->i] : NULL);
}

const char *cli_args_peek(const cli_args *c)
{
  return c->v ? c->v : (c->i + 1 < c->argc ? c->argv[c->i + 1] : NULL);
}

int cli_check_times(double dt, double simtime, double presim)
{
  if (!(dt > 0.0) || dt > 10.0) {
    fprintf(stderr, "error: --dt %g must be in (0, 10] ms\n", dt);
    return -1;
  }
  const char *flag[2] = {"--simtime", "--presim"};
  double t[2] = {simtime, presim};
  for (int k = 0; k < 2; ++k) {
    if (t[k] < 0.0) {
      fprintf(stderr, "error: %s %g must not be negative\n", flag[k], t[k]);
      return -1;
    }
    if (!whole_steps(t[k], dt)) {
      fprintf(stderr, "error: %s %g ms is not a multiple of the resolution --dt %g ms (NEST refuses it too)\n", flag[k],
              t[k], dt);
      return -1;
    }
  }
  return 0;
}

int cli_start_mpi(int mpi, int *rank, int *ranks)
{
  *rank = 0;
  *ranks = 1;
#ifdef NESTCL_WITH_MPI
  if (mpi) {
    int provided;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, ranks);
  }
#else
  if (mpi) {
    fprintf(stderr, "error: --mpi: this nestcl was built without MPI\n");
    return CLI_USAGE;
  }
#endif
  return CLI_OK;
}

void cli_end_mpi(int mpi)
{
#ifdef NESTCL_WITH_MPI
  if (mpi)
    MPI_Finalize();
#else
  (void)mpi;
#endif
}

double cli_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

volatile sig_atomic_t cli_signal = 0;

static void on_signal(int sig)
{
  cli_signal = sig;
}

void cli_stop_on_signals(nestcl_engine *e)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART; /* the libraries' system calls carry on; the engine looks at the flag */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  if (e) {
    nestcl_engine_set_stop_flag(e, &cli_signal);
  }
}

int cli_exit_code(int rc)
{
  if (rc == NESTCL_EINTR) {
    return CLI_SIGNAL_BASE + (cli_signal ? (int)cli_signal : SIGINT);
  }
  return rc == NESTCL_EINVAL ? CLI_USAGE : CLI_RUNTIME;
}

void cli_report(int rc, const nestcl_engine *e, double total_ms)
{
  if (rc == NESTCL_EINTR) {
    int sig = cli_signal ? (int)cli_signal : SIGINT;
    fprintf(stderr, "error: stopped by %s at t = %.10g ms of %.10g ms (the end of a super step); no output written\n",
            sig == SIGTERM    ? "SIGTERM"
              : sig == SIGINT ? "SIGINT"
                              : "a signal",
            e ? nestcl_engine_time_ms(e) : 0.0, total_ms);
  } else {
    fprintf(stderr, "error: %s\n", nestcl_last_error());
  }
}

int cli_simulate_progress(nestcl_engine *e, const char *what, double t_ms, double dt, int quiet, double *wall)
{
  double t0 = cli_now(), done = 0.0;
  int tty = isatty(2), last = -1;
  /*
   * Each call may end inside a super step, which the engine handles. Quiet:
   * one call (each call ends with a drain of the device loop).
   */
  double piece = quiet ? t_ms : dt * ceil(t_ms / 20.0 / dt);
  if (piece < dt)
    piece = dt;
  while (done < t_ms - 0.5 * dt) {
    double step = piece < t_ms - done ? piece : t_ms - done;
    step = dt * floor(step / dt + 0.5);
    /* A signal stops the engine at the end of a super step (all ranks at the same one). */
    int rc = nestcl_engine_simulate(e, step);
    if (rc) {
      if (!quiet && tty)
        fputc('\n', stderr);
      return rc;
    }
    done += step;
    double el = cli_now() - t0;
    int pct = (int)(100.0 * done / t_ms + 0.5);
    if (!quiet && (tty || pct / 25 != last / 25)) {
      fprintf(stderr, "%snestcl: %s %.1f / %.1f ms (%3d %%), %.1f s, real-time factor %.2f%s", tty ? "\r" : "", what,
              done, t_ms, pct, el, el / (done * 1e-3), tty ? "" : "\n");
      last = pct;
    }
  }
  *wall = cli_now() - t0;
  if (!quiet && tty && t_ms > 0.0)
    fputc('\n', stderr);
  return 0;
}

void cli_ckpt_init(cli_ckpt *c)
{
  memset(c, 0, sizeof *c);
  c->at_ms = -1.0;
}

int cli_ckpt_is_flag(const char *a)
{
  return strcmp(a, "--checkpoint-at") == 0 || strcmp(a, "--checkpoint") == 0 || strcmp(a, "--restore") == 0;
}

int cli_ckpt_flag(cli_ckpt *c, const char *a, const char *v)
{
  if (strcmp(a, "--checkpoint-at") == 0) {
    if (cli_parse_double(a, v, &c->at_ms))
      return -1;
    if (c->at_ms < 0.0) {
      fprintf(stderr, "error: --checkpoint-at %g must not be negative\n", c->at_ms);
      return -1;
    }
    return 0;
  }
  if (!v || !*v) {
    fprintf(stderr, "error: %s needs a folder\n", a);
    return -1;
  }
  if (strcmp(a, "--checkpoint") == 0) {
    c->dir = v;
  } else {
    c->restore = v;
  }
  return 0;
}

int cli_ckpt_check(const cli_ckpt *c, double dt, double end_ms)
{
  if ((c->at_ms >= 0.0) != (c->dir != NULL)) {
    fprintf(stderr, "error: %s\n",
            c->dir ? "--checkpoint DIR needs --checkpoint-at MS (when to write it)"
                   : "--checkpoint-at MS needs --checkpoint DIR (where to write it)");
    return -1;
  }
  if (!c->dir) {
    return 0;
  }
  if (!whole_steps(c->at_ms, dt)) {
    fprintf(stderr, "error: --checkpoint-at %g ms is not a multiple of the resolution --dt %g ms\n", c->at_ms, dt);
    return -1;
  }
  if (c->at_ms > end_ms + 0.5 * dt) {
    fprintf(stderr, "error: --checkpoint-at %g ms lies beyond the run's end at %g ms (--presim + --simtime)\n",
            c->at_ms, end_ms);
    return -1;
  }
  if (c->restore && strcmp(c->restore, c->dir) == 0) {
    fprintf(stderr, "error: --checkpoint and --restore name the same folder %s\n", c->dir);
    return -1;
  }
  return cli_check_output("--checkpoint", c->dir, 1);
}

int cli_ckpt_prepare(nestcl_engine *e, cli_ckpt *c, double dt, double end_ms)
{
  int rc = c->restore ? nestcl_engine_restore(e, c->restore) : nestcl_engine_prepare(e);
  if (rc) {
    return rc;
  }
  nestcl_engine_stats st;
  if ((rc = nestcl_engine_get_stats(e, &st))) {
    return rc;
  }
  double now = nestcl_engine_time_ms(e);
  c->restored_ms = now;
  if (c->restore && now > end_ms + 0.5 * dt) {
    return nestcl_set_error(NESTCL_EINVAL,
                            "--restore %s: the checkpoint's time %.10g ms lies beyond the run's end "
                            "at %.10g ms (--presim + --simtime count from t = 0)",
                            c->restore, now, end_ms);
  }
  if (c->dir) {
    long long at = llround(c->at_ms / dt), md = st.min_delay_steps > 0 ? st.min_delay_steps : 1;
    if (at % md != 0) {
      return nestcl_set_error(NESTCL_EINVAL,
                              "--checkpoint-at %g ms is not a multiple of the min delay %.10g ms "
                              "(checkpoints are taken at the end of a super step)",
                              c->at_ms, (double)md * dt);
    }
    if (c->at_ms < now - 0.5 * dt) {
      return nestcl_set_error(NESTCL_EINVAL, "--checkpoint-at %g ms lies before the restored time %.10g ms", c->at_ms,
                              now);
    }
  }
  return 0;
}

int cli_run_until(nestcl_engine *e, const char *what, double until_ms, cli_ckpt *c, double dt, int quiet, double *wall)
{
  double now = nestcl_engine_time_ms(e), w = 0.0;
  *wall = 0.0;
  int rc = 0;
  if (c && c->dir && !c->done && c->at_ms >= now - 0.5 * dt && c->at_ms <= until_ms + 0.5 * dt) {
    double first = dt * floor((c->at_ms - now) / dt + 0.5);
    if (first > 0.0) {
      rc = cli_simulate_progress(e, what, first, dt, quiet, &w);
      *wall += w;
    }
    if (rc) {
      return rc;
    }
    double t0 = cli_now();
    rc = nestcl_engine_checkpoint(e, c->dir);
    if (rc) {
      return rc;
    }
    c->done = 1;
    if (!quiet) {
      fprintf(stderr, "nestcl: checkpoint at t = %.10g ms written to %s (%.2f s)\n", nestcl_engine_time_ms(e), c->dir,
              cli_now() - t0);
    }
    now = nestcl_engine_time_ms(e);
  }
  double rest = dt * floor((until_ms - now) / dt + 0.5);
  if (rest > 0.0) {
    rc = cli_simulate_progress(e, what, rest, dt, quiet, &w);
    *wall += w;
  }
  return rc;
}

void cli_ckpt_json(json *j, const cli_ckpt *c)
{
  json_key(j, "checkpoint_at_ms");
  if (c->dir)
    json_number(j, c->at_ms);
  else
    json_null(j);
  json_key(j, "restored_from_ms");
  if (c->restore)
    json_number(j, c->restored_ms);
  else
    json_null(j);
}

const char cli_build_help[] =
  "  --build-threads N    host threads that draw the synapses at the build (default: every\n"
  "                       core the process may use); the network is the same on any number\n"
  "  --build-upload M     how a stream's synapses reach its device while the next are drawn: map\n"
  "                       (drawn into the mapped device buffers: no copy where the device's\n"
  "                       memory is the host's), copy (pinned host memory, non-blocking\n"
  "                       transfers), or auto (default: map on such devices, else copy)\n"
  "  --build-on W         who draws a stream's synapses: device (its kernels, for the rules they\n"
  "                       draw: fixed_total_number, pairwise_bernoulli, fixed_indegree), host\n"
  "                       (the build threads), or auto (default: the device if it is a GPU)\n"
  "  --synapse-checksums  the built synapses' checksums in the results (network.synapse_checksums):\n"
  "                       equal for equal networks, whatever the build threads or the split\n";

static const char *const build_upload_names[] = {"auto", "map", "copy"};
static const char *const build_on_names[] = {"auto", "host", "device"};

void cli_build_init(cli_build *b)
{
  memset(b, 0, sizeof *b);
}

int cli_build_is_flag(const char *a)
{
  return strcmp(a, "--build-threads") == 0 || strcmp(a, "--build-upload") == 0 || strcmp(a, "--build-on") == 0 ||
    strcmp(a, "--synapse-checksums") == 0;
}

int cli_build_flag(cli_build *b, cli_args *c)
{
  if (strcmp(c->a, "--synapse-checksums") == 0) {
    if (c->v) {
      fprintf(stderr, "error: %s takes no value\n", c->a);
      return -1;
    }
    b->checksums = 1;
    return 0;
  }
  if (strcmp(c->a, "--build-upload") == 0 || strcmp(c->a, "--build-on") == 0) {
    int upload = strcmp(c->a, "--build-upload") == 0;
    const char *const *names = upload ? build_upload_names : build_on_names;
    const char *v = cli_args_value(c);
    for (int k = 0; v && k < 3; ++k) {
      if (strcmp(v, names[k]) == 0) {
        if (upload)
          b->upload = (nestcl_build_upload)k;
        else
          b->on = (nestcl_build_on)k;
        return 0;
      }
    }
    fprintf(stderr, "error: %s must be %s, %s or %s (got '%s')\n", c->a, names[0], names[1], names[2], v ? v : "");
    return -1;
  }
  return cli_parse_long(c->a, cli_args_value(c), 1, 1024, &b->threads);
}

int cli_build_checksums(nestcl_engine *e, cli_build *b)
{
  if (!b->checksums) {
    return 0;
  }
  int n = 0;
  int rc = nestcl_engine_synapse_checksums(e, NULL, 0, &n);
  free(b->sums);
  b->sums = rc ? NULL : calloc((size_t)(n ? n : 1), sizeof *b->sums);
  if (!rc && !b->sums) {
    rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  if (!rc) {
    rc = nestcl_engine_synapse_checksums(e, b->sums, n, &n);
  }
  b->n_sums = rc ? 0 : n;
  return rc;
}

static void json_hex(json *j, const char *key, uint64_t v)
{
  char hex[20];
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)v);
  json_key(j, key);
  json_string(j, hex);
}

void cli_build_checksums_json(json *j, const cli_build *b)
{
  if (!b->checksums) {
    return;
  }
  json_key(j, "synapse_checksums");
  json_begin_array(j);
  for (int k = 0; k < b->n_sums; ++k) {
    const nestcl_synapse_checksum *c = &b->sums[k];
    json_begin_object(j);
    json_key(j, "projection");
    if (c->proj >= 0)
      json_integer(j, c->proj);
    else
      json_null(j);
    json_key(j, "source_population");
    json_integer(j, c->source_pop);
    json_key(j, "target_population");
    json_integer(j, c->target_pop);
    json_key(j, "synapses");
    json_integer(j, (long long)c->synapses);
    json_hex(j, "sources", c->sources);
    json_hex(j, "targets", c->targets);
    json_hex(j, "weights", c->weights);
    json_hex(j, "delays", c->delays);
    json_hex(j, "layout", c->layout);
    json_end_object(j);
  }
  json_end_array(j);
}

void cli_build_free(cli_build *b)
{
  free(b->sums);
  b->sums = NULL;
  b->n_sums = 0;
}

/* A long build's progress on stderr, as the simulation's: one line redrawn on a terminal, else one per quarter. */
static void build_progress(void *arg, double fraction, double seconds)
{
  cli_build *b = arg;
  int tty = isatty(2), pct = (int)(100.0 * fraction);
  if (!tty && b->printed && pct / 25 == b->last / 25) {
    return;
  }
  fprintf(stderr, "%snestcl: building: synapses %3d %% drawn, %.1f s%s", tty ? "\r" : "", pct, seconds,
          tty ? "" : "\n");
  b->printed = 1;
  b->last = pct;
}

void cli_build_done(cli_build *b)
{
  if (b->printed && isatty(2)) {
    fputc('\n', stderr);
  }
  b->printed = 0;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  b->peak_rss = ru.ru_maxrss * 1024L;
}

void cli_build_config(cli_build *b, nestcl_engine_config *cfg)
{
  cfg->build_progress = b->quiet ? NULL : build_progress;
  cfg->build_progress_arg = b;
  cfg->build_threads = (int)b->threads;
  cfg->build_upload = b->upload;
  cfg->build_on = b->on;
}

void cli_build_json(json *j, const cli_build *b)
{
  json_key(j, "build_threads");
  if (b->threads)
    json_integer(j, b->threads);
  else
    json_null(j);
  json_key(j, "build_upload");
  json_string(j, build_upload_names[b->upload]);
  json_key(j, "build_on");
  json_string(j, build_on_names[b->on]);
}

static const char *class_names[NESTCL_MEM_CLASSES] = {"state", "ring", "synapses", "recording", "other"};

void cli_write_bytes(json *j, const size_t *b)
{
  json_begin_object(j);
  size_t tot = 0;
  for (int c = 0; c < NESTCL_MEM_CLASSES; ++c) {
    json_key(j, class_names[c]);
    json_integer(j, (long long)b[c]);
    tot += b[c];
  }
  json_key(j, "total");
  json_integer(j, (long long)tot);
  json_end_object(j);
}

void cli_write_phases(json *j, const double *s, double wait)
{
  json_begin_object(j);
  for (int p = 0; p < NESTCL_PHASES; ++p) {
    json_key(j, nestcl_phase_name((nestcl_phase)p));
    json_number(j, s[p]);
  }
  json_key(j, "other_wait");
  json_number(j, wait);
  json_end_object(j);
}

void cli_enqueued_add(nestcl_enqueue_counts *sum, const nestcl_enqueue_counts *a, const nestcl_enqueue_counts *b)
{
  sum->launches += a->launches - b->launches;
  sum->waits += a->waits - b->waits;
  sum->throttles += a->throttles - b->throttles;
  sum->replays += a->replays - b->replays;
  sum->resumes += a->resumes - b->resumes;
  sum->writes += a->writes - b->writes;
  sum->reads += a->reads - b->reads;
  sum->bytes_written += a->bytes_written - b->bytes_written;
  sum->bytes_read += a->bytes_read - b->bytes_read;
  sum->persistent_steps += a->persistent_steps - b->persistent_steps;
}

void cli_write_enqueued(json *j, const nestcl_enqueue_counts *c, double super_steps)
{
  const double per = super_steps > 0.0 ? 1.0 / super_steps : 0.0;
  json_begin_object(j);
  json_key(j, "launches");
  json_integer(j, (long long)c->launches);
  json_key(j, "waits");
  json_integer(j, (long long)c->waits);
  json_key(j, "throttles");
  json_integer(j, (long long)c->throttles);
  json_key(j, "replays");
  json_integer(j, (long long)c->replays);
  json_key(j, "resumes");
  json_integer(j, (long long)c->resumes);
  json_key(j, "transfers_to_device");
  json_integer(j, (long long)c->writes);
  json_key(j, "transfers_from_device");
  json_integer(j, (long long)c->reads);
  json_key(j, "bytes_to_device");
  json_integer(j, (long long)c->bytes_written);
  json_key(j, "bytes_from_device");
  json_integer(j, (long long)c->bytes_read);
  json_key(j, "persistent_steps");
  json_integer(j, (long long)c->persistent_steps);
  json_key(j, "super_steps");
  json_number(j, super_steps);
  json_key(j, "per_super_step");
  json_begin_object(j);
  json_key(j, "launches");
  json_number(j, (double)c->launches * per);
  json_key(j, "waits");
  json_number(j, (double)c->waits * per);
  json_key(j, "throttles");
  json_number(j, (double)c->throttles * per);
  json_key(j, "replays");
  json_number(j, (double)c->replays * per);
  json_key(j, "transfers");
  json_number(j, (double)(c->writes + c->reads) * per);
  json_key(j, "bytes");
  json_number(j, (double)(c->bytes_written + c->bytes_read) * per);
  json_end_object(j);
  json_end_object(j);
}

int cli_dry_run(nestcl_engine *e, const char *benchmark)
{
  nestcl_memory_estimate est;
  int rc = nestcl_engine_estimate(e, &est);
  if (rc) {
    return rc;
  }
  json j;
  json_init(&j);
  json_begin_object(&j);
  json_key(&j, "schema");
  json_string(&j, "nestcl-estimate/1");
  json_key(&j, "benchmark");
  json_string(&j, benchmark);
  json_key(&j, "rank");
  json_integer(&j, est.rank);
  json_key(&j, "ranks");
  json_integer(&j, est.n_ranks);
  json_key(&j, "neurons");
  json_integer(&j, (long long)est.neurons);
  json_key(&j, "synapses_expected");
  json_number(&j, est.synapses);
  json_key(&j, "plastic_synapses_expected");
  json_number(&j, est.plastic_synapses);
  json_key(&j, "host_bytes");
  cli_write_bytes(&j, est.host_bytes);
  json_key(&j, "host_build_peak_bytes");
  json_integer(&j, (long long)est.host_build_bytes);
  json_key(&j, "host_available_bytes");
  json_integer(&j, (long long)est.host_available);
  json_key(&j, "device_bytes");
  cli_write_bytes(&j, est.device_bytes);
  json_key(&j, "device_plastic_bytes");
  json_integer(&j, (long long)est.device_plastic_bytes);
  json_key(&j, "device_available_bytes");
  json_integer(&j, (long long)est.device_available);
  json_key(&j, "device_name");
  if (est.device_name[0])
    json_string(&j, est.device_name);
  else
    json_null(&j);
  size_t dev = 0;
  for (int c = 0; c < NESTCL_MEM_CLASSES; ++c)
    dev += est.device_bytes[c];
  int host_fits = est.host_available == 0 || est.host_build_bytes <= est.host_available;
  int dev_fits = est.device_available == 0 || dev <= est.device_available;
  int batched = !dev_fits && est.device_plastic_bytes && dev - est.device_plastic_bytes < est.device_available;
  json_key(&j, "fits");
  json_bool(&j, host_fits && (dev_fits || batched));
  json_key(&j, "plastic_batched");
  json_bool(&j, batched);
  json_key(&j, "vps");
  json_begin_array(&j);
  for (int v = 0; v < est.n_vps && v < NESTCL_ESTIMATE_MAX_VPS; ++v) {
    json_begin_object(&j);
    json_key(&j, "kind");
    json_string(&j, est.vps[v].is_gpu ? "stream" : "thread");
    json_key(&j, "neurons");
    json_integer(&j, est.vps[v].neurons);
    json_key(&j, "bytes");
    cli_write_bytes(&j, est.vps[v].is_gpu ? est.vps[v].device_bytes : est.vps[v].host_bytes);
    json_end_object(&j);
  }
  json_end_array(&j);
  json_end_object(&j);
  if (j.failed) {
    json_free(&j);
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  rc = est.rank == 0 && cli_write_json(NULL, &j) != 0 ? nestcl_set_error(NESTCL_EIO, "cannot write stdout") : 0;
  json_free(&j);
  return rc;
}

char *cli_tmp_name(const char *path)
{
  size_t n = strlen(path) + 32;
  char *t = malloc(n);
  if (t)
    snprintf(t, n, "%s.tmp.%ld", path, (long)getpid());
  return t;
}

int cli_outputs_add(cli_outputs *o, char *tmp, const char *path)
{
  char *p = strdup(path);
  if (o->n == CLI_MAX_OUTPUTS || !p) {
    fprintf(stderr, "error: cannot write %s: too many outputs\n", path);
    remove(tmp);
    free(tmp);
    free(p);
    return -1;
  }
  o->tmp[o->n] = tmp;
  o->path[o->n] = p;
  o->n++;
  return 0;
}

FILE *cli_outputs_open(cli_outputs *o, const char *path)
{
  char *t = cli_tmp_name(path);
  FILE *f = t ? fopen(t, "w") : NULL;
  if (!f) {
    fprintf(stderr, "error: cannot write %s: %s\n", path, t ? strerror(errno) : "out of host memory");
    free(t);
    return NULL;
  }
  if (cli_outputs_add(o, t, path)) {
    fclose(f);
    return NULL;
  }
  return f;
}

int cli_close_checked(FILE *f, const char *path)
{
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) {
    fprintf(stderr, "error: cannot write %s: %s\n", path, strerror(errno));
    return -1;
  }
  return 0;
}

void cli_outputs_drop(cli_outputs *o)
{
  for (int k = 0; k < o->n; ++k) {
    remove(o->tmp[k]);
    free(o->tmp[k]);
    free(o->path[k]);
  }
  o->n = 0;
}

int cli_outputs_commit(cli_outputs *o)
{
  int ok = 1;
  if (cli_signal) {
    fprintf(stderr, "error: stopped by %s while writing the outputs; no output written\n",
            cli_signal == SIGTERM ? "SIGTERM" : "SIGINT");
    ok = 0;
  }
  for (int k = 0; k < o->n && ok; ++k) {
    if (rename(o->tmp[k], o->path[k]) != 0) {
      fprintf(stderr, "error: cannot write %s: %s\n", o->path[k], strerror(errno));
      ok = 0;
      /* The ones renamed already are complete files; the rest are removed. */
    }
  }
  cli_outputs_drop(o);
  return ok ? 0 : -1;
}

int cli_write_json(const char *path, const json *j)
{
  if (!path) {
    fwrite(j->buf, 1, j->len, stdout);
    fputc('\n', stdout);
    return fflush(stdout) == 0 ? 0 : -1;
  }
  cli_outputs o = {{0}, {0}, 0};
  FILE *f = cli_outputs_open(&o, path);
  if (!f) {
    return -1;
  }
  fwrite(j->buf, 1, j->len, f);
  fputc('\n', f);
  if (cli_close_checked(f, path)) {
    cli_outputs_drop(&o);
    return -1;
  }
  return cli_outputs_commit(&o);
}
