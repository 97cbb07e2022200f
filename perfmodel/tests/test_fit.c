/*
 * The perfmodel fitter (nestcl/perfmodel.h) on data generated from known
 * parameters: a nonlinear model of the shape of a run-time model (a constant,
 * a rational term in two inputs, a power law in a third) with 1 % noise.
 * The fit must recover every parameter within 4 standard errors, standard
 * errors must be finite and small, the cross-validated R^2 on held-out
 * points must exceed 0.99, and noiseless data must be fitted exactly. Errors:
 * too few points, a singular design (an input that never varies leaves two
 * parameters undetermined), no convergence within the iterations allowed,
 * non-finite data, and bad fold counts, each with its message.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "nestcl/device.h"
#include "nestcl/perfmodel.h"

#define PM_TEST_SEED 88172645463325252ull
#include "pm_test.h"

#define NP 5
#define NI 3
#define N 150

static double model(const double *p, const double *x, void *ctx)
{
  (void)ctx;
  return p[0] + p[1] * x[0] / (x[1] + p[2]) + p[3] * pow(x[2], p[4]);
}

static double linear(const double *p, const double *x, void *ctx)
{
  (void)ctx;
  return p[0] * x[0] + p[1] * x[1] + p[2];
}


static void expect_error(int rc, const char *needle, const char *what)
{
  EXPECT(rc == NESTCL_EINVAL && strstr(nestcl_last_error(), needle), "%s: rc %d, message '%s'", what, rc,
         nestcl_last_error());
  if (rc == NESTCL_EINVAL && strstr(nestcl_last_error(), needle)) {
    printf("ok %s: %s\n", what, nestcl_last_error());
  }
}

int main(void)
{
  static const char *names[NP] = {"t0", "a", "b", "c", "e"};
  const nestcl_pm_model m = {"synthetic", NP, names, NI, model, NULL, 0, 0};
  const double truth[NP] = {0.5, 3.0, 0.7, 2.0, 1.3};
  const double start[NP] = {1.0, 1.0, 1.0, 1.0, 1.0};
  double x[N * NI], y[N], y0[N];
  for (int k = 0; k < N; ++k) {
    x[k * NI] = 1.0 + 9.0 * uniform();
    x[k * NI + 1] = 3.0 * uniform();
    x[k * NI + 2] = 0.5 + 1.5 * uniform();
    y0[k] = model(truth, &x[k * NI], NULL);
    y[k] = y0[k] * (1.0 + 0.01 * gauss());
  }
  nestcl_pm_fit fit;
  int rc = nestcl_pm_fit_model(&m, x, y0, N, start, 0, &fit);
  EXPECT(rc == 0, "noiseless fit: %s", nestcl_last_error());
  for (int j = 0; rc == 0 && j < NP; ++j) {
    EXPECT(fabs(fit.p[j] - truth[j]) < 1e-6 * (1.0 + fabs(truth[j])), "noiseless %s = %.12g, want %g", names[j],
           fit.p[j], truth[j]);
  }
  EXPECT(rc == 0 && fit.r2 > 1.0 - 1e-12, "noiseless R^2 %.15g", fit.r2);
  rc = nestcl_pm_fit_model(&m, x, y, N, start, 0, &fit);
  EXPECT(rc == 0, "noisy fit: %s", nestcl_last_error());
  for (int j = 0; rc == 0 && j < NP; ++j) {
    printf("%-3s = %.5f +- %.5f (true %.5f)\n", names[j], fit.p[j], fit.se[j], truth[j]);
    EXPECT(isfinite(fit.se[j]) && fit.se[j] > 0.0 && fit.se[j] < 0.2 * (1.0 + fabs(truth[j])),
           "standard error of %s: %g", names[j], fit.se[j]);
    EXPECT(fabs(fit.p[j] - truth[j]) <= 4.0 * fit.se[j], "%s = %g +- %g, true %g: more than 4 standard errors off",
           names[j], fit.p[j], fit.se[j], truth[j]);
  }
  double r2 = 0.0;
  rc = nestcl_pm_cross_validate(&m, x, y, N, 5, start, 0, &r2);
  EXPECT(rc == 0 && r2 > 0.99, "cross-validated R^2 %g (rc %d: %s)", r2, rc, nestcl_last_error());
  printf("fit on %d points: R^2 %.5f on them, %.5f held out (5-fold), rmse %.4g, %d iterations\n", N, fit.r2, r2,
         fit.rmse, fit.iterations);

  /* Errors. */
  expect_error(nestcl_pm_fit_model(&m, x, y, NP, start, 0, &fit), "too few to fit 5 parameters", "too few points");
  double flat[N * NI];
  memcpy(flat, x, sizeof flat);
  for (int k = 0; k < N; ++k) {
    flat[k * NI + 2] = 1.0; /* x2^e == 1 always: e, and t0 against c, are not determined */
  }
  double yf[N];
  for (int k = 0; k < N; ++k) {
    yf[k] = model(truth, &flat[k * NI], NULL);
  }
  expect_error(nestcl_pm_fit_model(&m, flat, yf, N, start, 0, &fit), "singular design", "singular design");
  const double far[NP] = {50.0, -20.0, 9.0, 0.01, 4.0};
  expect_error(nestcl_pm_fit_model(&m, x, y, N, far, 2, &fit), "did not converge", "no convergence");
  double ynan[N];
  memcpy(ynan, y, sizeof ynan);
  ynan[7] = NAN;
  expect_error(nestcl_pm_fit_model(&m, x, ynan, N, start, 0, &fit), "not finite", "non-finite data");
  expect_error(nestcl_pm_cross_validate(&m, x, y, N, 1, start, 0, &r2), "folds", "one fold");

  /*
   * Costs: y = a x0 + b x1 + c with c truly 0 and noise that drives an
   * unconstrained fit below 0; the nonneg model holds it at 0 (at_zero) and
   * refits a and b. Cross-validation by groups holds pairs of points out
   * together and scores only the marked ones.
   */
  static const char *lin_names[3] = {"a", "b", "c"};
  const nestcl_pm_model lin = {"costs", 3, lin_names, NI, linear, NULL, 1, 1};
  double yl[N];
  int grp[N], scored[N];
  for (int k = 0; k < N; ++k) {
    yl[k] = 2.0 * x[k * NI] + 0.5 * x[k * NI + 1] - 0.3 + 0.05 * gauss();
    grp[k] = k / 2;
    scored[k] = k % 3 != 0;
  }
  const double lstart[3] = {1.0, 1.0, 1.0};
  rc = nestcl_pm_fit_model(&lin, x, yl, N, lstart, 0, &fit);
  EXPECT(rc == 0 && fit.at_zero[2] && fit.p[2] == 0.0 && fit.p[0] > 1.9 && fit.p[0] < 2.1,
         "nonneg: rc %d, a %g b %g c %g (at zero %d)", rc, fit.p[0], fit.p[1], fit.p[2], fit.at_zero[2]);
  double held[N];
  rc = nestcl_pm_cross_validate_groups(&lin, x, yl, N, grp, scored, 4, lstart, 0, &r2, held);
  EXPECT(rc == 0 && r2 > 0.9 && isfinite(held[0]) && isfinite(held[N - 1]), "grouped cross-validation: rc %d R^2 %g",
         rc, r2);
  printf("nonneg fit: a %.4f b %.4f c %.4f (held at 0: %d); grouped held-out R^2 %.4f\n", fit.p[0], fit.p[1], fit.p[2],
         fit.at_zero[2], r2);
  return fails ? 1 : 0;
}
