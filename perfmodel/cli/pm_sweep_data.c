/*
 * Sweep lines into observations and a fitted profile (pm_sweep_data.h): the
 * inputs of each nestcl-sweep/1 line, its measured wall and phase times per
 * simulated second, the rate table of the network per synapse mix.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "nestcl/engine.h"
#include "nestcl/pm_json.h"
#include "pm_sweep_data.h"

static double num_or_nan(const pmj *v, const char *path)
{
  const pmj *x = pmj_path(v, path);
  return x && x->type == PMJ_NUMBER ? x->num : NAN;
}

/* One line's inputs and measured times (*ok cleared when a required number is missing). */
static void read_run(const pmj *v, run_rec *r, int *ok)
{
  memset(r, 0, sizeof *r);
  r->c.N = pmj_number(v, "inputs.N", ok);
  r->c.K = pmj_number(v, "inputs.K", ok);
  r->c.F = pmj_number(v, "inputs.F", ok);
  r->c.M = pmj_number(v, "inputs.M", ok);
  r->c.TC = pmj_number(v, "inputs.TC", ok);
  r->c.TG = pmj_number(v, "inputs.TG", ok);
  r->c.alpha = pmj_number(v, "inputs.alpha", ok);
  r->c.phi = pmj_number(v, "inputs.phi", ok);
  r->c.S = pmj_number(v, "inputs.super_steps_per_s", ok);
  r->c.P = pmj_number(v, "cores", ok);
  r->scale = pmj_number(v, "scale", ok);
  r->t = pmj_number(v, "measured.t", ok);
  r->cu = num_or_nan(v, "measured.cpu_update");
  r->cd = num_or_nan(v, "measured.cpu_deliver");
  r->gu = num_or_nan(v, "measured.gpu_update");
  r->gd = num_or_nan(v, "measured.gpu_deliver");
  r->exch = num_or_nan(v, "measured.exchange");
  r->wait = num_or_nan(v, "measured.wait");
}

static void merge_repeats(sweep_data *d);

/* Reads the JSON lines of one or more sweep files; every line must be of one device, driver and benchmark. */
int pm_read_sweeps(char **files, int n_files, sweep_data *d)
{
  memset(d, 0, sizeof *d);
  for (int fi = 0; fi < n_files; ++fi) {
    FILE *f = fopen(files[fi], "r");
    if (!f) {
      fprintf(stderr, "error: cannot open %s: %s\n", files[fi], strerror(errno));
      return CLI_USAGE;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long lineno = 0;
    int code = CLI_OK;
    while ((len = getline(&line, &cap, f)) >= 0) {
      lineno++;
      if (len == 0 || (len == 1 && line[0] == '\n'))
        continue;
      char err[256];
      pmj *v = pmj_parse(line, (size_t)len, err, sizeof err);
      if (!v) {
        fprintf(stderr, "error: %s:%ld: not a sweep line: %s\n", files[fi], lineno, err);
        code = CLI_USAGE;
        break;
      }
      const char *schema = pmj_string(v, "schema"), *dn = pmj_string(v, "device_name"),
                 *dd = pmj_string(v, "device_driver"), *bm = pmj_string(v, "benchmark"),
                 *syn = pmj_string(v, "synapse");
      int ok = 1;
      run_rec r;
      read_run(v, &r, &ok);
      r.stdp = syn && strcmp(syn, "stdp") == 0;
      if (!schema || strcmp(schema, "nestcl-sweep/1") != 0 || !dn || !dd || !bm || !syn || !ok || !(r.t > 0) ||
          !(r.c.N > 0) || r.c.TC < 0 || r.c.TG < 0 || r.c.TC + r.c.TG < 1 || !(r.c.P >= 1) ||
          !(r.c.alpha >= 0 && r.c.alpha <= 1) || !(r.c.M >= 1)) {
        fprintf(stderr, "error: %s:%ld: not a nestcl-sweep/1 line with valid inputs and a measured time\n", files[fi],
                lineno);
        pmj_free(v);
        code = CLI_USAGE;
        break;
      }
      if (d->n == 0) {
        snprintf(d->device_name, sizeof d->device_name, "%s", dn);
        snprintf(d->device_driver, sizeof d->device_driver, "%s", dd);
        snprintf(d->benchmark, sizeof d->benchmark, "%s", bm);
        d->cores = (int)r.c.P;
        const char *host = pmj_string(v, "host");
        snprintf(d->host, sizeof d->host, "%s", host ? host : "");
      } else if (strcmp(d->device_name, dn) != 0 || strcmp(d->device_driver, dd) != 0 ||
                 strcmp(d->benchmark, bm) != 0 || d->cores != (int)r.c.P) {
        fprintf(stderr,
                "error: %s:%ld: a run of %s on '%s' (%s, %d cores) among runs of %s on '%s' (%s, %d cores): "
                "a profile describes one device on one host\n",
                files[fi], lineno, bm, dn, dd, (int)r.c.P, d->benchmark, d->device_name, d->device_driver, d->cores);
        pmj_free(v);
        code = CLI_USAGE;
        break;
      }
      pmj_free(v);
      /* A sweep's ranks all run on its one host: each rank has its share of the cores. */
      r.c.P /= r.c.M;
      if (d->n == d->cap) {
        size_t nc = d->cap ? 2 * d->cap : 64;
        run_rec *t = realloc(d->runs, nc * sizeof *t);
        if (!t) {
          fprintf(stderr, "error: out of host memory\n");
          code = CLI_RUNTIME;
          break;
        }
        d->runs = t;
        d->cap = nc;
      }
      d->runs[d->n++] = r;
    }
    free(line);
    fclose(f);
    if (code) {
      free(d->runs);
      d->runs = NULL;
      return code;
    }
  }
  if (d->n == 0) {
    fprintf(stderr, "error: the sweep files hold no runs\n");
    return CLI_USAGE;
  }
  merge_repeats(d);
  return CLI_OK;
}

double pm_median(double *v, size_t n)
{
  size_t m = 0;
  for (size_t i = 0; i < n; ++i) {
    if (isfinite(v[i]))
      v[m++] = v[i];
  }
  if (m == 0)
    return NAN;
  for (size_t i = 1; i < m; ++i) {
    for (size_t k = i; k > 0 && v[k - 1] > v[k]; --k) {
      double t = v[k];
      v[k] = v[k - 1];
      v[k - 1] = t;
    }
  }
  return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

static int same_config(const run_rec *a, const run_rec *b)
{
  return a->scale == b->scale && a->stdp == b->stdp && a->c.TC == b->c.TC && a->c.TG == b->c.TG && a->c.M == b->c.M &&
    fabs(a->c.alpha - b->c.alpha) < 1e-9 && a->c.N == b->c.N;
}

/*
 * Repeats of one configuration become one run of medians (time, phases,
 * rate): the machines are noisy, and a median is what a user's choice should
 * rest on. The merged runs keep the order of their first occurrence.
 */
static void merge_repeats(sweep_data *d)
{
  double *buf = malloc((d->n ? d->n : 1) * 8 * sizeof *buf);
  char *used = calloc(d->n ? d->n : 1, 1);
  if (!buf || !used) {
    free(buf);
    free(used);
    return;
  }
  size_t out = 0;
  for (size_t i = 0; i < d->n; ++i) {
    if (used[i])
      continue;
    size_t m = 0;
    double *v[8];
    for (int k = 0; k < 8; ++k)
      v[k] = buf + (size_t)k * d->n;
    for (size_t j = i; j < d->n; ++j) {
      if (used[j] || !same_config(&d->runs[i], &d->runs[j]))
        continue;
      used[j] = 1;
      const run_rec *r = &d->runs[j];
      v[0][m] = r->t;
      v[1][m] = r->cu;
      v[2][m] = r->cd;
      v[3][m] = r->gu;
      v[4][m] = r->gd;
      v[5][m] = r->exch;
      v[6][m] = r->wait;
      v[7][m] = r->c.F;
      m++;
    }
    run_rec r = d->runs[i];
    r.t = pm_median(v[0], m);
    r.cu = pm_median(v[1], m);
    r.cd = pm_median(v[2], m);
    r.gu = pm_median(v[3], m);
    r.gd = pm_median(v[4], m);
    r.exch = pm_median(v[5], m);
    r.wait = pm_median(v[6], m);
    r.c.F = pm_median(v[7], m);
    r.repeats = (int)m;
    d->runs[out++] = r;
  }
  d->n = out;
  free(buf);
  free(used);
}

int pm_is_cpu_only(const nestcl_pm_config *c)
{
  return c->TG <= 0 || (c->TC > 0 && c->alpha <= 0);
}
int pm_is_gpu_only(const nestcl_pm_config *c)
{
  return c->TC <= 0 || c->alpha >= 1;
}

/* Observations: the wall time of every run, and the phase times of single-kind runs. run_of_obs maps back. */
static nestcl_pm_obs *make_obs(const sweep_data *d, size_t *n_obs, size_t **run_of_obs)
{
  nestcl_pm_obs *o = malloc(d->n * 3 * sizeof *o);
  size_t *map = malloc(d->n * 3 * sizeof *map);
  if (!o || !map) {
    free(o);
    free(map);
    return NULL;
  }
  size_t n = 0;
  for (size_t i = 0; i < d->n; ++i) {
    const run_rec *r = &d->runs[i];
    nestcl_pm_obs b = {r->c, NESTCL_PM_WALL, r->t, (int)i};
    map[n] = i;
    o[n++] = b;
    if (pm_is_cpu_only(&r->c) && isfinite(r->cu) && isfinite(r->cd)) {
      b.out = NESTCL_PM_CPU_UPDATE;
      b.y = r->cu;
      map[n] = i;
      o[n++] = b;
      b.out = NESTCL_PM_CPU_DELIVER;
      b.y = r->cd;
      map[n] = i;
      o[n++] = b;
    } else if (pm_is_gpu_only(&r->c) && isfinite(r->gu) && isfinite(r->gd)) {
      b.out = NESTCL_PM_GPU_UPDATE;
      b.y = r->gu;
      map[n] = i;
      o[n++] = b;
      b.out = NESTCL_PM_GPU_DELIVER;
      b.y = r->gd;
      map[n] = i;
      o[n++] = b;
    }
  }
  *n_obs = n;
  *run_of_obs = map;
  return o;
}

int pm_cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The rate against N per synapse mix: the median over the runs of each size. */
static void rate_tables(const sweep_data *d, nestcl_pm_profile *p)
{
  for (int s = 0; s < 2; ++s) {
    nestcl_pm_rate_table *t = s ? &p->rate_stdp : &p->rate_static;
    t->n = 0;
    double Ns[NESTCL_PM_RATE_POINTS];
    int nN = 0;
    for (size_t i = 0; i < d->n; ++i) {
      if (d->runs[i].stdp != s)
        continue;
      int seen = 0;
      for (int k = 0; k < nN; ++k)
        seen |= Ns[k] == d->runs[i].c.N;
      if (!seen && nN < NESTCL_PM_RATE_POINTS)
        Ns[nN++] = d->runs[i].c.N;
    }
    qsort(Ns, (size_t)nN, sizeof *Ns, pm_cmp_double);
    double *f = malloc((d->n ? d->n : 1) * sizeof *f);
    if (!f)
      return;
    for (int k = 0; k < nN; ++k) {
      size_t m = 0;
      for (size_t i = 0; i < d->n; ++i) {
        if (d->runs[i].stdp == s && d->runs[i].c.N == Ns[k])
          f[m++] = d->runs[i].c.F;
      }
      qsort(f, m, sizeof *f, pm_cmp_double);
      t->N[t->n] = Ns[k];
      t->F[t->n++] = m % 2 ? f[m / 2] : 0.5 * (f[m / 2 - 1] + f[m / 2]);
    }
    free(f);
  }
}

/* Fits a profile to the sweep; run_pred (NULL or d->n values) gets each run's held-out wall prediction. */
int pm_fit_sweep(const sweep_data *d, int folds, nestcl_pm_profile *prof, double *run_pred)
{
  memset(prof, 0, sizeof *prof);
  snprintf(prof->device_name, sizeof prof->device_name, "%s", d->device_name);
  snprintf(prof->device_driver, sizeof prof->device_driver, "%s", d->device_driver);
  snprintf(prof->benchmark, sizeof prof->benchmark, "%s", d->benchmark);
  prof->cores = d->cores;
  prof->created = (double)time(NULL);
  snprintf(prof->machine, sizeof prof->machine, "%s", d->host);
  rate_tables(d, prof);
  size_t n_obs, *map = NULL;
  nestcl_pm_obs *obs = make_obs(d, &n_obs, &map);
  double *held = obs ? malloc(n_obs * sizeof *held) : NULL;
  if (!obs || !held) {
    free(obs);
    free(map);
    fprintf(stderr, "error: out of host memory\n");
    return CLI_RUNTIME;
  }
  int rc = nestcl_pm_fit_profile(obs, n_obs, folds, prof, held);
  if (!rc && run_pred) {
    for (size_t i = 0; i < d->n; ++i)
      run_pred[i] = NAN;
    for (size_t k = 0; k < n_obs; ++k) {
      if (obs[k].out == NESTCL_PM_WALL)
        run_pred[map[k]] = held[k];
    }
  }
  free(obs);
  free(map);
  free(held);
  if (rc) {
    fprintf(stderr, "error: %s\n", nestcl_last_error());
    return rc == NESTCL_EINVAL ? CLI_USAGE : CLI_RUNTIME;
  }
  return CLI_OK;
}


int pm_fit_files(char **files, int n_files, int folds, nestcl_pm_profile *prof)
{
  sweep_data d;
  int code = pm_read_sweeps(files, n_files, &d);
  if (code)
    return code;
  code = pm_fit_sweep(&d, folds, prof, NULL);
  free(d.runs);
  return code;
}
