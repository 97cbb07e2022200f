/*
 * nestcl's performance model (nestcl/pm_model.h), its profiles and the JSON
 * reader, on data generated from known parameters:
 *  - the JSON reader takes strict JSON (escapes, surrogate pairs, numbers)
 *    and refuses what is not, with line and column;
 *  - predictions: single-kind runs, the max of co-execution, the best alpha
 *    against the balance point worked out by hand;
 *  - the three-stage fit recovers the parameters of a sweep generated from
 *    known ones with 3 % noise (the design of `nestcl perfmodel sweep`), with
 *    held-out R^2 > 0.95 per stage, and a cost that is truly 0 held at 0;
 *  - profiles: save and load give the same model; a truncated file, a bad
 *    parameter and another device are refused with their messages.
 * `test_perfmodel_model --write-sweep FILE` writes such a synthetic sweep
 * (for the device this machine selects) for the CLI tests.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nestcl/device.h"
#include "nestcl/pm_json.h"
#include "nestcl/pm_model.h"

#define PM_TEST_SEED 0x2545F4914F6CDD1Dull
#include "pm_test.h"


/* A machine like this one: PoCL-like device (kappa ~ P), costs of the order the sweep measured. */
static void truth(double *p)
{
  memset(p, 0, NESTCL_PM_NP * sizeof *p);
  p[NESTCL_PM_C_UPDATE] = 4.2e-4;
  p[NESTCL_PM_C_STEP] = 2e-4;
  p[NESTCL_PM_C_SPIKE] = 0.0; /* truly 0: must come out >= 0 */
  p[NESTCL_PM_C_EVENT] = 1.6e-9;
  p[NESTCL_PM_C_PLASTIC] = 4.2e-8;
  p[NESTCL_PM_G_UPDATE] = 5.9e-4;
  p[NESTCL_PM_G_STEP] = 2e-3;
  p[NESTCL_PM_G_LAUNCH] = 4e-4;
  p[NESTCL_PM_G_DLAUNCH] = 3e-4;
  p[NESTCL_PM_G_SPIKE] = 2e-6;
  p[NESTCL_PM_G_EVENT] = 1.5e-9;
  p[NESTCL_PM_G_PLASTIC] = 2.05e-8;
  p[NESTCL_PM_S_STEP] = 1e-4;
  p[NESTCL_PM_S_SPIKE] = 5e-7;
  p[NESTCL_PM_KAPPA] = 1.6;
}

typedef struct synth_run {
  nestcl_pm_config c;
  double scale;
  int stdp;
  nestcl_pm_prediction o; /* noisy */
} synth_run;

/* The sweep's default design, each time with multiplicative noise. */
static size_t synth_sweep(const double *p, double noise, synth_run *out)
{
  static const double scales[] = {0.05, 0.1, 0.2, 0.3, 0.5}, alphas[] = {0.1, 0.3, 0.5, 0.7, 0.9};
  size_t n = 0;
  for (int s = 0; s < 5; ++s) {
    for (int stdp = 1; stdp >= 0; --stdp) {
      for (int t = 0; t <= 2; ++t) {
        for (int g = 0; g <= 3; ++g) {
          if (t + g == 0)
            continue;
          int co = t > 0 && g > 0;
          if (co && !stdp)
            continue;
          for (int a = 0; a < (co ? 5 : 1); ++a) {
            synth_run r;
            memset(&r, 0, sizeof r);
            r.scale = scales[s];
            r.stdp = stdp;
            r.c.N = floor(9000 * scales[s]) + floor(2250 * scales[s]);
            r.c.K = 11250;
            r.c.F = (stdp ? 14.0 : 17.0) + 20.0 * exp(-scales[s] / 0.1);
            r.c.M = 1;
            r.c.TC = t;
            r.c.TG = g;
            r.c.alpha = co ? alphas[a] : (t ? 0.0 : 1.0);
            r.c.phi = stdp ? 0.64 : 0.0;
            r.c.S = 1000.0 / 1.5;
            r.c.P = 2;
            nestcl_pm_predict(p, &r.c, &r.o);
            double *v[] = {&r.o.wall, &r.o.cpu_update, &r.o.cpu_deliver, &r.o.gpu_update, &r.o.gpu_deliver};
            for (int k = 0; k < 5; ++k)
              *v[k] *= 1.0 + noise * gauss();
            out[n++] = r;
          }
        }
      }
    }
  }
  return n;
}

static size_t to_obs(const synth_run *r, size_t n, nestcl_pm_obs *o)
{
  size_t m = 0;
  for (size_t i = 0; i < n; ++i) {
    nestcl_pm_obs b = {r[i].c, NESTCL_PM_WALL, r[i].o.wall, (int)i};
    o[m++] = b;
    if (r[i].c.TG == 0) {
      b.out = NESTCL_PM_CPU_UPDATE;
      b.y = r[i].o.cpu_update;
      o[m++] = b;
      b.out = NESTCL_PM_CPU_DELIVER;
      b.y = r[i].o.cpu_deliver;
      o[m++] = b;
    } else if (r[i].c.TC == 0) {
      b.out = NESTCL_PM_GPU_UPDATE;
      b.y = r[i].o.gpu_update;
      o[m++] = b;
      b.out = NESTCL_PM_GPU_DELIVER;
      b.y = r[i].o.gpu_deliver;
      o[m++] = b;
    }
  }
  return m;
}

static int write_sweep(const char *path)
{
  nestcl_device_info dev;
  if (nestcl_select_device(NULL, &dev) != 0) {
    fprintf(stderr, "error: %s\n", nestcl_last_error());
    return 1;
  }
  double p[NESTCL_PM_NP];
  truth(p);
  synth_run *r = malloc(400 * sizeof *r);
  size_t n = synth_sweep(p, 0.03, r);
  FILE *f = fopen(path, "w");
  if (!f)
    return 1;
  for (size_t i = 0; i < n; ++i) {
    const nestcl_pm_config *c = &r[i].c;
    const nestcl_pm_prediction *o = &r[i].o;
    fprintf(f,
            "{\"schema\": \"nestcl-sweep/1\", \"benchmark\": \"hpc_benchmark\", \"device_name\": \"%s\", "
            "\"device_driver\": \"%s\", \"cores\": 2, \"repeat\": 0, \"scale\": %g, \"synapse\": \"%s\", "
            "\"alpha_set\": null, \"inputs\": {\"N\": %.17g, \"K\": %.17g, \"F\": %.17g, \"M\": 1, \"TC\": %d, "
            "\"TG\": %d, \"alpha\": %.17g, \"phi\": %.17g, \"steps_per_s\": 10000, \"super_steps_per_s\": %.17g}, "
            "\"measured\": {\"simtime_ms\": 100, \"wall_s\": %.17g, \"t\": %.17g, ",
            dev.device_name, dev.driver_version, r[i].scale, r[i].stdp ? "stdp" : "static", c->N, c->K, c->F,
            (int)c->TC, (int)c->TG, c->alpha, c->phi, c->S, 0.1 * o->wall, o->wall);
    fprintf(f, "\"cpu_update\": %.17g, \"cpu_deliver\": %.17g, \"gpu_update\": %.17g, \"gpu_deliver\": %.17g, ",
            o->cpu_update, o->cpu_deliver, o->gpu_update, o->gpu_deliver);
    fprintf(f, "\"exchange\": 0.01, \"wait\": 0.1, \"build_s\": 0.5}}\n");
  }
  free(r);
  return fclose(f) != 0;
}

static void test_json(void)
{
  char err[256];
  const char *doc = " {\"a\": {\"b\": [1, -2.5e3, true, null]}, \"s\": \"x\\u00e9\\ud83d\\ude00\\n\", \"e\": {}} ";
  pmj *v = pmj_parse(doc, strlen(doc), err, sizeof err);
  EXPECT(v != NULL, "json: valid document refused: %s", err);
  if (v) {
    const pmj *b = pmj_path(v, "a.b");
    EXPECT(b && b->type == PMJ_ARRAY && b->n == 4 && b->items[1].num == -2500.0 && b->items[2].type == PMJ_BOOL &&
             b->items[3].type == PMJ_NULL,
           "json: array a.b");
    EXPECT(pmj_string(v, "s") && strcmp(pmj_string(v, "s"), "x\xc3\xa9\xf0\x9f\x98\x80\n") == 0, "json: escapes");
    int ok = 1;
    (void)pmj_number(v, "a.nothing", &ok);
    EXPECT(!ok, "json: a missing number is reported");
    pmj_free(v);
  }
  static const struct {
    const char *text, *needle;
  } bad[] = {
    {"{\"a\": 1,}", "expected a member name"},
    {"[1, 2", "expected ',' or ']'"},
    {"01", "trailing characters"},
    {"\"\\ud800\"", "lone high surrogate"},
    {"\"a\tb\"", "control character"},
    {"[1]\n x", "line 2, column 2"},
    {"{\"a\": nul}", "invalid literal"},
    {"", "unexpected end"},
    {"1e999", "out of range"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    v = pmj_parse(bad[i].text, strlen(bad[i].text), err, sizeof err);
    EXPECT(!v && strstr(err, bad[i].needle), "json: '%s' gave '%s', want '%s'", bad[i].text, v ? "(accepted)" : err,
           bad[i].needle);
    pmj_free(v);
  }
  char deep[300];
  for (int i = 0; i < 100; ++i)
    deep[i] = '[';
  for (int i = 0; i < 100; ++i)
    deep[100 + i] = ']';
  v = pmj_parse(deep, 200, err, sizeof err);
  EXPECT(!v && strstr(err, "nesting deeper"), "json: depth bound: %s", v ? "(accepted)" : err);
  pmj_free(v);
}

static void test_predict(void)
{
  double p[NESTCL_PM_NP] = {0};
  /* A CPU VP costs 1e-3 s per neuron, a stream's device 0.5e-3 per neuron plus 0.2 s: nothing else. */
  p[NESTCL_PM_C_UPDATE] = 1e-3;
  p[NESTCL_PM_G_UPDATE] = 0.5e-3;
  p[NESTCL_PM_G_STEP] = 0.2 / (1000.0 / 1.5);
  nestcl_pm_config c = {1000, 100, 10, 1, 1, 1, 0.5, 0, 1000.0 / 1.5, 2};
  nestcl_pm_prediction o;
  nestcl_pm_predict(p, &c, &o);
  EXPECT(fabs(o.cpu_vp - 0.5) < 1e-12 && fabs(o.gpu_vp - 0.45) < 1e-12 && fabs(o.wall - 0.5) < 1e-12 &&
           strcmp(o.bound, "cpu") == 0 && fabs(o.gpu_wait - 0.05) < 1e-12,
         "predict: c %g g %g wall %g bound %s", o.cpu_vp, o.gpu_vp, o.wall, o.bound);
  /* Balance: 1 (1 - a) = 0.5 a + 0.2, a = 0.8 / 1.5. */
  double w, a = nestcl_pm_best_alpha(p, &c, &w);
  EXPECT(fabs(a - 0.8 / 1.5) < 1e-6 && fabs(w - (1 - 0.8 / 1.5)) < 1e-6, "best alpha %g (want %g), wall %g", a,
         0.8 / 1.5, w);
  /* The host's 2 cores shared: the thread's 0.5 s and the device's 2 x 0.45 s of host time take (0.5 + 0.9) / 2. */
  p[NESTCL_PM_KAPPA] = 2.0;
  nestcl_pm_predict(p, &c, &o);
  EXPECT(strcmp(o.bound, "cpu") == 0 && fabs(o.sharing - 0.2) < 1e-12 && fabs(o.wall - 0.7) < 1e-12,
         "shared cores: %s sharing %g wall %g", o.bound, o.sharing, o.wall);
  /* A device that needs little host time (kappa 0.5): (0.5 + 0.225) / 2 < 0.5, the bound does not bind. */
  p[NESTCL_PM_KAPPA] = 0.5;
  nestcl_pm_predict(p, &c, &o);
  EXPECT(o.sharing == 0.0 && fabs(o.wall - 0.5) < 1e-12, "little host time: sharing %g wall %g", o.sharing, o.wall);
  p[NESTCL_PM_KAPPA] = 2.0;
  /* Single kind: no sharing term, alpha forced. */
  c.TC = 0;
  nestcl_pm_predict(p, &c, &o);
  EXPECT(fabs(o.wall - (0.5 + 0.2)) < 1e-12 && o.sharing == 0.0, "GPU only: wall %g", o.wall);
}

static void test_fit(void)
{
  double p[NESTCL_PM_NP];
  truth(p);
  synth_run *r = malloc(400 * sizeof *r);
  nestcl_pm_obs *o = malloc(1200 * sizeof *o);
  size_t n = synth_sweep(p, 0.03, r), m = to_obs(r, n, o);
  nestcl_pm_profile prof;
  memset(&prof, 0, sizeof prof);
  prof.cores = 2;
  double *held = malloc(m * sizeof *held);
  int rc = nestcl_pm_fit_profile(o, m, 5, &prof, held);
  EXPECT(rc == 0, "fit_profile: %s", nestcl_last_error());
  printf("synthetic sweep: %zu runs, R^2 held out: CPU %.4f (%d runs), GPU %.4f (%d), co %.4f (%d)\n", n,
         prof.cpu.r2_cv, prof.cpu.runs, prof.gpu.r2_cv, prof.gpu.runs, prof.co.r2_cv, prof.co.runs);
  EXPECT(prof.cpu.r2_cv > 0.95 && prof.gpu.r2_cv > 0.95 && prof.co.r2_cv > 0.95, "held-out R^2 below 0.95");
  /* The costs that dominate a stage are recovered within 10 %; every parameter is >= 0. */
  static const int main_params[] = {NESTCL_PM_C_UPDATE, NESTCL_PM_C_PLASTIC, NESTCL_PM_G_UPDATE, NESTCL_PM_G_PLASTIC,
                                    NESTCL_PM_KAPPA};
  for (size_t k = 0; k < sizeof main_params / sizeof *main_params; ++k) {
    int j = main_params[k];
    printf("  %-10s %.5g +- %.2g (true %.5g)\n", nestcl_pm_param_names[j], prof.p[j], prof.se[j], p[j]);
    EXPECT(fabs(prof.p[j] - p[j]) < 0.1 * p[j], "%s = %g, true %g", nestcl_pm_param_names[j], prof.p[j], p[j]);
  }
  for (int j = 0; j < NESTCL_PM_NP; ++j) {
    EXPECT(prof.p[j] >= 0.0, "%s = %g is negative", nestcl_pm_param_names[j], prof.p[j]);
  }
  size_t with_pred = 0;
  for (size_t k = 0; k < m; ++k)
    with_pred += o[k].out == NESTCL_PM_WALL && isfinite(held[k]);
  EXPECT(with_pred == n, "held-out predictions for %zu of %zu runs", with_pred, n);
  /* The fitted model picks an alpha as good as the true one. */
  nestcl_pm_config c = r[0].c;
  c.N = 5625;
  c.F = 14;
  c.phi = 0.64;
  c.TC = 1;
  c.TG = 1;
  double wt, wf;
  double at = nestcl_pm_best_alpha(p, &c, &wt), af = nestcl_pm_best_alpha(prof.p, &c, &wf);
  nestcl_pm_config cf = c;
  cf.alpha = af;
  double w_at_af = nestcl_pm_output_value(p, &cf, NESTCL_PM_WALL);
  printf("best alpha: true %.3f, fitted %.3f; true time at the fitted alpha %.4f vs best %.4f\n", at, af, w_at_af, wt);
  EXPECT(w_at_af <= 1.03 * wt, "the fitted alpha costs %g, the best %g", w_at_af, wt);

  /* Profiles: save, load, refuse. */
  char dir[] = "/tmp/nestcl-pm-test-XXXXXX";
  EXPECT(mkdtemp(dir) != NULL, "mkdtemp");
  char path[256];
  snprintf(path, sizeof path, "%s/profile.json", dir);
  snprintf(prof.device_name, sizeof prof.device_name, "Test \"device\"");
  snprintf(prof.device_driver, sizeof prof.device_driver, "1.0");
  snprintf(prof.benchmark, sizeof prof.benchmark, "hpc_benchmark");
  prof.rate_stdp.n = 2;
  prof.rate_stdp.N[0] = 562;
  prof.rate_stdp.F[0] = 34;
  prof.rate_stdp.N[1] = 5625;
  prof.rate_stdp.F[1] = 13;
  EXPECT(nestcl_pm_profile_save(&prof, path) == 0, "save: %s", nestcl_last_error());
  nestcl_pm_profile back;
  rc = nestcl_pm_profile_load(path, "Test \"device\"", "1.0", &back);
  EXPECT(rc == 0, "load: %s", nestcl_last_error());
  for (int j = 0; rc == 0 && j < NESTCL_PM_NP; ++j) {
    EXPECT(back.p[j] == prof.p[j] && back.fitted[j] == prof.fitted[j], "round trip of %s", nestcl_pm_param_names[j]);
  }
  EXPECT(rc == 0 && fabs(nestcl_pm_rate(&back.rate_stdp, 1778.0) - (34.0 + 0.5 * (13.0 - 34.0))) < 0.05,
         "rate between the sizes: %g", nestcl_pm_rate(&back.rate_stdp, 1778.0));
  rc = nestcl_pm_profile_load(path, "another device", "1.0", &back);
  EXPECT(rc == NESTCL_ENODEV && strstr(nestcl_last_error(), "not of 'another device'"), "other device: %d %s", rc,
         nestcl_last_error());
  /* Truncated. */
  FILE *f = fopen(path, "r+");
  if (f) {
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fclose(f);
    EXPECT(truncate(path, len / 2) == 0, "truncate");
  }
  rc = nestcl_pm_profile_load(path, NULL, NULL, &back);
  EXPECT(rc == NESTCL_EINVAL && strstr(nestcl_last_error(), "corrupt profile"), "truncated: %d %s", rc,
         nestcl_last_error());
  /* A negative cost. */
  prof.p[NESTCL_PM_C_UPDATE] = -1.0;
  nestcl_pm_profile_save(&prof, path);
  rc = nestcl_pm_profile_load(path, NULL, NULL, &back);
  EXPECT(rc == NESTCL_EINVAL && strstr(nestcl_last_error(), "c_update"), "negative parameter: %d %s", rc,
         nestcl_last_error());
  remove(path);
  rmdir(dir);

  /* Co-execution runs alone cannot be fitted. */
  size_t k = 0;
  for (size_t i = 0; i < m; ++i) {
    if (o[i].c.TC > 0 && o[i].c.TG > 0)
      o[k++] = o[i];
  }
  rc = nestcl_pm_fit_profile(o, k, 5, &prof, NULL);
  EXPECT(rc == NESTCL_EINVAL && strstr(nestcl_last_error(), "no CPU-only and no GPU-only runs"), "co alone: %d %s", rc,
         nestcl_last_error());
  free(r);
  free(o);
  free(held);
}

/*
 * Rebalancing: a host that differs from the profile by known s and b. The
 * busy times of a middle split alone give s; wall times at several splits
 * give s and b; the proposal is the true best split. Malformed input fails.
 */
static void test_balance(void)
{
  double p[NESTCL_PM_NP], q[NESTCL_PM_NP];
  truth(p);
  nestcl_pm_config c = {11250.0 * 0.5, 11250.0, 15.0, 1.0, 1.0, 1.0, 0.5, 0.0, 10000.0 / 15.0, 2.0};
  const double s_true = 1.6, b_true = 1.3;
  nestcl_pm_balance_params(p, s_true, q);
  double w_true, a_true = nestcl_pm_best_alpha(q, &c, &w_true);
  w_true *= b_true;
  nestcl_pm_measured m[4];
  const double alphas[4] = {0.5, 0.05, 0.95, 0.3};
  for (int i = 0; i < 4; ++i) {
    nestcl_pm_config x = c;
    x.alpha = alphas[i];
    nestcl_pm_prediction o;
    nestcl_pm_predict(q, &x, &o);
    m[i].alpha = alphas[i];
    m[i].wall = b_true * o.wall;
    m[i].cpu_busy = o.cpu_vp;
    m[i].gpu_busy = o.gpu_vp;
  }
  nestcl_pm_balance bal;
  int rc = nestcl_pm_balance_fit(p, &c, m, 1, &bal);
  EXPECT(rc == 0 && fabs(bal.s - s_true) < 1e-3 * s_true && fabs(bal.b - b_true) < 1e-3 * b_true &&
           fabs(bal.alpha - a_true) < 2e-3 && fabs(bal.wall - w_true) < 1e-3 * w_true,
         "balance from one middle split: s %g b %g alpha %g wall %g (want %g %g %g %g)", bal.s, bal.b, bal.alpha,
         bal.wall, s_true, b_true, a_true, w_true);
  /* Busy times near the ends say nothing; the wall times of three splits do. */
  for (int i = 1; i < 4; ++i)
    m[i].cpu_busy = m[i].gpu_busy = 0.0;
  m[1].cpu_busy = 9.0; /* ignored: alpha 0.05 is within 0.15 of an end */
  m[1].gpu_busy = 0.1;
  rc = nestcl_pm_balance_fit(p, &c, m + 1, 3, &bal);
  EXPECT(rc == 0 && bal.n_busy == 0 && bal.n_wall == 3 && fabs(bal.s - s_true) < 1e-2 * s_true &&
           fabs(bal.alpha - a_true) < 1e-2,
         "balance from wall times: busy %d, s %g alpha %g (want %g %g)", bal.n_busy, bal.s, bal.alpha, s_true, a_true);
  /* One wall time and no busy ratio: the profile's own balance, scaled. */
  rc = nestcl_pm_balance_fit(p, &c, m + 2, 1, &bal);
  double w0, a0 = nestcl_pm_best_alpha(p, &c, &w0);
  EXPECT(rc == 0 && bal.s == 1.0 && fabs(bal.alpha - a0) < 1e-9, "balance from nothing: s %g alpha %g (want 1 %g)",
         bal.s, bal.alpha, a0);
  m[0].alpha = 1.5;
  rc = nestcl_pm_balance_fit(p, &c, m, 2, &bal);
  EXPECT(rc == NESTCL_EINVAL && strstr(nestcl_last_error(), "malformed"), "bad alpha: %d %s", rc, nestcl_last_error());
  rc = nestcl_pm_balance_fit(p, &c, m, 0, &bal);
  EXPECT(rc == NESTCL_EINVAL, "no measurement: %d", rc);
}

int main(int argc, char **argv)
{
  if (argc == 3 && strcmp(argv[1], "--write-sweep") == 0) {
    return write_sweep(argv[2]);
  }
  test_json();
  test_predict();
  test_fit();
  test_balance();
  if (fails) {
    fprintf(stderr, "%d failure(s)\n", fails);
    return 1;
  }
  printf("all perfmodel model tests passed\n");
  return 0;
}
