/*
 * nestcl's performance model (nestcl/pm_model.h): evaluation, the three
 * fitting stages of the paper (CPU, then GPU with the shared parameters kept,
 * then co-execution), each cross-validated over whole runs, and the choice of
 * alpha. A stage fits only the parameters its runs can determine: with one
 * synapse mix the static and plastic event costs are one blended cost, with
 * one rank the MPI term stays 0, and the profile records which were fitted.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestcl/device.h"
#include "nestcl/pm_model.h"

const char *const nestcl_pm_param_names[NESTCL_PM_NP] = {
  "c_update",  "c_step",  "c_spike",  "c_pspike", "c_event",   "c_plastic", "g_update", "g_step", "g_launch",
  "g_dlaunch", "g_spike", "g_pspike", "g_event",  "g_plastic", "s_step",    "s_spike",  "s_mpi",  "kappa"};

const char *const nestcl_pm_output_names[NESTCL_PM_OUTPUTS] = {"wall", "cpu_update", "cpu_deliver", "gpu_update",
                                                               "gpu_deliver"};

void nestcl_pm_predict(const double *p, const nestcl_pm_config *c, nestcl_pm_prediction *o)
{
  memset(o, 0, sizeof *o);
  double per_rank = c->N / (c->M > 0 ? c->M : 1.0);
  double alpha = c->TC > 0 ? (c->TG > 0 ? c->alpha : 0.0) : 1.0;
  double nC = c->TC > 0 ? per_rank * (1.0 - alpha) / c->TC : 0.0;
  double nG = c->TG > 0 ? per_rank * alpha : 0.0;
  double R = c->F * c->N;
  double ev = c->F * c->K;
  if (c->TC > 0 && nC > 0) {
    o->cpu_update = p[NESTCL_PM_C_UPDATE] * nC;
    o->cpu_deliver = p[NESTCL_PM_C_STEP] * c->S + (p[NESTCL_PM_C_SPIKE] + p[NESTCL_PM_C_PSPIKE] * c->phi) * R +
      (p[NESTCL_PM_C_EVENT] * (1.0 - c->phi) + p[NESTCL_PM_C_PLASTIC] * c->phi) * ev * nC;
  }
  if (c->TG > 0 && nG > 0) {
    o->gpu_update = (p[NESTCL_PM_G_STEP] + p[NESTCL_PM_G_LAUNCH] * c->TG) * c->S + p[NESTCL_PM_G_UPDATE] * nG;
    o->gpu_deliver = p[NESTCL_PM_G_DLAUNCH] * c->TG * c->S +
      (p[NESTCL_PM_G_SPIKE] * c->TG + p[NESTCL_PM_G_PSPIKE] * c->phi) * R +
      (p[NESTCL_PM_G_EVENT] * (1.0 - c->phi) + p[NESTCL_PM_G_PLASTIC] * c->phi) * ev * nG;
  }
  o->cpu_vp = o->cpu_update + o->cpu_deliver;
  o->gpu_vp = o->gpu_update + o->gpu_deliver;
  o->busy = o->cpu_vp;
  o->bound = "cpu";
  if (o->gpu_vp > o->busy) {
    o->busy = o->gpu_vp;
    o->bound = "gpu";
  }
  /*
   * Co-execution on shared cores: the T_C CPU VPs' work (T_C c) and the
   * host-core seconds the device's work costs (kappa g: PoCL's workers on
   * the same cores; about 0 for a discrete GPU) must both run on the P
   * cores, so the step takes at least (T_C c + kappa g) / P. Only when both
   * kinds hold neurons: alone, each is its own measurement.
   */
  if (o->cpu_vp > 0.0 && o->gpu_vp > 0.0) {
    double kappa = p[NESTCL_PM_KAPPA] > 0.0 ? p[NESTCL_PM_KAPPA] : 0.0;
    double shared = (c->TC * o->cpu_vp + kappa * o->gpu_vp) / (c->P > 0 ? c->P : 1.0);
    if (shared > o->busy) {
      o->sharing = shared - o->busy;
      o->busy = shared;
    }
  }
  o->cpu_wait = c->TC > 0 ? o->busy - o->cpu_vp : 0.0;
  o->gpu_wait = c->TG > 0 ? o->busy - o->gpu_vp : 0.0;
  o->barriers = p[NESTCL_PM_S_STEP] * (c->TC + c->TG) * c->S;
  o->exchange = p[NESTCL_PM_S_SPIKE] * R;
  o->mpi = p[NESTCL_PM_S_MPI] * R * (c->M - 1.0);
  o->wall = o->busy + o->barriers + o->exchange + o->mpi;
}

double nestcl_pm_output_value(const double *p, const nestcl_pm_config *c, nestcl_pm_output out)
{
  nestcl_pm_prediction o;
  nestcl_pm_predict(p, c, &o);
  switch (out) {
  case NESTCL_PM_CPU_UPDATE:
    return o.cpu_update;
  case NESTCL_PM_CPU_DELIVER:
    return o.cpu_deliver;
  case NESTCL_PM_GPU_UPDATE:
    return o.gpu_update;
  case NESTCL_PM_GPU_DELIVER:
    return o.gpu_deliver;
  default:
    return o.wall;
  }
}

void nestcl_pm_hpc_config(const nestcl_pm_profile *p, double N, int stdp, int ranks, nestcl_pm_config *c)
{
  memset(c, 0, sizeof *c);
  c->N = N;
  c->K = 11250.0;
  c->M = ranks;
  c->S = 1000.0 / 1.5;
  c->P = p->cores;
  c->phi = stdp ? (9000.0 * 9000.0) / (11250.0 * 11250.0) : 0.0;
  const nestcl_pm_rate_table *t = stdp ? &p->rate_stdp : &p->rate_static;
  if (t->n == 0) {
    t = stdp ? &p->rate_static : &p->rate_stdp;
  }
  c->F = nestcl_pm_rate(t, c->N);
}

double nestcl_pm_rate(const nestcl_pm_rate_table *t, double N)
{
  if (t->n <= 0) {
    return NAN;
  }
  if (t->n == 1 || N <= t->N[0]) {
    return t->F[0];
  }
  if (N >= t->N[t->n - 1]) {
    return t->F[t->n - 1];
  }
  /* Linear in log N between the measured sizes. */
  for (int i = 1; i < t->n; ++i) {
    if (N <= t->N[i]) {
      double u = (log(N) - log(t->N[i - 1])) / (log(t->N[i]) - log(t->N[i - 1]));
      return t->F[i - 1] + u * (t->F[i] - t->F[i - 1]);
    }
  }
  return t->F[t->n - 1];
}

double nestcl_pm_best_alpha(const double *p, const nestcl_pm_config *c, double *wall)
{
  nestcl_pm_config x = *c;
  if (c->TC <= 0 || c->TG <= 0) {
    x.alpha = c->TC > 0 ? 0.0 : 1.0;
    if (wall)
      *wall = nestcl_pm_output_value(p, &x, NESTCL_PM_WALL);
    return x.alpha;
  }
  /* The wall time is piecewise linear in alpha with few kinks: a fine grid, then a golden-section polish. */
  double best = 0.0, bw = INFINITY;
  for (int i = 0; i <= 1000; ++i) {
    x.alpha = i / 1000.0;
    double w = nestcl_pm_output_value(p, &x, NESTCL_PM_WALL);
    if (w < bw) {
      bw = w;
      best = x.alpha;
    }
  }
  double lo = best - 0.001 < 0 ? 0 : best - 0.001, hi = best + 0.001 > 1 ? 1 : best + 0.001;
  const double g = 0.6180339887498949;
  for (int it = 0; it < 40; ++it) {
    double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
    x.alpha = a;
    double wa = nestcl_pm_output_value(p, &x, NESTCL_PM_WALL);
    x.alpha = b;
    double wb = nestcl_pm_output_value(p, &x, NESTCL_PM_WALL);
    if (wa < wb)
      hi = b;
    else
      lo = a;
  }
  x.alpha = 0.5 * (lo + hi);
  double w = nestcl_pm_output_value(p, &x, NESTCL_PM_WALL);
  if (w < bw) {
    bw = w;
    best = x.alpha;
  }
  if (wall)
    *wall = bw;
  return best;
}

/* ---- fitting ------------------------------------------------------------ */

/* Inputs of one observation as the fitter sees them: the config and the output. */
#define PM_IN 11

typedef struct stage_ctx {
  double base[NESTCL_PM_NP]; /* parameters not fitted in this stage */
  int free_idx[NESTCL_PM_NP];
  int n_free;
} stage_ctx;

static double stage_f(const double *q, const double *x, void *ctx)
{
  const stage_ctx *s = ctx;
  double p[NESTCL_PM_NP];
  memcpy(p, s->base, sizeof p);
  for (int i = 0; i < s->n_free; ++i) {
    p[s->free_idx[i]] = q[i];
  }
  nestcl_pm_config c = {x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9]};
  return nestcl_pm_output_value(p, &c, (nestcl_pm_output)(int)x[10]);
}

static void to_row(const nestcl_pm_obs *o, double *x)
{
  const nestcl_pm_config *c = &o->c;
  double v[PM_IN] = {c->N, c->K, c->F, c->M, c->TC, c->TG, c->alpha, c->phi, c->S, c->P, (double)o->out};
  memcpy(x, v, sizeof v);
}

typedef enum { ST_CPU, ST_GPU, ST_CO } stage_kind;

static stage_kind kind_of(const nestcl_pm_config *c)
{
  if (c->TG <= 0 || (c->TC > 0 && c->alpha <= 0.0))
    return ST_CPU;
  if (c->TC <= 0 || c->alpha >= 1.0)
    return ST_GPU;
  return ST_CO;
}

static const char *stage_name[] = {"cpu", "gpu", "co-execution"};

/* Starting values: the order of magnitude of each cost on a CPU of today. */
static const double p_start[NESTCL_PM_NP] = {1e-4, 1e-5, 1e-7, 1e-7, 1e-8, 1e-8, 1e-5, 1e-4, 1e-4,
                                             1e-4, 1e-7, 1e-7, 1e-9, 1e-9, 1e-5, 1e-7, 1e-7, 1.0};

/* Sum of squares of the rows with use[k] (NULL: all) at kappa q. */
static double kappa_sse(const double *x, const double *y, size_t m, const unsigned char *use, stage_ctx *ctx, double q)
{
  double s = 0.0;
  for (size_t k = 0; k < m; ++k) {
    if (!use || use[k]) {
      double r = stage_f(&q, x + k * PM_IN, ctx) - y[k];
      s += r * r;
    }
  }
  return s;
}

/*
 * kappa alone, over [0, hi]: the best of a grid, refined by golden section
 * between its neighbours; where the sum of squares is flat (the host-core
 * term binds nowhere) the smallest such kappa. *se from the curvature (hi
 * when flat: undetermined within the range).
 */
static double fit_kappa(const double *x, const double *y, size_t m, const unsigned char *use, stage_ctx *ctx, double hi,
                        double *sse, double *se)
{
  const int G = 300;
  double best_q = 0.0, best = kappa_sse(x, y, m, use, ctx, 0.0);
  for (int i = 1; i <= G; ++i) {
    double q = hi * i / G, v = kappa_sse(x, y, m, use, ctx, q);
    if (v < best * (1.0 - 1e-12)) {
      best = v;
      best_q = q;
    }
  }
  double a = best_q - hi / G, b = best_q + hi / G;
  a = a < 0.0 ? 0.0 : a;
  b = b > hi ? hi : b;
  const double gr = 0.6180339887498949;
  for (int it = 0; it < 60; ++it) {
    double c = b - gr * (b - a), d = a + gr * (b - a);
    if (kappa_sse(x, y, m, use, ctx, c) <= kappa_sse(x, y, m, use, ctx, d))
      b = d;
    else
      a = c;
  }
  double q = 0.5 * (a + b), v = kappa_sse(x, y, m, use, ctx, q);
  if (v < best) {
    best = v;
    best_q = q;
  }
  size_t n = 0;
  for (size_t k = 0; k < m; ++k)
    n += !use || use[k];
  double h = hi * 1e-3, lo = best_q - h < 0.0 ? 0.0 : best_q - h;
  double curv = (kappa_sse(x, y, m, use, ctx, lo + 2.0 * h) - 2.0 * kappa_sse(x, y, m, use, ctx, lo + h) +
                 kappa_sse(x, y, m, use, ctx, lo)) /
    (h * h);
  double s2 = n > 1 ? best / (double)(n - 1) : 0.0;
  *se = curv > 0.0 ? sqrt(s2 / (0.5 * curv)) : hi;
  *sse = best;
  return best_q;
}

/* Cross-validation of kappa over folds of runs (group % folds). */
static int cv_kappa(const double *x, const double *y, size_t m, const int *grp, int folds, stage_ctx *ctx, double hi,
                    double *pred, double *r2)
{
  unsigned char *use = malloc(m ? m : 1);
  if (!use) {
    return nestcl_set_error(NESTCL_ENOMEM, "perfmodel: out of memory");
  }
  for (int f = 0; f < folds; ++f) {
    size_t nt = 0;
    for (size_t k = 0; k < m; ++k) {
      use[k] = grp[k] % folds != f;
      nt += use[k];
    }
    double sse, se, q = fit_kappa(x, y, m, use, ctx, hi, &sse, &se);
    for (size_t k = 0; k < m; ++k) {
      if (!use[k])
        pred[k] = stage_f(&q, x + k * PM_IN, ctx);
    }
    (void)nt;
  }
  free(use);
  double mean = 0, ss_t = 0, ss_r = 0;
  for (size_t k = 0; k < m; ++k)
    mean += y[k];
  mean /= (double)(m ? m : 1);
  for (size_t k = 0; k < m; ++k) {
    ss_r += (pred[k] - y[k]) * (pred[k] - y[k]);
    ss_t += (y[k] - mean) * (y[k] - mean);
  }
  *r2 = ss_t > 0 ? 1.0 - ss_r / ss_t : NAN;
  return 0;
}

/*
 * Fits the free parameters of one stage to its observations and
 * cross-validates them; the fitted values go into prof->p.
 */
static int fit_stage_once(const nestcl_pm_obs *obs, size_t n, stage_kind kind, const int *free_list, int n_free,
                          int folds, nestcl_pm_profile *prof, nestcl_pm_stage *st, double *held_out)
{
  memset(st, 0, sizeof *st);
  size_t m = 0;
  int runs = 0, last_run = -1;
  for (size_t k = 0; k < n; ++k) {
    if (kind_of(&obs[k].c) == kind && (kind == ST_CO ? obs[k].out == NESTCL_PM_WALL : 1)) {
      m++;
    }
  }
  if (m == 0) {
    return 0;
  }
  double *x = malloc(m * PM_IN * sizeof *x), *y = malloc(m * sizeof *y), *pred = malloc(m * sizeof *pred);
  int *grp = malloc(m * sizeof *grp), *scored = malloc(m * sizeof *scored);
  size_t *map = malloc(m * sizeof *map);
  if (!x || !y || !pred || !grp || !scored || !map) {
    free(x);
    free(y);
    free(pred);
    free(grp);
    free(scored);
    free(map);
    return nestcl_set_error(NESTCL_ENOMEM, "perfmodel: out of memory");
  }
  size_t j = 0;
  for (size_t k = 0; k < n; ++k) {
    if (kind_of(&obs[k].c) == kind && (kind == ST_CO ? obs[k].out == NESTCL_PM_WALL : 1)) {
      to_row(&obs[k], x + j * PM_IN);
      y[j] = obs[k].y;
      grp[j] = obs[k].run;
      scored[j] = obs[k].out == NESTCL_PM_WALL;
      map[j] = k;
      if (obs[k].run != last_run) {
        runs++;
        last_run = obs[k].run;
      }
      j++;
    }
  }
  stage_ctx ctx;
  memcpy(ctx.base, prof->p, sizeof ctx.base);
  ctx.n_free = n_free;
  memcpy(ctx.free_idx, free_list, (size_t)n_free * sizeof *free_list);
  const char *names[NESTCL_PM_NP];
  double q0[NESTCL_PM_NP];
  for (int i = 0; i < n_free; ++i) {
    names[i] = nestcl_pm_param_names[free_list[i]];
    q0[i] = free_list[i] == NESTCL_PM_KAPPA ? 0.5 * prof->cores : p_start[free_list[i]];
  }
  char mname[64];
  snprintf(mname, sizeof mname, "%s stage", stage_name[kind]);
  /* Every stage but kappa's is linear in its parameters (kappa enters through a max: fit_kappa). */
  nestcl_pm_model model = {mname, n_free, names, PM_IN, stage_f, &ctx, 1, 1};
  nestcl_pm_fit fit;
  int rc;
  int kappa_only = n_free == 1 && free_list[0] == NESTCL_PM_KAPPA;
  if (kappa_only) {
    /* kappa enters through a max, flat wherever the host-core term binds nowhere: a 1-D search, not LM. */
    double sse;
    memset(&fit, 0, sizeof fit);
    fit.p[0] = fit_kappa(x, y, m, NULL, &ctx, 3.0 * prof->cores, &sse, &fit.se[0]);
    fit.rmse = sqrt(sse / (double)m);
    rc = 0;
  } else {
    rc = nestcl_pm_fit_model(&model, x, y, m, q0, 400, &fit);
  }
  if (!rc) {
    for (int i = 0; i < n_free; ++i) {
      prof->p[free_list[i]] = fit.p[i];
      prof->se[free_list[i]] = fit.se[i];
      /* 2: fitted and held at 0 (the data drove it negative). */
      prof->fitted[free_list[i]] = fit.at_zero[i] ? 2 : 1;
    }
    st->runs = runs;
    double p_full[NESTCL_PM_NP];
    memcpy(p_full, prof->p, sizeof p_full);
    /* R^2 of the wall time on the runs fitted. */
    double mean = 0, ss_t = 0, ss_r = 0;
    size_t ns = 0;
    for (size_t k = 0; k < m; ++k)
      if (scored[k]) {
        mean += y[k];
        ns++;
      }
    mean /= (double)(ns ? ns : 1);
    for (size_t k = 0; k < m; ++k) {
      if (scored[k]) {
        double r = stage_f(fit.p, x + k * PM_IN, &ctx) - y[k];
        ss_r += r * r;
        ss_t += (y[k] - mean) * (y[k] - mean);
      }
    }
    st->r2_train = ss_t > 0 ? 1.0 - ss_r / ss_t : NAN;
    /* Cross-validation over runs: as many folds as asked, at most one run per fold. */
    int f = folds < runs ? folds : runs;
    st->folds = f;
    st->r2_cv = NAN;
    if (f >= 2 && kappa_only) {
      rc = cv_kappa(x, y, m, grp, f, &ctx, 3.0 * prof->cores, pred, &st->r2_cv);
      if (!rc && held_out) {
        for (size_t k = 0; k < m; ++k)
          held_out[map[k]] = pred[k];
      }
    } else if (f >= 2) {
      rc = nestcl_pm_cross_validate_groups(&model, x, y, m, grp, scored, f, q0, 400, &st->r2_cv, pred);
      if (rc) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", nestcl_last_error());
        rc = nestcl_set_error(rc, "%s (in cross-validation: some folds leave too few runs; sweep more)", msg);
      } else if (held_out) {
        for (size_t k = 0; k < m; ++k)
          held_out[map[k]] = pred[k];
      }
    }
  }
  free(x);
  free(y);
  free(pred);
  free(grp);
  free(scored);
  free(map);
  return rc;
}

/*
 * A stage whose runs (or one fold of them) leave a parameter undetermined,
 * e.g. a short calibration that never varies what it depends on, is fitted
 * without it: the parameter stays 0 and is marked not fitted in the profile.
 */
static int fit_stage(const nestcl_pm_obs *obs, size_t n, stage_kind kind, const int *free_list, int n_free, int folds,
                     nestcl_pm_profile *prof, nestcl_pm_stage *st, double *held_out)
{
  int fl[NESTCL_PM_NP];
  memcpy(fl, free_list, (size_t)n_free * sizeof *fl);
  for (;;) {
    int rc = fit_stage_once(obs, n, kind, fl, n_free, folds, prof, st, held_out);
    int s = nestcl_pm_singular_param();
    if (rc != NESTCL_EINVAL || s < 0 || s >= n_free || n_free < 2) {
      return rc;
    }
    prof->p[fl[s]] = 0.0;
    prof->se[fl[s]] = 0.0;
    prof->fitted[fl[s]] = 0;
    memmove(fl + s, fl + s + 1, (size_t)(n_free - s - 1) * sizeof *fl);
    n_free--;
  }
}

int nestcl_pm_fit_profile(const nestcl_pm_obs *obs, size_t n, int folds, nestcl_pm_profile *prof, double *held_out)
{
  if (!obs || !prof || folds < 2) {
    return nestcl_set_error(NESTCL_EINVAL, "perfmodel: bad arguments to the profile fit (need at least 2 folds)");
  }
  memset(prof->p, 0, sizeof prof->p);
  memset(prof->se, 0, sizeof prof->se);
  memset(prof->fitted, 0, sizeof prof->fitted);
  if (prof->cores < 1) {
    prof->cores = 1;
  }
  if (held_out) {
    for (size_t k = 0; k < n; ++k)
      held_out[k] = NAN;
  }
  /* What the runs vary: the synapse mix, the ranks. */
  int any[3] = {0, 0, 0}, mpi = 0;
  double phi_lo[3] = {INFINITY, INFINITY, INFINITY}, phi_hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (size_t k = 0; k < n; ++k) {
    const nestcl_pm_config *c = &obs[k].c;
    if (!(c->N > 0) || !(c->K > 0) || !(c->F >= 0) || !(c->M >= 1) || c->TC < 0 || c->TG < 0 || c->TC + c->TG < 1 ||
        !(c->alpha >= 0 && c->alpha <= 1) || !(c->phi >= 0 && c->phi <= 1) || !(c->S > 0) || !(c->P >= 1) ||
        !isfinite(obs[k].y) || obs[k].y < 0 || (int)obs[k].out < 0 || obs[k].out >= NESTCL_PM_OUTPUTS) {
      return nestcl_set_error(NESTCL_EINVAL, "perfmodel: observation %zu (run %d) has an invalid input or value", k,
                              obs[k].run);
    }
    stage_kind s = kind_of(c);
    any[s] = 1;
    phi_lo[s] = c->phi < phi_lo[s] ? c->phi : phi_lo[s];
    phi_hi[s] = c->phi > phi_hi[s] ? c->phi : phi_hi[s];
    mpi |= c->M > 1;
  }
  if (!any[ST_CPU] && !any[ST_GPU]) {
    return nestcl_set_error(NESTCL_EINVAL,
                            "perfmodel: the sweep has no CPU-only and no GPU-only runs; the CPU and "
                            "GPU models cannot be fitted from co-execution runs alone");
  }
  int fl[NESTCL_PM_NP], nf;
  int rc = 0;
  /* Stage 1: CPU (and the serial terms). */
  if (any[ST_CPU]) {
    nf = 0;
    fl[nf++] = NESTCL_PM_C_UPDATE;
    fl[nf++] = NESTCL_PM_C_STEP;
    fl[nf++] = NESTCL_PM_C_SPIKE;
    if (phi_lo[ST_CPU] < phi_hi[ST_CPU]) {
      fl[nf++] = NESTCL_PM_C_PSPIKE;
      fl[nf++] = NESTCL_PM_C_EVENT;
      fl[nf++] = NESTCL_PM_C_PLASTIC;
    } else {
      /* One mix: one blended cost per event, stored in both. */
      fl[nf++] = phi_lo[ST_CPU] > 0 ? NESTCL_PM_C_PLASTIC : NESTCL_PM_C_EVENT;
    }
    fl[nf++] = NESTCL_PM_S_STEP;
    fl[nf++] = NESTCL_PM_S_SPIKE;
    if (mpi)
      fl[nf++] = NESTCL_PM_S_MPI;
    rc = fit_stage(obs, n, ST_CPU, fl, nf, folds, prof, &prof->cpu, held_out);
    if (!rc && !(phi_lo[ST_CPU] < phi_hi[ST_CPU])) {
      prof->p[NESTCL_PM_C_EVENT] = prof->p[NESTCL_PM_C_PLASTIC] =
        prof->p[phi_lo[ST_CPU] > 0 ? NESTCL_PM_C_PLASTIC : NESTCL_PM_C_EVENT];
    }
  }
  /* Stage 2: GPU, the shared terms kept from stage 1 (fitted here when there are no CPU-only runs). */
  if (!rc && any[ST_GPU]) {
    nf = 0;
    fl[nf++] = NESTCL_PM_G_UPDATE;
    fl[nf++] = NESTCL_PM_G_STEP;
    fl[nf++] = NESTCL_PM_G_LAUNCH;
    fl[nf++] = NESTCL_PM_G_DLAUNCH;
    fl[nf++] = NESTCL_PM_G_SPIKE;
    if (phi_lo[ST_GPU] < phi_hi[ST_GPU]) {
      fl[nf++] = NESTCL_PM_G_PSPIKE;
      fl[nf++] = NESTCL_PM_G_EVENT;
      fl[nf++] = NESTCL_PM_G_PLASTIC;
    } else {
      fl[nf++] = phi_lo[ST_GPU] > 0 ? NESTCL_PM_G_PLASTIC : NESTCL_PM_G_EVENT;
    }
    if (!any[ST_CPU]) {
      fl[nf++] = NESTCL_PM_S_STEP;
      fl[nf++] = NESTCL_PM_S_SPIKE;
      if (mpi)
        fl[nf++] = NESTCL_PM_S_MPI;
    }
    rc = fit_stage(obs, n, ST_GPU, fl, nf, folds, prof, &prof->gpu, held_out);
    if (!rc && !(phi_lo[ST_GPU] < phi_hi[ST_GPU])) {
      prof->p[NESTCL_PM_G_EVENT] = prof->p[NESTCL_PM_G_PLASTIC] =
        prof->p[phi_lo[ST_GPU] > 0 ? NESTCL_PM_G_PLASTIC : NESTCL_PM_G_EVENT];
    }
  }
  /* Stage 3: co-execution, kappa alone (the paper fitted nothing here; sharing the host's cores needs it). */
  if (!rc && any[ST_CO]) {
    if (!any[ST_CPU] || !any[ST_GPU]) {
      return nestcl_set_error(NESTCL_EINVAL,
                              "perfmodel: co-execution runs need CPU-only and GPU-only runs beside "
                              "them (the %s-only runs are missing)",
                              any[ST_CPU] ? "GPU" : "CPU");
    }
    fl[0] = NESTCL_PM_KAPPA;
    rc = fit_stage(obs, n, ST_CO, fl, 1, folds, prof, &prof->co, held_out);
  } else if (!rc) {
    /* No co-execution runs: the device is assumed to take the whole host (the safe side for a shared CPU device). */
    prof->p[NESTCL_PM_KAPPA] = prof->cores;
  }
  return rc;
}
