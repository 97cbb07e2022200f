/*
 * Rewriting, member and state access: a model's fields as SoA reads and
 * writes (S_.x_ -> S__x[nestcl_i]), per-receptor vectors and their sizes,
 * references to update()'s parameters, enumerators and locals, and
 * set_status()'s updateValue calls.
 */
#include "rewrite_internal.h"

#include "mathtable.h"

#include <stdlib.h>
#include <string.h>

/* RW_RECORD: the row of field fi in one lag's recorded values ("3", "(2 + 1 * (size_t)K)"), or NULL. */
static char *record_offset(const ir_model *m, int fi)
{
  int fixed = 0, kk = 0;
  for (int r = 0; r < m->n_recordables; r++) {
    const ir_field *f = &m->fields[m->recordables[r]];
    int a, b;
    if (m->recordables[r] == fi)
      return kk ? xasprintf("(%d + %d * (size_t)K)", fixed, kk) : xasprintf("%d", fixed);
    ir_field_len(f, &a, &b);
    fixed += a;
    kk += b;
  }
  return NULL;
}

int rw_dyn_by_value(const ir_field *f)
{
  return f->role == IR_ROLE_PARAMETER && f->array_len == 0 && !f->written_in_update;
}

/* The field access text for field fi (scalar, or element idx of an array). */
static void emit_field(rw_ctx *c, CXCursor at, int fi, const char *idx, strbuf *out)
{
  ir_field *f = &c->m->fields[fi];
  c->used[fi] = 1;
  if (c->mode == RW_ROUTE_SPIKE || c->mode == RW_ROUTE_CURRENT) {
    char *what = xasprintf("field '%s::%s' in a handler", f->struct_name, f->member);
    error_at(c, at, what, "event routing has no access to node state");
    free(what);
    return;
  }
  if ((c->mode == RW_SET || c->mode == RW_SEND || c->m->kind == IR_KIND_SYNAPSE) && f->array_len == 0) {
    /* set_status() works on copies of the slot's scalars (NEST's ptmp/stmp); a
     * synapse's send() on its own copy of the synapse (nestcl_self->x) and the
     * common properties (nestcl_cp->x). */
    sb_puts(out, f->c_name);
    return;
  }
  if (c->mode == RW_RECORD) {
    /* what update() recorded at this lag, or a parameter that update() never writes */
    char *off = record_offset(c->m, fi);
    if (off && f->array_len == 0)
      sb_printf(out, "nestcl_rec[(size_t)(%s) * n + nestcl_i]", off);
    else if (off && idx)
      sb_printf(out, "nestcl_rec[((size_t)(%s) + (size_t)(%s)) * n + nestcl_i]", off, idx);
    else if (!off && f->array_len == 0 && rw_dyn_by_value(f))
      sb_printf(out, "%s[nestcl_i]", f->c_name);
    else {
      char *what = xasprintf("field '%s::%s' in a recordable's getter", f->struct_name, f->member);
      error_at(c, at, what, off ? "only element accesses map to the SoA layout" : "it is not recorded by update()");
      free(what);
    }
    free(off);
    return;
  }
  if (c->mode == RW_DYN) {
    /* the dynamics reads the neuron through its context (see translate.c) */
    if (f->array_len != 0 && idx)
      sb_printf(out, "nestcl_ctx->%s[(size_t)(%s) * nestcl_ctx->n + nestcl_ctx->i]", f->c_name, idx);
    else if (f->array_len == 0)
      sb_printf(out, rw_dyn_by_value(f) ? "nestcl_ctx->%s" : "nestcl_ctx->%s[nestcl_ctx->i]", f->c_name);
    else {
      char *what = xasprintf("array field '%s::%s' without a subscript", f->struct_name, f->member);
      error_at(c, at, what, "only element accesses map to the SoA layout");
      free(what);
    }
    return;
  }
  if (f->array_len != 0) {
    if (!idx) {
      char *what = xasprintf("array field '%s::%s' without a subscript", f->struct_name, f->member);
      error_at(c, at, what, "only element accesses map to the SoA layout");
      free(what);
      return;
    }
    sb_printf(out, "%s[(size_t)(%s) * n + nestcl_i]", f->c_name, idx);
    return;
  }
  if (c->mode == RW_UPDATE && f->role == IR_ROLE_PARAMETER && !f->written_in_update)
    sb_printf(out, "NESTCL_P_%s", f->member);
  else
    sb_printf(out, "%s[nestcl_i]", f->c_name);
}

/* The receptor count K in the code being rendered (the dynamics reads it from its context). */
static const char *receptor_count(const rw_ctx *c)
{
  return c->mode == RW_DYN ? "nestcl_ctx->K" : "K";
}

/*
 * Whether base is a container the runtime sizes with K: a per-receptor vector,
 * a std::vector<RingBuffer>, or an ODE state vector of A + B * K elements.
 * With len, its length as text.
 */
static int is_per_receptor_container_len(rw_ctx *c, CXCursor base, char **len)
{
  CXCursor b = getter_target(c, cursor_strip(base));
  CXCursor ref;
  int fi, gi;
  if (clang_getCursorKind(b) != CXCursor_MemberRefExpr)
    return 0;
  ref = clang_getCursorReferenced(b);
  fi = ir_find_field(c->m, ref);
  if (fi >= 0) {
    const ir_field *f = &c->m->fields[fi];
    if (f->array_len >= 0)
      return 0;
    if (len)
      *len = f->array_base
        ? xasprintf("((size_t)%d + (size_t)%d * (size_t)%s)", f->array_base, -f->array_len, receptor_count(c))
        : f->array_len == -1 ? xasprintf("(size_t)%s", receptor_count(c))
                             : xasprintf("((size_t)%d * (size_t)%s)", -f->array_len, receptor_count(c));
    return 1;
  }
  gi = ir_find_channel_group(c->m, ref);
  if (gi >= 0 && c->m->channels[gi].kind == IR_BUF_VECTOR) {
    if (len)
      *len = xasprintf("(size_t)%s", receptor_count(c));
    return 1;
  }
  return 0;
}

static int is_per_receptor_container(rw_ctx *c, CXCursor base)
{
  return is_per_receptor_container_len(c, base, NULL);
}

/* x[ i ]: an SoA field, or a channel of an input buffer read through get_values_all_channels(). */
int call_subscript(rw_ctx *c, const call_info *ci, strbuf *out)
{
  int k;
  if (!name_is(ci, "operator[]"))
    return 0;
  cursor_kids ch = cursor_children(ci->cur);
  if (ch.n == 3) {
    CXCursor b = getter_target(c, cursor_strip(ch.c[0]));
    CXCursor ref = clang_getCursorReferenced(b);
    int fi = clang_getCursorKind(b) == CXCursor_MemberRefExpr ? ir_find_field(c->m, ref) : -1;
    if (fi >= 0) {
      char *idx;
      render_to(c, ch.c[2], &idx);
      emit_field(c, ci->cur, fi, idx, out);
      free(idx);
      free(ch.c);
      return 1;
    }
    if (clang_getCursorKind(b) == CXCursor_DeclRefExpr) {
      for (k = 0; k < c->n_aliases; k++)
        if (clang_equalCursors(clang_getCanonicalCursor(ref), clang_getCanonicalCursor(c->aliases[k].var))) {
          char *idx, *be = ir_channel_base_expr(&c->m->channels[c->aliases[k].group]);
          render_to(c, ch.c[2], &idx);
          sb_printf(out, "nestcl_ring_peek(ring, n_channels, n, %s, %s + %s, nestcl_i)", c->aliases[k].slot, be, idx);
          free(idx);
          free(be);
          free(ch.c);
          return 1;
        }
    }
  }
  if (ch.n == 3 && (c->mode == RW_DYN || c->mode == RW_UPDATE)) {
    /* node.B_.interpolation_coefficients[ i ]: a gap-junction input, zero on the device */
    CXCursor b = cursor_strip(ch.c[0]);
    if (clang_getCursorKind(b) == CXCursor_MemberRefExpr && is_gap_input(c, clang_getCursorReferenced(b)) &&
        pure_expr(ch.c[2])) {
      char *mn = cursor_spelling(clang_getCursorReferenced(b));
      c->m->gap_junctions = 1;
      sb_printf(out, "0.0 /* B_.%s: gap-junction input, zero on the device */", mn);
      free(mn);
      free(ch.c);
      return 1;
    }
  }
  free(ch.c);
  error_at(c, ci->cur, "subscript operator", "only SoA fields and input buffer channels can be indexed");
  return 1;
}

/* vector<double>::size() and empty() of a per-receptor vector: the receptor count (A + B K for an ODE state). */
int call_receptor_count(rw_ctx *c, const call_info *ci, strbuf *out)
{
  char *len = NULL;
  if (ci->nargs != 0 || clang_Cursor_isNull(ci->base) || !(name_is(ci, "size") || name_is(ci, "empty")) ||
      !is_per_receptor_container_len(c, ci->base, &len))
    return 0;
  if (name_is(ci, "size"))
    sb_puts(out, len);
  else
    sb_printf(out, "(%s == 0)", len);
  free(len);
  return 1;
}

/* The logger's init() and resizing per-receptor vectors: the runtime sizes storage (K), the logger is NEST's. */
int call_host_storage(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!((name_is(ci, "init") && strstr(ci->cls, "UniversalDataLogger")) ||
        ((name_is(ci, "resize") || name_is(ci, "clear") || name_is(ci, "assign")) && !clang_Cursor_isNull(ci->base) &&
         is_per_receptor_container(c, ci->base))))
    return 0;
  sb_puts(out, "((void)0)");
  return 1;
}

/* The type suffix of a nestcl_set_* helper for a value of type t, or NULL. */
static const char *set_suffix(CXType t)
{
  return t.kind == CXType_Double ? "d"
    : t.kind == CXType_Long      ? "l"
    : t.kind == CXType_Int       ? "i"
    : t.kind == CXType_Bool      ? "b"
    : t.kind == CXType_UInt      ? "u"
                                 : NULL;
}

/* update_value_param( d, names::x, x_, node ) (and the older updateValue): one key of SetStatus. */
int call_update_value_param(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!(name_is(ci, "update_value_param") || name_is(ci, "updateValue")) || ci->nargs < 3)
    return 0;
  CXCursor key = clang_getCursorReferenced(cursor_strip(clang_Cursor_getArgument(ci->cur, 1)));
  char *q = cursor_qualified_name(key);
  CXType lt = clang_getCanonicalType(clang_getCursorType(clang_Cursor_getArgument(ci->cur, 2)));
  const char *suffix = set_suffix(lt);
  if (!strncmp(q, "names::", 7) && !suffix &&
      clang_getCursorKind(cursor_strip(clang_Cursor_getArgument(ci->cur, 2))) == CXCursor_MemberRefExpr &&
      ir_find_field(c->m, clang_getCursorReferenced(cursor_strip(clang_Cursor_getArgument(ci->cur, 2)))) >= 0) {
    /* A per-receptor vector cannot take one double: it is set through NEST and the glue. */
    sb_printf(out, "nestcl_set_vector(\"%s\")", q + 7);
    free(q);
    return 1;
  }
  if (!strncmp(q, "names::", 7) && suffix) {
    /* a bool field is an int32 copy; a bool local of the model's own (ht_neuron's equilibrate) is a C bool */
    CXCursor arg = cursor_strip(clang_Cursor_getArgument(ci->cur, 2));
    if (!strcmp(suffix, "b") &&
        !(clang_getCursorKind(arg) == CXCursor_MemberRefExpr &&
          ir_find_field(c->m, clang_getCursorReferenced(arg)) >= 0))
      suffix = "bool";
    sb_printf(out, "nestcl_set_%s(name, \"%s\", value, &(", suffix, q + 7);
    render_arg(c, ci->cur, 2, out);
    sb_puts(out, "), &nestcl_hit)");
    free(q);
    return 1;
  }
  free(q);
  return 0;
}

/* d.update_value( names::x, S_.x_ ): one key of SetStatus into a field. */
int call_update_value(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "update_value") || ci->nargs != 2)
    return 0;
  CXCursor key = clang_getCursorReferenced(cursor_strip(clang_Cursor_getArgument(ci->cur, 0)));
  CXCursor lv = cursor_strip(clang_Cursor_getArgument(ci->cur, 1));
  char *q = cursor_qualified_name(key);
  CXType lt = clang_getCanonicalType(clang_getCursorType(lv));
  int fi = clang_getCursorKind(lv) == CXCursor_MemberRefExpr ? ir_find_field(c->m, clang_getCursorReferenced(lv)) : -1;
  if (!strncmp(q, "names::", 7) && fi >= 0) {
    if (c->m->fields[fi].array_len != 0) {
      sb_printf(out, "nestcl_set_vector(\"%s\")", q + 7);
    } else {
      const char *suffix = set_suffix(lt);
      sb_printf(out, "nestcl_set_%s(name, \"%s\", value, &(%s), &nestcl_hit)", suffix ? suffix : "d", q + 7,
                c->m->fields[fi].c_name);
    }
    free(q);
    return 1;
  }
  free(q);
  return 0;
}

/*
 * pre_run_hook() and constructors: V_.rng_ = get_vp_specific_rng( ... ) and
 * the like. Members without SoA layout live in the NEST node, so their set-up
 * stays there too.
 */
int node_host_member_assign(rw_ctx *c, const node_info *ni, strbuf *out)
{
  if (ni->kind != CXCursor_BinaryOperator && !(ni->kind == CXCursor_CallExpr && callee_named(ni->cur, "operator=")))
    return 0;
  cursor_kids ops = cursor_children(ni->cur);
  int dropped = 0;
  if (ops.n == 2 || ops.n == 3) {
    CXCursor lhs = cursor_strip(ops.c[0]);
    CXCursor ref = clang_getCursorReferenced(lhs);
    if (clang_getCursorKind(lhs) == CXCursor_MemberRefExpr && clang_getCursorKind(ref) == CXCursor_FieldDecl &&
        ir_find_field(c->m, ref) < 0 && ir_find_channel_group(c->m, ref) < 0 &&
        is_model_scope(c, clang_getCursorSemanticParent(ref)) &&
        (ni->kind == CXCursor_CallExpr || is_plain_assign(c, ops))) {
      char *fn = cursor_spelling(ref);
      sb_printf(out, "((void)0) /* %s stays on the host */", fn);
      free(fn);
      dropped = 1;
    }
  }
  free(ops.c);
  return dropped;
}

/* S_.x_: an SoA field; other members are refused. */
int node_member_ref(rw_ctx *c, const node_info *ni, strbuf *out)
{
  CXCursor ref = clang_getCursorReferenced(ni->cur);
  int fi = ir_find_field(c->m, ref);
  if (fi >= 0) {
    emit_field(c, ni->cur, fi, NULL, out);
    return 1;
  }
  if (clang_getCursorKind(ref) != CXCursor_FieldDecl)
    return 0;
  char *q = cursor_qualified_name(ref);
  char *what = xasprintf("member '%s'", q);
  error_at(c, ni->cur, what,
           ir_find_channel_group(c->m, ref) >= 0 ? "input buffers are read through get_value()"
                                                 : "not a field of State_, Parameters_ or Variables_");
  free(what);
  free(q);
  return 1;
}

/* S_.y_[ i ] of a fixed-size array field. */
int node_array_subscript(rw_ctx *c, const node_info *ni, strbuf *out)
{
  cursor_kids ch = cursor_children(ni->cur);
  int done = 0;
  if (ch.n == 2) {
    CXCursor bse = cursor_strip(ch.c[0]);
    int fi =
      clang_getCursorKind(bse) == CXCursor_MemberRefExpr ? ir_find_field(c->m, clang_getCursorReferenced(bse)) : -1;
    if (fi >= 0) {
      char *idx;
      render_to(c, ch.c[1], &idx);
      emit_field(c, ni->cur, fi, idx, out);
      free(idx);
      done = 1;
    }
  }
  free(ch.c);
  return done;
}

/* An inlined getter's parameter: the argument's rendered text. */
int ref_substitution(rw_ctx *c, const node_info *ni, strbuf *out)
{
  CXCursor ref = clang_getCursorReferenced(ni->cur);
  for (int k = 0; k < c->n_substs; k++)
    if (clang_equalCursors(clang_getCanonicalCursor(ref), clang_getCanonicalCursor(c->substs[k].parm))) {
      sb_puts(out, c->substs[k].text);
      return 1;
    }
  return 0;
}

/* State_::set( d, p, delta_EL ): the double parameter is the E_L shift. */
int ref_set_shift(rw_ctx *c, const node_info *ni, strbuf *out)
{
  (void)c;
  CXCursor ref = clang_getCursorReferenced(ni->cur);
  if (clang_getCursorKind(ref) != CXCursor_ParmDecl ||
      clang_getCanonicalType(clang_getCursorType(ref)).kind != CXType_Double)
    return 0;
  sb_puts(out, "nestcl_shift");
  return 1;
}

/* An enumerator: its value. */
int ref_enum_constant(rw_ctx *c, const node_info *ni, strbuf *out)
{
  (void)c;
  CXCursor ref = clang_getCursorReferenced(ni->cur);
  if (clang_getCursorKind(ref) != CXCursor_EnumConstantDecl)
    return 0;
  char *n = cursor_spelling(ref);
  sb_printf(out, "(%lld /* %s */)", clang_getEnumConstantDeclValue(ref), n);
  free(n);
  return 1;
}

/* update( origin, from, to ): from and to are the kernel's; origin only through get_steps(). */
int ref_update_parameter(rw_ctx *c, const node_info *ni, strbuf *out)
{
  CXCursor ref = clang_getCursorReferenced(ni->cur);
  int j;
  if (clang_getCursorKind(ref) != CXCursor_ParmDecl)
    return 0;
  if (c->helper) {
    /* a helper's own parameters stand as written; its Time parameters are update()'s origin */
    if (rw_is_time_type(clang_getCursorType(ref))) {
      error_at(c, ni->cur, "this use of a Time parameter", "only origin.get_steps() is available on the device");
      return 1;
    }
    return 0;
  }
  for (j = 0; j < 3; j++)
    if (clang_equalCursors(clang_getCanonicalCursor(ref),
                           clang_getCanonicalCursor(clang_Cursor_getArgument(c->fn, (unsigned)j))))
      break;
  if (j == 1 || j == 2) {
    sb_puts(out, j == 1 ? "from" : "to");
    return 1;
  }
  if (j == 0) {
    error_at(c, ni->cur, "this use of 'origin'", "only origin.get_steps() is available on the device");
    return 1;
  }
  return 0;
}

/* A local named like one of the kernel's arguments: renamed nestcl_l_<name>. */
int ref_reserved_local(rw_ctx *c, const node_info *ni, strbuf *out)
{
  (void)c;
  CXCursor ref = clang_getCursorReferenced(ni->cur);
  if (clang_getCursorKind(ref) != CXCursor_VarDecl || !is_local_decl(ref))
    return 0;
  char *vn = cursor_spelling(ref);
  int renamed = is_reserved_name(vn);
  if (renamed)
    sb_printf(out, "nestcl_l_%s", vn);
  free(vn);
  return renamed;
}

/* Other variables: an input buffer's channel alias (refused), the model's static constants, the math table's globals. */
int ref_variable(rw_ctx *c, const node_info *ni, strbuf *out)
{
  CXCursor ref = clang_getCursorReferenced(ni->cur);
  if (clang_getCursorKind(ref) != CXCursor_VarDecl)
    return 0;
  CXCursor sp = clang_getCursorSemanticParent(ref);
  enum CXCursorKind spk = clang_getCursorKind(sp);
  for (int k = 0; k < c->n_aliases; k++)
    if (clang_equalCursors(clang_getCanonicalCursor(ref), clang_getCanonicalCursor(c->aliases[k].var))) {
      error_at(c, ni->cur, "this use of an input buffer's channels", "only input[ channel ] is read from the ring");
      return 1;
    }
  if (is_model_scope(c, sp)) {
    /* static const / constexpr members of the model are their values */
    CXEvalResult ev = clang_Cursor_Evaluate(ref);
    int done_ev = 0;
    if (ev) {
      CXEvalResultKind ek = clang_EvalResult_getKind(ev);
      if (ek == CXEval_Int) {
        if (clang_EvalResult_isUnsignedInt(ev))
          sb_printf(out, "%lluUL", clang_EvalResult_getAsUnsigned(ev));
        else
          sb_printf(out, "%lldL", clang_EvalResult_getAsLongLong(ev));
        done_ev = 1;
      } else if (ek == CXEval_Float) {
        sb_printf(out, "%.17g", clang_EvalResult_getAsDouble(ev));
        done_ev = 1;
      }
      clang_EvalResult_dispose(ev);
    }
    if (done_ev)
      return 1;
  }
  if (spk == CXCursor_FunctionDecl || spk == CXCursor_CXXMethod || spk == CXCursor_Constructor)
    return 0; /* a local: as written */
  char *q = cursor_qualified_name(ref);
  const math_entry *me = math_lookup(q, -1);
  if (me && me->kind == MATH_VAR) {
    sb_puts(out, me->name);
  } else {
    char *what = xasprintf("global '%s'", q);
    error_at(c, ni->cur, what, "not in the built-in table");
    free(what);
  }
  free(q);
  return 1;
}

/* A member named without S_. / P_. (inside the state's own methods): refused. */
int ref_field(rw_ctx *c, const node_info *ni, strbuf *out)
{
  (void)out;
  CXCursor ref = clang_getCursorReferenced(ni->cur);
  if (clang_getCursorKind(ref) != CXCursor_FieldDecl)
    return 0;
  char *n = cursor_spelling(ref);
  char *what = xasprintf("member '%s'", n);
  error_at(c, ni->cur, what, "not a field of State_, Parameters_ or Variables_");
  free(what);
  free(n);
  return 1;
}

/* The dynamics' node and params pointer, used other than for the node's fields. */
int ref_dyn_node(rw_ctx *c, const node_info *ni, strbuf *out)
{
  (void)out;
  CXCursor ref = clang_getCanonicalCursor(clang_getCursorReferenced(ni->cur));
  if (!clang_Cursor_isNull(c->node_var) && clang_equalCursors(ref, clang_getCanonicalCursor(c->node_var))) {
    error_at(c, ni->cur, "this use of the node", "the dynamics reads the node's fields only");
    return 1;
  }
  if (clang_Cursor_getNumArguments(c->fn) == 4 &&
      clang_equalCursors(ref, clang_getCanonicalCursor(clang_Cursor_getArgument(c->fn, 3)))) {
    error_at(c, ni->cur, "this use of the node pointer", "it is only cast to the model, once");
    return 1;
  }
  return 0;
}
