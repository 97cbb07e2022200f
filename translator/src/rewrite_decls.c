/*
 * Rewriting, declarations and casts: local variables (references to fields,
 * constant scalars, special locals the runtime provides), declaration
 * statements and C++ casts as C casts.
 */
#include "rewrite_internal.h"

#include <stdlib.h>
#include <string.h>

/* Whether any declaration reference below cur names a non-const pointer parameter (the dynamics' f). */
typedef struct writable_find {
  int found;
} writable_find;

static enum CXChildVisitResult visit_writable_param(CXCursor x, CXCursor parent, CXClientData data)
{
  writable_find *wf = data;
  (void)parent;
  if (clang_getCursorKind(x) == CXCursor_DeclRefExpr) {
    CXCursor r = clang_getCursorReferenced(x);
    CXType t = clang_getCanonicalType(clang_getCursorType(r));
    CXString ts = clang_getTypeSpelling(t);
    /* libclang reports the element of const double[] without its qualifier: the spelling has it */
    const int is_const =
      !strncmp(clang_getCString(ts), "const ", 6) || clang_isConstQualifiedType(clang_getPointeeType(t));
    clang_disposeString(ts);
    if (clang_getCursorKind(r) == CXCursor_ParmDecl && (t.kind == CXType_Pointer || t.kind == CXType_IncompleteArray) &&
        !is_const) {
      wf->found = 1;
      return CXChildVisit_Break;
    }
  }
  return CXChildVisit_Recurse;
}

static int is_const_scalar_ref(rw_ctx *c, CXCursor v, CXType ty)
{
  (void)c;
  CXType pt = clang_getPointeeType(ty);
  enum CXTypeKind k = clang_getCanonicalType(pt).kind;
  writable_find wf = {0};
  if (!clang_isConstQualifiedType(pt) ||
      !(k == CXType_Double || k == CXType_Int || k == CXType_Long || k == CXType_Bool || k == CXType_UInt ||
        k == CXType_ULong))
    return 0;
  clang_visitChildren(v, visit_writable_param, &wf);
  return !wf.found;
}

static void render_vardecl(rw_ctx *c, CXCursor cur, const char *t, unsigned b, unsigned e, int from_name, strbuf *out)
{
  CXType ty = clang_getCursorType(cur);
  unsigned name_off = 0, pos;
  CXFile f;
  char *vname = cursor_spelling(cur);
  clang_getFileLocation(clang_getCursorLocation(cur), &f, NULL, NULL, &name_off);
  if (c->mode == RW_DYN && ty.kind == CXType_LValueReference && !from_name && is_const_scalar_ref(c, cur, ty)) {
    /* const double& x = ...: nothing in the dynamics writes what it names (y and the node are const,
     * the initialiser does not read f), so a copy is the same value */
    char *ts = c_type_spelling(clang_getPointeeType(ty));
    free(vname);
    if (name_off < b || name_off > e)
      name_off = b;
    sb_printf(out, "%s ", ts);
    free(ts);
    vname = cursor_spelling(cur);
    if (is_reserved_name(vname) && name_off + strlen(vname) <= e && !strncmp(t + name_off, vname, strlen(vname))) {
      sb_printf(out, "nestcl_l_%s", vname); /* as its uses are renamed (ref_reserved_local) */
      name_off += (unsigned)strlen(vname);
    }
    free(vname);
    render_children_in_place(c, cur, f, t, name_off, e, is_type_ref, out);
    return;
  }
  if (ty.kind == CXType_LValueReference || ty.kind == CXType_RValueReference || ty.kind == CXType_Pointer) {
    char *what = xasprintf("%s '%s'", ty.kind == CXType_Pointer ? "pointer" : "reference", vname);
    error_at(c, cur, what, "unresolvable pointer");
    free(what);
    free(vname);
    return;
  }
  if (clang_getCursorKind(cur) == CXCursor_VarDecl && clang_Cursor_getStorageClass(cur) == CX_SC_Static) {
    char *what = xasprintf("static local '%s'", vname);
    error_at(c, cur, what, "state shared between neurons");
    free(what);
    free(vname);
    return;
  }
  if (clang_getCursorKind(cur) == CXCursor_VarDecl && clang_getCanonicalType(ty).kind == CXType_Record) {
    char *what = xasprintf("local object '%s'", vname);
    error_at(c, cur, what, "only scalar locals exist on the device");
    free(what);
    free(vname);
    return;
  }
  free(vname);
  if (name_off < b || name_off > e)
    name_off = b;
  pos = b;
  if (!from_name) {
    /* The written type is kept unless it is C++-only (auto, std::size_t, ...). */
    int cpp_only = 0;
    unsigned p;
    for (p = b; p + 1 < name_off; p++)
      if ((t[p] == ':' && t[p + 1] == ':') ||
          (!strncmp(t + p, "auto", 4) && (p == b || !is_ident_char(t[p - 1])) && !is_ident_char(t[p + 4])))
        cpp_only = 1;
    if (cpp_only) {
      char *ts = c_type_spelling(ty);
      sb_printf(out, "%s ", ts);
      free(ts);
      pos = name_off;
    }
  } else {
    pos = name_off;
  }
  {
    char *vn = cursor_spelling(cur);
    if (is_reserved_name(vn) && name_off >= pos && name_off + strlen(vn) <= e &&
        !strncmp(t + name_off, vn, strlen(vn))) {
      emit_gap(t, pos, name_off, out);
      sb_printf(out, "nestcl_l_%s", vn);
      pos = name_off + (unsigned)strlen(vn);
    }
    free(vn);
  }
  render_children_in_place(c, cur, f, t, pos, e, is_type_ref, out);
}

/* NESTML-generated update()s define helper lambdas (get_t) they may never call. */
static int lambda_unused(rw_ctx *c, CXCursor v)
{
  cursor_kids k = cursor_children(v);
  int j, is_lambda = 0;
  for (j = 0; j < k.n; j++)
    if (clang_getCursorKind(cursor_strip(k.c[j])) == CXCursor_LambdaExpr)
      is_lambda = 1;
  free(k.c);
  if (!is_lambda)
    return 0;
  return !cursor_refers_to(c->fn, v);
}

/*
 * Local objects with a meaning on the device: a SpikeEvent (its multiplicity
 * count, when update() sets one) and a distribution's param_type (its values,
 * read by call_random_dist; in pre_run_hook() read through ir_model.dists).
 * 1 when v was one and its text is out.
 */
static int render_special_local(rw_ctx *c, CXCursor v, const char *tn, strbuf *out)
{
  const int spike = !strcmp(tn, "SpikeEvent") && c->mode == RW_UPDATE;
  const int dist =
    !strcmp(tn, "param_type") && (c->mode == RW_UPDATE || c->mode == RW_PRERUN) && dist_kind(clang_getCursorType(v));
  if (!spike && !dist)
    return 0;
  char *vn = cursor_spelling(v);
  if (spike && c->offsets) {
    /* NEST's Event starts with offset 0 */
    if (c->multiplicity)
      sb_printf(out, "nestcl_u32 nestcl_mult_%s = 1u; ", vn);
    sb_printf(out, "double nestcl_off_%s = 0.0; /* SpikeEvent %s: its %soffset; the spike goes to the spike list */",
              vn, vn, c->multiplicity ? "multiplicity and " : "");
  } else if (spike && c->multiplicity) {
    sb_printf(out,
              "nestcl_u32 nestcl_mult_%s = 1u; /* SpikeEvent %s: its multiplicity; the spike goes to the spike list */",
              vn, vn);
  } else if (spike) {
    sb_printf(out, "/* SpikeEvent %s: the spike goes to the spike list */", vn);
  } else if (c->mode == RW_PRERUN) {
    sb_printf(out, "/* %s: a distribution's parameters, which the draws in update() read */", vn);
  } else {
    /* their values now, for a draw that reads them */
    CXCursor ctor = var_construct(v);
    int n = clang_Cursor_isNull(ctor) ? 0 : clang_Cursor_getNumArguments(ctor);
    sb_printf(out, "/* %s: a distribution's parameters */", vn);
    for (int a = 0; a < n; a++) {
      char *t;
      render_to(c, clang_Cursor_getArgument(ctor, (unsigned)a), &t);
      if (*t) /* a default argument renders as nothing: the draw keeps the standard's default */
        sb_printf(out, " const double nestcl_dp_%s_%d = (double)(%s);", vn, a, t);
      free(t);
    }
  }
  free(vn);
  return 1;
}

static int handle_declstmt(rw_ctx *c, CXCursor cur, const char *t, unsigned b, unsigned e, strbuf *out)
{
  cursor_kids ch = cursor_children(cur);
  int k;
  unsigned pos = b;
  CXFile f;
  unsigned dummy;
  if (ch.n == 1 && clang_getCursorKind(ch.c[0]) == CXCursor_VarDecl) {
    CXCursor v = ch.c[0];
    char *tn = decl_name_of_type(clang_getCursorType(v));
    if (render_special_local(c, v, tn, out)) {
      free(tn);
      free(ch.c);
      return 1;
    }
    free(tn);
    if (lambda_unused(c, v)) {
      char *vn = cursor_spelling(v);
      sb_printf(out, "/* %s: an unused lambda, dropped */", vn);
      free(vn);
      free(ch.c);
      return 1;
    }
    {
      cursor_kids vk = cursor_children(v);
      int j;
      for (j = 0; j < vk.n; j++) {
        CXCursor call = cursor_strip(vk.c[j]);
        if (clang_getCursorKind(call) == CXCursor_CallExpr && callee_named(call, "get_values_all_channels") &&
            clang_Cursor_getNumArguments(call) == 1 && c->mode == RW_UPDATE) {
          CXCursor bb = cursor_strip(member_base(call));
          int gi = clang_getCursorKind(bb) == CXCursor_MemberRefExpr
            ? ir_find_channel_group(c->m, clang_getCursorReferenced(bb))
            : -1;
          if (gi >= 0) {
            char *slot, *vn = cursor_spelling(v);
            render_to(c, clang_Cursor_getArgument(call, 0), &slot);
            c->aliases = xrealloc(c->aliases, sizeof *c->aliases * (size_t)(c->n_aliases + 1));
            c->aliases[c->n_aliases].var = v;
            c->aliases[c->n_aliases].group = gi;
            c->aliases[c->n_aliases].slot = slot;
            c->n_aliases++;
            sb_printf(out, "/* %s: the channels of B_.%s at this slot are read from the ring */", vn,
                      c->m->channels[gi].buffer);
            free(vn);
            free(vk.c);
            free(ch.c);
            return 1;
          }
        }
      }
      free(vk.c);
    }
  }
  clang_getFileLocation(clang_getCursorLocation(cur), &f, NULL, NULL, &dummy);
  for (k = 0; k < ch.n; k++) {
    CXFile cf;
    unsigned cb, ce;
    if (cursor_offsets(ch.c[k], &cf, &cb, &ce))
      continue;
    if (k == 0) {
      emit_gap(t, pos, cb, out);
      if (clang_getCursorKind(ch.c[k]) == CXCursor_VarDecl)
        render_vardecl(c, ch.c[k], t, cb, ce, 0, out);
      else
        render_sub(c, ch.c[k], out);
      pos = ce;
    } else {
      unsigned name_off = 0;
      clang_getFileLocation(clang_getCursorLocation(ch.c[k]), NULL, NULL, NULL, &name_off);
      if (name_off < pos)
        continue;
      emit_gap(t, pos, name_off, out);
      render_vardecl(c, ch.c[k], t, cb, ce, 1, out);
      pos = ce;
    }
  }
  free(ch.c);
  emit_gap(t, pos, e, out);
  return 1;
}

int node_declstmt(rw_ctx *c, const node_info *ni, strbuf *out)
{
  return handle_declstmt(c, ni->cur, ni->t, ni->b, ni->e, out);
}

int node_vardecl(rw_ctx *c, const node_info *ni, strbuf *out)
{
  render_vardecl(c, ni->cur, ni->t, ni->b, ni->e, 0, out);
  return 1;
}

/*
 * typedef nest::model::State_ S; names a C++ scope: its uses are resolved
 * (enumerators become their values), so the typedef goes. The dynamics'
 * const model& node = *( reinterpret_cast< model* >( pnode ) ): the fields
 * it reads through node come from the context.
 */
int node_scope_declstmt(rw_ctx *c, const node_info *ni, strbuf *out)
{
  cursor_kids ch = cursor_children(ni->cur);
  int done = 0;
  if (ch.n == 1 && clang_getCursorKind(ch.c[0]) == CXCursor_TypedefDecl &&
      clang_getCanonicalType(clang_getTypedefDeclUnderlyingType(ch.c[0])).kind == CXType_Record) {
    char *n = cursor_spelling(ch.c[0]);
    sb_printf(out, "/* typedef %s: a C++ scope, resolved */", n);
    free(n);
    done = 1;
  } else if (ch.n == 1 && c->mode == RW_DYN && clang_getCursorKind(ch.c[0]) == CXCursor_VarDecl) {
    CXType t = clang_getCursorType(ch.c[0]);
    if (t.kind == CXType_LValueReference || t.kind == CXType_Pointer) {
      CXCursor d = clang_getTypeDeclaration(clang_getCanonicalType(clang_getPointeeType(t)));
      if (clang_equalCursors(clang_getCanonicalCursor(d), clang_getCanonicalCursor(c->m->cls))) {
        char *n = cursor_spelling(ch.c[0]);
        c->node_var = ch.c[0];
        sb_printf(out, "/* %s: the neuron, whose fields the dynamics reads from nestcl_ctx */", n);
        free(n);
        done = 1;
      }
    }
  }
  free(ch.c);
  return done;
}

/* static_cast< T >( x ), T( x ), ( T ) x: to arithmetic types only. */
int node_cast(rw_ctx *c, const node_info *ni, strbuf *out)
{
  CXType ty = clang_getCursorType(ni->cur);
  char *ts = c_type_spelling(ty);
  CXCursor inner = clang_getNullCursor();
  cursor_kids ch = cursor_children(ni->cur);
  for (int k = 0; k < ch.n; k++) {
    enum CXCursorKind ik = clang_getCursorKind(ch.c[k]);
    if (ik != CXCursor_TypeRef && ik != CXCursor_NamespaceRef && ik != CXCursor_TemplateRef)
      inner = ch.c[k];
  }
  free(ch.c);
  if (clang_getCanonicalType(ty).kind == CXType_Record || clang_getCanonicalType(ty).kind == CXType_Pointer) {
    error_at(c, ni->cur, "this cast", "only casts to arithmetic types exist on the device");
    free(ts);
    return 1;
  }
  sb_printf(out, "((%s)(", ts);
  if (!clang_Cursor_isNull(inner))
    render_sub(c, inner, out);
  sb_puts(out, "))");
  free(ts);
  return 1;
}
