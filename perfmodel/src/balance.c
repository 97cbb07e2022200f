/*
 * Rebalancing with the model as the prior (issue 10, Deliver 4 and 5): what
 * runs measured at one or more splits corrects the profile's model for this
 * network on this host, and the corrected model proposes the next split.
 *
 * The correction has two numbers. s moves cost between the sides (the CPU
 * VPs' costs times s, the streams' divided by s): it is what the measured
 * busy times of one CPU VP and one stream say, against the model's, and what
 * the shape of the measured wall times against alpha says. b scales the
 * whole wall time: the network's rate, its in-degree or the host's load may
 * differ from the profile's. Busy ratios and wall times are weighed by their
 * noise (log scale, sigma 0.25 and 0.05): with one wall time b takes it all
 * and s is the busy ratios'; with two or more measured splits the wall times
 * decide where the minimum lies. Busy ratios measured within 0.15 of an end
 * of the range are left out: there the smaller side's time is mostly its
 * overhead per step, which the profile knows least well.
 */
#include <math.h>
#include <string.h>

#include "nestcl/device.h"
#include "nestcl/pm_model.h"

#define SIGMA_WALL 0.05
#define SIGMA_BUSY 0.25
#define S_MIN 0.25
#define S_MAX 4.0

void nestcl_pm_balance_params(const double *p, double s, double *q)
{
  static const int cpu[] = {NESTCL_PM_C_UPDATE, NESTCL_PM_C_STEP,  NESTCL_PM_C_SPIKE,
                            NESTCL_PM_C_PSPIKE, NESTCL_PM_C_EVENT, NESTCL_PM_C_PLASTIC};
  static const int gpu[] = {NESTCL_PM_G_UPDATE, NESTCL_PM_G_STEP,   NESTCL_PM_G_LAUNCH, NESTCL_PM_G_DLAUNCH,
                            NESTCL_PM_G_SPIKE,  NESTCL_PM_G_PSPIKE, NESTCL_PM_G_EVENT,  NESTCL_PM_G_PLASTIC};
  memcpy(q, p, NESTCL_PM_NP * sizeof *q);
  for (size_t k = 0; k < sizeof cpu / sizeof *cpu; ++k)
    q[cpu[k]] *= s;
  for (size_t k = 0; k < sizeof gpu / sizeof *gpu; ++k)
    q[gpu[k]] /= s;
}

double nestcl_pm_busy_correction(const double *p, const nestcl_pm_config *c, double cpu_busy, double gpu_busy)
{
  nestcl_pm_prediction o;
  nestcl_pm_predict(p, c, &o);
  if (!(o.cpu_vp > 0.0 && o.gpu_vp > 0.0 && cpu_busy > 0.0 && gpu_busy > 0.0)) {
    return 0.0;
  }
  /* Scaling by s changes the model's ratio c / g by s^2. */
  double s = sqrt((cpu_busy / gpu_busy) / (o.cpu_vp / o.gpu_vp));
  return s < S_MIN ? S_MIN : (s > S_MAX ? S_MAX : s);
}

/* The misfit of correction s, and the b that goes with it. */
static double misfit(const double *p, const nestcl_pm_config *c, const nestcl_pm_measured *m, int n,
                     const double *log_busy, double ls, double *b)
{
  double q[NESTCL_PM_NP];
  nestcl_pm_balance_params(p, exp(ls), q);
  double r[NESTCL_PM_BALANCE_MAX], mean = 0.0;
  int nw = 0;
  for (int i = 0; i < n; ++i) {
    if (!(m[i].wall > 0.0))
      continue;
    nestcl_pm_config x = *c;
    x.alpha = m[i].alpha;
    double w = nestcl_pm_output_value(q, &x, NESTCL_PM_WALL);
    r[nw] = log(m[i].wall) - log(w > 0.0 ? w : 1e-300);
    mean += r[nw++];
  }
  mean = nw ? mean / nw : 0.0;
  *b = exp(mean);
  double f = 0.0;
  for (int i = 0; i < nw; ++i)
    f += (r[i] - mean) * (r[i] - mean) / (SIGMA_WALL * SIGMA_WALL);
  for (int i = 0; i < n; ++i) {
    if (isfinite(log_busy[i]))
      f += (ls - log_busy[i]) * (ls - log_busy[i]) / (SIGMA_BUSY * SIGMA_BUSY);
  }
  return f;
}

int nestcl_pm_balance_fit(const double *p, const nestcl_pm_config *c, const nestcl_pm_measured *m, int n,
                          nestcl_pm_balance *out)
{
  memset(out, 0, sizeof *out);
  if (n < 1 || n > NESTCL_PM_BALANCE_MAX) {
    return nestcl_set_error(NESTCL_EINVAL, "rebalancing takes 1 to %d measured splits, not %d", NESTCL_PM_BALANCE_MAX,
                            n);
  }
  double log_busy[NESTCL_PM_BALANCE_MAX];
  for (int i = 0; i < n; ++i) {
    if (!(m[i].alpha >= 0.0 && m[i].alpha <= 1.0) || !(m[i].wall >= 0.0) || !(m[i].cpu_busy >= 0.0) ||
        !(m[i].gpu_busy >= 0.0)) {
      return nestcl_set_error(NESTCL_EINVAL, "measured split %d is malformed (alpha %g, wall %g, busy %g and %g)", i,
                              m[i].alpha, m[i].wall, m[i].cpu_busy, m[i].gpu_busy);
    }
    nestcl_pm_config x = *c;
    x.alpha = m[i].alpha;
    /* Near an end of the range the small side's time is mostly per-step overhead: its ratio says little. */
    double s = m[i].alpha >= NESTCL_PM_BUSY_ALPHA_MIN && m[i].alpha <= 1.0 - NESTCL_PM_BUSY_ALPHA_MIN
      ? nestcl_pm_busy_correction(p, &x, m[i].cpu_busy, m[i].gpu_busy)
      : 0.0;
    log_busy[i] = s > 0.0 ? log(s) : NAN;
    out->n_busy += s > 0.0;
    out->n_wall += m[i].wall > 0.0;
  }
  /* Without busy ratios, one wall time says nothing about s: the model's own balance. */
  double ls = 0.0, b = 1.0;
  if (out->n_busy > 0 || out->n_wall > 1) {
    const double lo = log(S_MIN), hi = log(S_MAX);
    double best = INFINITY;
    for (int k = 0; k <= 400; ++k) {
      double t = lo + (hi - lo) * k / 400.0, bb;
      double f = misfit(p, c, m, n, log_busy, t, &bb);
      if (f < best) {
        best = f;
        ls = t;
      }
    }
    double a = ls - (hi - lo) / 400.0, z = ls + (hi - lo) / 400.0, bb;
    const double g = 0.6180339887498949;
    for (int it = 0; it < 40; ++it) {
      double u = z - g * (z - a), v = a + g * (z - a);
      if (misfit(p, c, m, n, log_busy, u, &bb) < misfit(p, c, m, n, log_busy, v, &bb))
        z = v;
      else
        a = u;
    }
    double t = 0.5 * (a + z);
    if (misfit(p, c, m, n, log_busy, t, &bb) < best)
      ls = t;
  }
  misfit(p, c, m, n, log_busy, ls, &b);
  double q[NESTCL_PM_NP];
  nestcl_pm_balance_params(p, exp(ls), q);
  out->s = exp(ls);
  out->b = b;
  out->alpha = nestcl_pm_best_alpha(q, c, &out->wall);
  out->wall *= b;
  nestcl_pm_config x = *c;
  x.alpha = m[n - 1].alpha;
  out->here = b * nestcl_pm_output_value(q, &x, NESTCL_PM_WALL);
  return 0;
}
