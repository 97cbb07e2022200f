/*
 * nestcl perfmodel: fitting an analytical performance model to measured run
 * times (issue 10), on GSL's nonlinear least squares (gsl_multifit_nlinear,
 * trust region with Levenberg-Marquardt steps). This is the fitter the model
 * of ../../shared/papers/004 §6.2 and its extensions are fitted with: a model
 * is a function y = f(p, x) of its parameters p and one configuration's inputs
 * x (network size, rate, threads, streams, alpha, ...). Quality is the
 * coefficient of determination on held-out points (k-fold cross-validation),
 * never on the points a fit was made from.
 *
 * Conventions: 0 or a negative NESTCL_E* code with the message in
 * nestcl_last_error() (nestcl/device.h); nothing prints or exits.
 */
#ifndef NESTCL_PERFMODEL_H
#define NESTCL_PERFMODEL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NESTCL_PM_MAX_PARAMS 24

typedef double (*nestcl_pm_fn)(const double *p, const double *x, void *ctx);

typedef struct nestcl_pm_model {
  const char *name;
  int n_params;
  const char *const *param_names; /* n_params names, for messages and reports */
  int n_inputs; /* values per point */
  nestcl_pm_fn f;
  void *ctx;
  /*
   * Every parameter is a cost (>= 0): a parameter that a fit drives negative
   * is fixed at 0 and the others refitted, one at a time, the most negative
   * first (an active-set method); nestcl_pm_fit.at_zero marks them.
   */
  int nonneg;
  /*
   * f is linear in the parameters: solved directly by least squares (SVD of
   * the Jacobian) instead of the trust-region iterations; the same rank
   * test, standard errors and errors.
   */
  int linear;
} nestcl_pm_model;

typedef struct nestcl_pm_fit {
  double p[NESTCL_PM_MAX_PARAMS]; /* the fitted parameters */
  double se[NESTCL_PM_MAX_PARAMS]; /* their standard errors (covariance scaled by the residual variance) */
  double r2; /* on the points fitted (for information; report nestcl_pm_cross_validate's) */
  double rmse;
  int iterations;
  int at_zero[NESTCL_PM_MAX_PARAMS]; /* nonneg models: fixed at 0 because the fit went negative */
} nestcl_pm_fit;

/*
 * Fits model m to n points: x[k * m->n_inputs + i] is input i of point k,
 * y[k] its measured value, p0 the starting parameters. At most max_iter
 * iterations (0: 200). Errors (NESTCL_EINVAL): fewer points than parameters
 * plus one; a design that leaves a parameter undetermined (the Jacobian at the
 * solution is rank deficient: names the parameter); no convergence; a
 * non-finite value of the model or the data.
 */
int nestcl_pm_fit_model(const nestcl_pm_model *m, const double *x, const double *y, size_t n, const double *p0,
                        int max_iter, nestcl_pm_fit *out);

/*
 * After a fit (or a cross-validation) failed with a singular design: the
 * index of the parameter it left undetermined; -1 after any other outcome.
 */
int nestcl_pm_singular_param(void);

/* 1 - SS_res / SS_tot of parameters p over the points. */
double nestcl_pm_r2(const nestcl_pm_model *m, const double *p, const double *x, const double *y, size_t n);

/*
 * k-fold cross-validation (points k, k + folds, ... are fold k): each fold is
 * predicted by a fit to the others; *r2 receives the R^2 of all those held-out
 * predictions together.
 */
int nestcl_pm_cross_validate(const nestcl_pm_model *m, const double *x, const double *y, size_t n, int folds,
                             const double *p0, int max_iter, double *r2);

/*
 * The same with the fold unit and the score chosen: points with equal group
 * (e.g. the rows of one measured run) are always held out together, in fold
 * group % folds (NULL: each point its own); only points with scored[k] != 0
 * count in *r2 (NULL: all). held_out (NULL or n values) receives every
 * point's held-out prediction.
 */
int nestcl_pm_cross_validate_groups(const nestcl_pm_model *m, const double *x, const double *y, size_t n,
                                    const int *group, const int *scored, int folds, const double *p0, int max_iter,
                                    double *r2, double *held_out);

#ifdef __cplusplus
}
#endif
#endif
