/*
 * nestcl-translate: translates NEST neuron models (C++) into OpenCL kernels,
 * C loops, field descriptors and C++ glue (docs/architecture.md, "The translator"). This file is the
 * command line: it gathers the model units from the arguments, runs each
 * through parse -> checks -> rendering -> emitters, writes every file of a
 * successful model under a temporary name and renames it into place (a model
 * that fails leaves no file), then writes the registry and the report.
 *
 * Exit status: 0 all models translated, 3 some are CPU-only (diagnostics on
 * stderr), 1 run-time error, 2 usage error.
 */
#include "check.h"
#include "emit.h"
#include "parse.h"
#include "report.h"
#include "synapse.h"
#include "strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef NESTCL_VERSION_STRING
#define NESTCL_VERSION_STRING "0.0.0"
#endif

static void usage(FILE *f)
{
  fprintf(f,
          "usage: nestcl-translate <model.h|model.cpp|dir>... -o OUTDIR [options]\n"
          "\n"
          "Translates NEST neuron models into OpenCL kernels (M.cl), C loops (M_cpu.c),\n"
          "field descriptors (M_desc.c), C++ glue (M_glue.hpp), a registry\n"
          "(nestcl_models.c) and the glue table for NEST (nestcl_glue_table.hpp).\n"
          "A directory stands for every model in it.\n"
          "\n"
          "options:\n"
          "  -o, --output DIR       output directory (created if missing)\n"
          "  -I DIR                 include directory for parsing (repeatable)\n"
          "  -D NAME[=VALUE]        preprocessor definition for parsing (repeatable)\n"
          "  -std=STD               C++ standard for parsing (default c++17)\n"
          "  --report json|text     write a report of every model's outcome\n"
          "  --report-file FILE     write the report there instead of stdout\n"
          "  --help                 this text\n"
          "  --version              version\n"
          "\n"
          "exit status: 0 all translated, 3 some models are CPU-only, 1 run-time error,\n"
          "2 usage error\n");
}

static int file_exists(const char *p)
{
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int dir_exists(const char *p)
{
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static char *read_text(const char *path)
{
  FILE *f = fopen(path, "rb");
  strbuf b;
  char buf[8192];
  size_t n;
  if (!f)
    return NULL;
  sb_init(&b);
  while ((n = fread(buf, 1, sizeof buf, f)) > 0)
    sb_putn(&b, buf, n);
  fclose(f);
  return sb_take(&b);
}

typedef struct unit_list {
  tr_unit *u;
  int n;
} unit_list;

static int ends_with(const char *s, const char *suf)
{
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && !strcmp(s + a - b, suf);
}

/* Adds the unit of path (dir/base.{cpp,h}) unless it is already there. */
static void add_unit(unit_list *l, const char *dir, const char *base)
{
  char *cpp = dir ? xasprintf("%s/%s.cpp", dir, base) : xasprintf("%s.cpp", base);
  char *h = dir ? xasprintf("%s/%s.h", dir, base) : xasprintf("%s.h", base);
  int k;
  for (k = 0; k < l->n; k++)
    if (!strcmp(l->u[k].source, file_exists(cpp) ? cpp : h)) {
      free(cpp);
      free(h);
      return;
    }
  l->u = xrealloc(l->u, sizeof *l->u * (size_t)(l->n + 1));
  {
    const char *b = strrchr(base, '/');
    l->u[l->n].base = xstrdup(b ? b + 1 : base);
  }
  if (file_exists(cpp)) {
    l->u[l->n].source = cpp;
    l->u[l->n].header = file_exists(h) ? h : (free(h), (char *)NULL);
  } else {
    l->u[l->n].source = h;
    l->u[l->n].header = xstrdup(h);
    free(cpp);
  }
  l->n++;
}

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int gather_dir(unit_list *l, const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  char **names = NULL;
  int n = 0, k;
  size_t dl = strlen(dir);
  char *clean = xstrdup(dir);
  if (!d)
    return -1;
  while (dl > 1 && clean[dl - 1] == '/')
    clean[--dl] = 0;
  while ((e = readdir(d)) != NULL) {
    const char *nm = e->d_name;
    if (nm[0] == '.')
      continue;
    if (ends_with(nm, ".cpp") || ends_with(nm, ".h")) {
      names = xrealloc(names, sizeof *names * (size_t)(n + 1));
      names[n++] = xstrndup(nm, strlen(nm) - (ends_with(nm, ".cpp") ? 4 : 2));
    }
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, cmp_str);
  for (k = 0; k < n; k++) {
    if (k && !strcmp(names[k], names[k - 1]))
      continue;
    {
      /* Only files that declare a node class are model units. */
      char *cpp = xasprintf("%s/%s.cpp", clean, names[k]);
      char *h = xasprintf("%s/%s.h", clean, names[k]);
      char *tc = read_text(cpp), *th = read_text(h);
      if ((tc && parse_text_declares_model(tc)) || (th && parse_text_declares_model(th)))
        add_unit(l, clean, names[k]);
      free(tc);
      free(th);
      free(cpp);
      free(h);
    }
  }
  for (k = 0; k < n; k++)
    free(names[k]);
  free(names);
  free(clean);
  return 0;
}

static int mkdir_p(const char *path)
{
  char *p = xstrdup(path);
  size_t k;
  for (k = 1; p[k]; k++)
    if (p[k] == '/') {
      p[k] = 0;
      if (mkdir(p, 0777) && errno != EEXIST) {
        free(p);
        return -1;
      }
      p[k] = '/';
    }
  if (mkdir(p, 0777) && errno != EEXIST) {
    free(p);
    return -1;
  }
  free(p);
  return 0;
}

static int write_temp(const char *final, const char *text, char **tmp_out)
{
  char *tmp = xasprintf("%s.tmp.%ld", final, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  size_t len = strlen(text);
  if (!f || fwrite(text, 1, len, f) != len || fclose(f)) {
    fprintf(stderr, "error: cannot write %s: %s\n", tmp, strerror(errno));
    unlink(tmp);
    free(tmp);
    return -1;
  }
  *tmp_out = tmp;
  return 0;
}

static int write_atomic(const char *final, const char *text)
{
  char *tmp;
  if (write_temp(final, text, &tmp))
    return -1;
  if (rename(tmp, final)) {
    fprintf(stderr, "error: cannot rename %s to %s: %s\n", tmp, final, strerror(errno));
    unlink(tmp);
    free(tmp);
    return -1;
  }
  free(tmp);
  return 0;
}

static const char *const suffixes[7] = {".cl", "_cpu.c", "_desc.c", "_glue.hpp", "_syn.cl", "_syn.c", "_syn_glue.hpp"};

static void remove_outputs(const char *outdir, const char *name)
{
  int k;
  for (k = 0; k < 7; k++) {
    char *p = xasprintf("%s/%s%s", outdir, name, suffixes[k]);
    unlink(p);
    free(p);
  }
}

/* Writes a model's files (texts[k] to <name><suffixes[first + k]>) under temporary names, then renames
 * them all into place: all or none. 0, or -1 on an I/O error. */
static int write_files(const char *outdir, const char *name, strbuf *texts, int first, int n)
{
  char *tmp[4] = {NULL, NULL, NULL, NULL};
  int k, rc = 0;
  for (k = 0; k < n && !rc; k++) {
    char *final = xasprintf("%s/%s%s", outdir, name, suffixes[first + k]);
    rc = write_temp(final, sb_str(&texts[k]), &tmp[k]);
    free(final);
  }
  for (k = 0; k < n; k++) {
    if (!tmp[k])
      continue;
    if (!rc) {
      char *final = xasprintf("%s/%s%s", outdir, name, suffixes[first + k]);
      if (rename(tmp[k], final)) {
        fprintf(stderr, "error: cannot rename %s: %s\n", tmp[k], strerror(errno));
        rc = -1;
      }
      free(final);
    }
    if (rc)
      unlink(tmp[k]);
    free(tmp[k]);
  }
  for (k = 0; k < n; k++)
    sb_free(&texts[k]);
  return rc;
}

/* A neuron model's four files. */
static int write_model(const char *outdir, ir_model *m, const tr_rendered *r)
{
  strbuf t[4];
  for (int k = 0; k < 4; k++)
    sb_init(&t[k]);
  emit_cl(&t[0], m, r);
  emit_c(&t[1], m, r);
  emit_desc(&t[2], m, r, sb_str(&t[0]));
  emit_glue(&t[3], m);
  return write_files(outdir, m->name, t, 0, 4);
}

/* A synapse model's three files (<model>_syn.cl, <model>_syn.c, <model>_syn_glue.hpp). */
static int write_synapse(const char *outdir, ir_model *m, const syn_rendered *r)
{
  strbuf t[3];
  for (int k = 0; k < 3; k++)
    sb_init(&t[k]);
  emit_syn_cl(&t[0], m, r);
  emit_syn_c(&t[1], m, r, sb_str(&t[0]));
  emit_syn_glue(&t[2], m);
  return write_files(outdir, m->name, t, 4, 3);
}

static int cmp_model(const void *a, const void *b)
{
  return strcmp((*(ir_model *const *)a)->name, (*(ir_model *const *)b)->name);
}

/* What the command line asked for. */
typedef struct tr_options {
  const char **inputs, **cargs; /* model files or directories; -I/-D arguments for parsing (owned) */
  int n_inputs, n_cargs;
  const char *outdir, *report, *report_file, *std;
} tr_options;

/* Parses one option at argv[*k] (advancing *k past its argument): -1 to go
   on, else the exit status (0 after --help/--version, 2 on a usage error). */
static int parse_option(tr_options *o, int argc, char **argv, int *k)
{
  const char *a = argv[*k];
  if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
    usage(stdout);
    return 0;
  } else if (!strcmp(a, "--version")) {
    printf("nestcl-translate %s\n", NESTCL_VERSION_STRING);
    return 0;
  } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
    if (++*k >= argc) {
      fprintf(stderr, "error: %s needs a directory\n", a);
      return 2;
    }
    o->outdir = argv[*k];
  } else if (!strncmp(a, "--output=", 9)) {
    o->outdir = a + 9;
  } else if (!strcmp(a, "-I") || !strcmp(a, "-D")) {
    if (++*k >= argc) {
      fprintf(stderr, "error: %s needs an argument\n", a);
      return 2;
    }
    o->cargs[o->n_cargs++] = xasprintf("%s%s", a, argv[*k]);
  } else if (!strncmp(a, "-I", 2) || !strncmp(a, "-D", 2)) {
    o->cargs[o->n_cargs++] = xstrdup(a);
  } else if (!strncmp(a, "-std=", 5)) {
    o->std = a;
  } else if (!strcmp(a, "--report")) {
    if (++*k >= argc) {
      fprintf(stderr, "error: --report needs json or text\n");
      return 2;
    }
    o->report = argv[*k];
  } else if (!strncmp(a, "--report=", 9)) {
    o->report = a + 9;
  } else if (!strcmp(a, "--report-file")) {
    if (++*k >= argc) {
      fprintf(stderr, "error: --report-file needs a file name\n");
      return 2;
    }
    o->report_file = argv[*k];
  } else if (!strncmp(a, "--report-file=", 14)) {
    o->report_file = a + 14;
  } else if (a[0] == '-' && a[1]) {
    fprintf(stderr, "error: unknown option '%s' (see --help)\n", a);
    return 2;
  } else {
    o->inputs[o->n_inputs++] = a;
  }
  return -1;
}

/* The whole command line, then what it must hold: -1 to go on, else the exit status. */
static int parse_options(tr_options *o, int argc, char **argv)
{
  int k, rc;
  for (k = 1; k < argc; k++)
    if ((rc = parse_option(o, argc, argv, &k)) >= 0)
      return rc;
  if (o->report && strcmp(o->report, "json") && strcmp(o->report, "text")) {
    fprintf(stderr, "error: --report takes json or text, not '%s'\n", o->report);
    return 2;
  }
  if (!o->n_inputs) {
    fprintf(stderr, "error: no model file or directory given (see --help)\n");
    return 2;
  }
  if (!o->outdir) {
    fprintf(stderr, "error: no output directory given (-o DIR)\n");
    return 2;
  }
  return -1;
}

/* The units the inputs name (a directory: every model in it): -1 to go on, else the exit status. */
static int gather_inputs(const tr_options *o, unit_list *units)
{
  int k;
  for (k = 0; k < o->n_inputs; k++) {
    const char *in = o->inputs[k];
    if (dir_exists(in)) {
      if (gather_dir(units, in)) {
        fprintf(stderr, "error: cannot read directory %s: %s\n", in, strerror(errno));
        return 1;
      }
    } else if (file_exists(in) && (ends_with(in, ".cpp") || ends_with(in, ".h"))) {
      char *base = xstrndup(in, strlen(in) - (ends_with(in, ".cpp") ? 4 : 2));
      char *slash = strrchr(base, '/');
      if (slash) {
        *slash = 0;
        add_unit(units, base, slash + 1);
      } else {
        add_unit(units, NULL, base);
      }
      free(base);
    } else {
      fprintf(stderr, "error: '%s' is not a model file (.h, .cpp) or a directory\n", in);
      return 2;
    }
  }
  return -1;
}

/* A file named explicitly, or pre-filtered as a model, without a node class: a failed model of its name. */
static void add_missing_model(const tr_unit *u, tr_parsed *p)
{
  ir_model *m = ir_model_new(u->base);
  char *t = xasprintf("%s:1:1: error: no NEST model class found (a class deriving from Node, "
                      "ArchivingNode or StructuralPlasticityNode; preprocessor conditions may hide it)",
                      u->source);
  m->source_file = xstrdup(u->source);
  m->tu = &p->tu;
  ir_diag_add(m, 1, t);
  free(t);
  p->models = xrealloc(p->models, sizeof *p->models);
  p->models[p->n_models++] = m;
}

/* One parsed model: check, translate and write it (or remove its old files);
   its diagnostics go to stderr. 1 on a run-time error. */
static int translate_one(const char *outdir, ir_model *m, ir_model *const *all, int n_all)
{
  int d, runtime_error = 0;
  for (d = 0; d < n_all; d++)
    if (!strcmp(all[d]->name, m->name) && !m->failed) {
      char *t = xasprintf("%s:1:1: error: model '%s' is defined twice (also in %s)", m->source_file, m->name,
                          all[d]->source_file);
      ir_diag_add(m, 1, t);
      free(t);
    }
  if (m->kind == IR_KIND_SYNAPSE) {
    syn_rendered sr;
    if (!translate_synapse(m, &sr) && !m->failed) {
      if (write_synapse(outdir, m, &sr))
        runtime_error = 1;
    } else {
      remove_outputs(outdir, m->name);
    }
    syn_rendered_free(&sr);
  } else {
    tr_rendered r;
    if (!m->failed)
      check_model(m);
    if (!translate_model(m, &r) && !m->failed) {
      if (write_model(outdir, m, &r))
        runtime_error = 1;
    } else {
      remove_outputs(outdir, m->name);
    }
    tr_rendered_free(&r);
  }
  for (d = 0; d < m->n_diags; d++)
    fprintf(stderr, "%s\n", m->diags[d].text);
  return runtime_error;
}

/* Parses and translates every unit into parsed[] (one per unit) and *all (every model). 1 on a run-time error. */
static int translate_units(const tr_options *o, CXIndex idx, const unit_list *units, tr_parsed *parsed, ir_model ***all,
                           int *n_all)
{
  const char **args = xcalloc((size_t)o->n_cargs + 8, sizeof *args);
  int na = 0, k, runtime_error = 0;
  args[na++] = "-x";
  args[na++] = "c++";
  args[na++] = o->std;
  for (k = 0; k < o->n_cargs; k++)
    args[na++] = o->cargs[k];
  for (k = 0; k < units->n; k++) {
    int j;
    if (parse_unit(idx, &units->u[k], args, na, &parsed[k])) {
      runtime_error = 1;
      continue;
    }
    if (!parsed[k].n_models && units->u[k].source)
      add_missing_model(&units->u[k], &parsed[k]);
    for (j = 0; j < parsed[k].n_models; j++) {
      ir_model *m = parsed[k].models[j];
      if (translate_one(o->outdir, m, *all, *n_all))
        runtime_error = 1;
      *all = xrealloc(*all, sizeof **all * (size_t)(*n_all + 1));
      (*all)[(*n_all)++] = m;
    }
    /* Only names and diagnostics are needed from here on: a directory of
     * NEST models would otherwise hold every parsed unit in memory. */
    parse_release_tu(&parsed[k]);
  }
  free(args);
  return runtime_error;
}

/* One whole-run file: emit(b, models, n) into outdir/name. 1 on a run-time error. */
static int write_table(const char *outdir, const char *name, void (*emit)(strbuf *, ir_model *const *, int),
                       ir_model *const *models, int n)
{
  strbuf b;
  char *path = xasprintf("%s/%s", outdir, name);
  int rc;
  sb_init(&b);
  emit(&b, models, n);
  rc = write_atomic(path, sb_str(&b)) ? 1 : 0;
  sb_free(&b);
  free(path);
  return rc;
}

/* The report (json or text) of every model, to report_file or stdout. 1 on a run-time error. */
static int write_report(const tr_options *o, ir_model *const *all, int n_all)
{
  strbuf b;
  int runtime_error = 0;
  sb_init(&b);
  if (!strcmp(o->report, "json"))
    report_json(&b, all, n_all);
  else
    report_text(&b, all, n_all);
  if (o->report_file) {
    if (write_atomic(o->report_file, sb_str(&b)))
      runtime_error = 1;
  } else {
    fputs(sb_str(&b), stdout);
  }
  sb_free(&b);
  return runtime_error;
}

/* The registry, the glue tables and the report over all models (sorted by name);
   *failed counts the failed ones. 1 on a run-time error. */
static int write_run_files(const tr_options *o, ir_model *const *all, int n_all, int *failed)
{
  ir_model **ok = xcalloc((size_t)(n_all ? n_all : 1), sizeof *ok);
  ir_model **ok_syn = xcalloc((size_t)(n_all ? n_all : 1), sizeof *ok_syn);
  int n_ok = 0, n_ok_syn = 0, k, runtime_error = 0;
  strbuf b;
  char *reg = xasprintf("%s/nestcl_models.c", o->outdir);
  for (k = 0; k < n_all; k++) {
    if (all[k]->failed)
      ++*failed;
    else if (all[k]->kind == IR_KIND_SYNAPSE)
      ok_syn[n_ok_syn++] = all[k];
    else
      ok[n_ok++] = all[k];
  }
  sb_init(&b);
  emit_registry(&b, ok, n_ok, ok_syn, n_ok_syn);
  if (write_atomic(reg, sb_str(&b)))
    runtime_error = 1;
  sb_free(&b);
  free(reg);
  runtime_error |= write_table(o->outdir, "nestcl_glue_table.hpp", emit_glue_table, ok, n_ok);
  runtime_error |= write_table(o->outdir, "nestcl_syn_glue_table.hpp", emit_syn_glue_table, ok_syn, n_ok_syn);
  if (o->report)
    runtime_error |= write_report(o, all, n_all);
  free(ok);
  free(ok_syn);
  return runtime_error;
}

/* Parse the options, gather the units, translate each model, write the run's files, report. */
int main(int argc, char **argv)
{
  tr_options o = {NULL, NULL, 0, 0, NULL, NULL, NULL, "-std=c++17"};
  unit_list units = {NULL, 0};
  ir_model **all = NULL;
  int n_all = 0, failed = 0, runtime_error, k;
  tr_parsed *parsed;
  CXIndex idx;
  int rc;

  o.inputs = xcalloc((size_t)argc, sizeof *o.inputs);
  o.cargs = xcalloc((size_t)argc * 2 + 8, sizeof *o.cargs);
  if ((rc = parse_options(&o, argc, argv)) >= 0 || (rc = gather_inputs(&o, &units)) >= 0)
    goto out;
  if (mkdir_p(o.outdir)) {
    fprintf(stderr, "error: cannot create output directory %s: %s\n", o.outdir, strerror(errno));
    rc = 1;
    goto out;
  }
  idx = clang_createIndex(0, 0);
  parsed = xcalloc((size_t)(units.n ? units.n : 1), sizeof *parsed);
  runtime_error = translate_units(&o, idx, &units, parsed, &all, &n_all);
  qsort(all, (size_t)n_all, sizeof *all, cmp_model);
  runtime_error |= write_run_files(&o, all, n_all, &failed);
  for (k = 0; k < units.n; k++)
    parse_free(&parsed[k]);
  free(parsed);
  free(all);
  clang_disposeIndex(idx);
  rc = runtime_error ? 1 : failed ? 3 : 0;
out:
  for (k = 0; k < units.n; k++) {
    free(units.u[k].base);
    free(units.u[k].source);
    free(units.u[k].header);
  }
  free(units.u);
  for (k = 0; k < o.n_cargs; k++)
    free((char *)o.cargs[k]);
  free(o.cargs);
  free(o.inputs);
  return rc;
}
