/*
 * Synapse models (see synapse.h): field roles, rendering of send() and the
 * helpers it calls in RW_SEND mode, the host helpers, and the two output
 * files.
 */
#include "synapse.h"

#include "check.h"
#include "emit.h"
#include "mathtable.h"
#include "parse.h"
#include "rewrite.h"

#include <stdlib.h>
#include <string.h>

/* ---- field roles ---- */

typedef struct purity {
  ir_model *m;
  const unsigned char *source; /* candidate per-source fields */
  CXCursor send_body;
  int pure;
} purity;

static int is_top_level_const_local(purity *p, CXCursor var)
{
  if (clang_getCursorKind(var) != CXCursor_VarDecl || !clang_isConstQualifiedType(clang_getCursorType(var)))
    return 0;
  /* declared by a statement directly in send()'s body */
  cursor_kids st = cursor_children(p->send_body);
  int found = 0;
  for (int k = 0; k < st.n && !found; k++)
    if (clang_getCursorKind(st.c[k]) == CXCursor_DeclStmt) {
      cursor_kids d = cursor_children(st.c[k]);
      for (int j = 0; j < d.n; j++)
        if (clang_equalCursors(clang_getCanonicalCursor(d.c[j]), clang_getCanonicalCursor(var)))
          found = 1;
      free(d.c);
    }
  free(st.c);
  return found;
}

static void check_pure(purity *p, CXCursor cur);

static enum CXChildVisitResult visit_pure(CXCursor c, CXCursor parent, CXClientData data)
{
  (void)parent;
  check_pure(data, c);
  return CXChildVisit_Continue;
}

/*
 * Whether an expression depends only on the presynaptic spike train: the spike
 * time, literals, math functions, common properties, parameters, per-source
 * candidates and const locals of send() initialised from those.
 */
static void check_pure(purity *p, CXCursor cur)
{
  enum CXCursorKind k = clang_getCursorKind(cur);
  if (!p->pure)
    return;
  if (k == CXCursor_MemberRefExpr) {
    int fi = ir_find_field(p->m, clang_getCursorReferenced(cur));
    if (fi < 0 || (fi < p->m->n_syn_fields && p->m->fields[fi].written_in_update && !p->source[fi]))
      p->pure = 0;
    return; /* the object (this, cp) is not a dependency */
  }
  if (k == CXCursor_DeclRefExpr) {
    CXCursor r = clang_getCursorReferenced(cur);
    enum CXCursorKind rk = clang_getCursorKind(r);
    if (rk == CXCursor_VarDecl) {
      if (!is_top_level_const_local(p, r)) {
        p->pure = 0;
        return;
      }
      cursor_kids init = cursor_children(r);
      for (int j = 0; j < init.n; j++)
        check_pure(p, init.c[j]);
      free(init.c);
      return;
    }
    if (rk == CXCursor_FunctionDecl || rk == CXCursor_EnumConstantDecl)
      return;
    p->pure = 0; /* parameters (the event, the target's thread) and anything else */
    return;
  }
  if (k == CXCursor_CallExpr) {
    char *n = cursor_spelling(cur);
    if (!strcmp(n, "get_ms")) {
      /* e.get_stamp().get_ms() */
      cursor_kids ch = cursor_children(cur);
      int ok = 0;
      if (ch.n >= 1) {
        cursor_kids mb = cursor_children(ch.c[0]);
        if (mb.n >= 1 && clang_getCursorKind(cursor_strip(mb.c[0])) == CXCursor_CallExpr) {
          char *bn = cursor_spelling(cursor_strip(mb.c[0]));
          ok = !strcmp(bn, "get_stamp");
          free(bn);
        }
        free(mb.c);
      }
      free(ch.c);
      free(n);
      if (!ok)
        p->pure = 0;
      return;
    }
    char *q = cursor_qualified_name(clang_getCursorReferenced(cur));
    int math =
      math_lookup(q, clang_Cursor_getNumArguments(cur)) != NULL || !strcmp(q, "std::exp") || !strcmp(q, "std::pow");
    free(q);
    free(n);
    if (!math) {
      p->pure = 0;
      return;
    }
    for (int j = 0; j < clang_Cursor_getNumArguments(cur); j++)
      check_pure(p, clang_Cursor_getArgument(cur, (unsigned)j));
    return;
  }
  clang_visitChildren(cur, visit_pure, p);
}

/* The field a top-level statement assigns (`F = expr;` or `F op= expr;`), its right-hand side in *rhs; -1 if none. */
static int assigned_field(ir_model *m, CXCursor st, CXCursor *rhs)
{
  enum CXCursorKind k = clang_getCursorKind(st);
  int fi = -1;
  if ((k != CXCursor_BinaryOperator && k != CXCursor_CompoundAssignOperator) || !check_is_assignment(m, st))
    return -1;
  cursor_kids ops = cursor_children(st);
  if (ops.n == 2 && clang_getCursorKind(cursor_strip(ops.c[0])) == CXCursor_MemberRefExpr) {
    fi = ir_find_field(m, clang_getCursorReferenced(cursor_strip(ops.c[0])));
    *rhs = ops.c[1];
  }
  free(ops.c);
  return fi;
}

/*
 * Roles: fields no function of send() writes are parameters; written ones are
 * per source when every write is a top-level assignment in send() whose value
 * is pure (check_pure) given the other per-source fields (a fixed point from
 * all written fields downwards); the rest are per-synapse state.
 */
static void classify_fields(ir_model *m)
{
  int k, changed;
  CXCursor send = m->syn_methods[IR_SM_SEND];
  CXCursor body = rw_body_of(send);
  unsigned char *source = xcalloc((size_t)(m->n_fields ? m->n_fields : 1), 1);
  unsigned char *written_by_helper = xcalloc((size_t)(m->n_fields ? m->n_fields : 1), 1);
  for (k = 0; k < m->n_fields; k++)
    m->fields[k].written_in_update = 0;
  for (k = 0; k < m->n_helpers; k++)
    check_function(m, m->helpers[k]);
  for (k = 0; k < m->n_fields; k++)
    written_by_helper[k] = (unsigned char)m->fields[k].written_in_update;
  check_function(m, send);
  for (k = 0; k < m->n_syn_fields; k++)
    source[k] = m->fields[k].written_in_update && !written_by_helper[k];
  /* writes below the top level disqualify */
  {
    cursor_kids stack = cursor_children(body);
    cursor_kids top = cursor_children(body);
    while (stack.n) {
      CXCursor x = stack.c[--stack.n];
      int is_top = 0;
      for (int j = 0; j < top.n; j++)
        if (clang_equalCursors(x, top.c[j]))
          is_top = 1;
      CXCursor rhs;
      int fi = assigned_field(m, x, &rhs);
      if (fi < 0 && (clang_getCursorKind(x) == CXCursor_UnaryOperator)) {
        cursor_kids u = cursor_children(x);
        if (u.n == 1 && clang_getCursorKind(cursor_strip(u.c[0])) == CXCursor_MemberRefExpr)
          fi = ir_find_field(m, clang_getCursorReferenced(cursor_strip(u.c[0])));
        free(u.c);
        if (fi >= 0)
          is_top = 0; /* ++/-- on a field: kept per synapse */
      }
      if (fi >= 0 && fi < m->n_syn_fields && !is_top)
        source[fi] = 0;
      cursor_append_children(&stack, x);
    }
    free(stack.c);
    free(top.c);
  }
  do {
    changed = 0;
    cursor_kids top = cursor_children(body);
    for (int j = 0; j < top.n; j++) {
      CXCursor rhs;
      int fi = assigned_field(m, top.c[j], &rhs);
      if (fi < 0 || fi >= m->n_syn_fields || !source[fi])
        continue;
      purity p;
      p.m = m;
      p.source = source;
      p.send_body = body;
      p.pure = 1;
      check_pure(&p, rhs);
      if (!p.pure) {
        source[fi] = 0;
        changed = 1;
      }
    }
    free(top.c);
  } while (changed);
  for (k = 0; k < m->n_syn_fields; k++)
    m->fields[k].syn_role = source[k]                            ? IR_SYN_SOURCE
      : (m->fields[k].written_in_update || written_by_helper[k]) ? IR_SYN_STATE
                                                                 : IR_SYN_PARAMETER;
  free(source);
  free(written_by_helper);
}

/* ---- rendering ---- */

static char *render_fn(ir_model *m, CXCursor fn, rw_mode mode)
{
  CXCursor body = rw_body_of(fn);
  if (clang_Cursor_isNull(body))
    return NULL;
  rw_ctx *c = rw_new(m, mode, fn, 1);
  strbuf b;
  sb_init(&b);
  rw_render(c, body, &b);
  int bad = rw_errors(c);
  rw_free(c);
  if (bad) {
    sb_free(&b);
    return NULL;
  }
  return sb_take(&b);
}

static char *c_type_of(CXType t)
{
  CXString s = clang_getTypeSpelling(clang_getCanonicalType(t));
  char *r = xstrdup(clang_getCString(s));
  clang_disposeString(s);
  return r;
}

/* A helper's own parameters (the common properties dropped: they are nestcl_cp) and return type; a
 * parameter of another non-scalar type is an error on the model. */
static void helper_signature(ir_model *m, CXCursor fn, char **params, char **ret)
{
  strbuf b;
  int k;
  sb_init(&b);
  for (k = 0; k < clang_Cursor_getNumArguments(fn); k++) {
    CXCursor a = clang_Cursor_getArgument(fn, (unsigned)k);
    CXType t = clang_getCursorType(a);
    CXType pt = (t.kind == CXType_LValueReference) ? clang_getPointeeType(t) : t;
    CXCursor d = clang_getTypeDeclaration(clang_getCanonicalType(pt));
    char *n = cursor_spelling(a);
    if (!clang_Cursor_isNull(d) &&
        clang_equalCursors(clang_getCanonicalCursor(d), clang_getCanonicalCursor(m->cp_cls))) {
      free(n);
      continue;
    }
    enum CXTypeKind ck = clang_getCanonicalType(t).kind;
    if (ck != CXType_Double && ck != CXType_Long && ck != CXType_Int && ck != CXType_Bool && ck != CXType_ULong &&
        ck != CXType_UInt && ck != CXType_LongLong) {
      char *where = cursor_where(a);
      char *msg = xasprintf("%s: error: parameter '%s' of a synapse helper is not supported on the device "
                            "(only scalars and the common properties are passed)",
                            where, n);
      ir_diag_add(m, 1, msg);
      free(msg);
      free(where);
    }
    char *ts = c_type_of(t);
    sb_printf(&b, ", %s %s", ts, n);
    free(ts);
    free(n);
  }
  *params = sb_take(&b);
  *ret = c_type_of(clang_getCursorResultType(fn));
}

int translate_synapse(ir_model *m, syn_rendered *r)
{
  int k;
  memset(r, 0, sizeof *r);
  if (m->failed)
    return -1;
  r->send_body = render_fn(m, m->syn_methods[IR_SM_SEND], RW_SEND);
  /* helpers: send() discovers them, each may discover more */
  for (k = 0; k < m->n_helpers && !m->failed; k++) {
    r->helper_bodies = xrealloc(r->helper_bodies, sizeof(char *) * (size_t)(k + 1));
    r->helper_sigs = xrealloc(r->helper_sigs, sizeof(char *) * (size_t)(k + 1));
    r->helper_rets = xrealloc(r->helper_rets, sizeof(char *) * (size_t)(k + 1));
    r->helper_bodies[k] = render_fn(m, m->helpers[k], RW_SEND);
    helper_signature(m, m->helpers[k], &r->helper_sigs[k], &r->helper_rets[k]);
    r->n_helpers = k + 1;
  }
  if (m->failed)
    return -1;
  classify_fields(m);
  if (m->has_syn_method[IR_SM_GET])
    parse_note_nest_names(m, m->syn_methods[IR_SM_GET]);
  if (m->has_syn_method[IR_SM_CP_GET])
    parse_note_nest_names(m, m->syn_methods[IR_SM_CP_GET]);
  {
    strbuf d;
    unsigned char *used = xcalloc((size_t)(m->n_fields ? m->n_fields : 1), 1);
    int ok = 1;
    sb_init(&d);
    if (m->has_syn_method[IR_SM_CP_CTOR])
      ok &= render_ctor_fn(m, m->syn_methods[IR_SM_CP_CTOR], &d, used);
    if (m->has_syn_method[IR_SM_CTOR])
      ok &= render_ctor_fn(m, m->syn_methods[IR_SM_CTOR], &d, used);
    if (ok)
      r->defaults_body = sb_take(&d);
    else
      sb_free(&d);
    strbuf g;
    sb_init(&g);
    if (m->has_syn_method[IR_SM_CP_GET])
      render_getter_fn(m, m->syn_methods[IR_SM_CP_GET], &g, used);
    if (m->has_syn_method[IR_SM_GET])
      render_getter_fn(m, m->syn_methods[IR_SM_GET], &g, used);
    r->get_body = sb_take(&g);
    free(used);
  }
  {
    static const ir_syn_method_id ids[2] = {IR_SM_CP_SET, IR_SM_SET};
    strbuf s;
    int ok = 1;
    sb_init(&s);
    for (k = 0; k < 2 && ok; k++) {
      if (!m->has_syn_method[ids[k]])
        continue;
      rw_ctx *c = rw_new(m, RW_SET, m->syn_methods[ids[k]], 0);
      rw_set_return_label(c, k ? "nestcl_syn_done" : "nestcl_cp_done");
      sb_puts(&s, "  {\n    double nestcl_ret = 0.0;\n    ");
      rw_render(c, rw_body_of(m->syn_methods[ids[k]]), &s);
      sb_printf(&s, "\n  %s:\n    (void)nestcl_ret;\n  }\n", k ? "nestcl_syn_done" : "nestcl_cp_done");
      if (rw_errors(c)) {
        char *note = xasprintf("set_status not translated: %s", rw_first_error(c));
        ir_note_add(m, note);
        free(note);
        ok = 0;
      }
      rw_free(c);
    }
    if (ok)
      r->set_body = sb_take(&s);
    else
      sb_free(&s);
  }
  return m->failed ? -1 : 0;
}

void syn_rendered_free(syn_rendered *r)
{
  for (int k = 0; k < r->n_helpers; k++) {
    free(r->helper_sigs[k]);
    free(r->helper_rets[k]);
    free(r->helper_bodies[k]);
  }
  free(r->helper_sigs);
  free(r->helper_rets);
  free(r->helper_bodies);
  free(r->send_body);
  free(r->defaults_body);
  free(r->get_body);
  free(r->set_body);
  memset(r, 0, sizeof *r);
}

/* ---- output ---- */

static const char *nestcl_type(ir_type t)
{
  switch (t) {
  case IR_T_DOUBLE:
    return "double";
  case IR_T_LONG:
    return "nestcl_i64";
  case IR_T_SIZE:
    return "nestcl_u64";
  case IR_T_UINT:
    return "nestcl_u32";
  default:
    return "nestcl_i32";
  }
}

static void emit_struct(strbuf *b, const ir_model *m, int common)
{
  int k, any = 0;
  sb_puts(b, "typedef struct {\n");
  for (k = common ? m->n_syn_fields : 0; k < (common ? m->n_fields : m->n_syn_fields); k++) {
    static const char *const roles[] = {"state", "per source", "parameter", "common"};
    sb_printf(b, "  %s %s; /* %s */\n", nestcl_type(m->fields[k].type), m->fields[k].member,
              roles[m->fields[k].syn_role]);
    any = 1;
  }
  if (!any)
    sb_puts(b, "  nestcl_i32 nestcl_empty; /* none */\n");
  sb_printf(b, "} nestcl_syn%s_%s;\n\n", common ? "cp" : "", m->name);
}

#define SYN_FIXED_PARAMS(m)                                                                                            \
  "nestcl_syn_%s *nestcl_self, const nestcl_syncp_%s *nestcl_cp, const nestcl_syn_env *nestcl_env, double *nestcl_w"

void emit_syn_cl(strbuf *b, const ir_model *m, const syn_rendered *r)
{
  const char *nm = m->name;
  int k;
  emit_file_header(b, m, "the synapse's send() for the delivery, OpenCL C and C.", "/*", "*/");
  sb_printf(b, "#ifndef NESTCL_SYN_%s_CL\n#define NESTCL_SYN_%s_CL\n\n", nm, nm);
  emit_struct(b, m, 0);
  emit_struct(b, m, 1);
  for (k = 0; k < r->n_helpers; k++) {
    char *hn = cursor_spelling(m->helpers[k]);
    sb_printf(b, "NESTCL_INLINE %s nestcl_syn_%s_%s(" SYN_FIXED_PARAMS(m) "%s);\n", r->helper_rets[k], nm, hn, nm, nm,
              r->helper_sigs[k]);
    free(hn);
  }
  if (r->n_helpers)
    sb_putc(b, '\n');
  for (k = 0; k < r->n_helpers; k++) {
    char *hn = cursor_spelling(m->helpers[k]);
    sb_printf(b, "NESTCL_INLINE %s nestcl_syn_%s_%s(" SYN_FIXED_PARAMS(m) "%s)\n{\n", r->helper_rets[k], nm, hn, nm, nm,
              r->helper_sigs[k]);
    sb_puts(b, "  (void)nestcl_self;\n  (void)nestcl_cp;\n  (void)nestcl_env;\n  (void)nestcl_w;\n  ");
    sb_puts(b, r->helper_bodies[k]);
    sb_puts(b, "\n}\n\n");
    free(hn);
  }
  sb_puts(
    b, "/* One presynaptic spike through one synapse: *nestcl_w is the weight it delivers; 1 when it was sent. */\n");
  sb_printf(b, "NESTCL_INLINE int nestcl_syn_%s_send(" SYN_FIXED_PARAMS(m) ")\n{\n", nm, nm, nm);
  sb_puts(b, "  int nestcl_emitted = 0;\n  (void)nestcl_self;\n  (void)nestcl_cp;\n  (void)nestcl_env;\n  ");
  sb_puts(b, r->send_body);
  sb_puts(b, "\n  return nestcl_emitted;\n}\n\n#endif\n");
}

void emit_syn_c(strbuf *b, const ir_model *m, const syn_rendered *r, const char *cl_text)
{
  const char *nm = m->name;
  int k;
  emit_file_header(b, m, "synapse descriptor, C send() and host helpers.", "/*", "*/");
  sb_puts(b,
          "#include <float.h>\n#include <limits.h>\n#include <math.h>\n#include <stdbool.h>\n#include <stddef.h>\n"
          "#include <stdint.h>\n#include <string.h>\n\n"
          "#include \"nestcl_types.h\"\n#include \"nestcl_synapse.h\"\n#include \"nestcl/device.h\"\n"
          "#include \"nestcl/model.h\"\n\n"
          "#pragma GCC diagnostic ignored \"-Wunused-variable\"\n"
          "#pragma GCC diagnostic ignored \"-Wunused-but-set-variable\"\n"
          "#pragma GCC diagnostic ignored \"-Wunused-label\"\n"
          "#pragma GCC diagnostic ignored \"-Wunused-function\"\n"
          "#pragma GCC diagnostic ignored \"-Wsign-compare\"\n\n");
  sb_puts(b, "/* The device text, compiled here as C: the CPU path runs the same operations. */\n");
  sb_puts(b, cl_text);
  sb_puts(b, "\nstatic const char ");
  sb_printf(b, "%s_syn_source[] =\n", nm);
  {
    const char *p = cl_text;
    while (*p) {
      const char *e = strchr(p, '\n');
      size_t len = e ? (size_t)(e - p) : strlen(p);
      char *line = xstrndup(p, len);
      sb_puts(b, "  \"");
      sb_put_c_escaped(b, line);
      sb_puts(b, "\\n\"\n");
      free(line);
      p += len + (e ? 1 : 0);
    }
  }
  sb_puts(b, "  ;\n\n");
  sb_printf(b, "static const nestcl_syn_field %s_syn_fields[] = {\n", nm);
  for (k = 0; k < m->n_fields; k++) {
    static const char *const roles[] = {"NESTCL_SYN_STATE", "NESTCL_SYN_SOURCE", "NESTCL_SYN_PARAMETER",
                                        "NESTCL_SYN_COMMON"};
    const ir_field *f = &m->fields[k];
    sb_printf(b, "  {\"%s\", ", f->member);
    if (f->nest_name)
      sb_printf(b, "\"%s\"", f->nest_name);
    else
      sb_puts(b, "NULL");
    sb_printf(b, ", %s, %s, offsetof(nestcl_syn%s_%s, %s)},\n", roles[f->syn_role], ir_type_enum(f->type),
              k < m->n_syn_fields ? "" : "cp", nm, f->member);
  }
  if (!m->n_fields)
    sb_puts(b, "  {NULL, NULL, NESTCL_SYN_STATE, NESTCL_T_DOUBLE, 0},\n");
  sb_puts(b, "};\n\n");

  /* host helpers */
  sb_printf(b, "static void %s_syn_defaults(void *syn, void *cp)\n{\n", nm);
  sb_printf(b, "  nestcl_syn_%s *const nestcl_self = syn;\n  nestcl_syncp_%s *const nestcl_cp = cp;\n", nm, nm);
  sb_puts(b, "  memset(nestcl_self, 0, sizeof *nestcl_self);\n  memset(nestcl_cp, 0, sizeof *nestcl_cp);\n");
  if (r->defaults_body)
    sb_puts(b, r->defaults_body);
  sb_puts(b, "}\n\n");
  sb_printf(b, "static int %s_syn_get_status(const void *syn, const void *cp, const char *name, double *value)\n{\n",
            nm);
  sb_printf(b, "  const nestcl_syn_%s *const nestcl_self = syn;\n  const nestcl_syncp_%s *const nestcl_cp = cp;\n", nm,
            nm);
  sb_puts(b, "  (void)nestcl_self;\n  (void)nestcl_cp;\n");
  sb_puts(b, r->get_body ? r->get_body : "");
  sb_printf(b, "  return nestcl_set_error(NESTCL_EINVAL, \"%s: no status entry '%%s'\", name);\n}\n\n", nm);
  if (r->set_body) {
    emit_set_helpers(b);
    sb_printf(b,
              "/* SetStatus/SetDefaults of one key on copies: a rejected value changes nothing. */\n"
              "static int %s_syn_set_status(void *syn, void *cp, const char *name, double value)\n{\n",
              nm);
    sb_printf(
      b, "  nestcl_syn_%s nestcl_s = *(nestcl_syn_%s *)syn;\n  nestcl_syncp_%s nestcl_c = *(nestcl_syncp_%s *)cp;\n",
      nm, nm, nm, nm);
    sb_printf(b, "  nestcl_syn_%s *const nestcl_self = &nestcl_s;\n  nestcl_syncp_%s *const nestcl_cp = &nestcl_c;\n",
              nm, nm);
    sb_puts(b, "  int nestcl_hit = 0;\n  (void)nestcl_self;\n  (void)nestcl_cp;\n");
    sb_puts(b, r->set_body);
    sb_printf(
      b, "  if (!nestcl_hit)\n    return nestcl_set_error(NESTCL_EINVAL, \"%s: no status entry '%%s'\", name);\n", nm);
    sb_printf(b, "  *(nestcl_syn_%s *)syn = nestcl_s;\n  *(nestcl_syncp_%s *)cp = nestcl_c;\n  return 0;\n}\n\n", nm,
              nm);
  }
  sb_printf(b,
            "static int %s_syn_send_cpu(void *syn, const void *cp, const nestcl_syn_env *env, double *weight)\n{\n"
            "  return nestcl_syn_%s_send(syn, cp, env, weight);\n}\n\n",
            nm, nm);
  sb_printf(b, "const nestcl_synapse_model nestcl_synapse_%s = {\n", nm);
  sb_printf(b, "  \"%s\",\n  \"", nm);
  sb_put_c_escaped(b, ir_input_name(m->source_file));
  sb_printf(b, "\",\n  \"%s\",\n", m->source_hash);
  sb_printf(b, "  %s_syn_fields,\n  %d,\n  %d,\n  sizeof(nestcl_syn_%s),\n  sizeof(nestcl_syncp_%s),\n  %d,\n", nm,
            m->n_fields, m->n_syn_fields, nm, nm, m->uses_history);
  sb_printf(b, "  %s_syn_source,\n  \"nestcl_syn_%s_send\",\n  %s_syn_defaults,\n", nm, nm, nm);
  if (r->set_body)
    sb_printf(b, "  %s_syn_set_status,\n", nm);
  else
    sb_puts(b, "  NULL,\n");
  sb_printf(b, "  %s_syn_get_status,\n  %s_syn_send_cpu,\n};\n", nm, nm);
}
