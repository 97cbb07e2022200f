/*
 * Rewriting, calls and math: the rules for calls that compute: NEST's time
 * conversions, the math library (mathtable.c), numerics::expm1, a model's
 * one-line getters (inlined) and the helpers update() calls. What every call
 * rule asks of a call (its object, name and arguments) is in rewrite_query.c.
 */
#include "rewrite_internal.h"

#include "mathtable.h"

#include <stdlib.h>
#include <string.h>

/*
 * `const T x = init;` of a scalar type whose initialiser changes nothing: the
 * local of a helper that is inlined as ((T)(init)) wherever it is read, so the
 * helper stays one expression with the same operations (no contraction: the
 * code is built with FP_CONTRACT OFF). NULL when the statement is not one.
 */
static CXCursor pure_const_local(CXCursor st, CXCursor *init)
{
  CXCursor none = clang_getNullCursor();
  if (clang_getCursorKind(st) != CXCursor_DeclStmt)
    return none;
  cursor_kids d = cursor_children(st);
  CXCursor v = d.n == 1 ? d.c[0] : none;
  free(d.c);
  if (clang_Cursor_isNull(v) || clang_getCursorKind(v) != CXCursor_VarDecl)
    return none;
  CXType t = clang_getCursorType(v);
  CXType ct = clang_getCanonicalType(t);
  if (!clang_isConstQualifiedType(t) ||
      !(ct.kind == CXType_Double || ct.kind == CXType_Int || ct.kind == CXType_Long || ct.kind == CXType_Bool))
    return none;
  cursor_kids ik = cursor_children(v);
  CXCursor e = none;
  for (int j = 0; j < ik.n; j++)
    if (clang_isExpression(clang_getCursorKind(ik.c[j])))
      e = ik.c[j];
  free(ik.c);
  int hit = 0;
  if (clang_Cursor_isNull(e))
    return none;
  clang_visitChildren(e, visit_side_effect, &hit);
  if (hit)
    return none;
  *init = e;
  return v;
}

static int inline_method(rw_ctx *c, CXCursor cur, CXCursor callee, strbuf *out)
{
  CXCursor def = clang_getCursorDefinition(callee);
  CXCursor body, ret, expr;
  cursor_kids stmts, rk;
  int k, nargs, saved_substs, n_locals = 0;
  CXCursor *locals = NULL, *inits = NULL;
  if (clang_Cursor_isNull(def) || c->depth > 8)
    return 0;
  body = rw_body_of(def);
  if (clang_Cursor_isNull(body))
    return 0;
  stmts = cursor_children(body);
  /* A single return, after nothing but assertions (dropped, as NDEBUG would) and
   * constant scalar locals whose initialisers change nothing (substituted). */
  for (k = 0; k + 1 < stmts.n; k++) {
    CXFile af;
    unsigned ab, ae;
    CXCursor init;
    CXCursor v = pure_const_local(stmts.c[k], &init);
    if (!clang_Cursor_isNull(v)) {
      locals = xrealloc(locals, sizeof *locals * (size_t)(n_locals + 1));
      inits = xrealloc(inits, sizeof *inits * (size_t)(n_locals + 1));
      locals[n_locals] = v;
      inits[n_locals++] = init;
      continue;
    }
    const ir_macro *mc = cursor_offsets(stmts.c[k], &af, &ab, &ae) ? NULL : macro_at(c, af, ab, ae);
    if (!mc || strcmp(mc->name, "assert")) {
      free(stmts.c);
      free(locals);
      free(inits);
      return 0;
    }
  }
  if (stmts.n < 1 || clang_getCursorKind(stmts.c[stmts.n - 1]) != CXCursor_ReturnStmt) {
    free(stmts.c);
    free(locals);
    free(inits);
    return 0;
  }
  ret = stmts.c[stmts.n - 1];
  free(stmts.c);
  rk = cursor_children(ret);
  if (rk.n != 1) {
    free(rk.c);
    free(locals);
    free(inits);
    return 0;
  }
  expr = rk.c[0];
  free(rk.c);
  nargs = clang_Cursor_getNumArguments(cur);
  saved_substs = c->n_substs;
  for (k = 0; k < nargs && k < clang_Cursor_getNumArguments(def); k++) {
    char *a;
    render_to(c, clang_Cursor_getArgument(cur, (unsigned)k), &a);
    c->substs = xrealloc(c->substs, sizeof *c->substs * (size_t)(c->n_substs + 1));
    c->substs[c->n_substs].parm = clang_Cursor_getArgument(def, (unsigned)k);
    c->substs[c->n_substs].text = xasprintf("(%s)", a);
    c->n_substs++;
    free(a);
  }
  c->depth++;
  for (k = 0; k < n_locals; k++) {
    /* each local's initialiser, in terms of the arguments and the locals before it */
    char *a;
    CXType ct = clang_getCanonicalType(clang_getCursorType(locals[k]));
    render_to(c, inits[k], &a);
    c->substs = xrealloc(c->substs, sizeof *c->substs * (size_t)(c->n_substs + 1));
    c->substs[c->n_substs].parm = locals[k];
    c->substs[c->n_substs].text = xasprintf("((%s)(%s))",
                                            ct.kind == CXType_Double   ? "double"
                                              : ct.kind == CXType_Long ? "nestcl_i64"
                                                                       : "nestcl_i32",
                                            a);
    c->n_substs++;
    free(a);
  }
  free(locals);
  free(inits);
  sb_putc(out, '(');
  render_sub(c, expr, out);
  sb_putc(out, ')');
  c->depth--;
  while (c->n_substs > saved_substs)
    free(c->substs[--c->n_substs].text);
  return 1;
}

/* Time::get_resolution().get_ms() */
int call_resolution_ms(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "get_ms") || clang_Cursor_isNull(ci->base) ||
      clang_Cursor_isNull(find_call_below(ci->base, "get_resolution")))
    return 0;
  if (c->mode == RW_UPDATE || c->mode == RW_PRERUN || c->mode == RW_INIT || c->mode == RW_RECORD)
    sb_puts(out, "resolution_ms");
  else
    error_at(c, ci->cur, "Time::get_resolution() in this helper",
             "only update(), pre_run_hook() and init_buffers_() know the resolution");
  return 1;
}

/* origin.get_steps() and Time(Time::ms(x)).get_steps() in update(); the latter and the resolution's steps in pre_run_hook(). */
int call_get_steps(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "get_steps") || clang_Cursor_isNull(ci->base))
    return 0;
  CXCursor b = cursor_strip(ci->base);
  if (clang_getCursorKind(b) == CXCursor_DeclRefExpr && c->mode == RW_UPDATE &&
      clang_getCursorKind(clang_getCursorReferenced(b)) == CXCursor_ParmDecl &&
      (clang_equalCursors(clang_getCanonicalCursor(clang_getCursorReferenced(b)),
                          clang_getCanonicalCursor(clang_Cursor_getArgument(c->fn, 0))) ||
       (c->helper && rw_is_time_type(clang_getCursorType(clang_getCursorReferenced(b)))))) {
    sb_puts(out, "origin_steps");
    return 1;
  }
  if (c->mode == RW_UPDATE) {
    /* pp_psc_delta's random dead time: Time( Time::ms( x ) ).get_steps() on the device */
    CXCursor ms = find_call_below(ci->base, "ms");
    if (!clang_Cursor_isNull(ms) && clang_Cursor_getNumArguments(ms) == 1) {
      sb_puts(out, "nestcl_time_ms_to_steps(");
      render_arg(c, ms, 0, out);
      sb_puts(out, ", resolution_ms)");
      return 1;
    }
  }
  if (c->mode == RW_PRERUN) {
    CXCursor ms = find_call_below(ci->base, "ms");
    if (!clang_Cursor_isNull(ms) && clang_Cursor_getNumArguments(ms) == 1) {
      sb_puts(out, "nestcl_ms_to_steps(");
      render_arg(c, ms, 0, out);
      sb_puts(out, ", resolution_ms)");
      return 1;
    }
    if (!clang_Cursor_isNull(find_call_below(ci->base, "get_resolution"))) {
      sb_puts(out, "1L");
      return 1;
    }
  }
  return 0;
}

/* Time::delay_ms_to_steps( d ) */
int call_delay_ms_to_steps(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (strcmp(ci->qname, "Time::delay_ms_to_steps") || ci->nargs != 1)
    return 0;
  sb_puts(out, "nestcl_delay_ms_to_steps(");
  render_arg(c, ci->cur, 0, out);
  sb_puts(out, ", resolution_ms)");
  return 1;
}

/* The math table (mathtable.c): std:: and numerics:: functions, std::min/max, numeric_limits. */
int call_math(rw_ctx *c, const call_info *ci, strbuf *out)
{
  int k;
  const math_entry *me = math_lookup(ci->qname, ci->nargs);
  if (!me)
    return 0;
  CXType rt = clang_getCursorType(ci->cur);
  char *rts;
  if (rt.kind == CXType_LValueReference || rt.kind == CXType_RValueReference)
    rt = clang_getPointeeType(rt);
  rt = clang_getCanonicalType(rt);
  rts = xstrdup(rt.kind == CXType_Double   ? "double"
                  : rt.kind == CXType_Long ? "long"
                  : rt.kind == CXType_Int  ? "int"
                                           : "other");
  const int portable = (c->mode == RW_UPDATE || c->mode == RW_SEND) && me->portable;
  if (me->transcendental && !portable)
    c->transcendental = 1;
  if (me->kind == MATH_CONST) {
    const char *v = math_limit(me->name, rts);
    if (v)
      sb_puts(out, v);
    else
      error_at(c, ci->cur, "this numeric_limits member", "no device constant for this type");
  } else if (me->kind == MATH_MINMAX) {
    const char *suffix = !strcmp(rts, "double") ? "d" : (!strcmp(rts, "long") || !strcmp(rts, "int")) ? "l" : NULL;
    if (!suffix) {
      error_at(c, ci->cur, "std::min/std::max on this type", "only double, long and int are mapped");
    } else {
      sb_printf(out, "nestcl_%s_%s(", me->name, suffix);
      render_arg(c, ci->cur, 0, out);
      sb_puts(out, ", ");
      render_arg(c, ci->cur, 1, out);
      sb_putc(out, ')');
    }
  } else {
    sb_printf(out, "%s(", portable ? me->portable : me->name);
    for (k = 0; k < ci->nargs; k++) {
      if (k)
        sb_puts(out, ", ");
      render_arg(c, ci->cur, k, out);
    }
    sb_putc(out, ')');
  }
  free(rts);
  return 1;
}

/* A model's own one-line getter is inlined. */
int call_model_getter(rw_ctx *c, const call_info *ci, strbuf *out)
{
  return ci->ck == CXCursor_CXXMethod && is_model_scope(c, clang_getCursorSemanticParent(ci->callee)) &&
    !clang_CXXMethod_isVirtual(ci->callee) && inline_method(c, ci->cur, ci->callee, out);
}

/* A helper's generated name: nestcl_h_<model>_<method>. */
void rw_helper_name(const ir_model *m, CXCursor method, strbuf *out)
{
  char *n = cursor_spelling(method);
  sb_printf(out, "nestcl_h_%s_%s", m->name, n);
  free(n);
}

/*
 * A method of the model that update() (or a helper) calls, other than a getter
 * inline_method() could make an expression (emit_spike_, propagate_,
 * threshold_distance of the *_ps models): a function of its own over the same
 * fields (NESTCL_SELF_PARAMS, translate.c), called with the neuron, the lag of
 * the call and its own arguments. Its Time parameters are update()'s origin
 * (origin_steps): an argument for one must be update()'s origin or a helper's
 * Time parameter. Arguments by non-const reference are refused.
 */
int call_neuron_helper(rw_ctx *c, const call_info *ci, strbuf *out)
{
  int k;
  if (ci->ck != CXCursor_CXXMethod || !is_model_scope(c, clang_getCursorSemanticParent(ci->callee)) ||
      clang_CXXMethod_isVirtual(ci->callee) || clang_CXXMethod_isStatic(ci->callee))
    return 0;
  CXCursor def = clang_getCursorDefinition(ci->callee);
  if (clang_Cursor_isNull(def) || clang_Cursor_isNull(rw_body_of(def))) {
    char *what = xasprintf("call to '%s'", ci->qname);
    error_at(c, ci->cur, what, "its definition is not in the model's files");
    free(what);
    return 1;
  }
  if (clang_Cursor_getNumArguments(def) != ci->nargs) {
    char *what = xasprintf("call to '%s' with default arguments", ci->qname);
    error_at(c, ci->cur, what, "a helper is called with all its arguments");
    free(what);
    return 1;
  }
  for (k = 0; k < ci->nargs; k++) {
    CXCursor parm = clang_Cursor_getArgument(def, (unsigned)k);
    CXType pt = clang_getCursorType(parm);
    char *pn = cursor_spelling(parm);
    const char *why = NULL;
    if (rw_is_time_type(pt)) {
      CXCursor a = cursor_strip(clang_Cursor_getArgument(ci->cur, (unsigned)k));
      CXCursor r = clang_getCursorReferenced(a);
      if (clang_getCursorKind(a) != CXCursor_DeclRefExpr || clang_getCursorKind(r) != CXCursor_ParmDecl ||
          !(c->helper ? rw_is_time_type(clang_getCursorType(r)) != 0
                      : clang_equalCursors(clang_getCanonicalCursor(r),
                                           clang_getCanonicalCursor(clang_Cursor_getArgument(c->fn, 0))) != 0))
        why = "a Time argument must be update()'s origin";
    } else if (pt.kind == CXType_LValueReference && !clang_isConstQualifiedType(clang_getPointeeType(pt))) {
      why = "an argument by non-const reference";
    } else if (is_reserved_name(pn) || !strncmp(pn, "nestcl_", 7)) {
      why = "a parameter named like the generated code's own";
    }
    free(pn);
    if (why) {
      char *what = xasprintf("call to '%s'", ci->qname);
      error_at(c, ci->cur, what, why);
      free(what);
      return 1;
    }
  }
  add_neuron_helper(c->m, def);
  rw_helper_name(c->m, def, out);
  sb_printf(out, "(NESTCL_SELF_ARGS, %s", call_lag(c, ci->cur));
  for (k = 0; k < ci->nargs; k++) {
    if (rw_is_time_type(clang_getCursorType(clang_Cursor_getArgument(def, (unsigned)k))))
      continue;
    sb_puts(out, ", ");
    render_arg(c, ci->cur, k, out);
  }
  sb_putc(out, ')');
  return 1;
}

/*
 * numerics::expm1( x ): NEST's header sums its own series unless HAVE_EXPM1
 * (never defined by NEST 3.10's CMake; nestcl_libm.h, nestcl_nest_expm1).
 * Which branch this build took is read off the definition the translator
 * sees: one that calls a C library expm1 is glibc's, one without is the
 * series. All modes: host helpers (pre_run_hook) call it as update() does.
 */
int call_nest_expm1(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (strcmp(ci->qname, "numerics::expm1") || ci->nargs != 1)
    return 0;
  CXCursor def = clang_getCursorDefinition(ci->callee);
  if (clang_Cursor_isNull(def)) {
    error_at(c, ci->cur, "numerics::expm1 without a visible definition",
             "whether it is NEST's series or the C library's expm1 decides the result's last bits");
    return 1;
  }
  const int host = c->mode != RW_SEND && c->mode != RW_DYN && c->mode != RW_UPDATE;
  if (calls_method(def, "expm1")) {
    if (host) /* the C library's, as the host has it */
      return 0;
    sb_puts(out, "nestcl_glibc_expm1(");
  } else {
    sb_puts(out, "nestcl_nest_expm1(");
  }
  render_arg(c, ci->cur, 0, out);
  sb_puts(out,
          host                   ? ", nestcl_libm_host_variant() != 0)"
            : c->mode == RW_SEND ? ", nestcl_env->fused)"
                                 : ", NESTCL_LIBM_VARIANT)");
  return 1;
}

/* std::exp, std::pow and std::expm1: glibc's, bit for bit (nestcl_libm.h), in the variant the host runs. */
int call_libm(rw_ctx *c, const call_info *ci, strbuf *out)
{
  const int is_exp = (!strcmp(ci->qname, "std::exp") || !strcmp(ci->qname, "exp")) && ci->nargs == 1;
  const int is_pow = (!strcmp(ci->qname, "std::pow") || !strcmp(ci->qname, "pow")) && ci->nargs == 2;
  const int is_expm1 = (!strcmp(ci->qname, "std::expm1") || !strcmp(ci->qname, "expm1")) && ci->nargs == 1;
  if (!is_exp && !is_pow && !is_expm1)
    return 0;
  sb_puts(out, is_exp ? "nestcl_glibc_exp(" : is_pow ? "nestcl_glibc_pow(" : "nestcl_glibc_expm1(");
  render_arg(c, ci->cur, 0, out);
  if (is_pow) {
    sb_puts(out, ", ");
    render_arg(c, ci->cur, 1, out);
  }
  /* update() and the dynamics: the variant the runtime builds the kernel with (-DNESTCL_LIBM_VARIANT) */
  sb_puts(out, c->mode == RW_SEND ? ", nestcl_env->fused)" : ", NESTCL_LIBM_VARIANT)");
  return 1;
}
