/*
 * Rewriting, the services every rule uses: diagnostics, the source text of a
 * node, the names and types of declarations, and rendering a part of a node.
 * It depends on no family file and not on rewrite.c: a part is rendered
 * through the context's render pointer (render_sub in rewrite_internal.h),
 * which rewrite.c sets to its dispatcher, so the families sit above this file
 * and rewrite.c's rule tables above them, without a circle.
 */
#include "rewrite_internal.h"

#include "uargs.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- diagnostics ---- */

/* A construct the device cannot run: one of the model's diagnostics (fatal), else the first reason (a note). */
void error_at(rw_ctx *c, CXCursor at, const char *construct, const char *why)
{
  char *where = cursor_where(at);
  char *t = xasprintf("%s: error: %s is not supported on the device (%s)", where, construct, why);
  int k, dup = 0;
  c->n_errors++;
  if (c->fatal) {
    for (k = 0; k < c->m->n_diags; k++)
      if (!strcmp(c->m->diags[k].text, t))
        dup = 1;
    if (!dup)
      ir_diag_add(c->m, 1, t);
  } else if (!c->first_error) {
    c->first_error = xasprintf("%s is not supported (%s) at %s", construct, why, where);
  }
  free(t);
  free(where);
}

/* A warning among the model's diagnostics, once per text, in fatal renders only. */
void warning_at(rw_ctx *c, CXCursor at, const char *text)
{
  char *where = cursor_where(at);
  char *t = xasprintf("%s: warning: %s", where, text);
  int k;
  for (k = 0; k < c->m->n_diags; k++)
    if (!strcmp(c->m->diags[k].text, t))
      break;
  if (c->fatal && k == c->m->n_diags)
    ir_diag_add(c->m, 0, t);
  free(t);
  free(where);
}

/* ---- source text ---- */

const char *file_text(rw_ctx *c, CXFile f, size_t *size)
{
  return clang_getFileContents(c->m->tu->tu, f, size);
}

int is_ident_char(char ch)
{
  return isalnum((unsigned char)ch) || ch == '_';
}

/* Copies text between nodes: C++'s alternative operator spellings become C's. */
void emit_gap(const char *t, unsigned from, unsigned to, strbuf *out)
{
  unsigned p = from;
  while (p < to) {
    char ch = t[p];
    if (ch == '/' && p + 1 < to && t[p + 1] == '/') {
      unsigned q = p;
      while (q < to && t[q] != '\n')
        q++;
      sb_putn(out, t + p, q - p);
      p = q;
    } else if (ch == '/' && p + 1 < to && t[p + 1] == '*') {
      unsigned q = p + 2;
      while (q + 1 < to && !(t[q] == '*' && t[q + 1] == '/'))
        q++;
      q = q + 2 <= to ? q + 2 : to;
      sb_putn(out, t + p, q - p);
      p = q;
    } else if (ch == '"' || ch == '\'') {
      unsigned q = p + 1;
      while (q < to && t[q] != ch) {
        if (t[q] == '\\')
          q++;
        q++;
      }
      q = q + 1 <= to ? q + 1 : to;
      sb_putn(out, t + p, q - p);
      p = q;
    } else if (is_ident_char(ch) && (p == from || !is_ident_char(t[p - 1]))) {
      static const char *const alt[][2] = {{"and", "&&"},    {"or", "||"},    {"not", "!"},    {"not_eq", "!="},
                                           {"bitand", "&"},  {"bitor", "|"},  {"xor", "^"},    {"compl", "~"},
                                           {"and_eq", "&="}, {"or_eq", "|="}, {"xor_eq", "^="}};
      unsigned q = p;
      size_t k, len;
      while (q < to && is_ident_char(t[q]))
        q++;
      len = q - p;
      for (k = 0; k < sizeof alt / sizeof alt[0]; k++)
        if (strlen(alt[k][0]) == len && !strncmp(t + p, alt[k][0], len))
          break;
      if (k < sizeof alt / sizeof alt[0])
        sb_puts(out, alt[k][1]);
      else
        sb_putn(out, t + p, len);
      p = q;
    } else {
      sb_putc(out, ch);
      p++;
    }
  }
}

const ir_macro *macro_at(rw_ctx *c, CXFile f, unsigned b, unsigned e)
{
  int k;
  for (k = 0; k < c->m->tu->n_macros; k++) {
    const ir_macro *mc = &c->m->tu->macros[k];
    if (mc->begin == b && mc->end == e && clang_File_isEqual(mc->file, f))
      return mc;
  }
  return NULL;
}

/* ---- names and types ---- */

/* Names the generated code gives its own variables and arguments: the
   update's fixed arguments and the names below (handler, getter and C-loop
   parameters, the spike offsets). */
int is_reserved_name(const char *n)
{
  static const char *const reserved[] = {"weight", "current", "rport",  "channel",      "value",
                                         "name",   "fields",  "offset", "spike_offsets"};
  size_t k;
  if (tr_is_uarg_name(n))
    return 1;
  for (k = 0; k < sizeof reserved / sizeof reserved[0]; k++)
    if (!strcmp(n, reserved[k]))
      return 1;
  return 0;
}

int is_local_decl(CXCursor d)
{
  enum CXCursorKind k = clang_getCursorKind(d);
  enum CXCursorKind pk = clang_getCursorKind(clang_getCursorSemanticParent(d));
  return k == CXCursor_VarDecl &&
    (pk == CXCursor_FunctionDecl || pk == CXCursor_CXXMethod || pk == CXCursor_Constructor);
}

int is_model_scope(rw_ctx *c, CXCursor decl)
{
  CXCursor p = clang_getCanonicalCursor(decl);
  int k;
  if (clang_equalCursors(p, clang_getCanonicalCursor(c->m->cls)))
    return 1;
  for (k = 0; k < 4; k++)
    if (!clang_Cursor_isNull(c->m->structs[k]) && clang_equalCursors(p, clang_getCanonicalCursor(c->m->structs[k])))
      return 1;
  return !clang_Cursor_isNull(c->m->cp_cls) && clang_equalCursors(p, clang_getCanonicalCursor(c->m->cp_cls));
}

char *decl_name_of_type(CXType t)
{
  if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference || t.kind == CXType_Pointer)
    t = clang_getPointeeType(t);
  return cursor_spelling(clang_getTypeDeclaration(clang_getCanonicalType(t)));
}

/* Whether t (through a reference) is NEST's Time. */
int rw_is_time_type(CXType t)
{
  char *n = decl_name_of_type(t);
  int r = !strcmp(n, "Time");
  free(n);
  return r;
}

/* The canonical C spelling of a type ("unsigned long", "double"), malloc'ed. */
char *c_type_spelling(CXType t)
{
  CXString s = clang_getTypeSpelling(clang_getCanonicalType(t));
  char *r = xstrdup(clang_getCString(s));
  clang_disposeString(s);
  return r;
}

/* ---- rendering a part (through the context) ---- */

void render_to(rw_ctx *c, CXCursor cur, char **out)
{
  strbuf b;
  sb_init(&b);
  render_sub(c, cur, &b);
  *out = sb_take(&b);
}

void render_arg(rw_ctx *c, CXCursor call, int k, strbuf *out)
{
  render_sub(c, clang_Cursor_getArgument(call, (unsigned)k), out);
}

/* Children that stand in the text as written (type and scope names), not rendered on their own. */
int is_type_ref(enum CXCursorKind k)
{
  return k == CXCursor_TypeRef || k == CXCursor_NamespaceRef;
}

/* The text of cur from pos to e with each child that lies inside it (in file f)
 * rendered in place; skip names the children left as written. */
void render_children_in_place(rw_ctx *c, CXCursor cur, CXFile f, const char *t, unsigned pos, unsigned e,
                              int (*skip)(enum CXCursorKind), strbuf *out)
{
  cursor_kids ch = cursor_children(cur);
  int k;
  for (k = 0; k < ch.n; k++) {
    CXFile cf;
    unsigned cb, ce;
    if (skip(clang_getCursorKind(ch.c[k])))
      continue;
    if (cursor_offsets(ch.c[k], &cf, &cb, &ce) || !clang_File_isEqual(cf, f) || cb < pos || ce > e)
      continue;
    emit_gap(t, pos, cb, out);
    render_sub(c, ch.c[k], out);
    pos = ce;
  }
  free(ch.c);
  emit_gap(t, pos, e, out);
}
