/*
 * Rewriting, random numbers: draws from NEST's RNG and its random
 * distributions as counter-based draws (nestcl_philox.h, nestcl_dist.h), one
 * stream per call site.
 */
#include "rewrite_internal.h"

#include <stdlib.h>
#include <string.h>

/* rng->drand() or the generator's operator(): a counter-based stream per neuron, step and call site. */
int call_random_draw(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!(name_is(ci, "drand") || name_is(ci, "operator()")) || ci->nargs != 0 || !strstr(ci->cls, "RandomGenerator"))
    return 0;
  /* NEST's per-thread generator becomes a counter-based stream per neuron,
   * step and call site (nestcl_philox.h); its numbers differ from NEST's. */
  if (!c->lag_var || c->helper) {
    error_at(c, ci->cur, c->helper ? "a random draw in a helper of update()" : "a random draw outside the lag loop",
             c->helper ? "each call site of update() gets its own stream" : "draws are keyed by neuron and step");
    return 1;
  }
  warning_at(c, ci->cur,
             "random draw: the device uses its own counter-based stream (NESTCL_DRAND), "
             "statistically but not bitwise equal to NEST's");
  sb_printf(out, "NESTCL_DRAND(nestcl_i, origin_steps + %s, %d)", c->lag_var, c->rng_sites++);
  return 1;
}

/* The parameters a distribution takes, with the C++ standard's defaults. */
static int dist_defaults(const char *kind, const char **a, const char **b)
{
  *a = "1.0";
  *b = "1.0";
  if (!strcmp(kind, "normal") || !strcmp(kind, "lognormal") || !strcmp(kind, "uniform"))
    *a = "0.0";
  if (!strcmp(kind, "binomial")) {
    *a = "1";
    *b = "0.5";
  }
  return !strcmp(kind, "poisson") || !strcmp(kind, "exponential") ? 1 : 2;
}

/*
 * dist( rng ) and dist( rng, param ) on a NEST RandomDistribution: a draw from
 * nestcl_dist.h on the stream of this call site, neuron and step. The
 * parameters come from param (a param_type local, whose values
 * nestcl_dp_<name>_<k> its declaration kept, or a temporary), else from
 * dist.param( p ) in pre_run_hook() (m->dists), else the standard's defaults.
 */
int call_random_dist(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "operator()") || strcmp(ci->cls, "RandomDistribution"))
    return 0;
  if (c->helper) {
    error_at(c, ci->cur, "a random draw in a helper of update()", "each call site of update() gets its own stream");
    return 1;
  }
  CXCursor obj = clang_getNullCursor(), par = clang_getNullCursor();
  const char *kind = NULL;
  for (int k = 0; k < ci->nargs; k++) {
    CXCursor a = cursor_strip(clang_Cursor_getArgument(ci->cur, (unsigned)k));
    char *tn = decl_name_of_type(clang_getCursorType(a));
    if (!strcmp(tn, "param_type"))
      par = a;
    else if (!strcmp(tn, "RandomDistribution") && (kind = dist_kind(clang_getCursorType(a))) != NULL)
      obj = a;
    free(tn);
  }
  if (clang_Cursor_isNull(obj) && !clang_Cursor_isNull(ci->base) &&
      (kind = dist_kind(clang_getCursorType(ci->base))) != NULL)
    obj = cursor_strip(ci->base);
  if (!kind) {
    error_at(c, ci->cur, "a draw from this distribution",
             "nestcl_dist.h has uniform_real, normal, lognormal, "
             "exponential, gamma, poisson and binomial");
    return 1;
  }
  if (!c->lag_var) {
    error_at(c, ci->cur, "a random draw outside the lag loop", "draws are keyed by neuron and step");
    return 1;
  }
  const char *da, *db;
  const int np = dist_defaults(kind, &da, &db);
  char *args[2] = {xstrdup(da), xstrdup(db)};
  if (!clang_Cursor_isNull(par)) {
    if (clang_getCursorKind(par) == CXCursor_DeclRefExpr) {
      char *vn = cursor_spelling(clang_getCursorReferenced(par));
      CXCursor ctor = var_construct(clang_getCursorReferenced(par));
      int n = clang_Cursor_isNull(ctor) ? 0 : clang_Cursor_getNumArguments(ctor);
      for (int k = 0; k < n && k < np; k++) {
        char *t;
        render_to(c, clang_Cursor_getArgument(ctor, (unsigned)k), &t);
        if (*t) {
          free(args[k]);
          args[k] = xasprintf("nestcl_dp_%s_%d", vn, k);
        }
        free(t);
      }
      free(vn);
    } else {
      CXCursor ctor = clang_getCursorKind(par) == CXCursor_CallExpr ? par : clang_getNullCursor();
      int n = clang_Cursor_isNull(ctor) ? 0 : clang_Cursor_getNumArguments(ctor);
      for (int k = 0; k < n && k < np; k++) {
        char *t;
        render_to(c, clang_Cursor_getArgument(ctor, (unsigned)k), &t);
        if (*t) {
          free(args[k]);
          args[k] = t;
        } else {
          free(t);
        }
      }
    }
  } else if (clang_getCursorKind(obj) == CXCursor_MemberRefExpr) {
    CXCursor mem = clang_getCanonicalCursor(clang_getCursorReferenced(obj));
    for (int d = 0; d < c->m->n_dists; d++)
      if (clang_equalCursors(clang_getCanonicalCursor(c->m->dists[d].member), mem)) {
        for (int k = 0; k < c->m->dists[d].nargs && k < np; k++) {
          char *t;
          render_to(c, c->m->dists[d].args[k], &t);
          if (*t) { /* a default argument renders as nothing: the standard's default stays */
            free(args[k]);
            args[k] = t;
          } else {
            free(t);
          }
        }
      }
  }
  warning_at(c, ci->cur,
             "random draw: the device draws from nestcl_dist.h on its own counter-based stream, "
             "in distribution but not draw for draw equal to NEST's");
  const int site = c->rng_sites++;
  sb_printf(out,
            "nestcl_draw_%s(NESTCL_MODEL_RNG_SEED, %du, NESTCL_NEURON_ID(nestcl_i), (nestcl_u64)(origin_steps + %s), "
            "(%s)(%s)",
            kind, site, c->lag_var, !strcmp(kind, "binomial") ? "nestcl_u64" : "double", args[0]);
  if (np == 2)
    sb_printf(out, ", (double)(%s)", args[1]);
  sb_putc(out, ')');
  free(args[0]);
  free(args[1]);
  return 1;
}

/* dist.param( p ) in pre_run_hook(): the draws in update() read p's arguments (parse.c, ir_model.dists). */
int call_dist_param(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "param") || strcmp(ci->cls, "RandomDistribution") || ci->nargs != 1)
    return 0;
  CXCursor b = clang_Cursor_isNull(ci->base) ? ci->base : cursor_strip(ci->base);
  int have = 0;
  for (int d = 0; d < c->m->n_dists && !clang_Cursor_isNull(b); d++)
    if (clang_getCursorKind(b) == CXCursor_MemberRefExpr &&
        clang_equalCursors(clang_getCanonicalCursor(c->m->dists[d].member),
                           clang_getCanonicalCursor(clang_getCursorReferenced(b))))
      have = 1;
  if (!have) {
    error_at(c, ci->cur, "this distribution's parameters", "they must be a param_type of fields and constants");
    return 1;
  }
  sb_puts(out, "((void)0) /* the distribution's parameters: read by the draws in update() */");
  return 1;
}
