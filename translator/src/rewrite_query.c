/*
 * Rewriting, questions about the AST that rules of several families ask: what
 * a call calls and on which object, whether a call is below a node, whether an
 * expression has a side effect, what a getter returns, which distribution a
 * type names, which Buffers_ members are host-only, and what init_buffers_()
 * leaves to the runtime. It renders nothing and depends only on
 * rewrite_common.c, so the families can share it without using one another.
 */
#include "rewrite_internal.h"

#include "mathtable.h"

#include <stdlib.h>
#include <string.h>

/* ---- calls ---- */

/* The object of a member call (x in x.f( ... )), or a null cursor. */
CXCursor member_base(CXCursor call)
{
  cursor_kids k = cursor_children(call);
  CXCursor r = clang_getNullCursor();
  if (k.n >= 1 && clang_getCursorKind(k.c[0]) == CXCursor_MemberRefExpr) {
    cursor_kids b = cursor_children(k.c[0]);
    if (b.n >= 1)
      r = b.c[0];
    free(b.c);
  }
  free(k.c);
  return r;
}

/*
 * The name of what a call calls. A call whose callee depends on a template
 * parameter (get_target( t ) through ConnectionBase in a synapse template)
 * has no callee of its own: its name is that of the overload set its first
 * child refers to.
 */
char *call_name(CXCursor call)
{
  char *n = cursor_spelling(call);
  if (*n)
    return n;
  free(n);
  cursor_kids k = cursor_children(call);
  n = xstrdup("");
  if (k.n >= 1) {
    CXCursor r = clang_getCursorReferenced(k.c[0]);
    if (!clang_Cursor_isNull(r)) {
      free(n);
      n = cursor_spelling(r);
    }
  }
  if (k.n >= 1 && !*n) {
    /* Base::f( ... ) in a template names a dependent member: its last identifier token */
    CXTranslationUnit tu = clang_Cursor_getTranslationUnit(k.c[0]);
    CXToken *toks = NULL;
    unsigned nt = 0;
    clang_tokenize(tu, clang_getCursorExtent(k.c[0]), &toks, &nt);
    if (nt && clang_getTokenKind(toks[nt - 1]) == CXToken_Identifier) {
      CXString ts = clang_getTokenSpelling(tu, toks[nt - 1]);
      free(n);
      n = xstrdup(clang_getCString(ts));
      clang_disposeString(ts);
    }
    if (toks)
      clang_disposeTokens(tu, toks, nt);
  }
  free(k.c);
  return n;
}

int callee_named(CXCursor call, const char *name)
{
  char *n = call_name(call);
  int r = !strcmp(n, name);
  free(n);
  return r;
}

/* Depth-first search for a call named name below cur. */
typedef struct find_call {
  const char *name;
  CXCursor found;
} find_call;

static enum CXChildVisitResult visit_find_call(CXCursor c, CXCursor parent, CXClientData data)
{
  find_call *fc = data;
  (void)parent;
  if ((clang_getCursorKind(c) == CXCursor_CallExpr) && callee_named(c, fc->name)) {
    fc->found = c;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

CXCursor find_call_below(CXCursor cur, const char *name)
{
  find_call fc;
  fc.name = name;
  fc.found = clang_getNullCursor();
  if (clang_getCursorKind(cur) == CXCursor_CallExpr && callee_named(cur, name))
    return cur;
  clang_visitChildren(cur, visit_find_call, &fc);
  return fc.found;
}

/* A call of the method named name (set_multiplicity, set_offset) below a cursor. */
typedef struct method_find {
  const char *name;
  int hit;
} method_find;

static enum CXChildVisitResult visit_find_method(CXCursor x, CXCursor parent, CXClientData data)
{
  method_find *mf = data;
  (void)parent;
  if (clang_getCursorKind(x) == CXCursor_CallExpr) {
    char *n = cursor_spelling(clang_getCursorReferenced(x));
    if (!strcmp(n, mf->name))
      mf->hit = 1;
    free(n);
    if (mf->hit)
      return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

int calls_method(CXCursor fn, const char *name)
{
  method_find mf;
  mf.name = name;
  mf.hit = 0;
  clang_visitChildren(fn, visit_find_method, &mf);
  return mf.hit;
}

/*
 * The lag at a call site of a helper: update()'s loop variable inside the lag
 * loop, from before it (emit_instant_spike_( origin, from, ... ) of the *_ps
 * models), a helper's own nestcl_lag inside a helper. It numbers a failure's
 * step.
 */
const char *call_lag(rw_ctx *c, CXCursor call)
{
  if (c->helper)
    return "nestcl_lag";
  if (c->lag_var && !clang_Cursor_isNull(c->lag_loop)) {
    CXFile lf, cf;
    unsigned lb, le, cb, ce;
    if (!cursor_offsets(c->lag_loop, &lf, &lb, &le) && !cursor_offsets(call, &cf, &cb, &ce) &&
        clang_File_isEqual(lf, cf) && cb >= lb && ce <= le)
      return c->lag_var;
  }
  return "from";
}

/* Records def, a method update() calls, in m->helpers (once): translate.c renders each as a function. */
void add_neuron_helper(ir_model *m, CXCursor def)
{
  int j;
  for (j = 0; j < m->n_helpers; j++)
    if (clang_equalCursors(clang_getCanonicalCursor(m->helpers[j]), clang_getCanonicalCursor(def)))
      return;
  m->helpers = xrealloc(m->helpers, sizeof *m->helpers * (size_t)(m->n_helpers + 1));
  m->helpers[m->n_helpers++] = def;
}

/* ---- side effects ---- */

/* Whether expression e may change something: an assignment, ++ or --, or new. */
enum CXChildVisitResult visit_side_effect(CXCursor x, CXCursor parent, CXClientData data)
{
  int *hit = data;
  enum CXCursorKind k = clang_getCursorKind(x);
  (void)parent;
  if (k == CXCursor_CompoundAssignOperator || k == CXCursor_CXXNewExpr || k == CXCursor_CXXDeleteExpr ||
      k == CXCursor_CXXThrowExpr || k == CXCursor_LambdaExpr ||
      (k == CXCursor_BinaryOperator && clang_getCursorBinaryOperatorKind(x) == CXBinaryOperator_Assign)) {
    *hit = 1;
    return CXChildVisit_Break;
  }
  if (k == CXCursor_UnaryOperator) {
    enum CXUnaryOperatorKind u = clang_getCursorUnaryOperatorKind(x);
    if (u == CXUnaryOperator_PostInc || u == CXUnaryOperator_PostDec || u == CXUnaryOperator_PreInc ||
        u == CXUnaryOperator_PreDec) {
      *hit = 1;
      return CXChildVisit_Break;
    }
  }
  return CXChildVisit_Recurse;
}

int no_side_effect(CXCursor e)
{
  int hit = 0;
  if (visit_side_effect(e, clang_getNullCursor(), &hit) == CXChildVisit_Recurse)
    clang_visitChildren(e, visit_side_effect, &hit);
  return !hit;
}

/* An initialiser that a dropped declaration may skip: no side effect, and calls only of const methods, kernel(),
 * the math table, and constructors of std::vector and of NEST's events. */
enum CXChildVisitResult visit_pure_init(CXCursor x, CXCursor parent, CXClientData data)
{
  int *impure = data;
  (void)parent;
  if (clang_getCursorKind(x) == CXCursor_CallExpr) {
    CXCursor callee = clang_getCursorReferenced(x);
    enum CXCursorKind ck = clang_getCursorKind(callee);
    char *n = cursor_spelling(callee);
    char *q = cursor_qualified_name(callee);
    int ok = (ck == CXCursor_CXXMethod && clang_CXXMethod_isConst(callee)) ||
      (ck == CXCursor_FunctionDecl && !strcmp(q, "kernel")) ||
      math_lookup(q, clang_Cursor_getNumArguments(x)) != NULL ||
      (ck == CXCursor_Constructor && (!strcmp(n, "vector") || (strlen(n) > 5 && !strcmp(n + strlen(n) - 5, "Event"))));
    free(n);
    free(q);
    if (!ok) {
      *impure = 1;
      return CXChildVisit_Break;
    }
  }
  return CXChildVisit_Recurse;
}

/* An expression with no side effect and only such calls. */
int pure_expr(CXCursor e)
{
  int impure = !no_side_effect(e);
  if (!impure && visit_pure_init(e, clang_getNullCursor(), &impure) == CXChildVisit_Recurse)
    clang_visitChildren(e, visit_pure_init, &impure);
  return !impure;
}

/* ---- definitions, initialisers, operators ---- */

/* The body of a function definition (rewrite.h). */
CXCursor rw_body_of(CXCursor fn)
{
  cursor_kids k = cursor_children(fn);
  CXCursor r = clang_getNullCursor();
  int j;
  for (j = 0; j < k.n; j++)
    if (clang_getCursorKind(k.c[j]) == CXCursor_CompoundStmt)
      r = k.c[j];
  free(k.c);
  return r;
}

/* A call to the model's own getter whose body is `return <member>;` stands for that member. */
CXCursor getter_target(rw_ctx *c, CXCursor e)
{
  CXCursor callee, def, body;
  cursor_kids st;
  if (clang_getCursorKind(e) != CXCursor_CallExpr || clang_Cursor_getNumArguments(e) != 0)
    return e;
  callee = clang_getCursorReferenced(e);
  if (clang_getCursorKind(callee) != CXCursor_CXXMethod || !is_model_scope(c, clang_getCursorSemanticParent(callee)))
    return e;
  def = clang_getCursorDefinition(callee);
  body = clang_Cursor_isNull(def) ? def : rw_body_of(def);
  if (clang_Cursor_isNull(body))
    return e;
  st = cursor_children(body);
  if (st.n == 1 && clang_getCursorKind(st.c[0]) == CXCursor_ReturnStmt) {
    cursor_kids r = cursor_children(st.c[0]);
    if (r.n == 1 && clang_getCursorKind(cursor_strip(r.c[0])) == CXCursor_MemberRefExpr &&
        ir_find_field(c->m, clang_getCursorReferenced(cursor_strip(r.c[0]))) >= 0)
      e = cursor_strip(r.c[0]);
    free(r.c);
  }
  free(st.c);
  return e;
}

/* The constructor call that initialises a variable (its CallExpr child), or a null cursor. */
CXCursor var_construct(CXCursor v)
{
  CXCursor r = clang_getNullCursor();
  cursor_kids k = cursor_children(v);
  for (int j = 0; j < k.n && clang_Cursor_isNull(r); j++) {
    CXCursor x = cursor_strip(k.c[j]);
    if (clang_getCursorKind(x) == CXCursor_CallExpr)
      r = x;
  }
  free(k.c);
  return r;
}

/* The distribution a type names (RandomDistribution< std::X_distribution<> >, or its param_type), or NULL. */
const char *dist_kind(CXType t)
{
  static const char *const kinds[][2] = {
    {"lognormal_distribution", "lognormal"},     {"normal_distribution", "normal"},
    {"poisson_distribution", "poisson"},         {"gamma_distribution", "gamma"},
    {"exponential_distribution", "exponential"}, {"binomial_distribution", "binomial"},
    {"uniform_real_distribution", "uniform"}};
  if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference)
    t = clang_getPointeeType(t);
  CXString s = clang_getTypeSpelling(clang_getCanonicalType(t));
  const char *sp = clang_getCString(s), *r = NULL;
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds && !r; k++)
    if (strstr(sp, kinds[k][0]))
      r = kinds[k][1];
  clang_disposeString(s);
  return r;
}

/* Whether the operator between a binary operator's two operands is a plain '='. */
int is_plain_assign(rw_ctx *c, cursor_kids ops)
{
  CXFile f;
  unsigned ab, ae, bb, be, p;
  size_t size;
  const char *t;
  if (ops.n != 2 || cursor_offsets(ops.c[0], &f, &ab, &ae) || cursor_offsets(ops.c[1], NULL, &bb, &be) || bb < ae)
    return 0;
  t = file_text(c, f, &size);
  if (!t || bb > size)
    return 0;
  for (p = ae; p < bb && (t[p] == ' ' || t[p] == '\t' || t[p] == '\n'); p++)
    ;
  return p < bb && t[p] == '=' && (p + 1 >= bb || t[p + 1] != '=');
}

/* ---- the model's buffers ---- */

/* A member of Buffers_ that is no field and no input buffer (host-only: the gap-junction coefficients). */
int is_host_buffer_member(rw_ctx *c, CXCursor ref)
{
  return clang_getCursorKind(ref) == CXCursor_FieldDecl && !clang_Cursor_isNull(c->m->structs[3]) &&
    clang_equalCursors(clang_getCanonicalCursor(clang_getCursorSemanticParent(ref)),
                       clang_getCanonicalCursor(c->m->structs[3])) &&
    ir_find_field(c->m, ref) < 0 && ir_find_channel_group(c->m, ref) < 0;
}

static enum CXChildVisitResult visit_member_use(CXCursor x, CXCursor parent, CXClientData data)
{
  CXCursor *decl = data;
  (void)parent;
  if (clang_getCursorKind(x) == CXCursor_MemberRefExpr &&
      clang_equalCursors(clang_getCanonicalCursor(clang_getCursorReferenced(x)), clang_getCanonicalCursor(*decl))) {
    *decl = clang_getNullCursor();
    return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

/* Whether handle( GapJunctionEvent& ) names member ref: a gap-junction input (interpolation_coefficients). */
int is_gap_input(rw_ctx *c, CXCursor ref)
{
  CXCursor d = ref;
  if (!c->m->gap_junctions || !is_host_buffer_member(c, ref))
    return 0;
  clang_visitChildren(c->m->gap_handler, visit_member_use, &d);
  return clang_Cursor_isNull(d);
}

/* init_buffers_(): what the runtime sets up itself (rw_is_runtime_setup, rewrite.h). */
typedef struct setup_find {
  ir_model *m;
  int found;
} setup_find;

static enum CXChildVisitResult visit_runtime_setup(CXCursor x, CXCursor parent, CXClientData data)
{
  setup_find *sf = data;
  enum CXCursorKind k = clang_getCursorKind(x);
  (void)parent;
  if (k == CXCursor_MemberRefExpr) {
    CXCursor r = clang_getCursorReferenced(x);
    CXCursor owner = clang_getCanonicalCursor(clang_getCursorSemanticParent(r));
    /* a member of Buffers_ without SoA layout: an input buffer, the logger, a GSL object */
    if (clang_getCursorKind(r) == CXCursor_FieldDecl && !clang_Cursor_isNull(sf->m->structs[3]) &&
        clang_equalCursors(owner, clang_getCanonicalCursor(sf->m->structs[3])) && ir_find_field(sf->m, r) < 0)
      sf->found = 1;
  } else if (k == CXCursor_CallExpr) {
    char *n = cursor_spelling(clang_getCursorReferenced(x));
    if (!strncmp(n, "gsl_", 4) || !strcmp(n, "clear_history"))
      sf->found = 1;
    free(n);
  }
  return sf->found ? CXChildVisit_Break : CXChildVisit_Recurse;
}

int rw_is_runtime_setup(ir_model *m, CXCursor stmt)
{
  setup_find sf;
  sf.m = m;
  sf.found = 0;
  if (visit_runtime_setup(stmt, clang_getNullCursor(), &sf) == CXChildVisit_Recurse)
    clang_visitChildren(stmt, visit_runtime_setup, &sf);
  return sf.found;
}
