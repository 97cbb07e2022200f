/*
 * Rewriting, refused constructs: the C++ constructs with no device
 * counterpart, virtual calls and calls no rule knows, each with the reason
 * the diagnostic gives.
 */
#include "rewrite_internal.h"

#include <stdlib.h>

int call_virtual(rw_ctx *c, const call_info *ci, strbuf *out)
{
  (void)out;
  if (ci->ck != CXCursor_CXXMethod || !clang_CXXMethod_isVirtual(ci->callee))
    return 0;
  char *what = xasprintf("virtual call to '%s'", ci->qname);
  error_at(c, ci->cur, what, "virtual dispatch");
  free(what);
  return 1;
}

int call_unknown(rw_ctx *c, const call_info *ci, strbuf *out)
{
  (void)out;
  char *what = xasprintf("call to '%s'", *ci->qname ? ci->qname : ci->name);
  error_at(c, ci->cur, what, "not in the built-in table");
  free(what);
  return 1;
}

/* Constructs with no device counterpart, with the reason given in the diagnostic. */
static const struct {
  enum CXCursorKind kind;
  const char *construct, *why;
  unsigned modes;
} unsupported[] = {
  {CXCursor_CXXThisExpr, "'this'", "unresolvable pointer", RW_ANY},
  {CXCursor_CXXNewExpr, "'new'", "heap allocation", RW_ANY},
  {CXCursor_CXXDeleteExpr, "'delete'", "heap allocation", RW_ANY},
  {CXCursor_CXXThrowExpr, "'throw'", "exceptions", RW_ANY},
  {CXCursor_CXXTryStmt, "'try'", "exceptions", RW_ANY},
  {CXCursor_CXXCatchStmt, "'try'", "exceptions", RW_ANY},
  {CXCursor_CXXForRangeStmt, "range-based for", "iterators; loop over an index", RW_ANY},
  {CXCursor_CXXDynamicCastExpr, "'dynamic_cast'", "run-time type information", RW_ANY},
  {CXCursor_CXXTypeidExpr, "'typeid'", "run-time type information", RW_ANY},
  {CXCursor_CXXReinterpretCastExpr, "'reinterpret_cast'", "unresolvable pointer", RW_ANY},
  {CXCursor_CXXConstCastExpr, "'const_cast'", "unresolvable pointer", RW_ANY},
  {CXCursor_LambdaExpr, "lambda", "closures", RW_ANY},
  {CXCursor_CXXNullPtrLiteralExpr, "'nullptr'", "unresolvable pointer", RW_ANY},
  {CXCursor_StringLiteral, "string literal", "no strings on the device", RW_BIT(RW_UPDATE)},
};

int node_unsupported(rw_ctx *c, const node_info *ni, strbuf *out)
{
  (void)out;
  for (size_t k = 0; k < sizeof unsupported / sizeof *unsupported; k++)
    if (unsupported[k].kind == ni->kind && (unsupported[k].modes & RW_BIT(c->mode))) {
      error_at(c, ni->cur, unsupported[k].construct, unsupported[k].why);
      return 1;
    }
  return 0;
}
