/*
 * The fitter of nestcl/perfmodel.h on gsl_multifit_nlinear: residuals
 * f(p, x_k) - y_k with a finite-difference Jacobian, the trust region method
 * with Levenberg-Marquardt steps and an SVD solver (robust near singular
 * designs), convergence on small steps or gradient; then the rank of the
 * Jacobian at the solution (its singular values) decides whether every
 * parameter is determined, and the covariance gives standard errors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multifit_nlinear.h>

#include "nestcl/device.h"
#include "nestcl/perfmodel.h"

typedef struct fit_data {
  const nestcl_pm_model *m;
  const double *x, *y;
  size_t n;
  int bad; /* the model gave a non-finite value */
} fit_data;

static int residuals(const gsl_vector *p, void *data, gsl_vector *f)
{
  fit_data *d = data;
  for (size_t k = 0; k < d->n; ++k) {
    double v = d->m->f(p->data, d->x + k * (size_t)d->m->n_inputs, d->m->ctx);
    if (!isfinite(v)) {
      d->bad = 1;
      v = 1e300;
    }
    gsl_vector_set(f, k, v - d->y[k]);
  }
  return GSL_SUCCESS;
}

double nestcl_pm_r2(const nestcl_pm_model *m, const double *p, const double *x, const double *y, size_t n)
{
  double mean = 0.0, ss_tot = 0.0, ss_res = 0.0;
  for (size_t k = 0; k < n; ++k) {
    mean += y[k];
  }
  mean /= (double)(n ? n : 1);
  for (size_t k = 0; k < n; ++k) {
    double r = m->f(p, x + k * (size_t)m->n_inputs, m->ctx) - y[k];
    ss_res += r * r;
    ss_tot += (y[k] - mean) * (y[k] - mean);
  }
  return ss_tot > 0.0 ? 1.0 - ss_res / ss_tot : (ss_res == 0.0 ? 1.0 : -INFINITY);
}

static int check_args(const nestcl_pm_model *m, const double *x, const double *y, size_t n, const double *p0)
{
  if (!m || !m->f || !x || !y || !p0 || m->n_params < 1 || m->n_params > NESTCL_PM_MAX_PARAMS || m->n_inputs < 1) {
    return nestcl_set_error(NESTCL_EINVAL, "perfmodel: bad model or arguments");
  }
  if (n < (size_t)m->n_params + 1) {
    return nestcl_set_error(NESTCL_EINVAL, "perfmodel %s: %zu points are too few to fit %d parameters (at least %d)",
                            m->name, n, m->n_params, m->n_params + 1);
  }
  for (size_t k = 0; k < n; ++k) {
    if (!isfinite(y[k])) {
      return nestcl_set_error(NESTCL_EINVAL, "perfmodel %s: measured value %zu is not finite", m->name, k);
    }
    for (int i = 0; i < m->n_inputs; ++i) {
      if (!isfinite(x[k * (size_t)m->n_inputs + (size_t)i])) {
        return nestcl_set_error(NESTCL_EINVAL, "perfmodel %s: input %d of point %zu is not finite", m->name, i, k);
      }
    }
  }
  return 0;
}

int nestcl_pm_fit_model(const nestcl_pm_model *m, const double *x, const double *y, size_t n, const double *p0,
                        int max_iter, nestcl_pm_fit *out)
{
  int rc = check_args(m, x, y, n, p0);
  if (rc) {
    return rc;
  }
  gsl_set_error_handler_off();
  const size_t P = (size_t)m->n_params;
  fit_data d = {m, x, y, n, 0};
  gsl_multifit_nlinear_fdf fdf;
  memset(&fdf, 0, sizeof fdf);
  fdf.f = residuals;
  fdf.df = NULL; /* finite differences */
  fdf.n = n;
  fdf.p = P;
  fdf.params = &d;
  gsl_multifit_nlinear_parameters prm = gsl_multifit_nlinear_default_parameters();
  prm.solver = gsl_multifit_nlinear_solver_svd;
  prm.scale = gsl_multifit_nlinear_scale_more;
  gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &prm, n, P);
  gsl_vector *p = gsl_vector_alloc(P);
  gsl_matrix *cov = gsl_matrix_alloc(P, P), *jt = gsl_matrix_alloc(n, P);
  gsl_vector *sv = gsl_vector_alloc(P), *work = gsl_vector_alloc(P);
  gsl_matrix *v = gsl_matrix_alloc(P, P);
  if (!w || !p || !cov || !jt || !sv || !work || !v) {
    rc = nestcl_set_error(NESTCL_ENOMEM, "perfmodel: out of memory");
    goto done;
  }
  for (size_t j = 0; j < P; ++j) {
    gsl_vector_set(p, j, p0[j]);
  }
  gsl_multifit_nlinear_init(p, &fdf, w);
  int info = 0;
  int iters = max_iter > 0 ? max_iter : 200;
  int status = gsl_multifit_nlinear_driver((size_t)iters, 1e-10, 1e-10, 0.0, NULL, NULL, &info, w);
  size_t done_iters = gsl_multifit_nlinear_niter(w);
  if (d.bad) {
    rc = nestcl_set_error(NESTCL_EINVAL, "perfmodel %s: the model gave a non-finite value during the fit (check the "
                          "inputs and the starting parameters)", m->name);
    goto done;
  }
  if (status != GSL_SUCCESS) {
    rc = nestcl_set_error(NESTCL_EINVAL, "perfmodel %s: the fit did not converge in %zu iterations (%s)", m->name,
                          done_iters, gsl_strerror(status));
    goto done;
  }
  /* Every parameter determined: the Jacobian at the solution has full rank. */
  gsl_matrix *J = gsl_multifit_nlinear_jac(w);
  gsl_matrix_memcpy(jt, J);
  if (gsl_linalg_SV_decomp(jt, v, sv, work) != GSL_SUCCESS) {
    rc = nestcl_set_error(NESTCL_ERUNTIME, "perfmodel %s: the SVD of the Jacobian failed", m->name);
    goto done;
  }
  double smax = gsl_vector_get(sv, 0), smin = gsl_vector_get(sv, P - 1);
  if (!(smax > 0.0) || smin <= smax * 1e-10) {
    /* The parameter that weighs most in the null direction. */
    size_t worst = 0;
    for (size_t j = 1; j < P; ++j) {
      worst = fabs(gsl_matrix_get(v, j, P - 1)) > fabs(gsl_matrix_get(v, worst, P - 1)) ? j : worst;
    }
    rc = nestcl_set_error(NESTCL_EINVAL, "perfmodel %s: a singular design: the points do not determine parameter %s "
                          "(vary the inputs it depends on)", m->name,
                          m->param_names ? m->param_names[worst] : "?");
    goto done;
  }
  gsl_multifit_nlinear_covar(J, 0.0, cov);
  gsl_vector *f = gsl_multifit_nlinear_residual(w);
  double chisq;
  gsl_blas_ddot(f, f, &chisq);
  double dof = (double)(n - P);
  memset(out, 0, sizeof *out);
  for (size_t j = 0; j < P; ++j) {
    out->p[j] = gsl_vector_get(gsl_multifit_nlinear_position(w), j);
    out->se[j] = sqrt(gsl_matrix_get(cov, j, j) * chisq / dof);
  }
  out->rmse = sqrt(chisq / (double)n);
  out->iterations = (int)done_iters;
  out->r2 = nestcl_pm_r2(m, out->p, x, y, n);
done:
  gsl_multifit_nlinear_free(w);
  gsl_vector_free(p);
  gsl_matrix_free(cov);
  gsl_matrix_free(jt);
  gsl_vector_free(sv);
  gsl_vector_free(work);
  gsl_matrix_free(v);
  return rc;
}

int nestcl_pm_cross_validate(const nestcl_pm_model *m, const double *x, const double *y, size_t n, int folds,
                             const double *p0, int max_iter, double *r2)
{
  int rc = check_args(m, x, y, n, p0);
  if (rc) {
    return rc;
  }
  if (folds < 2 || (size_t)folds > n) {
    return nestcl_set_error(NESTCL_EINVAL, "perfmodel %s: %d folds for %zu points (need 2 <= folds <= points)",
                            m->name, folds, n);
  }
  const size_t I = (size_t)m->n_inputs;
  double *tx = malloc(n * I * sizeof *tx), *ty = malloc(n * sizeof *ty), *pred = malloc(n * sizeof *pred);
  if (!tx || !ty || !pred) {
    free(tx);
    free(ty);
    free(pred);
    return nestcl_set_error(NESTCL_ENOMEM, "perfmodel: out of memory");
  }
  for (int f = 0; f < folds && !rc; ++f) {
    size_t nt = 0;
    for (size_t k = 0; k < n; ++k) {
      if ((int)(k % (size_t)folds) != f) {
        memcpy(tx + nt * I, x + k * I, I * sizeof *tx);
        ty[nt++] = y[k];
      }
    }
    nestcl_pm_fit fit;
    rc = nestcl_pm_fit_model(m, tx, ty, nt, p0, max_iter, &fit);
    for (size_t k = (size_t)f; !rc && k < n; k += (size_t)folds) {
      pred[k] = m->f(fit.p, x + k * I, m->ctx);
    }
  }
  if (!rc) {
    double mean = 0.0, ss_tot = 0.0, ss_res = 0.0;
    for (size_t k = 0; k < n; ++k) {
      mean += y[k];
    }
    mean /= (double)n;
    for (size_t k = 0; k < n; ++k) {
      ss_res += (pred[k] - y[k]) * (pred[k] - y[k]);
      ss_tot += (y[k] - mean) * (y[k] - mean);
    }
    *r2 = ss_tot > 0.0 ? 1.0 - ss_res / ss_tot : -INFINITY;
  }
  free(tx);
  free(ty);
  free(pred);
  return rc;
}
