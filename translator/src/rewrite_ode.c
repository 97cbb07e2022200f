/*
 * Rewriting, ODEs and propagators: gsl_odeiv_evolve_apply as the runtime's
 * RKF45 (nestcl_rkf45.h), regula_falsi, and IAFPropagator's evaluate().
 */
#include "rewrite_internal.h"

#include <stdlib.h>
#include <string.h>

/*
 * NEST's regula_falsi( *this, dt ) (libnestutil/regula_falsi.h): the root of
 * the model's threshold_distance() in [0, dt]. The translator writes its own
 * function with the same operations (translate.c, emit_regula_falsi) over the
 * model's threshold_distance(), a helper; NEST's NumericalInstability becomes
 * the model's failure.
 */
int call_regula_falsi(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "regula_falsi") || ci->nargs != 2 || ci->ck != CXCursor_FunctionDecl)
    return 0;
  CXCursor a0 = cursor_strip(clang_Cursor_getArgument(ci->cur, 0));
  cursor_kids k = cursor_children(a0);
  int is_this = clang_getCursorKind(a0) == CXCursor_UnaryOperator && k.n == 1 &&
    clang_getCursorKind(cursor_strip(k.c[0])) == CXCursor_CXXThisExpr;
  free(k.c);
  CXCursor def = clang_getNullCursor();
  if (is_this && !clang_Cursor_isNull(c->m->cls)) {
    cursor_kids mk = cursor_children(c->m->cls);
    for (int j = 0; j < mk.n; j++) {
      char *n = cursor_spelling(mk.c[j]);
      if (clang_getCursorKind(mk.c[j]) == CXCursor_CXXMethod && !strcmp(n, "threshold_distance"))
        def = clang_getCursorDefinition(mk.c[j]);
      free(n);
    }
    free(mk.c);
  }
  if (!is_this || clang_Cursor_isNull(def) || clang_Cursor_getNumArguments(def) != 1 ||
      clang_Cursor_isNull(rw_body_of(def))) {
    error_at(c, ci->cur, "regula_falsi other than on the model's own threshold_distance( t )",
             "the device's root finder calls the model's threshold_distance()");
    return 1;
  }
  add_neuron_helper(c->m, def);
  c->m->regula_falsi = def;
  ir_add_failure(c->m, "NumericalInstability");
  sb_printf(out, "nestcl_h_%s_regula_falsi(NESTCL_SELF_ARGS, %s, ", c->m->name, call_lag(c, ci->cur));
  render_arg(c, ci->cur, 1, out);
  sb_putc(out, ')');
  return 1;
}

/*
 * IAFPropagatorExp / IAFPropagatorAlpha (libnestutil/iaf_propagator.h), members
 * of the *_ps models that pre_run_hook() constructs from (tau_syn, tau_m, c_m):
 * evaluate( h ) is nestcl_iaf_propagator_exp / _alpha (nestcl_libm.h), the same
 * operations over the constructor's arguments, read where evaluate() is called
 * (parameters update() never writes). The Alpha's pair is assigned through
 * std::tie( a, b ) = propagator.evaluate( h ) into two locals.
 */
typedef struct prop_find {
  CXCursor member; /* the propagator member */
  CXCursor ctor; /* its constructor call in pre_run_hook() */
  int n_ctors;
} prop_find;

static enum CXChildVisitResult visit_prop_assign(CXCursor x, CXCursor parent, CXClientData data)
{
  prop_find *pf = data;
  (void)parent;
  if (clang_getCursorKind(x) == CXCursor_CallExpr) {
    char *n = cursor_spelling(clang_getCursorReferenced(x));
    if (!strcmp(n, "operator=")) {
      cursor_kids k = cursor_children(x);
      if (k.n >= 2) {
        CXCursor lhs = cursor_strip(k.c[0]);
        if (clang_getCursorKind(lhs) == CXCursor_MemberRefExpr &&
            clang_equalCursors(clang_getCanonicalCursor(clang_getCursorReferenced(lhs)),
                               clang_getCanonicalCursor(pf->member))) {
          CXCursor ctor = find_call_below(k.c[k.n - 1], "IAFPropagatorExp");
          if (clang_Cursor_isNull(ctor))
            ctor = find_call_below(k.c[k.n - 1], "IAFPropagatorAlpha");
          if (!clang_Cursor_isNull(ctor) && clang_Cursor_getNumArguments(ctor) == 3) {
            pf->ctor = ctor;
            pf->n_ctors++;
          } else {
            pf->n_ctors += 2; /* assigned otherwise: refused */
          }
        }
      }
      free(k.c);
    }
    free(n);
  }
  return CXChildVisit_Recurse;
}

typedef struct param_only {
  rw_ctx *c;
  int ok;
} param_only;

static enum CXChildVisitResult visit_param_only(CXCursor x, CXCursor parent, CXClientData data)
{
  param_only *po = data;
  (void)parent;
  enum CXCursorKind k = clang_getCursorKind(x);
  if (k == CXCursor_MemberRefExpr) {
    int fi = ir_find_field(po->c->m, clang_getCursorReferenced(x));
    if (fi < 0 || po->c->m->fields[fi].role != IR_ROLE_PARAMETER || po->c->m->fields[fi].written_in_update)
      po->ok = 0;
    return CXChildVisit_Continue;
  }
  if (k == CXCursor_DeclRefExpr || k == CXCursor_CallExpr)
    po->ok = 0;
  return po->ok ? CXChildVisit_Recurse : CXChildVisit_Break;
}

/* Whether e reads nothing but parameters that update() never writes (and constants). */
static int args_are_parameters(rw_ctx *c, CXCursor e)
{
  param_only po;
  po.c = c;
  po.ok = 1;
  if (visit_param_only(e, clang_getNullCursor(), &po) == CXChildVisit_Recurse)
    clang_visitChildren(e, visit_param_only, &po);
  return po.ok;
}

/* The propagator a call's object names, with its constructor's arguments in args; 0 with why set when not. */
static int propagator_of(rw_ctx *c, CXCursor base, CXCursor args[3], const char **why)
{
  CXCursor b = clang_Cursor_isNull(base) ? base : cursor_strip(base);
  prop_find pf;
  *why = "the propagator is not a member of the model";
  if (clang_Cursor_isNull(b) || clang_getCursorKind(b) != CXCursor_MemberRefExpr)
    return 0;
  pf.member = clang_getCursorReferenced(b);
  pf.ctor = clang_getNullCursor();
  pf.n_ctors = 0;
  if (!is_model_scope(c, clang_getCursorSemanticParent(pf.member)))
    return 0;
  if (c->m->has_method[IR_M_PRE_RUN])
    clang_visitChildren(c->m->methods[IR_M_PRE_RUN], visit_prop_assign, &pf);
  if (pf.n_ctors != 1) {
    *why = "pre_run_hook() must construct it once from (tau_syn, tau_m, c_m)";
    return 0;
  }
  for (int k = 0; k < 3; k++) {
    CXCursor a = clang_Cursor_getArgument(pf.ctor, (unsigned)k);
    /* parameters only: their values on the device are the ones pre_run_hook() read */
    if (!pure_expr(a) || !args_are_parameters(c, a)) {
      *why = "its constructor's arguments must be parameters update() never writes";
      return 0;
    }
    args[k] = a;
  }
  return 1;
}

int call_propagator(rw_ctx *c, const call_info *ci, strbuf *out)
{
  int alpha = !strcmp(ci->cls, "IAFPropagatorAlpha");
  if (!name_is(ci, "evaluate") || ci->nargs != 1 || (!alpha && strcmp(ci->cls, "IAFPropagatorExp")))
    return 0;
  CXCursor args[3];
  const char *why;
  if (!propagator_of(c, ci->base, args, &why)) {
    error_at(c, ci->cur, alpha ? "IAFPropagatorAlpha::evaluate" : "IAFPropagatorExp::evaluate", why);
    return 1;
  }
  if (alpha) {
    error_at(c, ci->cur, "IAFPropagatorAlpha::evaluate other than in std::tie( a, b ) = ...evaluate( h )",
             "its pair goes into two locals");
    return 1;
  }
  sb_puts(out, "nestcl_iaf_propagator_exp(");
  for (int k = 0; k < 3; k++) {
    render_sub(c, args[k], out);
    sb_puts(out, ", ");
  }
  render_arg(c, ci->cur, 0, out);
  sb_puts(out, ", NESTCL_LIBM_VARIANT)");
  return 1;
}

/* std::tie( a, b ) = propagator_.evaluate( h ) of an IAFPropagatorAlpha: both locals at once. */
int call_tie_propagator(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "operator="))
    return 0;
  cursor_kids k = cursor_children(ci->cur);
  CXCursor tie = k.n >= 2 ? find_call_below(k.c[0], "tie") : clang_getNullCursor();
  CXCursor ev = k.n >= 2 ? find_call_below(k.c[k.n - 1], "evaluate") : clang_getNullCursor();
  free(k.c);
  if (clang_Cursor_isNull(tie) || clang_Cursor_isNull(ev))
    return 0;
  CXCursor args[3];
  const char *why = NULL;
  CXCursor eb = member_base(ev);
  char *cls = cursor_spelling(clang_getCursorSemanticParent(clang_getCursorReferenced(ev)));
  if (strcmp(cls, "IAFPropagatorAlpha") || clang_Cursor_getNumArguments(ev) != 1)
    why = "only IAFPropagatorAlpha's pair is taken apart on the device";
  free(cls);
  if (!why && clang_Cursor_getNumArguments(tie) != 2)
    why = "std::tie of two locals";
  for (int j = 0; !why && j < 2; j++) {
    CXCursor a = cursor_strip(clang_Cursor_getArgument(tie, (unsigned)j));
    CXCursor r = clang_getCursorReferenced(a);
    if (clang_getCursorKind(a) != CXCursor_DeclRefExpr || clang_getCursorKind(r) != CXCursor_VarDecl ||
        !is_local_decl(r) || clang_getCanonicalType(clang_getCursorType(r)).kind != CXType_Double)
      why = "std::tie of two double locals";
  }
  if (!why)
    propagator_of(c, eb, args, &why) ? (void)(why = NULL) : (void)0;
  if (why) {
    error_at(c, ci->cur, "std::tie( ... ) = propagator.evaluate( h )", why);
    return 1;
  }
  sb_puts(out, "nestcl_iaf_propagator_alpha(");
  for (int j = 0; j < 3; j++) {
    render_sub(c, args[j], out);
    sb_puts(out, ", ");
  }
  render_arg(c, ev, 0, out);
  for (int j = 0; j < 2; j++) {
    sb_puts(out, ", &");
    render_arg(c, tie, j, out);
  }
  sb_puts(out, ", NESTCL_LIBM_VARIANT)");
  return 1;
}

/* Whether an expression names the declaration called name (gsl_odeiv_step_rkf45). */
static int cursor_refers_to_name(CXCursor e, const char *name)
{
  char *n = cursor_spelling(clang_getCursorReferenced(cursor_strip(e)));
  int r = !strcmp(n, name);
  free(n);
  return r;
}

/* The field an expression names (S_.y_, through getters), or -1. */
static int field_of_expr(rw_ctx *c, CXCursor e)
{
  CXCursor b = getter_target(c, cursor_strip(e));
  return clang_getCursorKind(b) == CXCursor_MemberRefExpr ? ir_find_field(c->m, clang_getCursorReferenced(b)) : -1;
}

static CXCursor address_operand(CXCursor e);

/* &v[ 0 ] of a vector field v (NEST's &S_.y_[ 0 ]): v's index, or -1. */
static int first_element_field(rw_ctx *c, CXCursor e)
{
  CXCursor s = address_operand(e);
  if (clang_Cursor_isNull(s) ||
      (clang_getCursorKind(s) != CXCursor_CallExpr && clang_getCursorKind(s) != CXCursor_ArraySubscriptExpr))
    return -1;
  cursor_kids k = cursor_children(s);
  int fi = -1, zero = 0;
  for (int j = 0; j < k.n; j++) {
    CXCursor x = cursor_strip(k.c[j]);
    if (clang_getCursorKind(x) == CXCursor_MemberRefExpr && fi < 0) {
      fi = field_of_expr(c, x);
    } else if (clang_getCursorKind(x) == CXCursor_IntegerLiteral) {
      CXEvalResult r = clang_Cursor_Evaluate(x);
      zero = r && clang_EvalResult_getKind(r) == CXEval_Int && clang_EvalResult_getAsLongLong(r) == 0;
      if (r)
        clang_EvalResult_dispose(r);
    }
  }
  free(k.c);
  return zero ? fi : -1;
}

/* The operand of &x, or a null cursor when e is not an address-of. */
static CXCursor address_operand(CXCursor e)
{
  CXCursor u = cursor_strip(e);
  CXCursor r = clang_getNullCursor();
  if (clang_getCursorKind(u) == CXCursor_UnaryOperator) {
    CXToken *toks = NULL;
    unsigned nt = 0;
    CXTranslationUnit tu = clang_Cursor_getTranslationUnit(u);
    clang_tokenize(tu, clang_getCursorExtent(u), &toks, &nt);
    if (nt >= 2) {
      CXString ts = clang_getTokenSpelling(tu, toks[0]);
      if (!strcmp(clang_getCString(ts), "&")) {
        cursor_kids k = cursor_children(u);
        if (k.n == 1)
          r = cursor_strip(k.c[0]);
        free(k.c);
      }
      clang_disposeString(ts);
    }
    if (toks)
      clang_disposeTokens(tu, toks, nt);
  }
  return r;
}

/*
 * gsl_odeiv_evolve_apply( e, c, s, &sys, &t, t1, &h, y ) with the rkf45
 * stepper and a standard control (init_buffers_()): one call of the device's
 * RKF45 (nestcl_rkf45.h) on the neuron's state vector, with the model's
 * dynamics over its context nestcl_ode (translate.c emits both).
 */
int call_evolve_apply(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "gsl_odeiv_evolve_apply"))
    return 0;
  ir_model *m = c->m;
  if (ci->nargs != 8 || !m->has_ode) {
    error_at(c, ci->cur, "gsl_odeiv_evolve_apply", "init_buffers_() does not set B_.sys_.function to the dynamics");
    return 1;
  }
  if (clang_Cursor_isNull(m->ode_dyn)) {
    error_at(c, m->ode_assign, "this dynamics function", "its definition is not in the model's files");
    return 1;
  }
  if (clang_Cursor_isNull(m->ode_step) || clang_Cursor_getNumArguments(m->ode_step) != 2 ||
      !cursor_refers_to_name(clang_Cursor_getArgument(m->ode_step, 0), "gsl_odeiv_step_rkf45")) {
    error_at(c, clang_Cursor_isNull(m->ode_step) ? ci->cur : m->ode_step, "a GSL stepper other than rkf45",
             "the device reproduces gsl_odeiv_step_rkf45 only");
    return 1;
  }
  char *cn = clang_Cursor_isNull(m->ode_control) ? xstrdup("") : cursor_spelling(m->ode_control);
  int cargs = clang_Cursor_isNull(m->ode_control) ? -1 : clang_Cursor_getNumArguments(m->ode_control);
  const char *ctl = !strcmp(cn, "gsl_odeiv_control_y_new") && cargs == 2 ? "nestcl_rkf45_control_y("
    : !strcmp(cn, "gsl_odeiv_control_yp_new") && cargs == 2              ? "nestcl_rkf45_control_yp("
    : !strcmp(cn, "gsl_odeiv_control_standard_new") && cargs == 4        ? "nestcl_rkf45_control_standard("
                                                                         : NULL;
  free(cn);
  if (!ctl) {
    error_at(c, clang_Cursor_isNull(m->ode_control) ? ci->cur : m->ode_control, "this GSL step-size control",
             "the device reproduces the standard controls (gsl_odeiv_control_y_new, _yp_new, _standard_new)");
    return 1;
  }
  int yi = field_of_expr(c, clang_Cursor_getArgument(ci->cur, 7));
  if (yi < 0)
    yi = first_element_field(c, clang_Cursor_getArgument(ci->cur, 7));
  if (yi < 0 || m->fields[yi].type != IR_T_DOUBLE || m->fields[yi].role != IR_ROLE_STATE || yi != ir_ode_field(m)) {
    error_at(
      c, clang_Cursor_getArgument(ci->cur, 7), "this ODE state vector",
      yi >= 0 && ir_per_receptor(&m->fields[yi])
        ? "a state vector sized at run time has no SoA layout unless the model resizes it to A + B * n_receptors()"
        : "it must be a double array of State_ (fixed size, or resized to A + B * n_receptors())");
    return 1;
  }
  CXCursor hv = address_operand(clang_Cursor_getArgument(ci->cur, 6));
  int hi = clang_Cursor_isNull(hv) ? -1 : field_of_expr(c, hv);
  if (hi < 0 || m->fields[hi].array_len != 0 || m->fields[hi].type != IR_T_DOUBLE) {
    error_at(c, clang_Cursor_getArgument(ci->cur, 6), "this step size argument",
             "it must be the address of a double member (NEST's B_.IntegrationStep_)");
    return 1;
  }
  CXCursor tv = address_operand(clang_Cursor_getArgument(ci->cur, 4));
  if (clang_Cursor_isNull(tv) || clang_getCursorKind(tv) != CXCursor_DeclRefExpr ||
      !is_local_decl(clang_getCursorReferenced(tv))) {
    error_at(c, clang_Cursor_getArgument(ci->cur, 4), "this time argument", "it must be the address of a local double");
    return 1;
  }
  c->used[yi] = 1;
  sb_printf(out, "%s_nestcl_evolve(&nestcl_ode, %s", m->name, ctl);
  for (int k = 0; k < cargs; k++) {
    render_sub(c, clang_Cursor_getArgument(m->ode_control, (unsigned)k), out);
    sb_puts(out, ", ");
  }
  sb_puts(out, "NESTCL_LIBM_VARIANT), ");
  render_arg(c, ci->cur, 4, out);
  sb_puts(out, ", ");
  render_arg(c, ci->cur, 5, out);
  sb_puts(out, ", ");
  render_arg(c, ci->cur, 6, out);
  sb_printf(out, ", %s, n, nestcl_i)", m->fields[yi].c_name);
  return 1;
}
