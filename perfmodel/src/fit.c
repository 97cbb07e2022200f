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
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_multifit_nlinear.h>

#include "nestcl/device.h"
#include "nestcl/perfmodel.h"

typedef struct fit_data {
  const nestcl_pm_model *m;
  const double *x, *y;
  size_t n;
  int bad; /* the model gave a non-finite value */
  double cost[16]; /* the cost of the last 16 iterations (ring) */
  size_t iter;
} fit_data;

static void track_cost(const size_t iter, void *params, const gsl_multifit_nlinear_workspace *w)
{
  fit_data *d = params;
  gsl_vector *f = gsl_multifit_nlinear_residual(w);
  double c;
  gsl_blas_ddot(f, f, &c);
  d->cost[iter % 16] = c;
  d->iter = iter;
}

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

/* The parameter a singular design left undetermined in this thread's last fit (-1: none). */
static _Thread_local int last_singular = -1;

int nestcl_pm_singular_param(void)
{
  return last_singular;
}

/* The Jacobian at p by forward differences (relative step 1e-7), and the residuals f(p) - y. */
static int jacobian(const nestcl_pm_model *m, const double *x, const double *y, size_t n, const double *p,
                    gsl_matrix *J, gsl_vector *f)
{
  const size_t P = (size_t)m->n_params, I = (size_t)m->n_inputs;
  double pp[NESTCL_PM_MAX_PARAMS];
  memcpy(pp, p, P * sizeof *pp);
  for (size_t k = 0; k < n; ++k) {
    double f0 = m->f(pp, x + k * I, m->ctx);
    if (!isfinite(f0))
      return -1;
    gsl_vector_set(f, k, f0 - y[k]);
    for (size_t j = 0; j < P; ++j) {
      double keep = pp[j], h = 1e-7 * (fabs(keep) > 0 ? fabs(keep) : 1.0);
      pp[j] = keep + h;
      double g = (m->f(pp, x + k * I, m->ctx) - f0) / h;
      pp[j] = keep;
      if (!isfinite(g))
        return -1;
      gsl_matrix_set(J, k, j, g);
    }
  }
  return 0;
}

/* GSL's workspaces of one fit, allocated and freed together. */
typedef struct fit_ws {
  gsl_multifit_nlinear_workspace *w; /* nonlinear models */
  gsl_multifit_linear_workspace *lw; /* linear models */
  gsl_vector *p, *res, *dp, *sv, *work;
  gsl_matrix *cov, *jt, *Jl, *v;
} fit_ws;

static int ws_alloc(fit_ws *s, const nestcl_pm_model *m, size_t n, size_t P)
{
  gsl_multifit_nlinear_parameters prm = gsl_multifit_nlinear_default_parameters();
  prm.solver = gsl_multifit_nlinear_solver_svd;
  prm.scale = gsl_multifit_nlinear_scale_more;
  s->w = m->linear ? NULL : gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &prm, n, P);
  s->lw = m->linear ? gsl_multifit_linear_alloc(n, P) : NULL;
  s->p = gsl_vector_alloc(P);
  s->res = gsl_vector_alloc(n);
  s->dp = gsl_vector_alloc(P);
  s->cov = gsl_matrix_alloc(P, P);
  s->jt = gsl_matrix_alloc(n, P);
  s->Jl = gsl_matrix_alloc(n, P);
  s->sv = gsl_vector_alloc(P);
  s->work = gsl_vector_alloc(P);
  s->v = gsl_matrix_alloc(P, P);
  if ((!s->w && !s->lw) || !s->p || !s->res || !s->dp || !s->cov || !s->jt || !s->Jl || !s->sv || !s->work || !s->v)
    return nestcl_set_error(NESTCL_ENOMEM, "perfmodel: out of memory");
  return 0;
}

static void ws_free(fit_ws *s)
{
  if (s->w)
    gsl_multifit_nlinear_free(s->w);
  if (s->lw)
    gsl_multifit_linear_free(s->lw);
  gsl_vector_free(s->p);
  gsl_vector_free(s->res);
  gsl_vector_free(s->dp);
  gsl_matrix_free(s->cov);
  gsl_matrix_free(s->jt);
  gsl_matrix_free(s->Jl);
  gsl_vector_free(s->sv);
  gsl_vector_free(s->work);
  gsl_matrix_free(s->v);
}

/*
 * Linear in its parameters: the least-squares solution directly (SVD of the
 * Jacobian, which differences give exactly), not by iterations that would
 * crawl through an ill-conditioned valley. Leaves the solution in s->p and the
 * Jacobian and residuals there in *J and *f.
 */
static int fit_linear(const nestcl_pm_model *m, const double *x, const double *y, size_t n, const double *p0, fit_ws *s,
                      gsl_matrix **J, gsl_vector **f)
{
  const size_t P = (size_t)m->n_params;
  if (jacobian(m, x, y, n, p0, s->Jl, s->res) != 0)
    return nestcl_set_error(NESTCL_EINVAL,
                            "perfmodel %s: the model gave a non-finite value (check the inputs and "
                            "the starting parameters)",
                            m->name);
  gsl_vector_scale(s->res, -1.0);
  double chisq0;
  size_t rank;
  gsl_multifit_linear_tsvd(s->Jl, s->res, 1e-14, s->dp, s->cov, &chisq0, &rank, s->lw);
  for (size_t j = 0; j < P; ++j) {
    gsl_vector_set(s->p, j, p0[j] + gsl_vector_get(s->dp, j));
  }
  if (jacobian(m, x, y, n, s->p->data, s->Jl, s->res) != 0)
    return nestcl_set_error(NESTCL_EINVAL, "perfmodel %s: the model gave a non-finite value at the solution", m->name);
  *J = s->Jl;
  *f = s->res;
  return 0;
}

/* GSL's trust-region solver from p0; the same outputs as fit_linear, and the iterations it took. */
static int fit_nonlinear(const nestcl_pm_model *m, const double *p0, int max_iter, fit_data *d,
                         gsl_multifit_nlinear_fdf *fdf, fit_ws *s, gsl_matrix **J, gsl_vector **f, size_t *iters_done)
{
  const size_t P = (size_t)m->n_params;
  for (size_t j = 0; j < P; ++j) {
    gsl_vector_set(s->p, j, p0[j]);
  }
  gsl_multifit_nlinear_init(s->p, fdf, s->w);
  int info = 0;
  int iters = max_iter > 0 ? max_iter : 200;
  int status = gsl_multifit_nlinear_driver((size_t)iters, 1e-10, 1e-10, 1e-14, track_cost, d, &info, s->w);
  *iters_done = gsl_multifit_nlinear_niter(s->w);
  /*
   * The step tests never pass while a parameter crawls along a nearly flat
   * direction: when the cost has not changed in ten iterations, the fit has
   * converged; the rank test below still refuses a direction that is flat.
   */
  if (status == GSL_EMAXITER && d->iter >= 20) {
    double now = d->cost[d->iter % 16], before = d->cost[(d->iter - 10) % 16];
    if (fabs(before - now) <= 1e-9 * now) {
      status = GSL_SUCCESS;
    }
  }
  if (d->bad)
    return nestcl_set_error(NESTCL_EINVAL,
                            "perfmodel %s: the model gave a non-finite value during the fit (check "
                            "the inputs and the starting parameters)",
                            m->name);
  if (status != GSL_SUCCESS)
    return nestcl_set_error(NESTCL_EINVAL, "perfmodel %s: the fit did not converge in %zu iterations (%s)", m->name,
                            *iters_done, gsl_strerror(status));
  *J = gsl_multifit_nlinear_jac(s->w);
  *f = gsl_multifit_nlinear_residual(s->w);
  gsl_vector_memcpy(s->p, gsl_multifit_nlinear_position(s->w));
  return 0;
}

/* Every parameter determined: the Jacobian at the solution has full rank (columns scaled to unit norm). */
static int check_rank(const nestcl_pm_model *m, const gsl_matrix *J, fit_ws *s)
{
  const size_t P = (size_t)m->n_params;
  gsl_matrix_memcpy(s->jt, J);
  for (size_t j = 0; j < P; ++j) {
    gsl_vector_view c = gsl_matrix_column(s->jt, j);
    double nrm = gsl_blas_dnrm2(&c.vector);
    if (nrm > 0.0)
      gsl_vector_scale(&c.vector, 1.0 / nrm);
  }
  if (gsl_linalg_SV_decomp(s->jt, s->v, s->sv, s->work) != GSL_SUCCESS)
    return nestcl_set_error(NESTCL_ERUNTIME, "perfmodel %s: the SVD of the Jacobian failed", m->name);
  double smax = gsl_vector_get(s->sv, 0), smin = gsl_vector_get(s->sv, P - 1);
  if (!(smax > 0.0) || smin <= smax * 1e-10) {
    /* The parameter that weighs most in the null direction. */
    size_t worst = 0;
    for (size_t j = 1; j < P; ++j) {
      worst = fabs(gsl_matrix_get(s->v, j, P - 1)) > fabs(gsl_matrix_get(s->v, worst, P - 1)) ? j : worst;
    }
    last_singular = (int)worst;
    return nestcl_set_error(NESTCL_EINVAL,
                            "perfmodel %s: a singular design: the points do not determine parameter %s "
                            "(vary the inputs it depends on)",
                            m->name, m->param_names ? m->param_names[worst] : "?");
  }
  return 0;
}

/* The fit's parameters, their standard errors, RMSE and R^2 into out. */
static void write_fit(const nestcl_pm_model *m, const double *x, const double *y, size_t n, const gsl_matrix *J,
                      const gsl_vector *f, fit_ws *s, size_t iters_done, nestcl_pm_fit *out)
{
  const size_t P = (size_t)m->n_params;
  gsl_multifit_nlinear_covar(J, 0.0, s->cov);
  double chisq;
  gsl_blas_ddot(f, f, &chisq);
  double dof = (double)(n - P);
  memset(out, 0, sizeof *out);
  for (size_t j = 0; j < P; ++j) {
    out->p[j] = gsl_vector_get(s->p, j);
    out->se[j] = sqrt(gsl_matrix_get(s->cov, j, j) * chisq / dof);
  }
  out->rmse = sqrt(chisq / (double)n);
  out->iterations = (int)iters_done;
  out->r2 = nestcl_pm_r2(m, out->p, x, y, n);
}

static int fit_core(const nestcl_pm_model *m, const double *x, const double *y, size_t n, const double *p0,
                    int max_iter, nestcl_pm_fit *out)
{
  int rc = check_args(m, x, y, n, p0);
  if (rc) {
    return rc;
  }
  gsl_set_error_handler_off();
  fit_data d;
  memset(&d, 0, sizeof d);
  d.m = m;
  d.x = x;
  d.y = y;
  d.n = n;
  gsl_multifit_nlinear_fdf fdf;
  memset(&fdf, 0, sizeof fdf);
  fdf.f = residuals;
  fdf.df = NULL; /* finite differences */
  fdf.n = n;
  fdf.p = (size_t)m->n_params;
  fdf.params = &d;
  fit_ws s;
  memset(&s, 0, sizeof s);
  gsl_matrix *J = NULL;
  gsl_vector *f = NULL;
  size_t iters_done = 1; /* a linear model's one solve */
  rc = ws_alloc(&s, m, n, (size_t)m->n_params);
  if (!rc)
    rc = m->linear ? fit_linear(m, x, y, n, p0, &s, &J, &f)
                   : fit_nonlinear(m, p0, max_iter, &d, &fdf, &s, &J, &f, &iters_done);
  if (!rc)
    rc = check_rank(m, J, &s);
  if (!rc)
    write_fit(m, x, y, n, J, f, &s, iters_done, out);
  ws_free(&s);
  return rc;
}

/* A model with some parameters held at 0: the free ones mapped into the full vector. */
typedef struct held_ctx {
  const nestcl_pm_model *m;
  int free_idx[NESTCL_PM_MAX_PARAMS];
  int n_free;
} held_ctx;

static double held_f(const double *q, const double *x, void *ctx)
{
  const held_ctx *h = ctx;
  double p[NESTCL_PM_MAX_PARAMS] = {0};
  for (int i = 0; i < h->n_free; ++i) {
    p[h->free_idx[i]] = q[i];
  }
  return h->m->f(p, x, h->m->ctx);
}

int nestcl_pm_fit_model(const nestcl_pm_model *m, const double *x, const double *y, size_t n, const double *p0,
                        int max_iter, nestcl_pm_fit *out)
{
  last_singular = -1;
  if (!m || !m->nonneg) {
    return fit_core(m, x, y, n, p0, max_iter, out);
  }
  int rc = check_args(m, x, y, n, p0);
  if (rc) {
    return rc;
  }
  int zero[NESTCL_PM_MAX_PARAMS] = {0};
  const int P = m->n_params;
  for (;;) {
    held_ctx h = {m, {0}, 0};
    const char *names[NESTCL_PM_MAX_PARAMS];
    double q0[NESTCL_PM_MAX_PARAMS];
    for (int j = 0; j < P; ++j) {
      if (!zero[j]) {
        names[h.n_free] = m->param_names ? m->param_names[j] : "?";
        q0[h.n_free] = p0[j] > 0.0 ? p0[j] : 1e-9;
        h.free_idx[h.n_free++] = j;
      }
    }
    if (h.n_free == 0) {
      return nestcl_set_error(NESTCL_EINVAL,
                              "perfmodel %s: every parameter went negative; the data do not fit this "
                              "model",
                              m->name);
    }
    nestcl_pm_model r = {m->name, h.n_free, names, m->n_inputs, held_f, &h, 0, m->linear};
    nestcl_pm_fit fr;
    rc = fit_core(&r, x, y, n, q0, max_iter, &fr);
    if (rc) {
      if (last_singular >= 0) {
        last_singular = h.free_idx[last_singular];
      }
      return rc;
    }
    /* The most negative, measured in standard errors. */
    int worst = -1;
    double wz = 0.0;
    for (int i = 0; i < h.n_free; ++i) {
      if (fr.p[i] < 0.0) {
        double z = fr.se[i] > 0.0 ? fr.p[i] / fr.se[i] : -INFINITY;
        if (worst < 0 || z < wz) {
          worst = i;
          wz = z;
        }
      }
    }
    if (worst >= 0) {
      zero[h.free_idx[worst]] = 1;
      continue;
    }
    memset(out, 0, sizeof *out);
    for (int i = 0; i < h.n_free; ++i) {
      out->p[h.free_idx[i]] = fr.p[i];
      out->se[h.free_idx[i]] = fr.se[i];
    }
    for (int j = 0; j < P; ++j) {
      out->at_zero[j] = zero[j];
    }
    out->rmse = fr.rmse;
    out->iterations = fr.iterations;
    out->r2 = nestcl_pm_r2(m, out->p, x, y, n);
    return 0;
  }
}

int nestcl_pm_cross_validate(const nestcl_pm_model *m, const double *x, const double *y, size_t n, int folds,
                             const double *p0, int max_iter, double *r2)
{
  return nestcl_pm_cross_validate_groups(m, x, y, n, NULL, NULL, folds, p0, max_iter, r2, NULL);
}

int nestcl_pm_cross_validate_groups(const nestcl_pm_model *m, const double *x, const double *y, size_t n,
                                    const int *group, const int *scored, int folds, const double *p0, int max_iter,
                                    double *r2, double *held_out)
{
  int rc = check_args(m, x, y, n, p0);
  if (rc) {
    return rc;
  }
  if (folds < 2 || (size_t)folds > n) {
    return nestcl_set_error(NESTCL_EINVAL, "perfmodel %s: %d folds for %zu points (need 2 <= folds <= points)", m->name,
                            folds, n);
  }
  const size_t I = (size_t)m->n_inputs;
  double *tx = malloc(n * I * sizeof *tx), *ty = malloc(n * sizeof *ty), *pred = malloc(n * sizeof *pred);
  if (!tx || !ty || !pred) {
    free(tx);
    free(ty);
    free(pred);
    return nestcl_set_error(NESTCL_ENOMEM, "perfmodel: out of memory");
  }
#define FOLD(k) ((int)((size_t)(group ? (size_t)group[k] : (k)) % (size_t)folds))
  for (int f = 0; f < folds && !rc; ++f) {
    size_t nt = 0, nh = 0;
    for (size_t k = 0; k < n; ++k) {
      if (FOLD(k) != f) {
        memcpy(tx + nt * I, x + k * I, I * sizeof *tx);
        ty[nt++] = y[k];
      } else {
        nh++;
      }
    }
    if (nh == 0) {
      continue;
    }
    nestcl_pm_fit fit;
    rc = nestcl_pm_fit_model(m, tx, ty, nt, p0, max_iter, &fit);
    for (size_t k = 0; !rc && k < n; ++k) {
      if (FOLD(k) == f) {
        pred[k] = m->f(fit.p, x + k * I, m->ctx);
      }
    }
  }
#undef FOLD
  if (!rc) {
    double mean = 0.0, ss_tot = 0.0, ss_res = 0.0;
    size_t ns = 0;
    for (size_t k = 0; k < n; ++k) {
      if (!scored || scored[k]) {
        mean += y[k];
        ns++;
      }
    }
    mean /= (double)(ns ? ns : 1);
    for (size_t k = 0; k < n; ++k) {
      if (!scored || scored[k]) {
        ss_res += (pred[k] - y[k]) * (pred[k] - y[k]);
        ss_tot += (y[k] - mean) * (y[k] - mean);
      }
    }
    *r2 = ss_tot > 0.0 ? 1.0 - ss_res / ss_tot : -INFINITY;
    if (held_out) {
      memcpy(held_out, pred, n * sizeof *pred);
    }
  }
  free(tx);
  free(ty);
  free(pred);
  return rc;
}
