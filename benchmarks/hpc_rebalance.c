/*
 * `nestcl run hpc_benchmark --rebalance` (hpc_benchmark_run.h): the wall time
 * and the threads' and streams' busy times measured in the second half of the
 * presimulation correct the performance model (nestcl_pm_balance_fit), whose
 * best split is then built and the presimulation replayed, until a split to
 * try was measured already; the run goes on with the fastest split measured.
 * The results do not depend on the split.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef NESTCL_WITH_MPI
#include <mpi.h>
#endif

#include "hpc_benchmark_run.h"

#ifdef NESTCL_WITH_PERFMODEL
#include "pm_profile.h"

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
  if (!rc)
    rc = cli_simulate_progress(e, "presim", rest, o->dt, quiet, &w2);
  double sum[2] = {0.0, 0.0}, cnt[2] = {0.0, 0.0};
  if (!rc) {
    nestcl_engine_get_stats(e, &b);
    for (int v = 0; v < b.n_vps; ++v) {
      if (b.vps[v].neurons == 0)
        continue;
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
    sum[0] = out[0];
    sum[1] = out[1];
    cnt[0] = out[2];
    cnt[1] = out[3];
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

/* A --rebalance round's measurements so far and the model's configuration of the run. */
typedef struct rebalance_state {
  nestcl_pm_config pc;
  nestcl_pm_measured meas[NESTCL_PM_BALANCE_MAX];
  int n_meas;
} rebalance_state;

/*
 * The splits to try next, in order: the corrected model's best, then the
 * neighbours of the fastest measured split, 0.1 either side (the side the
 * model prefers first).
 */
static void rebalance_candidates(const hpc_run *r, const rebalance_state *st, const nestcl_pm_balance *bal, int best,
                                 double cand[3])
{
  cand[0] = bal->alpha;
  cand[1] = st->meas[best].alpha - 0.1;
  cand[2] = st->meas[best].alpha + 0.1;
  double q[NESTCL_PM_NP];
  nestcl_pm_balance_params(r->ar.prof.p, bal->s, q);
  nestcl_pm_config x = st->pc;
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
 * The next split: the first candidate not measured yet (within 0.02), while
 * rounds are left; else where the loop ends, the fastest split measured.
 * (Ending on the corrected model's best unless a split measured 5 % faster
 * did worse on the plastic network, whose rate still climbs in the
 * presimulation: the correction fitted there misleads.) Returns whether a new
 * split is tried.
 */
static int rebalance_next(const hpc_run *r, const rebalance_state *st, long round, const nestcl_pm_balance *bal,
                          double *next, const char **what)
{
  int best = 0;
  for (int i = 1; i < st->n_meas; ++i) {
    if (st->meas[i].wall < st->meas[best].wall)
      best = i;
  }
  double cand[3];
  rebalance_candidates(r, st, bal, best, cand);
  *next = st->meas[best].alpha;
  *what = "the fastest split measured";
  for (int k = 0; k < 3 && round < r->o.rebalance_rounds && st->n_meas < NESTCL_PM_BALANCE_MAX; ++k) {
    if (cand[k] < 0.0 || cand[k] > 1.0)
      continue;
    int seen = 0;
    for (int i = 0; i < st->n_meas; ++i)
      seen |= fabs(st->meas[i].alpha - cand[k]) <= 0.02;
    if (seen)
      continue;
    *next = cand[k];
    *what = k == 0 ? "the corrected model's best" : "a neighbour of the fastest split measured";
    return 1;
  }
  return 0;
}

/* One round in the results' config.rebalance.rounds, and its line on stderr. */
static void rebalance_report(hpc_run *r, long round, const nestcl_pm_measured *m, const nestcl_pm_balance *bal,
                             int apply, double next, const char *what)
{
  json *rb = &r->rb;
  json_begin_object(rb);
  json_key(rb, "alpha");
  json_number(rb, r->o.gpu_fraction);
  json_key(rb, "wall_s_per_s");
  json_number(rb, m->wall);
  json_key(rb, "cpu_busy_s_per_s");
  json_number(rb, m->cpu_busy);
  json_key(rb, "gpu_busy_s_per_s");
  json_number(rb, m->gpu_busy);
  json_key(rb, "correction");
  json_number(rb, bal->s);
  json_key(rb, "scale");
  json_number(rb, bal->b);
  json_key(rb, "predicted_here_s_per_s");
  json_number(rb, bal->here);
  json_key(rb, "model_alpha");
  json_number(rb, bal->alpha);
  json_key(rb, "model_wall_s_per_s");
  json_number(rb, bal->wall);
  json_key(rb, "applied");
  json_bool(rb, apply || next != r->o.gpu_fraction);
  json_key(rb, "next_alpha");
  json_number(rb, next);
  json_end_object(rb);
  if (!r->o.quiet && r->rank == 0) {
    fprintf(stderr,
            "nestcl: rebalance %ld: alpha %.3f took %.3f s per simulated s (a thread busy %.3f s, a "
            "stream %.3f s); the corrected model's best is alpha %.3f (%.3f s); next: %s, alpha %.3f\n",
            round + 1, r->o.gpu_fraction, m->wall, m->cpu_busy, m->gpu_busy, bal->alpha, bal->wall, what, next);
  }
  if (!apply) {
    static char why[256];
    snprintf(why, sizeof why, "%s; kept %s",
             round >= r->o.rebalance_rounds ? "rounds exhausted"
                                            : "the model's best and the fastest split's neighbours measured",
             what);
    r->rebalance_why = why;
  }
}

/*
 * Rounds of (measure in the presimulation, choose alpha, rebuild and replay)
 * until the split to try was measured already; the extra wall time into
 * *t_rb. Engine status codes.
 */
static int rebalance_rounds(hpc_run *r, hpc_build_fn build, rebalance_state *st, double *t_rb)
{
  hpc_opts *o = &r->o;
  int rc = 0;
  for (long round = 0; !rc; ++round) {
    nestcl_pm_measured *m = &st->meas[st->n_meas];
    double window = 0.0, cpu_busy = 0.0, gpu_busy = 0.0;
    rc = presim_measured(r->net.e, o, o->quiet || r->rank, &r->presim_wall, &window, &cpu_busy, &gpu_busy);
    if (rc)
      break;
    st->n_meas++;
    m->alpha = o->gpu_fraction;
    m->wall = window;
    m->cpu_busy = cpu_busy;
    m->gpu_busy = gpu_busy;
    nestcl_pm_balance bal;
    rc = nestcl_pm_balance_fit(r->ar.prof.p, &st->pc, st->meas, st->n_meas, &bal);
    if (rc)
      break;
    double next;
    const char *what;
    int apply = rebalance_next(r, st, round, &bal, &next, &what);
    rebalance_report(r, round, m, &bal, apply, next, what);
    if (next == o->gpu_fraction)
      break;
    /* The results do not depend on the split: a new build with the new alpha, the same presimulation again. */
    double t0 = r->presim_wall;
    double c0 = cli_now();
    nestcl_engine_destroy(r->net.e);
    r->net.e = NULL;
    o->gpu_fraction = next;
    rc = build(o, &r->net);
    *t_rb += cli_now() - c0 + t0;
    if (!apply) {
      /* Back to the split kept: the presimulation once more, unmeasured. */
      if (!rc)
        rc = cli_simulate_progress(r->net.e, "presim", o->presim, o->dt, o->quiet || r->rank, &r->presim_wall);
      break;
    }
  }
  return rc;
}

int hpc_rebalance(hpc_run *r, hpc_build_fn build)
{
  hpc_opts *o = &r->o;
  if (o->threads == 0 || o->streams == 0 || !r->have_profile) {
    r->rebalance_why = "nothing to rebalance: one kind of VP";
    return cli_simulate_progress(r->net.e, "presim", o->presim, o->dt, o->quiet || r->rank, &r->presim_wall);
  }
  rebalance_state st;
  pm_hpc_config(&r->ar.prof, o->scale, !o->ee_static, r->ranks, &st.pc);
  st.pc.TC = o->threads;
  st.pc.TG = o->streams;
  st.n_meas = 0;
  json_begin_array(&r->rb);
  double t_rb = 0.0;
  int rc = rebalance_rounds(r, build, &st, &t_rb);
  json_end_array(&r->rb);
  r->rebalance_s = t_rb;
  r->split_source = "rebalanced";
  r->predicted = NAN;
  return rc;
}
#endif
