/*
 * hpc_benchmark's weight conversion (BENCHMARKS.md): the peak of the PSP that
 * a 1 pA alpha current produces in iaf_psc_alpha at rest, found through the -1
 * branch of Lambert's W. W is computed here with Halley's iteration from a
 * branch-point series (near -1/e) or the asymptotic log form (near 0), which
 * converges to machine precision in a few steps on the whole branch.
 */
#include <math.h>

#include "engine_internal.h"

double nestcl_lambert_wm1(double x)
{
  const double em1 = 0.36787944117144233; /* 1/e */
  if (!(x >= -em1) || !(x < 0.0)) {
    return NAN;
  }
  double w;
  if (x < -0.25) {
    double p = -sqrt(2.0 * (1.0 + x / em1));
    w = -1.0 + p - p * p / 3.0 + 11.0 / 72.0 * p * p * p;
  } else {
    double l1 = log(-x), l2 = log(-l1);
    w = l1 - l2 + l2 / l1;
  }
  for (int it = 0; it < 50; ++it) {
    double ew = exp(w);
    double f = w * ew - x;
    if (w == -1.0) {
      break; /* the branch point: the derivative vanishes and w is exact */
    }
    double step = f / (ew * (w + 1.0) - (w + 2.0) * f / (2.0 * w + 2.0));
    double next = w - step;
    if (next == w || !isfinite(next)) {
      break;
    }
    w = next;
    if (fabs(step) <= 4e-16 * fabs(w)) {
      break;
    }
  }
  return w;
}

int nestcl_alpha_psp_peak(double tau_m, double tau_syn, double C_m, double *t_max, double *v_max)
{
  if (!(tau_m > 0.0) || !(tau_syn > 0.0) || !(C_m > 0.0) || tau_m == tau_syn) {
    return nestcl_set_error(NESTCL_EINVAL, "alpha PSP peak: need positive tau_m != tau_syn and C_m (got %g, %g, %g)",
                            tau_m, tau_syn, C_m);
  }
  double a = tau_m / tau_syn;
  double b = 1.0 / tau_syn - 1.0 / tau_m;
  double t = (1.0 / b) * (-nestcl_lambert_wm1(-exp(-1.0 / a) / a) - 1.0 / a);
  double v = exp(1.0) / (tau_syn * C_m * b) * ((exp(-t / tau_m) - exp(-t / tau_syn)) / b - t * exp(-t / tau_syn));
  if (!isfinite(t) || !isfinite(v) || !(v > 0.0)) {
    return nestcl_set_error(NESTCL_EINVAL, "alpha PSP peak: no finite peak for tau_m %g, tau_syn %g", tau_m, tau_syn);
  }
  *t_max = t;
  *v_max = v;
  return 0;
}
