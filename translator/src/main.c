/*
 * nestcl-translate: translates NEST neuron models (C++) into OpenCL kernels,
 * C loops, field descriptors and C++ glue (DESIGN.md §4). This file is the
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

int main(int argc, char **argv)
{
  const char **inputs = NULL, **cargs = NULL;
  int n_inputs = 0, n_cargs = 0, k;
  const char *outdir = NULL, *report = NULL, *report_file = NULL, *std = "-std=c++17";
  unit_list units = {NULL, 0};
  ir_model **all = NULL;
  int n_all = 0, failed = 0, runtime_error = 0;
  tr_parsed *parsed;
  CXIndex idx;
  int rc = 0;

  inputs = xcalloc((size_t)argc, sizeof *inputs);
  cargs = xcalloc((size_t)argc * 2 + 8, sizeof *cargs);
  for (k = 1; k < argc; k++) {
    const char *a = argv[k];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      rc = 0;
      goto out;
    } else if (!strcmp(a, "--version")) {
      printf("nestcl-translate %s\n", NESTCL_VERSION_STRING);
      rc = 0;
      goto out;
    } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      if (++k >= argc) {
        fprintf(stderr, "error: %s needs a directory\n", a);
        rc = 2;
        goto out;
      }
      outdir = argv[k];
    } else if (!strncmp(a, "--output=", 9)) {
      outdir = a + 9;
    } else if (!strcmp(a, "-I") || !strcmp(a, "-D")) {
      if (++k >= argc) {
        fprintf(stderr, "error: %s needs an argument\n", a);
        rc = 2;
        goto out;
      }
      cargs[n_cargs++] = xasprintf("%s%s", a, argv[k]);
    } else if (!strncmp(a, "-I", 2) || !strncmp(a, "-D", 2)) {
      cargs[n_cargs++] = xstrdup(a);
    } else if (!strncmp(a, "-std=", 5)) {
      std = a;
    } else if (!strcmp(a, "--report")) {
      if (++k >= argc) {
        fprintf(stderr, "error: --report needs json or text\n");
        rc = 2;
        goto out;
      }
      report = argv[k];
    } else if (!strncmp(a, "--report=", 9)) {
      report = a + 9;
    } else if (!strcmp(a, "--report-file")) {
      if (++k >= argc) {
        fprintf(stderr, "error: --report-file needs a file name\n");
        rc = 2;
        goto out;
      }
      report_file = argv[k];
    } else if (!strncmp(a, "--report-file=", 14)) {
      report_file = a + 14;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "error: unknown option '%s' (see --help)\n", a);
      rc = 2;
      goto out;
    } else {
      inputs[n_inputs++] = a;
    }
  }
  if (report && strcmp(report, "json") && strcmp(report, "text")) {
    fprintf(stderr, "error: --report takes json or text, not '%s'\n", report);
    rc = 2;
    goto out;
  }
  if (!n_inputs) {
    fprintf(stderr, "error: no model file or directory given (see --help)\n");
    rc = 2;
    goto out;
  }
  if (!outdir) {
    fprintf(stderr, "error: no output directory given (-o DIR)\n");
    rc = 2;
    goto out;
  }
  for (k = 0; k < n_inputs; k++) {
    const char *in = inputs[k];
    if (dir_exists(in)) {
      if (gather_dir(&units, in)) {
        fprintf(stderr, "error: cannot read directory %s: %s\n", in, strerror(errno));
        rc = 1;
        goto out;
      }
    } else if (file_exists(in) && (ends_with(in, ".cpp") || ends_with(in, ".h"))) {
      char *base = xstrndup(in, strlen(in) - (ends_with(in, ".cpp") ? 4 : 2));
      char *slash = strrchr(base, '/');
      if (slash) {
        *slash = 0;
        add_unit(&units, base, slash + 1);
      } else {
        add_unit(&units, NULL, base);
      }
      free(base);
    } else {
      fprintf(stderr, "error: '%s' is not a model file (.h, .cpp) or a directory\n", in);
      rc = 2;
      goto out;
    }
  }
  if (mkdir_p(outdir)) {
    fprintf(stderr, "error: cannot create output directory %s: %s\n", outdir, strerror(errno));
    rc = 1;
    goto out;
  }

  {
    const char **args = xcalloc((size_t)n_cargs + 8, sizeof *args);
    int na = 0;
    args[na++] = "-x";
    args[na++] = "c++";
    args[na++] = std;
    for (k = 0; k < n_cargs; k++)
      args[na++] = cargs[k];
    idx = clang_createIndex(0, 0);
    parsed = xcalloc((size_t)(units.n ? units.n : 1), sizeof *parsed);
    for (k = 0; k < units.n; k++) {
      int j;
      if (parse_unit(idx, &units.u[k], args, na, &parsed[k])) {
        runtime_error = 1;
        continue;
      }
      if (!parsed[k].n_models && units.u[k].source) {
        /* A file named explicitly, or pre-filtered as a model, without a node class. */
        ir_model *m = ir_model_new(units.u[k].base);
        char *t = xasprintf("%s:1:1: error: no NEST model class found (a class deriving from Node, "
                            "ArchivingNode or StructuralPlasticityNode; preprocessor conditions may hide it)", units.u[k].source);
        m->source_file = xstrdup(units.u[k].source);
        m->tu = &parsed[k].tu;
        ir_diag_add(m, 1, t);
        free(t);
        parsed[k].models = xrealloc(parsed[k].models, sizeof *parsed[k].models);
        parsed[k].models[parsed[k].n_models++] = m;
      }
      for (j = 0; j < parsed[k].n_models; j++) {
        ir_model *m = parsed[k].models[j];
        int d;
        tr_rendered r;
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
        all = xrealloc(all, sizeof *all * (size_t)(n_all + 1));
        all[n_all++] = m;
      }
      /* Only names and diagnostics are needed from here on: a directory of
       * NEST models would otherwise hold every parsed unit in memory. */
      parse_release_tu(&parsed[k]);
    }
    free(args);
  }

  qsort(all, (size_t)n_all, sizeof *all, cmp_model);
  {
    ir_model **ok = xcalloc((size_t)(n_all ? n_all : 1), sizeof *ok);
    ir_model **ok_syn = xcalloc((size_t)(n_all ? n_all : 1), sizeof *ok_syn);
    int n_ok = 0, n_ok_syn = 0;
    strbuf b;
    char *reg = xasprintf("%s/nestcl_models.c", outdir);
    for (k = 0; k < n_all; k++) {
      if (all[k]->failed)
        failed++;
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
    reg = xasprintf("%s/nestcl_glue_table.hpp", outdir);
    sb_init(&b);
    emit_glue_table(&b, ok, n_ok);
    if (write_atomic(reg, sb_str(&b)))
      runtime_error = 1;
    sb_free(&b);
    free(reg);
    reg = xasprintf("%s/nestcl_syn_glue_table.hpp", outdir);
    sb_init(&b);
    emit_syn_glue_table(&b, ok_syn, n_ok_syn);
    if (write_atomic(reg, sb_str(&b)))
      runtime_error = 1;
    sb_free(&b);
    free(reg);
    if (report) {
      sb_init(&b);
      if (!strcmp(report, "json"))
        report_json(&b, all, n_all);
      else
        report_text(&b, all, n_all);
      if (report_file) {
        if (write_atomic(report_file, sb_str(&b)))
          runtime_error = 1;
      } else {
        fputs(sb_str(&b), stdout);
      }
      sb_free(&b);
    }
    free(ok);
    free(ok_syn);
  }

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
  for (k = 0; k < n_cargs; k++)
    free((char *)cargs[k]);
  free(cargs);
  free(inputs);
  return rc;
}
