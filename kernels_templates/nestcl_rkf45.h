/*
 * nestcl_rkf45.h: GSL's adaptive Runge-Kutta-Fehlberg 4(5) integration as
 * NEST's ODE neuron models drive it, bit for bit, compiled as C11 and as
 * OpenCL C.
 *
 * NEST's conductance-based and adaptive models (iaf_cond_*, aeif_*, hh_*,
 * gif_cond_*, ...) integrate each time step with GSL's old odeiv API: per
 * neuron a stepper gsl_odeiv_step_rkf45, a standard control
 * (gsl_odeiv_control_y_new or _yp_new) and an evolve object, called as
 *     t = 0; while (t < step) gsl_odeiv_evolve_apply(e, c, s, &sys, &t, step, &IntegrationStep_, y);
 * This header performs the same floating-point operations in the same order
 * (GSL 2.x, ode-initval/{rkf45,cstd,evolve}.c; unchanged since GSL 1.15), so
 * y and IntegrationStep_ after every call equal GSL's bit for bit:
 *   - the step: k1 is the evolve's dydt_in (the stepper "can use dydt_in"),
 *     five more stages at t + (1/4, 3/8, 12/13, 1, 1/2) h, y += h (c1 k1 + c3 k3 +
 *     c4 k4 + c5 k5 + c6 k6), then dydt_out = f(t + h, y) (evaluated because
 *     evolve always asks for it: the control reads it), and
 *     yerr = h (e1 k1 + e3 k3 + e4 k4 + e5 k5 + e6 k6), each sum left to right;
 *   - the control, with the stepper's order 5: D_i = eps_rel (a_y |y_i| +
 *     a_dydt |h y'_i|) + eps_abs, r_i = |yerr_i| / |D_i|, rmax = max(DBL_MIN, r_i)
 *     with GSL's (r > rmax ? r : rmax), so a NaN ratio is skipped; rmax > 1.1:
 *     h *= max(0.2, 0.9 / pow(rmax, 1/5)); rmax < 0.5: h *= clamp(0.9 /
 *     pow(rmax, 1/6), 1, 5); otherwise h is kept. pow is glibc's (nestcl_libm.h),
 *     in the variant (FMA build or plain) that the reproduced host runs;
 *   - evolve: y0 = y, dydt_in = f(t0, y), then h0 clamped to t1 - t0 (final
 *     step: t becomes t1 exactly, else t0 + h0), a step, and on a decrease
 *     that changes t by at least one ulp, y = y0, failed_steps++ and retry
 *     from the clamp (dydt_in is not re-evaluated); an increase or a refused
 *     decrease is accepted and *h is the suggestion for the next call.
 * State carried between calls: only y and h (IntegrationStep_), so a neuron's
 * integrator state in device memory is one more double beside its y (a SoA
 * column). GSL's stepper scratch (k1..k6, y0, ytmp) and the evolve's buffers
 * (y0, yerr, dydt_in, dydt_out) are written before being read in every call,
 * gsl_odeiv_step_reset only zeroes that scratch, the control holds only its
 * constants, and the evolve's count, failed_steps and last_step are
 * statistics that neither GSL nor NEST reads back (gsl_odeiv_evolve_reset
 * zeroes them); nestcl_rkf45_evolve keeps them for diagnostics only, and may
 * be a per-call local or 0.
 *
 * OpenCL C has no function pointers, so the parts that call the model's
 * dynamics are a template: NESTCL_RKF45_DEFINE(name, DIM, CTX_T, DYN) defines
 *   int name_rkf45_step(...)          gsl_odeiv_step_apply of rkf45
 *   int name_rkf45_evolve_apply(...)  gsl_odeiv_evolve_apply
 *   int name_rkf45_advance(...)       NEST's while loop over one time step
 * for a system of at most DIM equations, whose right-hand side is
 * DYN(t, y, f, ctx) -> int (0 on success, like GSL_SUCCESS; y, f private
 * double arrays; ctx of type CTX_T, typically a pointer to a private struct
 * with the neuron's parameters and inputs; const or not). It is a macro, not a
 * "define, then #include again" header, because OpenCL programs receive this
 * text concatenated (nestcl_rt_source) and cannot include anything; two
 * models are two invocations with different names. See
 * tests/unit/rkf45_systems.h for a use; tests/unit/test_numeric_rkf45.c
 * compares it with GSL call by call, test_numeric_rkf45_opencl.c OpenCL
 * with C.
 *
 * Status codes. evolve_apply returns what gsl_odeiv_evolve_apply returns on
 * the same path: 0 (GSL_SUCCESS); NESTCL_RKF45_EINVAL (GSL_EINVAL: step
 * direction against the interval, or n > DIM where GSL checks that the
 * dimensions match); or the non-zero value DYN returned, unchanged, as GSL
 * passes the system function's status through (y and *t are then those of
 * the call's start; *h is the step size that failed, or unchanged when the
 * first evaluation, of dydt_in, failed). GSL's old evolve
 * has no step-size underflow failure (odeiv2 has one): a decrease that would
 * not move t is refused and the step accepted as is, and a step whose error
 * is NaN is accepted (NaN ratios are skipped) with h growing 5-fold. GSL then
 * returns GSL_SUCCESS with a non-finite y; evolve_apply does the same (same
 * bits), and advance, which a kernel uses because it cannot throw, turns it
 * into NESTCL_RKF45_ENONFINITE. NESTCL_RKF45_ESTALL: advance made max_calls
 * calls without reaching the step's end (NEST would keep calling, possibly
 * forever). Both are outside GSL's code range (-2..32).
 *
 * Needs round to nearest and no contraction (the C path is built with
 * -ffp-contract=off, the OpenCL text sets FP_CONTRACT OFF). GSL's own compiled
 * code matches that on x86-64 (SSE2, no FMA: Debian's libgsl has no FMA
 * instruction); a GSL built with contraction on an FMA target (aarch64 with
 * GCC's default -ffp-contract=fast) would differ from both.
 */
#ifndef NESTCL_RKF45_H
#define NESTCL_RKF45_H

#ifndef __OPENCL_C_VERSION__
#include <math.h>

#include "nestcl_libm.h"
#include "nestcl_types.h"
#endif

#define NESTCL_RKF45_SUCCESS 0
#define NESTCL_RKF45_EINVAL 4 /* GSL_EINVAL */
#define NESTCL_RKF45_ENONFINITE 1001 /* GSL: GSL_SUCCESS with a non-finite y */
#define NESTCL_RKF45_ESTALL 1002 /* GSL: NEST's loop keeps calling */

/* The stepper's order as GSL's rkf45 reports it (the control's exponents). */
#define NESTCL_RKF45_ORDER 5

/* Butcher tableau of GSL's rkf45 (Fehlberg): the fractions rounded to double. */
#define NESTCL_RKF45_A2 0x1p-2 /* 1/4 */
#define NESTCL_RKF45_A3 0x1.8p-2 /* 3/8 */
#define NESTCL_RKF45_A4 0x1.d89d89d89d89ep-1 /* 12/13 */
#define NESTCL_RKF45_A5 0x1p+0 /* 1 */
#define NESTCL_RKF45_A6 0x1p-1 /* 1/2 */
#define NESTCL_RKF45_B31 0x1.8p-4 /* 3/32 */
#define NESTCL_RKF45_B32 0x1.2p-2 /* 9/32 */
#define NESTCL_RKF45_B41 0x1.c23e39189614cp-1 /* 1932/2197 */
#define NESTCL_RKF45_B42 -0x1.a37b2a108bd3cp+1 /* -7200/2197 */
#define NESTCL_RKF45_B43 0x1.a912fe408db1p+1 /* 7296/2197 */
#define NESTCL_RKF45_B51 0x1.0425ed097b426p+1 /* 8341/4104 */
#define NESTCL_RKF45_B52 -0x1p+3 /* -32832/4104 */
#define NESTCL_RKF45_B53 0x1.cb1a72c69cb1ap+2 /* 29440/4104 */
#define NESTCL_RKF45_B54 -0x1.a5ad296b4a5adp-3 /* -845/4104 */
#define NESTCL_RKF45_B61 -0x1.2f684bda12f68p-2 /* -6080/20520 */
#define NESTCL_RKF45_B62 0x1p+1 /* 41040/20520 */
#define NESTCL_RKF45_B63 -0x1.61b58ba0961b6p+0 /* -28352/20520 */
#define NESTCL_RKF45_B64 0x1.cfd813f604fd8p-2 /* 9295/20520 */
#define NESTCL_RKF45_B65 -0x1.199999999999ap-2 /* -5643/20520 */
/* The solution's weights (GSL's c1..c6, denominators 7618050; c2 = 0). */
#define NESTCL_RKF45_C1 0x1.e573ac901e574p-4 /* 902880 */
#define NESTCL_RKF45_C3 0x1.09b89459aa352p-1 /* 3953664 */
#define NESTCL_RKF45_C4 0x1.0323aaacfd498p-1 /* 3855735 */
#define NESTCL_RKF45_C5 -0x1.70a3d70a3d70ap-3 /* -1371249 */
#define NESTCL_RKF45_C6 0x1.29e4129e4129ep-5 /* 277020 */
/* Fifth minus fourth order weights: the error estimate's (e2 = 0). */
#define NESTCL_RKF45_E1 0x1.6c16c16c16c17p-9 /* 1/360 */
#define NESTCL_RKF45_E3 -0x1.ea8fd6cceb75dp-6 /* -128/4275 */
#define NESTCL_RKF45_E4 -0x1.de693b17fafdep-6 /* -2197/75240 */
#define NESTCL_RKF45_E5 0x1.47ae147ae147bp-6 /* 1/50 */
#define NESTCL_RKF45_E6 0x1.29e4129e4129ep-5 /* 2/55 */
/* The control's exponents 1/ord and 1/(ord + 1), and DBL_MIN (rmax's start). */
#define NESTCL_RKF45_INV_ORD 0x1.999999999999ap-3 /* 1/5 */
#define NESTCL_RKF45_INV_ORD1 0x1.5555555555555p-3 /* 1/6 */
#define NESTCL_RKF45_DBL_MIN 0x1p-1022

/* What gsl_odeiv_hadjust reports (GSL_ODEIV_HADJ_*). */
#define NESTCL_RKF45_HADJ_DEC (-1)
#define NESTCL_RKF45_HADJ_NIL 0
#define NESTCL_RKF45_HADJ_INC 1

/*
 * A standard control (gsl_odeiv_control_standard_new): constants only, so one
 * per model (or per kernel launch) serves every neuron. libm_fused names the
 * glibc pow variant to reproduce: nestcl_libm_host_variant() for the host
 * that runs NEST (1 on x86-64 CPUs with FMA and AVX2, else 0).
 */
typedef struct nestcl_rkf45_control {
  double eps_abs, eps_rel, a_y, a_dydt;
  int libm_fused;
} nestcl_rkf45_control;

/*
 * The evolve object's statistics (never read back by GSL or NEST): GSL's
 * count, failed_steps and last_step, and forced_steps, which GSL does not
 * keep: steps accepted although the control asked for a smaller one, because
 * the smaller one would not have moved t (the error was not within tolerance).
 */
typedef struct nestcl_rkf45_evolve {
  nestcl_u64 count, failed_steps, forced_steps;
  double last_step;
} nestcl_rkf45_evolve;

NESTCL_INLINE nestcl_rkf45_control nestcl_rkf45_control_standard(double eps_abs, double eps_rel, double a_y,
                                                                 double a_dydt, int libm_fused)
{
  nestcl_rkf45_control c;
  c.eps_abs = eps_abs;
  c.eps_rel = eps_rel;
  c.a_y = a_y;
  c.a_dydt = a_dydt;
  c.libm_fused = libm_fused;
  return c;
}

/* gsl_odeiv_control_y_new: the error relative to |y|. */
NESTCL_INLINE nestcl_rkf45_control nestcl_rkf45_control_y(double eps_abs, double eps_rel, int libm_fused)
{
  return nestcl_rkf45_control_standard(eps_abs, eps_rel, 1.0, 0.0, libm_fused);
}

/* gsl_odeiv_control_yp_new: the error relative to |h y'|. */
NESTCL_INLINE nestcl_rkf45_control nestcl_rkf45_control_yp(double eps_abs, double eps_rel, int libm_fused)
{
  return nestcl_rkf45_control_standard(eps_abs, eps_rel, 0.0, 1.0, libm_fused);
}

/* NESTCL_RKF45_EINVAL where GSL's control init refuses the constants (a negative one), else 0. */
NESTCL_INLINE int nestcl_rkf45_control_check(const nestcl_rkf45_control *c)
{
  return c->eps_abs < 0 || c->eps_rel < 0 || c->a_y < 0 || c->a_dydt < 0 ? NESTCL_RKF45_EINVAL : 0;
}

NESTCL_INLINE void nestcl_rkf45_evolve_reset(nestcl_rkf45_evolve *e)
{
  e->count = 0;
  e->failed_steps = 0;
  e->forced_steps = 0;
  e->last_step = 0.0;
}

NESTCL_INLINE void nestcl_rkf45_copy(int n, double *dst, const double *src)
{
  for (int i = 0; i < n; ++i)
    dst[i] = src[i];
}

/* 1 when every y_i is finite. */
NESTCL_INLINE int nestcl_rkf45_all_finite(int n, const double *y)
{
  for (int i = 0; i < n; ++i)
    if (!isfinite(y[i]))
      return 0;
  return 1;
}

/*
 * The stages' arguments, y + h (b_s1 k1 + ... ), with GSL's groupings: the
 * second stage multiplies (1/4 h) by k1, the others h by the left-to-right sum.
 */
NESTCL_INLINE void nestcl_rkf45_arg2(int n, double h, const double *y, const double *k1, double *out)
{
  for (int i = 0; i < n; ++i)
    out[i] = y[i] + NESTCL_RKF45_A2 * h * k1[i];
}

NESTCL_INLINE void nestcl_rkf45_arg3(int n, double h, const double *y, const double *k1, const double *k2, double *out)
{
  for (int i = 0; i < n; ++i)
    out[i] = y[i] + h * (NESTCL_RKF45_B31 * k1[i] + NESTCL_RKF45_B32 * k2[i]);
}

NESTCL_INLINE void nestcl_rkf45_arg4(int n, double h, const double *y, const double *k1, const double *k2,
                                     const double *k3, double *out)
{
  for (int i = 0; i < n; ++i)
    out[i] = y[i] + h * (NESTCL_RKF45_B41 * k1[i] + NESTCL_RKF45_B42 * k2[i] + NESTCL_RKF45_B43 * k3[i]);
}

NESTCL_INLINE void nestcl_rkf45_arg5(int n, double h, const double *y, const double *k1, const double *k2,
                                     const double *k3, const double *k4, double *out)
{
  for (int i = 0; i < n; ++i)
    out[i] = y[i] +
      h * (NESTCL_RKF45_B51 * k1[i] + NESTCL_RKF45_B52 * k2[i] + NESTCL_RKF45_B53 * k3[i] + NESTCL_RKF45_B54 * k4[i]);
}

NESTCL_INLINE void nestcl_rkf45_arg6(int n, double h, const double *y, const double *k1, const double *k2,
                                     const double *k3, const double *k4, const double *k5, double *out)
{
  for (int i = 0; i < n; ++i)
    out[i] = y[i] +
      h *
        (NESTCL_RKF45_B61 * k1[i] + NESTCL_RKF45_B62 * k2[i] + NESTCL_RKF45_B63 * k3[i] + NESTCL_RKF45_B64 * k4[i] +
         NESTCL_RKF45_B65 * k5[i]);
}

/* y += h d with d the fifth-order weights' sum (k2 has weight 0 and is not read). */
NESTCL_INLINE void nestcl_rkf45_advance_y(int n, double h, double *y, const double *k1, const double *k3,
                                          const double *k4, const double *k5, const double *k6)
{
  for (int i = 0; i < n; ++i) {
    const double d = NESTCL_RKF45_C1 * k1[i] + NESTCL_RKF45_C3 * k3[i] + NESTCL_RKF45_C4 * k4[i] +
      NESTCL_RKF45_C5 * k5[i] + NESTCL_RKF45_C6 * k6[i];
    y[i] = y[i] + h * d;
  }
}

NESTCL_INLINE void nestcl_rkf45_error(int n, double h, const double *k1, const double *k3, const double *k4,
                                      const double *k5, const double *k6, double *yerr)
{
  for (int i = 0; i < n; ++i)
    yerr[i] = h *
      (NESTCL_RKF45_E1 * k1[i] + NESTCL_RKF45_E3 * k3[i] + NESTCL_RKF45_E4 * k4[i] + NESTCL_RKF45_E5 * k5[i] +
       NESTCL_RKF45_E6 * k6[i]);
}

/*
 * gsl_odeiv_control_hadjust of the standard control for a stepper of order 5:
 * the ratio of the error to the tolerance decides between shrinking (returns
 * NESTCL_RKF45_HADJ_DEC), growing (INC) or keeping h (NIL); *h is updated.
 */
NESTCL_INLINE int nestcl_rkf45_hadjust(const nestcl_rkf45_control *c, int n, const double *y, const double *yerr,
                                       const double *yp, double *h)
{
  const double h_old = *h;
  double rmax = NESTCL_RKF45_DBL_MIN;
  for (int i = 0; i < n; ++i) {
    const double d = c->eps_rel * (c->a_y * fabs(y[i]) + c->a_dydt * fabs(h_old * yp[i])) + c->eps_abs;
    const double r = fabs(yerr[i]) / fabs(d);
    rmax = r > rmax ? r : rmax; /* GSL_MAX_DBL(r, rmax): a NaN r leaves rmax */
  }
  if (rmax > 1.1) {
    double r = 0.9 / nestcl_glibc_pow(rmax, NESTCL_RKF45_INV_ORD, c->libm_fused);
    if (r < 0.2)
      r = 0.2;
    *h = r * h_old;
    return NESTCL_RKF45_HADJ_DEC;
  }
  if (rmax < 0.5) {
    double r = 0.9 / nestcl_glibc_pow(rmax, NESTCL_RKF45_INV_ORD1, c->libm_fused);
    if (r > 5.0)
      r = 5.0;
    if (r < 1.0)
      r = 1.0;
    *h = r * h_old;
    return NESTCL_RKF45_HADJ_INC;
  }
  return NESTCL_RKF45_HADJ_NIL;
}

/*
 * The template. Arguments of the generated functions:
 *   ctx        passed to DYN unchanged;
 *   n          the system's dimension, at most DIM;
 *   y          private double[n], the state, updated in place;
 *   t, t1, h   as gsl_odeiv_evolve_apply's (*h is IntegrationStep_);
 *   e          statistics, or 0.
 * name_rkf45_step(ctx, n, t, h, y, y0, dydt_in, dydt_out, yerr) is one rkf45
 * step from y (whose copy y0 restores it when the final evaluation fails).
 * name_rkf45_advance(ctx, c, e, n, step, h, y, max_calls) is NEST's
 *   t = 0; while (t < step) evolve_apply(..., &t, step, h, y)
 * plus the two checks a kernel needs (ENONFINITE, ESTALL after max_calls calls).
 */
#define NESTCL_RKF45_DEFINE(NAME, DIM, CTX_T, DYN)                                                                     \
  NESTCL_INLINE int NAME##_rkf45_step(CTX_T ctx, int n, double t, double h, double *y, const double *y0,               \
                                      const double *dydt_in, double *dydt_out, double *yerr)                           \
  {                                                                                                                    \
    /* ytmp zeroed: compilers cannot see that DYN reads only its first n */                                            \
    double k2[DIM], k3[DIM], k4[DIM], k5[DIM], k6[DIM], ytmp[DIM] = {0.0};                                             \
    const double *k1 = dydt_in;                                                                                        \
    int s;                                                                                                             \
    nestcl_rkf45_arg2(n, h, y, k1, ytmp);                                                                              \
    if ((s = DYN(t + NESTCL_RKF45_A2 * h, ytmp, k2, ctx)) != 0)                                                        \
      return s;                                                                                                        \
    nestcl_rkf45_arg3(n, h, y, k1, k2, ytmp);                                                                          \
    if ((s = DYN(t + NESTCL_RKF45_A3 * h, ytmp, k3, ctx)) != 0)                                                        \
      return s;                                                                                                        \
    nestcl_rkf45_arg4(n, h, y, k1, k2, k3, ytmp);                                                                      \
    if ((s = DYN(t + NESTCL_RKF45_A4 * h, ytmp, k4, ctx)) != 0)                                                        \
      return s;                                                                                                        \
    nestcl_rkf45_arg5(n, h, y, k1, k2, k3, k4, ytmp);                                                                  \
    if ((s = DYN(t + NESTCL_RKF45_A5 * h, ytmp, k5, ctx)) != 0)                                                        \
      return s;                                                                                                        \
    nestcl_rkf45_arg6(n, h, y, k1, k2, k3, k4, k5, ytmp);                                                              \
    if ((s = DYN(t + NESTCL_RKF45_A6 * h, ytmp, k6, ctx)) != 0)                                                        \
      return s;                                                                                                        \
    nestcl_rkf45_advance_y(n, h, y, k1, k3, k4, k5, k6);                                                               \
    if ((s = DYN(t + h, y, dydt_out, ctx)) != 0) {                                                                     \
      nestcl_rkf45_copy(n, y, y0);                                                                                     \
      return s;                                                                                                        \
    }                                                                                                                  \
    nestcl_rkf45_error(n, h, k1, k3, k4, k5, k6, yerr);                                                                \
    return NESTCL_RKF45_SUCCESS;                                                                                       \
  }                                                                                                                    \
                                                                                                                       \
  NESTCL_INLINE int NAME##_rkf45_evolve_apply(CTX_T ctx, const nestcl_rkf45_control *c, nestcl_rkf45_evolve *e, int n, \
                                              double *t, double t1, double *h, double *y)                              \
  {                                                                                                                    \
    double y0[DIM], yerr[DIM], dydt_in[DIM], dydt_out[DIM];                                                            \
    const double t0 = *t, dt = t1 - t0;                                                                                \
    double h0 = *h;                                                                                                    \
    int s;                                                                                                             \
    if (n < 0 || n > (DIM))                                                                                            \
      return NESTCL_RKF45_EINVAL;                                                                                      \
    if ((dt < 0.0 && h0 > 0.0) || (dt > 0.0 && h0 < 0.0))                                                              \
      return NESTCL_RKF45_EINVAL;                                                                                      \
    nestcl_rkf45_copy(n, y0, y);                                                                                       \
    if ((s = DYN(t0, y, dydt_in, ctx)) != 0)                                                                           \
      return s;                                                                                                        \
    for (;;) {                                                                                                         \
      int final_step = 0;                                                                                              \
      if ((dt >= 0.0 && h0 > dt) || (dt < 0.0 && h0 < dt)) {                                                           \
        h0 = dt;                                                                                                       \
        final_step = 1;                                                                                                \
      }                                                                                                                \
      if ((s = NAME##_rkf45_step(ctx, n, t0, h0, y, y0, dydt_in, dydt_out, yerr)) != 0) {                              \
        *h = h0;                                                                                                       \
        *t = t0;                                                                                                       \
        return s;                                                                                                      \
      }                                                                                                                \
      if (e) {                                                                                                         \
        e->count++;                                                                                                    \
        e->last_step = h0;                                                                                             \
      }                                                                                                                \
      *t = final_step ? t1 : t0 + h0;                                                                                  \
      const double h_old = h0;                                                                                         \
      if (nestcl_rkf45_hadjust(c, n, y, yerr, dydt_out, &h0) == NESTCL_RKF45_HADJ_DEC) {                               \
        /* retry only if h really shrank and the shorter step still moves t */                                         \
        if (fabs(h0) < fabs(h_old) && *t + h0 != *t) {                                                                 \
          nestcl_rkf45_copy(n, y, y0);                                                                                 \
          if (e)                                                                                                       \
            e->failed_steps++;                                                                                         \
          continue;                                                                                                    \
        }                                                                                                              \
        h0 = h_old;                                                                                                    \
        if (e)                                                                                                         \
          e->forced_steps++;                                                                                           \
      }                                                                                                                \
      *h = h0;                                                                                                         \
      return NESTCL_RKF45_SUCCESS;                                                                                     \
    }                                                                                                                  \
  }                                                                                                                    \
                                                                                                                       \
  NESTCL_INLINE int NAME##_rkf45_advance(CTX_T ctx, const nestcl_rkf45_control *c, nestcl_rkf45_evolve *e, int n,      \
                                         double step, double *h, double *y, long max_calls)                            \
  {                                                                                                                    \
    double t = 0.0;                                                                                                    \
    for (long calls = 0; t < step; ++calls) {                                                                          \
      if (calls == max_calls)                                                                                          \
        return NESTCL_RKF45_ESTALL;                                                                                    \
      const int s = NAME##_rkf45_evolve_apply(ctx, c, e, n, &t, step, h, y);                                           \
      if (s != 0)                                                                                                      \
        return s;                                                                                                      \
      if (!nestcl_rkf45_all_finite(n, y))                                                                              \
        return NESTCL_RKF45_ENONFINITE;                                                                                \
    }                                                                                                                  \
    return NESTCL_RKF45_SUCCESS;                                                                                       \
  }

#endif /* NESTCL_RKF45_H */
