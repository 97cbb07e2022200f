/*
 * Rewriting, a synapse's send(): its calls (the spike's time stamp, delay,
 * the target's spike history and its iterators, the event's setters, the
 * synapse's helpers) and its nodes (declarations, history entries, the
 * target, event and common properties, its return).
 */
#include "rewrite_internal.h"

#include <stdlib.h>
#include <string.h>

/* Whether a type (through references) is NEST's history iterator, std::deque< histentry >::iterator. */
static int is_history_iterator(CXType t)
{
  CXString s;
  int r;
  if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference)
    t = clang_getPointeeType(t);
  s = clang_getTypeSpelling(clang_getCanonicalType(t));
  r = strstr(clang_getCString(s), "histentry") != NULL && strstr(clang_getCString(s), "iterator") != NULL;
  clang_disposeString(s);
  return r;
}

/* A variable (local or parameter) that cur refers to, searched below cur (cur included), or a null cursor. */
static CXCursor referenced_var(CXCursor cur)
{
  cursor_kids stack;
  CXCursor found = clang_getNullCursor();
  stack.c = xcalloc(1, sizeof *stack.c);
  stack.c[0] = cur;
  stack.n = 1;
  while (stack.n && clang_Cursor_isNull(found)) {
    CXCursor x = stack.c[--stack.n];
    if (clang_getCursorKind(x) == CXCursor_DeclRefExpr) {
      CXCursor r = clang_getCursorReferenced(x);
      if (clang_getCursorKind(r) == CXCursor_VarDecl || clang_getCursorKind(r) == CXCursor_ParmDecl)
        found = r;
    } else {
      cursor_append_children(&stack, x);
    }
  }
  free(stack.c);
  return found;
}

/* Whether a call's object is the synapse's target: the local holding get_target( t ), or that call. */
static int base_is_target(rw_ctx *c, CXCursor base)
{
  CXCursor b = cursor_strip(base);
  if (clang_Cursor_isNull(b))
    return 0;
  if (!clang_Cursor_isNull(find_call_below(b, "get_target")))
    return 1; /* get_target( t ), *get_target( t ) */
  CXCursor v = referenced_var(b);
  return !clang_Cursor_isNull(v) && !clang_Cursor_isNull(c->target_var) &&
    clang_equalCursors(clang_getCanonicalCursor(v), clang_getCanonicalCursor(c->target_var));
}

/* e.get_stamp().get_ms(): the presynaptic spike's time stamp. */
int call_spike_time(rw_ctx *c, const call_info *ci, strbuf *out)
{
  (void)c;
  CXCursor b = cursor_strip(ci->base);
  if (!name_is(ci, "get_ms") || clang_Cursor_isNull(b) || clang_getCursorKind(b) != CXCursor_CallExpr ||
      !callee_named(b, "get_stamp"))
    return 0;
  sb_puts(out, "nestcl_env->t_spike");
  return 1;
}

/* What the synapse's base class and the connection manager give send(). */
int call_connection_base(rw_ctx *c, const call_info *ci, strbuf *out)
{
  static const struct {
    const char *name, *text;
    int of_manager; /* kernel().connection_manager's, else the synapse's own */
  } base[] = {
    {"get_delay", "nestcl_env->delay_ms", 0},
    {"get_delay_steps", "nestcl_env->delay_steps", 0},
    {"get_rport", "nestcl_env->rport", 0},
    {"get_stdp_eps", "nestcl_env->eps", 1},
  };
  (void)c;
  if (ci->nargs != 0)
    return 0;
  /* the synapse's own (this, implicit or written) or the connection manager's; an event's getters are not these */
  CXCursor b = cursor_strip(ci->base);
  const int own = clang_Cursor_isNull(b) || clang_getCursorKind(b) == CXCursor_CXXThisExpr ||
    clang_getCursorKind(b) == CXCursor_OverloadedDeclRef; /* through ConnectionBase in a template */
  for (size_t k = 0; k < sizeof base / sizeof *base; k++)
    if (name_is(ci, base[k].name) && (base[k].of_manager ? !strcmp(ci->cls, "ConnectionManager") : own)) {
      sb_puts(out, base[k].text);
      return 1;
    }
  return 0;
}

/* target->get_history( t1, t2, &start, &finish ) and target->get_K_value( t ): the device's spike history. */
int call_target_history(rw_ctx *c, const call_info *ci, strbuf *out)
{
  int k;
  if (!((name_is(ci, "get_history") && ci->nargs == 4) || (name_is(ci, "get_K_value") && ci->nargs == 1)))
    return 0;
  if (!base_is_target(c, ci->base)) {
    error_at(c, ci->cur, "a spike history other than the target's", "only the synapse's target is on the device");
    return 1;
  }
  c->m->uses_history = 1;
  if (ci->nargs == 4) {
    sb_puts(out, "nestcl_hist_get_history(nestcl_env->hist, nestcl_env->target, ");
    for (k = 0; k < 4; k++) {
      if (k)
        sb_puts(out, ", ");
      render_arg(c, ci->cur, k, out);
      if (k == 1)
        sb_puts(out, ", nestcl_env->eps");
    }
    sb_putc(out, ')');
  } else {
    sb_puts(out, "nestcl_hist_get_K_value(nestcl_env->hist, nestcl_env->target, ");
    render_arg(c, ci->cur, 0, out);
    sb_puts(out, ", nestcl_env->tau_minus_inv, nestcl_env->eps, nestcl_env->fused)");
  }
  return 1;
}

/* The event's setters and e(): the weight the spike carries to the target's ring. */
int call_event_send(rw_ctx *c, const call_info *ci, strbuf *out)
{
  const int on_event = strstr(ci->cls, "Event") != NULL;
  if (!on_event)
    return 0;
  if (name_is(ci, "operator()") && ci->nargs <= 1) {
    sb_puts(out, "(nestcl_emitted = 1)");
    return 1;
  }
  if (name_is(ci, "set_weight") && ci->nargs == 1) {
    sb_puts(out, "(*nestcl_w = (");
    render_arg(c, ci->cur, 0, out);
    sb_puts(out, "))");
    return 1;
  }
  if (name_is(ci, "set_receiver") && ci->nargs == 1) {
    CXCursor a = cursor_strip(clang_Cursor_getArgument(ci->cur, 0));
    if (!base_is_target(c, a))
      error_at(c, ci->cur, "a receiver other than the synapse's target", "the device delivers to the target only");
    else
      sb_puts(out, "((void)0) /* the receiver is the synapse's target */");
    return 1;
  }
  if ((name_is(ci, "set_delay_steps") || name_is(ci, "set_rport")) && ci->nargs == 1) {
    CXCursor a = cursor_strip(clang_Cursor_getArgument(ci->cur, 0));
    const char *own = name_is(ci, "set_rport") ? "get_rport" : "get_delay_steps";
    if (clang_getCursorKind(a) != CXCursor_CallExpr || !callee_named(a, own)) {
      char *what = xasprintf("%s() with a value other than the synapse's %s()", ci->name, own);
      error_at(c, ci->cur, what, "the device delivers with the synapse's own delay and rport");
      free(what);
    } else {
      sb_printf(out, "((void)0) /* %s: the synapse's own */", ci->name);
    }
    return 1;
  }
  if (name_is(ci, "get_multiplicity") && ci->nargs == 0) {
    sb_puts(out, "nestcl_env->multiplicity");
    return 1;
  }
  return 0;
}

/* start != finish, ++start, start++ on history iterators: the iterators are entry positions. */
int call_history_iterator(rw_ctx *c, const call_info *ci, strbuf *out)
{
  int k;
  if (!(name_is(ci, "operator!=") || name_is(ci, "operator==") || name_is(ci, "operator++") ||
        name_is(ci, "operator--")))
    return 0;
  if (ci->nargs < 1 || !is_history_iterator(clang_getCursorType(clang_Cursor_getArgument(ci->cur, 0))))
    return 0;
  for (k = 0; k < ci->nargs; k++) {
    CXCursor a = cursor_strip(clang_Cursor_getArgument(ci->cur, (unsigned)k));
    enum CXCursorKind ak = clang_getCursorKind(a);
    if (ak != CXCursor_DeclRefExpr && ak != CXCursor_IntegerLiteral) {
      error_at(c, ci->cur, "this iterator expression", "history iterators are only compared and stepped");
      return 1;
    }
  }
  CXFile f;
  unsigned b, e;
  size_t size;
  const char *t;
  if (cursor_offsets(ci->cur, &f, &b, &e) || !(t = file_text(c, f, &size)) || e > size)
    return 0;
  sb_putn(out, t + b, e - b); /* the same text on positions */
  return 1;
}

/* Whether a parameter's type is the synapse's common properties class. */
static int is_cp_param(rw_ctx *c, CXCursor parm)
{
  CXType t = clang_getCursorType(parm);
  if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference)
    t = clang_getPointeeType(t);
  CXCursor d = clang_getTypeDeclaration(clang_getCanonicalType(t));
  return !clang_Cursor_isNull(c->m->cp_cls) && !clang_Cursor_isNull(d) &&
    clang_equalCursors(clang_getCanonicalCursor(d), clang_getCanonicalCursor(c->m->cp_cls));
}

/* The generated function name of a synapse helper. */
static void helper_name(rw_ctx *c, CXCursor method, strbuf *out)
{
  char *n = cursor_spelling(method);
  sb_printf(out, "nestcl_syn_%s_%s", c->m->name, n);
  free(n);
}

/* facilitate_( w, k, cp ): the model's own methods become functions (synapse_helpers), called with the synapse. */
int call_syn_helper(rw_ctx *c, const call_info *ci, strbuf *out)
{
  int k, j;
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
  for (j = 0; j < c->m->n_helpers; j++)
    if (clang_equalCursors(clang_getCanonicalCursor(c->m->helpers[j]), clang_getCanonicalCursor(def)))
      break;
  if (j == c->m->n_helpers) {
    c->m->helpers = xrealloc(c->m->helpers, sizeof *c->m->helpers * (size_t)(c->m->n_helpers + 1));
    c->m->helpers[c->m->n_helpers++] = def;
  }
  helper_name(c, def, out);
  sb_puts(out, "(nestcl_self, nestcl_cp, nestcl_env, nestcl_w");
  for (k = 0; k < ci->nargs; k++) {
    if (k < clang_Cursor_getNumArguments(def) && is_cp_param(c, clang_Cursor_getArgument(def, (unsigned)k)))
      continue; /* the common properties travel as nestcl_cp */
    sb_puts(out, ", ");
    render_arg(c, ci->cur, k, out);
  }
  sb_putc(out, ')');
  return 1;
}

/* A synapse's ConnectionBase::set_status( d, cm ) and CommonSynapseProperties::set_status: delay and
 * weight recorder are the engine's. */
int call_base_status(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (c->m->kind != IR_KIND_SYNAPSE || !name_is(ci, "set_status") || ci->nargs != 2)
    return 0;
  sb_puts(out, "((void)0) /* the base's keys (delay) are the engine's */");
  return 1;
}

/* get_target( t ) anywhere but in the target's declaration and the event's receiver. */
int call_get_target(rw_ctx *c, const call_info *ci, strbuf *out)
{
  (void)out;
  if (!name_is(ci, "get_target"))
    return 0;
  error_at(c, ci->cur, "this use of get_target()",
           "the target is only read through its spike history and receives the event");
  return 1;
}

/* Node* target = get_target( t ): the target is nestcl_env->target; iterators become entry positions. */
int node_send_declstmt(rw_ctx *c, const node_info *ni, strbuf *out)
{
  cursor_kids ch = cursor_children(ni->cur);
  int done = 0;
  if (ch.n >= 1 && clang_getCursorKind(ch.c[0]) == CXCursor_VarDecl) {
    CXCursor v = ch.c[0];
    CXType ty = clang_getCursorType(v);
    char *vn = cursor_spelling(v);
    if (ch.n == 1 && ty.kind == CXType_Pointer && !clang_Cursor_isNull(find_call_below(v, "get_target"))) {
      c->target_var = v;
      sb_printf(out, "/* %s: the synapse's target, nestcl_env->target */", vn);
      done = 1;
    } else if (is_history_iterator(ty)) {
      int k;
      sb_puts(out, "nestcl_u32 ");
      for (k = 0; k < ch.n; k++) {
        char *n = cursor_spelling(ch.c[k]);
        sb_printf(out, "%s%s = 0u", k ? ", " : "", n);
        free(n);
      }
      sb_putc(out, ';');
      done = 1;
    }
    free(vn);
  }
  free(ch.c);
  return done;
}

/* it->t_, it->Kminus_, it->Kminus_triplet_ of a history entry: the ring's entry at that position. */
int node_history_entry(rw_ctx *c, const node_info *ni, strbuf *out)
{
  static const struct {
    const char *member, *fn;
  } entry[] = {
    {"t_", "nestcl_hist_t"}, {"Kminus_", "nestcl_hist_kminus"}, {"Kminus_triplet_", "nestcl_hist_kminus_triplet"}};
  CXCursor ref = clang_getCursorReferenced(ni->cur);
  char *cls = cursor_spelling(clang_getCursorSemanticParent(ref));
  int is_entry = !strcmp(cls, "histentry");
  free(cls);
  if (!is_entry)
    return 0;
  char *mn = cursor_spelling(ref);
  cursor_kids ch = cursor_children(ni->cur);
  CXCursor it = ch.n >= 1 ? referenced_var(ch.c[0]) : clang_getNullCursor();
  free(ch.c);
  size_t k;
  for (k = 0; k < sizeof entry / sizeof *entry; k++)
    if (!strcmp(mn, entry[k].member))
      break;
  if (k == sizeof entry / sizeof *entry || clang_Cursor_isNull(it) || !is_history_iterator(clang_getCursorType(it))) {
    char *what = xasprintf("history entry member '%s'", mn);
    error_at(c, ni->cur, what, "only t_, Kminus_ and Kminus_triplet_ of an entry reached through an iterator are read");
    free(what);
  } else {
    char *itn = cursor_spelling(it);
    sb_printf(out, "%s(nestcl_env->hist, nestcl_env->target, %s)", entry[k].fn, itn);
    free(itn);
  }
  free(mn);
  return 1;
}

/* The target, the event and the common properties only appear through what the rules above translate. */
int ref_send_object(rw_ctx *c, const node_info *ni, strbuf *out)
{
  (void)out;
  CXCursor ref = clang_getCursorReferenced(ni->cur);
  if (!clang_Cursor_isNull(c->target_var) &&
      clang_equalCursors(clang_getCanonicalCursor(ref), clang_getCanonicalCursor(c->target_var))) {
    error_at(c, ni->cur, "this use of the target",
             "the target is only read through its spike history and receives the event");
    return 1;
  }
  if (clang_getCursorKind(ref) != CXCursor_ParmDecl)
    return 0;
  if (is_cp_param(c, ref)) {
    error_at(c, ni->cur, "this use of the common properties", "only their members are read");
    return 1;
  }
  char *tn = decl_name_of_type(clang_getCursorType(ref));
  int is_event = strstr(tn, "Event") != NULL;
  free(tn);
  if (is_event) {
    error_at(c, ni->cur, "this use of the event", "only its time stamp, multiplicity, setters and e() are translated");
    return 1;
  }
  return 0;
}

/* send()'s return true: whether the event was sent. Helpers return their values. */
int node_send_return(rw_ctx *c, const node_info *ni, strbuf *out)
{
  if (!clang_equalCursors(clang_getCanonicalCursor(c->fn), clang_getCanonicalCursor(c->m->syn_methods[IR_SM_SEND])))
    return 0;
  cursor_kids ch = cursor_children(ni->cur);
  int is_true = 0;
  if (ch.n == 1 && clang_getCursorKind(cursor_strip(ch.c[0])) == CXCursor_CXXBoolLiteralExpr) {
    CXFile f;
    unsigned b, e;
    if (!cursor_offsets(cursor_strip(ch.c[0]), &f, &b, &e) && e - b == 4 && !strncmp(ni->t + b, "true", 4))
      is_true = 1;
  }
  free(ch.c);
  if (is_true)
    sb_puts(out, "return nestcl_emitted;");
  else
    error_at(c, ni->cur, "send() returning other than true", "the device delivers every event it sends");
  return 1;
}
