/*
 * `nestcl perfmodel plot`: fits the model to sweep files (as fit does,
 * without storing a profile) and draws three PNGs with gnuplot: each run's
 * time against its held-out prediction, the time against alpha of one
 * (scale, threads, streams) with the predicted curve, and the phases per
 * configuration, measured beside predicted. Each PNG is written in a scratch
 * folder and renamed into place.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "nestcl/pm_model.h"
#include "pm_flags.h"
#include "pm_plot.h"
#include "pm_sweep_data.h"


/* Runs gnuplot on script (stdout and stderr to /dev/null); 0 when it exited 0. */
static int run_gnuplot(const char *script)
{
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    FILE *n = freopen("/dev/null", "w", stdout);
    (void)n;
    execlp("gnuplot", "gnuplot", script, (char *)NULL);
    _exit(127);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR)
      return -1;
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Draws one PNG: script text with the output at a temporary name, renamed on success. */
static int draw(const char *dir, const char *tmpdir, const char *name, const char *body)
{
  char png[4200], tmp_png[4300], script[4300];
  snprintf(png, sizeof png, "%s/%s", dir, name);
  snprintf(tmp_png, sizeof tmp_png, "%s/%s", tmpdir, name);
  snprintf(script, sizeof script, "%s/%s.gp", tmpdir, name);
  FILE *f = fopen(script, "w");
  if (!f)
    return -1;
  fprintf(f, "set terminal pngcairo size 1200,650 noenhanced font ',11'\nset output '%s'\n%s\nunset output\n", tmp_png,
          body);
  if (fclose(f) != 0)
    return -1;
  int rc = run_gnuplot(script);
  remove(script);
  if (rc != 0) {
    remove(tmp_png);
    if (rc == 127)
      fprintf(stderr, "error: plot: gnuplot not found (install gnuplot-nox)\n");
    else
      fprintf(stderr, "error: plot: gnuplot failed on %s\n", name);
    return -1;
  }
  /* A rename across file systems fails: copy then. */
  if (rename(tmp_png, png) != 0) {
    FILE *a = fopen(tmp_png, "rb");
    char tpng[4300];
    snprintf(tpng, sizeof tpng, "%s.tmp.%ld", png, (long)getpid());
    FILE *b = fopen(tpng, "wb");
    int ok = a && b;
    char buf[65536];
    size_t k;
    while (ok && (k = fread(buf, 1, sizeof buf, a)) > 0)
      ok = fwrite(buf, 1, k, b) == k;
    if (a)
      fclose(a);
    if (b && fclose(b) != 0)
      ok = 0;
    remove(tmp_png);
    if (!ok || rename(tpng, png) != 0) {
      remove(tpng);
      fprintf(stderr, "error: cannot write %s: %s\n", png, strerror(errno));
      return -1;
    }
  }
  return 0;
}

/* What plot draws from: the sweep, the fitted profile, each run's held-out prediction, the chosen combination. */
typedef struct plot_ctx {
  sweep_data d;
  nestcl_pm_profile prof;
  double *pred;
  double sel_scale;
  int sel_t, sel_g, sel_stdp;
  const char *out_dir;
  char tmpdir[4096], dat[3][4300];
  char body[16384];
} plot_ctx;

/* The combination for the alpha and phase plots: the flags', else the largest scale with co-execution runs (or
 * --scale), and there the fewest threads and streams. */
static void plot_select(plot_ctx *p, double scale, int threads, int streams)
{
  const sweep_data *d = &p->d;
  p->sel_scale = scale;
  p->sel_t = threads;
  p->sel_g = streams;
  p->sel_stdp = d->n ? d->runs[0].stdp : 1;
  if (p->sel_scale > 0 && p->sel_t >= 0 && p->sel_g >= 0)
    return;
  p->sel_scale = 0.0;
  for (size_t i = 0; i < d->n; ++i) {
    const run_rec *r = &d->runs[i];
    if (!(r->c.TC > 0 && r->c.TG > 0 && r->c.alpha > 0 && r->c.alpha < 1))
      continue;
    if (scale > 0 && r->scale != scale)
      continue;
    int better = r->scale > p->sel_scale ||
      (r->scale == p->sel_scale &&
       (r->c.TC + r->c.TG < p->sel_t + p->sel_g || (r->c.TC + r->c.TG == p->sel_t + p->sel_g && r->c.TC < p->sel_t)));
    if (p->sel_scale <= 0 || better) {
      p->sel_scale = r->scale;
      p->sel_t = (int)r->c.TC;
      p->sel_g = (int)r->c.TG;
      p->sel_stdp = r->stdp;
    }
  }
  if (p->sel_scale <= 0) {
    p->sel_scale = d->runs[0].scale;
    p->sel_t = (int)d->runs[0].c.TC;
    p->sel_g = (int)d->runs[0].c.TG;
  }
}

/* d0: measured vs held-out prediction, one block per stage (CPU, GPU, co-execution). */
static void plot_data_measured(const plot_ctx *p, FILE *a)
{
  for (int st = 0; st < 3; ++st) {
    for (size_t i = 0; i < p->d.n; ++i) {
      const run_rec *r = &p->d.runs[i];
      int s = pm_is_cpu_only(&r->c) ? 0 : pm_is_gpu_only(&r->c) ? 1 : 2;
      if (s == st && isfinite(p->pred[i]))
        fprintf(a, "%.6g %.6g\n", r->t, p->pred[i]);
    }
    fprintf(a, "\n\n");
  }
}

/*
 * d1: measured times against alpha of the chosen combination; d2: the
 * predicted curve. Returns whether there are runs of that combination (then
 * *best_a and *best_w: the predicted optimum).
 */
static int plot_data_alpha(const plot_ctx *p, FILE *b, FILE *c, double *best_a, double *best_w)
{
  nestcl_pm_config base;
  int have = 0;
  for (size_t i = 0; i < p->d.n; ++i) {
    const run_rec *r = &p->d.runs[i];
    if (r->scale == p->sel_scale && r->c.TC == p->sel_t && r->c.TG == p->sel_g && r->stdp == p->sel_stdp) {
      fprintf(b, "%.6g %.6g\n", r->c.alpha, r->t);
      if (!have)
        base = r->c;
      have = 1;
    }
  }
  /* The single-kind runs of the same scale are the ends of the curve (alpha 0 and 1). */
  for (size_t i = 0; i < p->d.n; ++i) {
    const run_rec *r = &p->d.runs[i];
    if (r->scale == p->sel_scale && r->stdp == p->sel_stdp &&
        ((r->c.TG == 0 && r->c.TC == p->sel_t) || (r->c.TC == 0 && r->c.TG == p->sel_g))) {
      fprintf(b, "%.6g %.6g\n", r->c.TG == 0 ? 0.0 : 1.0, r->t);
    }
  }
  *best_a = 0;
  *best_w = 0;
  if (have) {
    base.TC = p->sel_t;
    base.TG = p->sel_g;
    for (int k = 0; k <= 200; ++k) {
      base.alpha = k / 200.0;
      fprintf(c, "%.6g %.6g\n", base.alpha, nestcl_pm_output_value(p->prof.p, &base, NESTCL_PM_WALL));
    }
    *best_a = nestcl_pm_best_alpha(p->prof.p, &base, best_w);
  }
  return have;
}

/* measured_vs_predicted.png; an exit code. */
static int plot_measured(plot_ctx *p)
{
  const nestcl_pm_profile *prof = &p->prof;
  snprintf(p->body, sizeof p->body,
           "set title 'nestcl perfmodel on %s: measured against held-out prediction'\n"
           "set xlabel 'measured wall time per simulated second (s)'\nset ylabel 'predicted, held out (s)'\n"
           "set key top left\nset grid\n"
           "plot '%s' index 0 with points pt 7 lc rgb '#1f77b4' title sprintf('CPU (R^2 = %%.3f)', %g), "
           "'' index 1 with points pt 5 lc rgb '#d62728' title sprintf('GPU streams (R^2 = %%.3f)', %g), "
           "'' index 2 with points pt 9 lc rgb '#2ca02c' title sprintf('co-execution (R^2 = %%.3f)', %g), "
           "x with lines lc rgb 'gray' title 'measured = predicted'\n",
           p->d.device_name, p->dat[0], isfinite(prof->cpu.r2_cv) ? prof->cpu.r2_cv : 0.0,
           isfinite(prof->gpu.r2_cv) ? prof->gpu.r2_cv : 0.0, isfinite(prof->co.r2_cv) ? prof->co.r2_cv : 0.0);
  return draw(p->out_dir, p->tmpdir, "measured_vs_predicted.png", p->body) ? CLI_RUNTIME : CLI_OK;
}

/* time_vs_alpha.png (have: runs of the chosen combination exist); an exit code. */
static int plot_alpha(plot_ctx *p, int have, double best_a, double best_w)
{
  if (!have) {
    fprintf(stderr, "error: plot: no co-execution runs at scale %g with %d thread(s) and %d stream(s)\n", p->sel_scale,
            p->sel_t, p->sel_g);
    return CLI_USAGE;
  }
  snprintf(p->body, sizeof p->body,
           "set title 'hpc_benchmark scale %g, %d thread(s) + %d stream(s): time against alpha'\n"
           "set xlabel 'alpha (share of neurons on the streams)'\nset ylabel 'wall time per simulated second (s)'\n"
           "set xrange [-0.02:1.02]\nset grid\nset key top center\n"
           "set arrow from %g, graph 0 to %g, graph 1 nohead dt 2 lc rgb '#2ca02c'\n"
           "plot '%s' with points pt 7 ps 1.3 lc rgb '#1f77b4' title 'measured', "
           "'%s' with lines lw 2 lc rgb '#d62728' title 'model', "
           "'+' using (%g):(%g) every ::0::0 with points pt 9 ps 2.5 lc rgb '#2ca02c' "
           "title sprintf('predicted optimum alpha = %%.3f', %g)\n",
           p->sel_scale, p->sel_t, p->sel_g, best_a, best_a, p->dat[1], p->dat[2], best_a, best_w, best_a);
  return draw(p->out_dir, p->tmpdir, "time_vs_alpha.png", p->body) ? CLI_RUNTIME : CLI_OK;
}

/* The runs of the chosen scale and mix (malloc'd; NULL when out of memory), by threads, streams, alpha. */
static size_t *plot_phase_order(const plot_ctx *p, size_t *no)
{
  const sweep_data *d = &p->d;
  size_t *ord = malloc((d->n ? d->n : 1) * sizeof *ord);
  *no = 0;
  for (size_t i = 0; ord && i < d->n; ++i) {
    if (d->runs[i].scale == p->sel_scale && d->runs[i].stdp == p->sel_stdp)
      ord[(*no)++] = i;
  }
  for (size_t i = 1; i < *no; ++i) {
    for (size_t k = i; k > 0; --k) {
      const nestcl_pm_config *a = &d->runs[ord[k - 1]].c, *b = &d->runs[ord[k]].c;
      int gt = a->TC != b->TC ? a->TC > b->TC : a->TG != b->TG ? a->TG > b->TG : a->alpha > b->alpha;
      if (!gt)
        break;
      size_t t = ord[k];
      ord[k] = ord[k - 1];
      ord[k - 1] = t;
    }
  }
  return ord;
}

/* One configuration's two bars (measured, predicted) and a gap. */
static void plot_phase_rows(const plot_ctx *p, const run_rec *r, FILE *e)
{
  nestcl_pm_prediction o;
  nestcl_pm_predict(p->prof.p, &r->c, &o);
  double vps = r->c.TC + r->c.TG;
  /* Mean over the VPs of update and deliver; the rest of the wall time is waiting and serial work. */
  double mu = ((isfinite(r->cu) ? r->cu * r->c.TC : 0) + (isfinite(r->gu) ? r->gu * r->c.TG : 0)) / vps;
  double md = ((isfinite(r->cd) ? r->cd * r->c.TC : 0) + (isfinite(r->gd) ? r->gd * r->c.TG : 0)) / vps;
  double mser = isfinite(r->exch) ? r->exch : 0;
  double pu = (o.cpu_update * r->c.TC + o.gpu_update * r->c.TG) / vps;
  double pd = (o.cpu_deliver * r->c.TC + o.gpu_deliver * r->c.TG) / vps;
  double pser = o.barriers + o.exchange + o.mpi;
  double mw = r->t - mu - md - mser, pw = o.wall - pu - pd - pser;
  fprintf(e, "\"%dT %dG %.1f\" %.6g %.6g %.6g %.6g\n", (int)r->c.TC, (int)r->c.TG, r->c.alpha, mu, md, mw > 0 ? mw : 0,
          mser);
  fprintf(e, "\"\" %.6g %.6g %.6g %.6g\n\"\" 0 0 0 0\n", pu, pd, pw > 0 ? pw : 0, pser);
}

/* phases.png: the phases of every configuration of the chosen scale and mix, measured beside predicted. */
static int plot_phases(plot_ctx *p)
{
  int code = CLI_OK;
  FILE *e = fopen(p->dat[0], "w");
  if (!e) {
    fprintf(stderr, "error: plot: cannot write data in %s: %s\n", p->tmpdir, strerror(errno));
    code = CLI_RUNTIME;
  }
  int row = 0;
  size_t no;
  size_t *ord = plot_phase_order(p, &no);
  for (size_t q = 0; e && q < no; ++q) {
    plot_phase_rows(p, &p->d.runs[ord[q]], e);
    row++;
  }
  free(ord);
  if (e)
    fclose(e);
  if (code)
    return code;
  snprintf(p->body, sizeof p->body,
           "set title 'scale %g: phases per configuration (threads T, streams G, alpha), measured (left) "
           "and predicted (right), mean over VPs' font ',10'\n"
           "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.8 border -1\n"
           "set boxwidth 0.9\nset xtics rotate by 90 right font ',9' nomirror\nset bmargin 7\n"
           "set ylabel 'seconds per simulated second'\n"
           "set key outside right\nset grid ytics\n"
           "plot '%s' using 2:xtic(1) title 'update + drive', '' using 3 title 'deliver', "
           "'' using 4 title 'waiting (imbalance)', '' using 5 title 'exchange, barriers'\n",
           p->sel_scale, p->dat[0]);
  return row == 0 || draw(p->out_dir, p->tmpdir, "phases.png", p->body) ? CLI_RUNTIME : CLI_OK;
}

/* The data files in the scratch folder, then the three PNGs; an exit code. */
static int plot_all(plot_ctx *p)
{
  int code = CLI_OK;
  FILE *a = fopen(p->dat[0], "w");
  FILE *b = fopen(p->dat[1], "w"), *c = fopen(p->dat[2], "w");
  if (!a || !b || !c) {
    fprintf(stderr, "error: plot: cannot write data in %s: %s\n", p->tmpdir, strerror(errno));
    if (a)
      fclose(a);
    if (b)
      fclose(b);
    if (c)
      fclose(c);
    return CLI_RUNTIME;
  }
  plot_data_measured(p, a);
  double best_a, best_w;
  int have = plot_data_alpha(p, b, c, &best_a, &best_w);
  fclose(a);
  fclose(b);
  fclose(c);
  code = plot_measured(p);
  if (!code)
    code = plot_alpha(p, have, best_a, best_w);
  if (!code)
    code = plot_phases(p);
  return code;
}

/* plot's flags and their checks; -1 to go on, else an exit code. */
static int plot_flags(int argc, char **argv, pm_flags *f)
{
  if (pm_parse_flags(argc, argv, "FILES out-dir folds scale threads streams", f)) {
    free(f->files);
    return CLI_USAGE;
  }
  if (f->help) {
    printf("usage: nestcl perfmodel plot SWEEP.jsonl... --out-dir DIR [--folds K]\n"
           "                            [--scale S --threads T --streams G]\n"
           "\n"
           "Fits the model to the sweep (as fit does, without storing a profile) and draws three\n"
           "PNGs into DIR:\n"
           "  measured_vs_predicted.png  each run's time against its held-out prediction,\n"
           "                             CPU, GPU and co-execution runs (the paper's Figs. 15, 16)\n"
           "  time_vs_alpha.png          measured times against alpha for one (scale, threads,\n"
           "                             streams) with the predicted curve and its optimum marked\n"
           "                             (default: the largest scale, the fewest threads and streams)\n"
           "  phases.png                 measured and predicted phases per configuration of that scale\n");
    free(f->files);
    return CLI_OK;
  }
  if (f->n_files == 0 || !f->out_dir) {
    fprintf(stderr, "error: plot needs sweep files and --out-dir DIR\n");
    free(f->files);
    return CLI_USAGE;
  }
  struct stat sd;
  if (stat(f->out_dir, &sd) != 0 || !S_ISDIR(sd.st_mode)) {
    fprintf(stderr, "error: plot: --out-dir %s is not a folder\n", f->out_dir);
    free(f->files);
    return CLI_USAGE;
  }
  return -1;
}

int pm_plot(int argc, char **argv)
{
  pm_flags f;
  int code = plot_flags(argc, argv, &f);
  if (code >= 0)
    return code;
  plot_ctx *p = calloc(1, sizeof *p);
  if (!p) {
    free(f.files);
    fprintf(stderr, "error: out of host memory\n");
    return CLI_RUNTIME;
  }
  p->out_dir = f.out_dir;
  code = pm_read_sweeps(f.files, f.n_files, &p->d);
  free(f.files);
  if (code) {
    free(p);
    return code;
  }
  p->pred = malloc(p->d.n * sizeof *p->pred);
  code = p->pred ? pm_fit_sweep(&p->d, f.folds, &p->prof, p->pred) : CLI_RUNTIME;
  if (!code)
    plot_select(p, f.scale, f.threads, f.streams);
  const char *td = getenv("TMPDIR");
  snprintf(p->tmpdir, sizeof p->tmpdir, "%s/nestcl-plot-XXXXXX", td && *td ? td : "/tmp");
  if (!code && !mkdtemp(p->tmpdir)) {
    fprintf(stderr, "error: plot: cannot make a temporary folder: %s\n", strerror(errno));
    code = CLI_RUNTIME;
  }
  for (int k = 0; k < 3; ++k)
    snprintf(p->dat[k], sizeof p->dat[k], "%s/d%d.dat", p->tmpdir, k);
  if (!code) {
    code = plot_all(p);
    for (int k = 0; k < 3; ++k)
      remove(p->dat[k]);
    rmdir(p->tmpdir);
  }
  if (!code) {
    fprintf(stderr, "perfmodel: measured_vs_predicted.png, time_vs_alpha.png and phases.png in %s\n", f.out_dir);
  }
  free(p->pred);
  free(p->d.runs);
  free(p);
  return code;
}
