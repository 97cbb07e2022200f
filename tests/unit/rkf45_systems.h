/*
 * The ODE systems of the RKF45 tests (test_numeric_rkf45.c), compiled as C and,
 * embedded after nestcl_rt_source, as OpenCL C: the dynamics, NEST's per-step
 * update around the integration (spike handling, refractoriness, input spikes
 * drawn from Philox per neuron and step) and a hash of a trajectory. Written
 * from NEST 3.10's model equations, not copied:
 *   SYS_IAF    iaf_cond_alpha: V_m, dg_ex, g_ex, dg_in, g_in (alpha conductances)
 *   SYS_AEIF   aeif_cond_exp: V_m, g_ex, g_in, w (exponential spike upswing;
 *              NEST resets V_m inside the integration loop)
 *   SYS_HH     hh_psc_alpha: V_m, m, h, n and two alpha currents (8 equations)
 *   SYS_STIFF  a van der Pol relaxation oscillator (mu = 20) driving a fast
 *              relaxation (rate 3000/ms): many rejected steps
 *   SYS_JUMP   a right-hand side jumping by 1e18 at t = 0.05 ms in every
 *              time step: shrinks until a smaller step would not move t, so
 *              GSL accepts steps it would reject (forced steps)
 *   SYS_BLOWUP y' = y^2 from y = 1: infinite after 1 ms, then NaN
 * ctx->fail_at > 0 makes the fail_at-th evaluation return ctx->fail_status.
 */
#ifndef NESTCL_TEST_RKF45_SYSTEMS_H
#define NESTCL_TEST_RKF45_SYSTEMS_H

#ifndef __OPENCL_C_VERSION__
#include "nestcl_philox.h"
#include "nestcl_rkf45.h"
#endif

#define SYS_DIM 8
#define SYS_IAF 0
#define SYS_AEIF 1
#define SYS_HH 2
#define SYS_STIFF 3
#define SYS_JUMP 4
#define SYS_BLOWUP 5
#define SYS_KINDS 6
#define SYS_STEP 0.1 /* ms, NEST's resolution */
#define SYS_MAX_CALLS 1000000L /* evolve calls per time step before ESTALL */
#define SYS_E 2.718281828459045

typedef struct sys_ctx {
  int kind, n, r, fused;
  int evals, fail_at, fail_status, spikes;
  double I_stim, I_e, w_scale, v_old;
} sys_ctx;

/* std::min(a, b) as the C++ library defines it: (b < a) ? b : a. */
static inline double sys_min(double a, double b)
{
  return b < a ? b : a;
}

static inline int sys_dynamics(double t, const double *y, double *f, sys_ctx *c)
{
  if (++c->evals == c->fail_at)
    return c->fail_status;
  if (c->kind == SYS_IAF) {
    const double V_th = -55.0, V_reset = -60.0, g_L = 16.6667, C_m = 250.0, E_ex = 0.0, E_in = -85.0, E_L = -70.0,
                 tau_E = 0.2, tau_I = 2.0;
    const double V = c->r > 0 ? V_reset : sys_min(y[0], V_th);
    const double I_syn_exc = y[2] * (V - E_ex), I_syn_inh = y[4] * (V - E_in), I_leak = g_L * (V - E_L);
    f[0] = c->r > 0 ? 0.0 : (-I_leak - I_syn_exc - I_syn_inh + c->I_stim + c->I_e) / C_m;
    f[1] = -y[1] / tau_E;
    f[2] = y[1] - (y[2] / tau_E);
    f[3] = -y[3] / tau_I;
    f[4] = y[3] - (y[4] / tau_I);
  } else if (c->kind == SYS_AEIF) {
    const double C_m = 281.0, g_L = 30.0, E_L = -70.6, V_th = -50.4, Delta_T = 2.0, tau_w = 144.0, a = 4.0,
                 V_peak = 0.0, V_reset = -60.0, E_ex = 0.0, E_in = -85.0, tau_ex = 0.2, tau_in = 2.0;
    const double V = c->r > 0 ? V_reset : sys_min(y[0], V_peak);
    const double I_syn_exc = y[1] * (V - E_ex), I_syn_inh = y[2] * (V - E_in);
    const double I_spike = g_L * Delta_T * nestcl_glibc_exp((V - V_th) / Delta_T, c->fused);
    f[0] = c->r > 0 ? 0.0 : (-g_L * (V - E_L) + I_spike - I_syn_exc - I_syn_inh - y[3] + c->I_e + c->I_stim) / C_m;
    f[1] = -y[1] / tau_ex;
    f[2] = -y[2] / tau_in;
    f[3] = (a * (V - E_L) - y[3]) / tau_w;
  } else if (c->kind == SYS_HH) {
    const double g_Na = 12000.0, g_K = 3600.0, g_L = 30.0, C_m = 100.0, E_Na = 50.0, E_K = -77.0, E_L = -54.402,
                 tau_E = 0.2, tau_I = 2.0;
    const double V = y[0], m = y[1], h = y[2], n = y[3];
    const double alpha_n = (0.01 * (V + 55.)) / (1. - nestcl_glibc_exp(-(V + 55.) / 10., c->fused));
    const double beta_n = 0.125 * nestcl_glibc_exp(-(V + 65.) / 80., c->fused);
    const double alpha_m = (0.1 * (V + 40.)) / (1. - nestcl_glibc_exp(-(V + 40.) / 10., c->fused));
    const double beta_m = 4. * nestcl_glibc_exp(-(V + 65.) / 18., c->fused);
    const double alpha_h = 0.07 * nestcl_glibc_exp(-(V + 65.) / 20., c->fused);
    const double beta_h = 1. / (1. + nestcl_glibc_exp(-(V + 35.) / 10., c->fused));
    const double I_Na = g_Na * m * m * m * h * (V - E_Na), I_K = g_K * n * n * n * n * (V - E_K), I_L = g_L * (V - E_L);
    f[0] = (-(I_Na + I_K + I_L) + c->I_stim + c->I_e + y[5] + y[7]) / C_m;
    f[1] = alpha_m * (1 - m) - beta_m * m;
    f[2] = alpha_h * (1 - h) - beta_h * h;
    f[3] = alpha_n * (1 - n) - beta_n * n;
    f[4] = -y[4] / tau_E;
    f[5] = y[4] - (y[5] / tau_E);
    f[6] = -y[6] / tau_I;
    f[7] = y[6] - (y[7] / tau_I);
  } else if (c->kind == SYS_STIFF) {
    const double mu = 20.0, k = 3000.0;
    f[0] = y[1];
    f[1] = mu * (1.0 - y[0] * y[0]) * y[1] - y[0] + c->I_stim;
    f[2] = -k * (y[2] - y[0] * y[1]);
  } else if (c->kind == SYS_JUMP) {
    f[0] = t < 0.05 ? 1.0 : 1e18;
    f[1] = -y[1] + c->I_e;
  } else {
    f[0] = y[0] * y[0];
  }
  return 0;
}

NESTCL_RKF45_DEFINE(sys, SYS_DIM, sys_ctx *, sys_dynamics)

/* A second model in the same program: iaf_cond_alpha alone, 5 equations. */
static inline int sys_iaf_dynamics(double t, const double *y, double *f, sys_ctx *c)
{
  return sys_dynamics(t, y, f, c);
}
NESTCL_RKF45_DEFINE(iaf, 5, sys_ctx *, sys_iaf_dynamics)

/* Neuron i's parameters and initial state; fail_at = 0 (never). */
static inline void sys_init(int kind, nestcl_u32 i, int fused, sys_ctx *c, double *y)
{
  nestcl_rng_stream st = nestcl_stream_init(nestcl_rng_key(2026, NESTCL_RNG_PURPOSE_TEST), nestcl_rng_counter(i, 0));
  const double u = nestcl_stream_uniform(&st), v = nestcl_stream_uniform(&st);
  c->kind = kind;
  c->r = 0;
  c->fused = fused;
  c->evals = 0;
  c->fail_at = 0;
  c->fail_status = 0;
  c->spikes = 0;
  c->I_stim = 0.0;
  c->v_old = 0.0;
  for (int k = 0; k < SYS_DIM; ++k)
    y[k] = 0.0;
  if (kind == SYS_IAF) {
    c->n = 5;
    c->I_e = 200.0 + 300.0 * u;
    c->w_scale = 2.0 + 20.0 * v;
    y[0] = -70.0 + 10.0 * u;
  } else if (kind == SYS_AEIF) {
    c->n = 4;
    c->I_e = 600.0 + 600.0 * u;
    c->w_scale = 1.0 + 10.0 * v;
    y[0] = -70.6 + 5.0 * v;
  } else if (kind == SYS_HH) {
    c->n = 8;
    c->I_e = 100.0 + 700.0 * u;
    c->w_scale = 20.0 + 200.0 * v;
    y[0] = -65.0 + 3.0 * u;
    y[1] = 0.0529;
    y[2] = 0.5961;
    y[3] = 0.3177;
  } else if (kind == SYS_STIFF) {
    c->n = 3;
    c->I_e = 0.0;
    c->w_scale = 0.5 + v;
    y[0] = 2.0 * u - 1.0;
    y[1] = v;
    y[2] = 0.0;
  } else if (kind == SYS_JUMP) {
    c->n = 2;
    c->I_e = 1.0 + u;
    c->w_scale = 1.0;
    y[1] = v;
  } else {
    c->n = 1;
    c->I_e = 0.0;
    c->w_scale = 1.0;
    y[0] = 1.0 + 0.01 * u;
  }
}

/* After each evolve call inside NEST's loop (aeif_cond_exp: spike and reset in the loop). */
static inline void sys_after_call(sys_ctx *c, double *y)
{
  if (c->kind != SYS_AEIF)
    return;
  if (c->r > 0) {
    y[0] = -60.0;
  } else if (y[0] >= 0.0) {
    y[0] = -60.0;
    y[3] += 80.5;
    c->r = 0; /* t_ref = 0: no refractory steps */
    c->spikes++;
  }
}

/* After the time step's integration: NEST's threshold, refractoriness and this step's inputs. */
static inline void sys_after_step(sys_ctx *c, double *y, nestcl_u32 i, nestcl_u32 step)
{
  nestcl_rng_stream st =
    nestcl_stream_init(nestcl_rng_key(2026, NESTCL_RNG_PURPOSE_TEST + 1), nestcl_rng_counter(i, step));
  const double u1 = nestcl_stream_uniform(&st), u2 = nestcl_stream_uniform(&st), u3 = nestcl_stream_uniform(&st);
  const double w_ex = u1 < 0.2 ? c->w_scale * (double)(1 + (int)(4.0 * u2)) : 0.0;
  const double w_in = u3 < 0.1 ? c->w_scale * (double)(1 + (int)(3.0 * u2)) : 0.0;
  const double I_stim = u3 > 0.98 ? 100.0 * (u1 - 0.5) : c->I_stim;
  if (c->kind == SYS_IAF) {
    if (c->r) {
      --c->r;
      y[0] = -60.0;
    } else if (y[0] >= -55.0) {
      c->r = 20;
      y[0] = -60.0;
      c->spikes++;
    }
    y[1] += w_ex * (1.0 * SYS_E / 0.2);
    y[3] += w_in * (1.0 * SYS_E / 2.0);
  } else if (c->kind == SYS_AEIF) {
    if (c->r > 0)
      --c->r;
    y[1] += w_ex;
    y[2] += w_in;
  } else if (c->kind == SYS_HH) {
    if (c->r > 0) {
      --c->r;
    } else if (y[0] >= 0.0 && c->v_old > y[0]) {
      c->r = 20;
      c->spikes++;
    }
    y[4] += w_ex * (1.0 * SYS_E / 0.2);
    y[6] -= w_in * (1.0 * SYS_E / 2.0);
    c->v_old = y[0];
  } else if (c->kind == SYS_STIFF) {
    y[1] += w_ex * 0.05;
  } else if (c->kind == SYS_JUMP) {
    y[0] = 0.0;
  }
  c->I_stim = I_stim;
}

/* NEST's loop over one time step with this header's evolve: 0 or the first error (ENONFINITE as advance). */
static inline int sys_update(sys_ctx *c, const nestcl_rkf45_control *con, nestcl_rkf45_evolve *e, double *h, double *y,
                             nestcl_u32 i, nestcl_u32 step)
{
  double t = 0.0;
  for (long calls = 0; t < SYS_STEP; ++calls) {
    if (calls == SYS_MAX_CALLS)
      return NESTCL_RKF45_ESTALL;
    const int s = sys_rkf45_evolve_apply(c, con, e, c->n, &t, SYS_STEP, h, y);
    if (s != 0)
      return s;
    if (!nestcl_rkf45_all_finite(c->n, y))
      return NESTCL_RKF45_ENONFINITE;
    sys_after_call(c, y);
  }
  sys_after_step(c, y, i, step);
  return 0;
}

/* FNV-1a over the bits of y[0..n) and h: a trajectory's fingerprint, step after step. */
static inline nestcl_u64 sys_hash(nestcl_u64 hash, int n, const double *y, double h)
{
  for (int k = 0; k <= n; ++k) {
    hash ^= nestcl_f64_bits(k < n ? y[k] : h);
    hash *= NESTCL_U64_C(0x100000001b3);
  }
  return hash;
}
#define SYS_HASH_SEED NESTCL_U64_C(0xcbf29ce484222325)

/* What one neuron's run leaves: compared between C and OpenCL. */
typedef struct sys_result {
  nestcl_u64 hash, count, failed_steps, forced_steps;
  double y[SYS_DIM], h;
  int status, spikes, steps_done, evals;
} sys_result;

/*
 * Neuron i of system kind over `steps` time steps with a control (use_yp: of
 * y', else of y) and, with fail_at > 0, the fail_at-th evaluation failing with
 * status 9. use_iaf: the 5-equation instantiation (SYS_IAF only).
 */
static inline void sys_run_neuron(int kind, nestcl_u32 i, int use_yp, double eps_abs, double eps_rel, int fused,
                                  int steps, int fail_at, int use_iaf, sys_result *out)
{
  sys_ctx c;
  double y[SYS_DIM];
  sys_init(kind, i, fused, &c, y);
  c.fail_at = fail_at;
  c.fail_status = 9;
  const nestcl_rkf45_control con =
    use_yp ? nestcl_rkf45_control_yp(eps_abs, eps_rel, fused) : nestcl_rkf45_control_y(eps_abs, eps_rel, fused);
  nestcl_rkf45_evolve e;
  nestcl_rkf45_evolve_reset(&e);
  double h = SYS_STEP;
  nestcl_u64 hash = SYS_HASH_SEED;
  int status = 0, k = 0;
  for (; k < steps && status == 0; ++k) {
    if (use_iaf) {
      status = iaf_rkf45_advance(&c, &con, &e, c.n, SYS_STEP, &h, y, SYS_MAX_CALLS);
      if (status == 0)
        sys_after_step(&c, y, i, (nestcl_u32)k);
    } else {
      status = sys_update(&c, &con, &e, &h, y, i, (nestcl_u32)k);
    }
    hash = sys_hash(hash, c.n, y, h);
  }
  out->hash = hash;
  out->count = e.count;
  out->failed_steps = e.failed_steps;
  out->forced_steps = e.forced_steps;
  for (int j = 0; j < SYS_DIM; ++j)
    out->y[j] = y[j];
  out->h = h;
  out->status = status;
  out->spikes = c.spikes;
  out->steps_done = k;
  out->evals = c.evals;
}


#endif
