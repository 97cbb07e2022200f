/*
 * Model-level checks (see check.h). libclang 14 has no operator kind query, so
 * an assignment is recognised by the operator text between its operands.
 */
#include "check.h"

#include "parse.h"
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>


typedef struct check_walk {
  ir_model *m;
  CXCursor fn;
} check_walk;

typedef struct kids {
  CXCursor c[4];
  int n;
} kids;

static enum CXChildVisitResult first_kids(CXCursor c, CXCursor parent, CXClientData data)
{
  kids *k = data;
  (void)parent;
  if (k->n < 4)
    k->c[k->n++] = c;
  return CXChildVisit_Continue;
}

static void mark_written(ir_model *m, CXCursor lhs)
{
  CXCursor l = cursor_strip(lhs);
  int fi;
  if (clang_getCursorKind(l) == CXCursor_ArraySubscriptExpr || clang_getCursorKind(l) == CXCursor_CallExpr) {
    kids k;
    k.n = 0;
    clang_visitChildren(l, first_kids, &k);
    if (k.n < 1)
      return;
    l = cursor_strip(k.c[0]);
  }
  if (clang_getCursorKind(l) != CXCursor_MemberRefExpr)
    return;
  fi = ir_find_field(m, clang_getCursorReferenced(l));
  if (fi >= 0)
    m->fields[fi].written_in_update = 1;
}

/* The operator text between two sibling operands, trimmed. */
static int op_between_is_assign(ir_model *m, CXCursor a, CXCursor b)
{
  CXFile f;
  unsigned ab, ae, bb, be;
  size_t size;
  const char *t;
  unsigned p;
  if (cursor_offsets(a, &f, &ab, &ae) || cursor_offsets(b, NULL, &bb, &be) || bb < ae)
    return 0;
  t = clang_getFileContents(m->tu->tu, f, &size);
  if (!t || bb > size)
    return 0;
  for (p = ae; p < bb; p++)
    if (t[p] == '=')
      return (p + 1 < bb && t[p + 1] == '=')                                  ? 0
        : (p > ae && (t[p - 1] == '!' || t[p - 1] == '<' || t[p - 1] == '>')) ? 0
                                                                              : 1;
  return 0;
}

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData data)
{
  check_walk *w = data;
  enum CXCursorKind kind = clang_getCursorKind(c);
  (void)parent;
  if (kind == CXCursor_CompoundAssignOperator ||
      (kind == CXCursor_UnaryOperator &&
       (clang_getCursorUnaryOperatorKind(c) == CXUnaryOperator_PreInc ||
        clang_getCursorUnaryOperatorKind(c) == CXUnaryOperator_PreDec ||
        clang_getCursorUnaryOperatorKind(c) == CXUnaryOperator_PostInc ||
        clang_getCursorUnaryOperatorKind(c) == CXUnaryOperator_PostDec ||
        clang_getCursorUnaryOperatorKind(c) == CXUnaryOperator_AddrOf))) {
    /* ++ / --, compound assignments and & (gsl_odeiv_evolve_apply's &B_.IntegrationStep_) write their
     * operand; - x or ! x does not */
    kids k;
    k.n = 0;
    clang_visitChildren(c, first_kids, &k);
    if (k.n >= 1)
      mark_written(w->m, k.c[0]);
  } else if (kind == CXCursor_BinaryOperator) {
    kids k;
    k.n = 0;
    clang_visitChildren(c, first_kids, &k);
    if (k.n == 2 && op_between_is_assign(w->m, k.c[0], k.c[1]))
      mark_written(w->m, k.c[0]);
  } else if (kind == CXCursor_VarDecl || kind == CXCursor_ParmDecl) {
    /* Locals named like a kernel argument are renamed by the rewriter; the
     * nestcl_ prefix itself belongs to the generated code. */
    char *n = cursor_spelling(c);
    if (!strncmp(n, "nestcl_", 7) || !strncmp(n, "NESTCL_", 7)) {
      char *where = cursor_where(c);
      char *t = xasprintf("%s: error: local '%s' is not supported on the device "
                          "(the nestcl_ prefix is reserved for the generated code)",
                          where, n);
      ir_diag_add(w->m, 1, t);
      free(t);
      free(where);
    }
    free(n);
  }
  return CXChildVisit_Recurse;
}

int check_is_assignment(ir_model *m, CXCursor op)
{
  kids k;
  if (clang_getCursorKind(op) == CXCursor_CompoundAssignOperator)
    return 1;
  if (clang_getCursorKind(op) != CXCursor_BinaryOperator)
    return 0;
  k.n = 0;
  clang_visitChildren(op, first_kids, &k);
  return k.n == 2 && op_between_is_assign(m, k.c[0], k.c[1]);
}

void check_function(ir_model *m, CXCursor fn)
{
  check_walk w;
  w.m = m;
  w.fn = fn;
  clang_visitChildren(fn, visit, &w);
}

typedef struct reach {
  ir_model *m;
  CXCursor *fns;
  int n;
} reach;

/* The model's own methods that a function calls, added to the walk once each (update()'s helpers). */
static enum CXChildVisitResult visit_calls(CXCursor c, CXCursor parent, CXClientData data)
{
  reach *r = data;
  (void)parent;
  if (clang_getCursorKind(c) == CXCursor_CallExpr) {
    CXCursor callee = clang_getCursorReferenced(c);
    if (clang_getCursorKind(callee) == CXCursor_CXXMethod && !clang_Cursor_isNull(r->m->cls) &&
        clang_equalCursors(clang_getCanonicalCursor(clang_getCursorSemanticParent(callee)),
                           clang_getCanonicalCursor(r->m->cls))) {
      CXCursor def = clang_getCursorDefinition(callee);
      int k;
      for (k = 0; k < r->n && !clang_Cursor_isNull(def); k++)
        if (clang_equalCursors(clang_getCanonicalCursor(r->fns[k]), clang_getCanonicalCursor(def)))
          break;
      if (!clang_Cursor_isNull(def) && k == r->n) {
        r->fns = xrealloc(r->fns, sizeof *r->fns * (size_t)(r->n + 1));
        r->fns[r->n++] = def;
      }
    }
  }
  return CXChildVisit_Recurse;
}

void check_model(ir_model *m)
{
  static const ir_method_id hot[] = {IR_M_UPDATE, IR_M_HANDLE_SPIKE, IR_M_HANDLE_CURRENT};
  size_t k;
  reach r;
  r.m = m;
  r.fns = NULL;
  r.n = 0;
  for (k = 0; k < sizeof hot / sizeof hot[0]; k++) {
    check_walk w;
    if (!m->has_method[hot[k]])
      continue;
    w.m = m;
    w.fn = m->methods[hot[k]];
    clang_visitChildren(w.fn, visit, &w);
    if (hot[k] == IR_M_UPDATE)
      clang_visitChildren(w.fn, visit_calls, &r);
  }
  /* what update()'s helpers write is written in update() too (no such parameter becomes a constant) */
  for (int j = 0; j < r.n; j++) {
    check_walk w;
    w.m = m;
    w.fn = r.fns[j];
    clang_visitChildren(w.fn, visit, &w);
    clang_visitChildren(w.fn, visit_calls, &r);
  }
  free(r.fns);
}
