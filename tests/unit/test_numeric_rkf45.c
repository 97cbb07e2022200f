/*
 * kernels_templates/nestcl_rkf45.h against GSL's old odeiv API, the oracle
 * (gsl_odeiv_step_rkf45, gsl_odeiv_control_y_new / _yp_new,
 * gsl_odeiv_evolve_apply), driven as NEST drives it: per neuron one
 * IntegrationStep_ kept across 0.1 ms time steps and the loop
 *   t = 0; while (t < step) evolve_apply(..., &t, step, &IntegrationStep_, y)
 * with NEST's spike handling and input between (and, for aeif, inside) the
 * calls. The two run in lockstep on the systems of rkf45_systems.h, with both
 * controls and several tolerances, and after every evolve call the status, t,
 * h, every y_i (bit patterns, memcmp), the number of dynamics evaluations and
 * GSL's count and failed_steps must be equal. Then the failure paths: the
 * dynamics failing at each of its first evaluations (in a stage, in the
 * final derivative, in a retried step), a solution that blows up (GSL goes on
 * with GSL_SUCCESS and inf/NaN, bit for bit the same here; advance reports
 * NESTCL_RKF45_ENONFINITE), invalid arguments (GSL_EINVAL), and ESTALL.
 * C only, quick: also in the sanitizer build. Exit 1 on any difference.
 */
#include "nestcl_check.h"
#include "nestcl_libm.h"
#include "nestcl_rkf45.h"
#include "rkf45_systems.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int gsl_dynamics(double t, const double y[], double f[], void *params)
{
  return sys_dynamics(t, y, f, (sys_ctx *)params);
}

/* GSL's objects for one neuron, allocated and reset as NEST's init_buffers does. */
typedef struct oracle {
  gsl_odeiv_step *s;
  gsl_odeiv_control *c;
  gsl_odeiv_evolve *e;
  gsl_odeiv_system sys;
} oracle;

static void oracle_init(oracle *o, size_t n, int use_yp, double eps_abs, double eps_rel, sys_ctx *ctx)
{
  o->s = gsl_odeiv_step_alloc(gsl_odeiv_step_rkf45, n);
  o->c = use_yp ? gsl_odeiv_control_yp_new(eps_abs, eps_rel) : gsl_odeiv_control_y_new(eps_abs, eps_rel);
  o->e = gsl_odeiv_evolve_alloc(n);
  CHECK(o->s && o->c && o->e, "GSL allocation");
  o->sys.function = gsl_dynamics;
  o->sys.jacobian = NULL;
  o->sys.dimension = n;
  o->sys.params = ctx;
}

static void oracle_free(oracle *o)
{
  gsl_odeiv_evolve_free(o->e);
  gsl_odeiv_control_free(o->c);
  gsl_odeiv_step_free(o->s);
}

static int same_bits(const double *a, const double *b, int n)
{
  return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

/* Both sides' state after one evolve call: 1 when equal in every bit, else explains the first difference. */
static int same_call(const char *what, long step, long call, int gs, int ms, double gt, double mt, double gh, double mh,
                     const double *gy, const double *my, int n, const sys_ctx *gc, const sys_ctx *mc,
                     const gsl_odeiv_evolve *ge, const nestcl_rkf45_evolve *me)
{
  const char *diff = gs != ms              ? "status"
    : !same_bits(&gt, &mt, 1)              ? "t"
    : !same_bits(&gh, &mh, 1)              ? "h"
    : !same_bits(gy, my, n)                ? "y"
    : gc->evals != mc->evals               ? "number of evaluations"
    : ge->count != me->count               ? "count"
    : ge->failed_steps != me->failed_steps ? "failed_steps"
                                           : NULL;
  if (!diff)
    return 1;
  CHECK(0,
        "%s: time step %ld, evolve call %ld: %s differs: GSL status %d t %a h %a y0 %a evals %d count %lu "
        "failed %lu; nestcl status %d t %a h %a y0 %a evals %d count %lu failed %lu",
        what, step, call, diff, gs, gt, gh, gy[0], gc->evals, ge->count, ge->failed_steps, ms, mt, mh, my[0], mc->evals,
        (unsigned long)me->count, (unsigned long)me->failed_steps);
  return 0;
}

typedef struct config {
  int kind, use_yp;
  double eps_abs, eps_rel;
  int steps, neurons;
} config;

static const char *kind_name[SYS_KINDS] = {"iaf_cond_alpha", "aeif_cond_exp", "hh_psc_alpha",
                                           "stiff",          "jump",          "blowup"};

/* Totals over a configuration's neurons, to show that each path was exercised. */
typedef struct totals {
  unsigned long calls, count, failed, forced, spikes;
} totals;

/*
 * Neuron i of a configuration on both sides, lockstep, call by call, over
 * cfg->steps time steps (fewer when a call fails on both: then that
 * status is returned, -1 when the sides differed, 0 when all steps ran).
 * fail_at > 0 makes that evaluation fail.
 */
static int lockstep(const config *cfg, nestcl_u32 i, int fused, int fail_at, long max_calls, totals *tot)
{
  sys_ctx gc, mc;
  double gy[SYS_DIM], my[SYS_DIM];
  sys_init(cfg->kind, i, fused, &gc, gy);
  sys_init(cfg->kind, i, fused, &mc, my);
  gc.fail_at = mc.fail_at = fail_at;
  gc.fail_status = mc.fail_status = GSL_EBADFUNC;
  const int n = mc.n;
  oracle o;
  oracle_init(&o, (size_t)n, cfg->use_yp, cfg->eps_abs, cfg->eps_rel, &gc);
  const nestcl_rkf45_control con = cfg->use_yp ? nestcl_rkf45_control_yp(cfg->eps_abs, cfg->eps_rel, fused)
                                               : nestcl_rkf45_control_y(cfg->eps_abs, cfg->eps_rel, fused);
  nestcl_rkf45_evolve e;
  nestcl_rkf45_evolve_reset(&e);
  double gh = SYS_STEP, mh = SYS_STEP; /* IntegrationStep_, initialised to the resolution */
  int result = 0;
  for (long k = 0; k < cfg->steps && result == 0; ++k) {
    double gt = 0.0, mt = 0.0;
    for (long call = 0; gt < SYS_STEP; ++call) {
      if (call == max_calls) {
        result = NESTCL_RKF45_ESTALL;
        break;
      }
      const int gs = gsl_odeiv_evolve_apply(o.e, o.c, o.s, &o.sys, &gt, SYS_STEP, &gh, gy);
      const int ms = sys_rkf45_evolve_apply(&mc, &con, &e, n, &mt, SYS_STEP, &mh, my);
      tot->calls++;
      if (!same_call(kind_name[cfg->kind], k, call, gs, ms, gt, mt, gh, mh, gy, my, n, &gc, &mc, o.e, &e)) {
        result = -1;
        break;
      }
      if (gs != GSL_SUCCESS) {
        result = gs;
        break;
      }
      sys_after_call(&gc, gy);
      sys_after_call(&mc, my);
    }
    if (result == 0) {
      sys_after_step(&gc, gy, i, (nestcl_u32)k);
      sys_after_step(&mc, my, i, (nestcl_u32)k);
    }
  }
  tot->count += e.count;
  tot->failed += e.failed_steps;
  tot->forced += e.forced_steps;
  tot->spikes += (unsigned long)mc.spikes;
  oracle_free(&o);
  return result;
}

/* Test 1: trajectories equal to GSL's, bit for bit, for every system, control and tolerance. */
static void trajectories(int fused)
{
  static const config cfgs[] = {
    {SYS_IAF, 0, 1e-3, 0.0, 3000, 4}, /* iaf_cond_alpha's own control */
    {SYS_IAF, 0, 1e-6, 0.0, 2000, 2},   {SYS_IAF, 1, 1e-6, 1e-6, 2000, 2},
    {SYS_IAF, 0, 1e-3, 1e-3, 2000, 2},  {SYS_AEIF, 1, 1e-6, 1e-6, 3000, 4}, /* aeif's: gsl_error_tol = 1e-6 */
    {SYS_AEIF, 0, 1e-3, 0.0, 2000, 2},  {SYS_AEIF, 1, 1e-9, 1e-9, 1000, 2},
    {SYS_HH, 0, 1e-3, 0.0, 3000, 4}, /* hh_psc_alpha's */
    {SYS_HH, 0, 1e-6, 0.0, 1000, 2},    {SYS_HH, 1, 1e-4, 1e-4, 1000, 2},
    {SYS_STIFF, 0, 1e-3, 0.0, 2000, 3}, {SYS_STIFF, 1, 1e-6, 1e-6, 1000, 2},
    {SYS_STIFF, 0, 1e-8, 1e-8, 500, 2}, {SYS_JUMP, 0, 1e-3, 0.0, 300, 2},
    {SYS_JUMP, 1, 1e-3, 1e-3, 300, 2},
  };
  totals all[SYS_KINDS];
  memset(all, 0, sizeof all);
  for (size_t c = 0; c < sizeof cfgs / sizeof *cfgs; ++c) {
    const config *cfg = &cfgs[c];
    totals tot = {0, 0, 0, 0, 0};
    int bad = 0;
    for (int i = 0; i < cfg->neurons; ++i)
      bad += lockstep(cfg, (nestcl_u32)i, fused, 0, SYS_MAX_CALLS, &tot) != 0;
    printf("%-14s %s(%g, %g) %d neurons x %d steps: %lu calls, %lu steps, %lu rejected, %lu forced, %lu spikes: "
           "%s\n",
           kind_name[cfg->kind], cfg->use_yp ? "yp" : "y", cfg->eps_abs, cfg->eps_rel, cfg->neurons, cfg->steps,
           tot.calls, tot.count, tot.failed, tot.forced, tot.spikes, bad ? "DIFFERENT" : "equal to GSL");
    CHECK(!bad, "%s: %d neuron(s) differ from GSL", kind_name[cfg->kind], bad);
    all[cfg->kind].failed += tot.failed;
    all[cfg->kind].forced += tot.forced;
    all[cfg->kind].spikes += tot.spikes;
  }
  /* the paths the comparison is meant to cover were taken */
  CHECK(all[SYS_IAF].spikes > 0 && all[SYS_AEIF].spikes > 0 && all[SYS_HH].spikes > 0, "the neurons should spike");
  CHECK(all[SYS_STIFF].failed > 1000, "the stiff system should reject steps (%lu)", all[SYS_STIFF].failed);
  CHECK(all[SYS_JUMP].forced > 0, "the jump should force steps that the control would reject");
}

/* Test 3a: the dynamics failing at its fail_at-th evaluation: the same status, t, h and y as GSL. */
static void failing_dynamics(int fused)
{
  static const config cfgs[] = {
    {SYS_IAF, 0, 1e-3, 0.0, 30, 1}, {SYS_STIFF, 0, 1e-3, 0.0, 30, 1}, {SYS_HH, 1, 1e-4, 1e-4, 30, 1}};
  for (size_t c = 0; c < sizeof cfgs / sizeof *cfgs; ++c) {
    int failed = 0;
    for (int at = 1; at <= 60; ++at) {
      totals tot = {0, 0, 0, 0, 0};
      const int s = lockstep(&cfgs[c], 3, fused, at, SYS_MAX_CALLS, &tot);
      CHECK(s == GSL_EBADFUNC, "%s failing at evaluation %d: status %d (want GSL's %d on both)",
            kind_name[cfgs[c].kind], at, s, GSL_EBADFUNC);
      failed += s == GSL_EBADFUNC;
    }
    /* and the template's advance returns it too */
    sys_result r;
    sys_run_neuron(cfgs[c].kind, 3, cfgs[c].use_yp, cfgs[c].eps_abs, cfgs[c].eps_rel, fused, 30, 13, 0, &r);
    CHECK(r.status == 9 && r.evals == 13, "advance with a failing dynamics: status %d after %d evaluations", r.status,
          r.evals);
    printf("%-14s dynamics failing at evaluation 1..60: GSL's status, t, h and y in %d of 60 cases\n",
           kind_name[cfgs[c].kind], failed);
  }
}

/* Test 3b: y' = y^2 beyond its pole: GSL reports success with inf/NaN; same bits here, and advance says so. */
static void blowup(int fused)
{
  const config cfg = {SYS_BLOWUP, 0, 1e-3, 0.0, 20, 1};
  totals tot = {0, 0, 0, 0, 0};
  const int s = lockstep(&cfg, 0, fused, 0, 100000, &tot);
  CHECK(s == 0, "blowup: GSL and nestcl differ or fail (%d)", s);

  /* where GSL first returns a non-finite y, with GSL_SUCCESS */
  sys_ctx gc;
  double gy[SYS_DIM];
  sys_init(SYS_BLOWUP, 0, fused, &gc, gy);
  oracle o;
  oracle_init(&o, 1, 0, 1e-3, 0.0, &gc);
  double h = SYS_STEP;
  int gsl_step = -1, gsl_status = -1;
  for (int k = 0; k < 20 && gsl_step < 0; ++k) {
    double t = 0.0;
    while (t < SYS_STEP) {
      gsl_status = gsl_odeiv_evolve_apply(o.e, o.c, o.s, &o.sys, &t, SYS_STEP, &h, gy);
      if (!isfinite(gy[0])) {
        gsl_step = k;
        break;
      }
    }
  }
  oracle_free(&o);
  /* the template's advance stops there */
  sys_ctx mc;
  double my[SYS_DIM];
  sys_init(SYS_BLOWUP, 0, fused, &mc, my);
  const nestcl_rkf45_control con = nestcl_rkf45_control_y(1e-3, 0.0, fused);
  double mh = SYS_STEP;
  int st = 0, k = 0;
  for (; k < 20 && st == 0; ++k)
    st = sys_rkf45_advance(&mc, &con, 0, 1, SYS_STEP, &mh, my, SYS_MAX_CALLS);
  printf("blowup: GSL returns %d (GSL_SUCCESS) with y = %g in time step %d; advance returns %d in time step %d\n",
         gsl_status, gy[0], gsl_step, st, k - 1);
  CHECK(gsl_step >= 0 && gsl_status == GSL_SUCCESS, "GSL was expected to go on silently past the pole");
  CHECK(st == NESTCL_RKF45_ENONFINITE && k - 1 == gsl_step, "advance: status %d at step %d", st, k - 1);
}

/* GSL_EINVAL cases and ESTALL. */
static void invalid(int fused)
{
  sys_ctx gc, mc;
  double gy[SYS_DIM], my[SYS_DIM];
  sys_init(SYS_STIFF, 0, fused, &gc, gy);
  sys_init(SYS_STIFF, 0, fused, &mc, my);
  oracle o;
  oracle_init(&o, 3, 0, 1e-3, 0.0, &gc);
  const nestcl_rkf45_control con = nestcl_rkf45_control_y(1e-3, 0.0, fused);
  double gt = 0.0, mt = 0.0, gh = -0.1, mh = -0.1; /* a step against the interval */
  const int gs = gsl_odeiv_evolve_apply(o.e, o.c, o.s, &o.sys, &gt, 0.1, &gh, gy);
  const int ms = sys_rkf45_evolve_apply(&mc, &con, 0, 3, &mt, 0.1, &mh, my);
  CHECK(gs == GSL_EINVAL && ms == NESTCL_RKF45_EINVAL, "negative step: GSL %d, nestcl %d", gs, ms);
  CHECK(same_bits(gy, my, 3) && gt == mt && gh == mh, "negative step: state changed");
  oracle_free(&o);

  /* dimensions that do not match: GSL's evolve of 4 with a stepper of 3; here n above the bound */
  gsl_odeiv_step *s3 = gsl_odeiv_step_alloc(gsl_odeiv_step_rkf45, 3);
  gsl_odeiv_evolve *e4 = gsl_odeiv_evolve_alloc(4);
  gsl_odeiv_control *c = gsl_odeiv_control_y_new(1e-3, 0.0);
  gsl_odeiv_system sys = {gsl_dynamics, NULL, 3, &gc};
  gt = 0.0;
  gh = 0.1;
  const int gd = gsl_odeiv_evolve_apply(e4, c, s3, &sys, &gt, 0.1, &gh, gy);
  mt = 0.0;
  mh = 0.1;
  const int md = iaf_rkf45_evolve_apply(&mc, &con, 0, 6, &mt, 0.1, &mh, my);
  CHECK(gd == GSL_EINVAL && md == NESTCL_RKF45_EINVAL, "dimension: GSL %d, nestcl %d", gd, md);
  gsl_odeiv_control_free(c);
  gsl_odeiv_evolve_free(e4);
  gsl_odeiv_step_free(s3);

  /* GSL's control init refuses negative constants; so does the check */
  nestcl_rkf45_control bad = nestcl_rkf45_control_y(-1e-3, 0.0, fused);
  CHECK(gsl_odeiv_control_y_new(-1e-3, 0.0) == NULL && nestcl_rkf45_control_check(&bad) == NESTCL_RKF45_EINVAL &&
          nestcl_rkf45_control_check(&con) == 0,
        "control constants' check");

  /* a time step that needs more calls than allowed */
  sys_init(SYS_STIFF, 0, fused, &mc, my);
  mh = 0.1;
  const int stall = sys_rkf45_advance(&mc, &con, 0, 3, SYS_STEP, &mh, my, 1);
  CHECK(stall == NESTCL_RKF45_ESTALL, "advance with max_calls 1: %d", stall);
  printf("invalid arguments: GSL_EINVAL %d/%d (step direction), %d/%d (dimension); ESTALL %d\n", gs, ms, gd, md, stall);
}

/* The two instantiations of one program give the same bits (names do not clash, DIM only bounds n). */
static void two_models(int fused)
{
  sys_result a, b;
  sys_run_neuron(SYS_IAF, 5, 0, 1e-3, 0.0, fused, 2000, 0, 0, &a);
  sys_run_neuron(SYS_IAF, 5, 0, 1e-3, 0.0, fused, 2000, 0, 1, &b);
  CHECK(a.hash == b.hash && a.count == b.count && a.status == 0 && b.status == 0,
        "iaf_rkf45 (DIM 5) and sys_rkf45 (DIM 8) differ");
}

/* The tableau's hexadecimal constants are GSL's fractions rounded to double. */
static void constants(void)
{
  volatile double one = 1.0; /* evaluated at run time in round to nearest, as GSL's static initialisers */
  const double want[] = {one / 4.0,
                         3.0 * one / 8.0,
                         12.0 * one / 13.0,
                         1932.0 * one / 2197.0,
                         -7200.0 * one / 2197.0,
                         7296.0 * one / 2197.0,
                         8341.0 * one / 4104.0,
                         -32832.0 * one / 4104.0,
                         29440.0 * one / 4104.0,
                         -845.0 * one / 4104.0,
                         -6080.0 * one / 20520.0,
                         41040.0 * one / 20520.0,
                         -28352.0 * one / 20520.0,
                         9295.0 * one / 20520.0,
                         -5643.0 * one / 20520.0,
                         902880.0 * one / 7618050.0,
                         3953664.0 * one / 7618050.0,
                         3855735.0 * one / 7618050.0,
                         -1371249.0 * one / 7618050.0,
                         277020.0 * one / 7618050.0,
                         one / 360.0,
                         -128.0 * one / 4275.0,
                         -2197.0 * one / 75240.0,
                         one / 50.0,
                         2.0 * one / 55.0,
                         one / 5u,
                         one / (5u + 1.0),
                         3.0 * one / 32.0,
                         9.0 * one / 32.0};
  const double have[] = {
    NESTCL_RKF45_A2,  NESTCL_RKF45_A3,      NESTCL_RKF45_A4,       NESTCL_RKF45_B41, NESTCL_RKF45_B42, NESTCL_RKF45_B43,
    NESTCL_RKF45_B51, NESTCL_RKF45_B52,     NESTCL_RKF45_B53,      NESTCL_RKF45_B54, NESTCL_RKF45_B61, NESTCL_RKF45_B62,
    NESTCL_RKF45_B63, NESTCL_RKF45_B64,     NESTCL_RKF45_B65,      NESTCL_RKF45_C1,  NESTCL_RKF45_C3,  NESTCL_RKF45_C4,
    NESTCL_RKF45_C5,  NESTCL_RKF45_C6,      NESTCL_RKF45_E1,       NESTCL_RKF45_E3,  NESTCL_RKF45_E4,  NESTCL_RKF45_E5,
    NESTCL_RKF45_E6,  NESTCL_RKF45_INV_ORD, NESTCL_RKF45_INV_ORD1, NESTCL_RKF45_B31, NESTCL_RKF45_B32};
  for (size_t k = 0; k < sizeof want / sizeof *want; ++k)
    CHECK(same_bits(&want[k], &have[k], 1), "constant %zu: %a, want %a", k, have[k], want[k]);
}

int main(void)
{
  gsl_set_error_handler_off(); /* as NEST: statuses, not aborts */
  const int fused = nestcl_libm_exp_fused();
  CHECK(fused >= 0, "the host's libm is neither of glibc's builds: pow cannot be reproduced");
  if (fused < 0)
    return check_report();
  printf("host libm: glibc's %s build\n", fused ? "FMA" : "plain");
  constants();
  trajectories(fused);
  failing_dynamics(fused);
  blowup(fused);
  invalid(fused);
  two_models(fused);
  return check_report();
}
