/*
 * Rewriting, control flow: the constants the device path may assume, the
 * statements they leave out (if and switch on a constant, plan_drops), the
 * flush-event and waveform-relaxation calls, returns, throws and assert.
 */
#include "rewrite_internal.h"

#include <stdlib.h>
#include <string.h>

/* A call's callee name and the name of the callee's class. */
static int call_is(CXCursor call, const char *name, const char *cls)
{
  CXCursor callee = clang_getCursorReferenced(call);
  char *n = call_name(call);
  char *k = cursor_spelling(clang_getCursorSemanticParent(callee));
  int r = !strcmp(n, name) && (!cls || strstr(k, cls));
  free(n);
  free(k);
  return r;
}

/*
 * The value of a condition that is constant on the device, and why. Constant
 * are: literals; a parameter that update() binds to a constant (parse.c,
 * detect_update_forward) and !, &&, ||, ==, != over such; and two of NEST's
 * settings, each kept so by the NEST glue, which refuses a node otherwise
 * (emit_glue.c): FlushEventMechanism::flush_event_is_due( t ) is false (the
 * flush interval is infinite, NEST's default: its steps are LONG_MAX, and
 * t - last_event_time_ >= LONG_MAX never holds for last_event_time_ > 0) and
 * SimulationManager::get_wfr_interpolation_order() is 3 (NEST's default).
 * mark: note on the model that its glue must refuse the other cases.
 */
static int const_value(rw_ctx *c, CXCursor e, long long *v, const char **why, int mark)
{
  e = cursor_strip(e);
  enum CXCursorKind k = clang_getCursorKind(e);
  if (k == CXCursor_CXXBoolLiteralExpr || k == CXCursor_IntegerLiteral) {
    CXEvalResult r = clang_Cursor_Evaluate(e);
    int ok = r && clang_EvalResult_getKind(r) == CXEval_Int;
    if (ok)
      *v = clang_EvalResult_getAsLongLong(r);
    if (r)
      clang_EvalResult_dispose(r);
    if (ok && !*why)
      *why = "a literal";
    return ok;
  }
  if (k == CXCursor_DeclRefExpr) {
    CXCursor ref = clang_getCanonicalCursor(clang_getCursorReferenced(e));
    if (!clang_equalCursors(c->fn, c->m->methods[IR_M_UPDATE]))
      return 0;
    for (int j = 0; j < c->m->n_bound; j++)
      if (clang_equalCursors(ref, clang_getCanonicalCursor(c->m->bound_parm[j]))) {
        *v = c->m->bound_value[j];
        *why = "update() passes this parameter as a constant";
        return 1;
      }
    return 0;
  }
  if (k == CXCursor_UnaryOperator && clang_getCursorUnaryOperatorKind(e) == CXUnaryOperator_LNot) {
    cursor_kids ch = cursor_children(e);
    int ok = ch.n == 1 && const_value(c, ch.c[0], v, why, mark);
    free(ch.c);
    if (ok)
      *v = !*v;
    return ok;
  }
  if (k == CXCursor_BinaryOperator) {
    enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(e);
    cursor_kids ch = cursor_children(e);
    long long a, b;
    int ok = 0;
    if (ch.n == 2 && (op == CXBinaryOperator_LAnd || op == CXBinaryOperator_LOr)) {
      /* C's short circuit: a decided left operand decides alone */
      if (const_value(c, ch.c[0], &a, why, mark)) {
        if ((op == CXBinaryOperator_LAnd && !a) || (op == CXBinaryOperator_LOr && a)) {
          *v = a != 0;
          ok = 1;
        } else if (const_value(c, ch.c[1], &b, why, mark)) {
          *v = b != 0;
          ok = 1;
        }
      }
    } else if (ch.n == 2 && (op == CXBinaryOperator_EQ || op == CXBinaryOperator_NE)) {
      ok = const_value(c, ch.c[0], &a, why, mark) && const_value(c, ch.c[1], &b, why, mark);
      if (ok)
        *v = op == CXBinaryOperator_EQ ? a == b : a != b;
    }
    free(ch.c);
    return ok;
  }
  if (k == CXCursor_CallExpr && c->mode == RW_UPDATE && call_is(e, "flush_event_is_due", "FlushEventMechanism") &&
      clang_Cursor_getNumArguments(e) == 1 && no_side_effect(clang_Cursor_getArgument(e, 0))) {
    *v = 0;
    *why = "flush events are off on the device: the NEST glue refuses a node with a finite flush_event_send_interval";
    if (mark)
      c->m->drops_flush_events = 1;
    return 1;
  }
  if (k == CXCursor_CallExpr && (c->mode == RW_UPDATE || c->mode == RW_DYN) &&
      call_is(e, "get_wfr_interpolation_order", "SimulationManager") && clang_Cursor_getNumArguments(e) == 0) {
    *v = 3;
    *why = "NEST's default wfr_interpolation_order: the NEST glue refuses a node under another order";
    if (mark)
      c->m->wfr_order_assumed = 1;
    return 1;
  }
  return 0;
}

/* The case of a switch on a constant that runs: its statements up to its break (no fall-through), or 0. */
static int switch_live(rw_ctx *c, CXCursor sw, cursor_kids *live, long long *v, const char **why, int mark)
{
  cursor_kids ch = cursor_children(sw);
  int ok = 0;
  live->c = NULL;
  live->n = 0;
  if (ch.n == 2 && clang_getCursorKind(ch.c[1]) == CXCursor_CompoundStmt && const_value(c, ch.c[0], v, why, mark)) {
    cursor_kids body = cursor_children(ch.c[1]);
    int at = -1, j;
    for (int pass = 0; pass < 2 && at < 0; pass++)
      for (j = 0; j < body.n && at < 0; j++) {
        enum CXCursorKind bk = clang_getCursorKind(body.c[j]);
        if (pass == 0 && bk == CXCursor_CaseStmt) {
          cursor_kids cs = cursor_children(body.c[j]);
          CXEvalResult r = cs.n == 2 ? clang_Cursor_Evaluate(cs.c[0]) : NULL;
          if (r && clang_EvalResult_getKind(r) == CXEval_Int && clang_EvalResult_getAsLongLong(r) == *v)
            at = j;
          if (r)
            clang_EvalResult_dispose(r);
          free(cs.c);
        } else if (pass == 1 && bk == CXCursor_DefaultStmt) {
          at = j;
        }
      }
    if (at >= 0) {
      cursor_kids cs = cursor_children(body.c[at]);
      CXCursor first = cs.n >= 1 ? cs.c[cs.n - 1] : clang_getNullCursor();
      enum CXCursorKind fk = clang_getCursorKind(first);
      free(cs.c);
      ok = !clang_Cursor_isNull(first) && fk != CXCursor_CaseStmt && fk != CXCursor_DefaultStmt;
      if (ok && fk != CXCursor_BreakStmt) {
        live->c = xrealloc(live->c, sizeof *live->c * (size_t)(body.n + 1));
        live->c[live->n++] = first;
        for (j = at + 1; j < body.n; j++) {
          enum CXCursorKind bk = clang_getCursorKind(body.c[j]);
          if (bk == CXCursor_BreakStmt)
            break;
          if (bk == CXCursor_CaseStmt || bk == CXCursor_DefaultStmt) {
            ok = 0; /* falls through into another case */
            break;
          }
          live->c[live->n++] = body.c[j];
        }
      }
    }
    free(body.c);
  }
  free(ch.c);
  if (!ok) {
    free(live->c);
    live->c = NULL;
    live->n = 0;
  }
  return ok;
}

static int is_dropped(const rw_ctx *c, CXCursor s, const char **why)
{
  for (int k = 0; k < c->n_dropped; k++)
    if (clang_equalCursors(c->dropped[k], s)) {
      if (why)
        *why = c->drop_why[k];
      return 1;
    }
  return 0;
}

static void drop(rw_ctx *c, CXCursor s, const char *why)
{
  if (is_dropped(c, s, NULL))
    return;
  c->dropped = xrealloc(c->dropped, sizeof *c->dropped * (size_t)(c->n_dropped + 1));
  c->drop_why = xrealloc(c->drop_why, sizeof *c->drop_why * (size_t)(c->n_dropped + 1));
  c->dropped[c->n_dropped] = s;
  c->drop_why[c->n_dropped++] = why;
}

/* The locals of the function and their uses on the path that runs (plan_drops). */
typedef struct drop_plan {
  rw_ctx *c;
  CXCursor *vars; /* VarDecls */
  CXCursor *decls; /* their DeclStmts */
  int *uses;
  int n;
  CXCursor *stores; /* statements v[ i ] = x into a local v */
  int *store_var;
  int n_stores;
} drop_plan;

static int plan_var(const drop_plan *p, CXCursor ref)
{
  ref = clang_getCanonicalCursor(ref);
  for (int k = 0; k < p->n; k++)
    if (clang_equalCursors(ref, clang_getCanonicalCursor(p->vars[k])))
      return k;
  return -1;
}

static void collect_locals(drop_plan *p, CXCursor cur)
{
  cursor_kids ch = cursor_children(cur);
  for (int k = 0; k < ch.n; k++) {
    if (clang_getCursorKind(cur) == CXCursor_DeclStmt && clang_getCursorKind(ch.c[k]) == CXCursor_VarDecl) {
      p->vars = xrealloc(p->vars, sizeof *p->vars * (size_t)(p->n + 1));
      p->decls = xrealloc(p->decls, sizeof *p->decls * (size_t)(p->n + 1));
      p->vars[p->n] = ch.c[k];
      p->decls[p->n++] = cur;
    }
    collect_locals(p, ch.c[k]);
  }
  free(ch.c);
}

/* Statement s is v[ i ] = x (v a local array or vector): the local's index, with i and x. */
static int store_into_local(const drop_plan *p, CXCursor s, CXCursor *idx, CXCursor *val)
{
  int vi = -1;
  if (clang_getCursorKind(s) != CXCursor_BinaryOperator ||
      clang_getCursorBinaryOperatorKind(s) != CXBinaryOperator_Assign)
    return -1;
  cursor_kids ops = cursor_children(s);
  if (ops.n == 2) {
    CXCursor l = cursor_strip(ops.c[0]);
    cursor_kids lk = cursor_children(l);
    CXCursor base = clang_getNullCursor();
    if (clang_getCursorKind(l) == CXCursor_ArraySubscriptExpr && lk.n == 2) {
      base = cursor_strip(lk.c[0]);
      *idx = lk.c[1];
    } else if (clang_getCursorKind(l) == CXCursor_CallExpr && callee_named(l, "operator[]") && lk.n == 3) {
      base = cursor_strip(lk.c[0]);
      *idx = lk.c[2];
    }
    if (!clang_Cursor_isNull(base) && clang_getCursorKind(base) == CXCursor_DeclRefExpr) {
      vi = plan_var(p, clang_getCursorReferenced(base));
      *val = ops.c[1];
    }
    free(lk.c);
  }
  free(ops.c);
  return vi;
}

static void count_uses(drop_plan *p, CXCursor cur)
{
  rw_ctx *c = p->c;
  enum CXCursorKind k = clang_getCursorKind(cur);
  long long v;
  const char *why = NULL;
  if (is_dropped(c, cur, NULL))
    return;
  if (k == CXCursor_IfStmt) {
    cursor_kids ch = cursor_children(cur);
    if ((ch.n == 2 || ch.n == 3) && const_value(c, ch.c[0], &v, &why, 0)) {
      if (v)
        count_uses(p, ch.c[1]);
      else if (ch.n == 3)
        count_uses(p, ch.c[2]);
      free(ch.c);
      return;
    }
    free(ch.c);
  } else if (k == CXCursor_SwitchStmt) {
    cursor_kids live;
    if (switch_live(c, cur, &live, &v, &why, 0)) {
      for (int j = 0; j < live.n; j++)
        count_uses(p, live.c[j]);
      free(live.c);
      return;
    }
  } else if (k == CXCursor_DeclRefExpr) {
    int vi = plan_var(p, clang_getCursorReferenced(cur));
    if (vi >= 0)
      p->uses[vi]++;
  }
  cursor_kids ch = cursor_children(cur);
  for (int j = 0; j < ch.n; j++) {
    CXCursor idx, val;
    /* a statement: in a block, or the body of a loop or a branch */
    int is_stmt = k == CXCursor_CompoundStmt || ((k == CXCursor_ForStmt || k == CXCursor_WhileStmt) && j == ch.n - 1) ||
      (k == CXCursor_IfStmt && j >= 1) || (k == CXCursor_DoStmt && j == 0);
    int vi = is_stmt ? store_into_local(p, ch.c[j], &idx, &val) : -1;
    if (vi >= 0 && !is_dropped(c, ch.c[j], NULL) && pure_expr(idx) && pure_expr(val)) {
      /* a store into a local is no use of it: the local may be dead */
      p->stores = xrealloc(p->stores, sizeof *p->stores * (size_t)(p->n_stores + 1));
      p->store_var = xrealloc(p->store_var, sizeof *p->store_var * (size_t)(p->n_stores + 1));
      p->stores[p->n_stores] = ch.c[j];
      p->store_var[p->n_stores++] = vi;
      count_uses(p, idx);
      count_uses(p, val);
    } else {
      count_uses(p, ch.c[j]);
    }
  }
  free(ch.c);
}

static int decl_is_droppable(CXCursor declstmt)
{
  int impure = !no_side_effect(declstmt);
  if (!impure)
    clang_visitChildren(declstmt, visit_pure_init, &impure);
  return !impure;
}

/*
 * The statements this render leaves out: (init_buffers_()) what the runtime
 * sets up itself; (a gap-junction model's update) sending its gap-junction
 * event, and resetting its host-only gap-junction buffers to the zeros they
 * hold when no gap-junction event arrives; (a forwarded update) the final
 * return, whose value update() discards; then, until nothing changes, the
 * declarations of locals that nothing on the path that runs reads (branches
 * on constants folded), and the stores into them.
 */
void plan_drops(rw_ctx *c)
{
  ir_model *m = c->m;
  CXCursor body = rw_body_of(c->fn);
  drop_plan p;
  int changed, k;
  if (clang_Cursor_isNull(body))
    return;
  memset(&p, 0, sizeof p);
  p.c = c;
  cursor_kids stack = cursor_children(body);
  while (stack.n) {
    CXCursor s = stack.c[--stack.n];
    enum CXCursorKind sk = clang_getCursorKind(s);
    CXCursor e = cursor_strip(s);
    cursor_append_children(&stack, s);
    if (c->mode == RW_UPDATE && m->gap_junctions && clang_getCursorKind(e) == CXCursor_CallExpr) {
      int n_args = clang_Cursor_getNumArguments(e);
      if (call_is(e, "send_secondary", "EventDeliveryManager")) {
        drop(c, s,
             "a gap-junction event: with no secondary connection in the network (the NEST glue refuses the "
             "node otherwise) it reaches no one");
      } else if (call_is(e, "set_coeffarray", "SecondaryEvent") && n_args == 1) {
        drop(c, s, "the coefficients of a gap-junction event, which is not sent from the device");
      } else if (call_is(e, "swap", "vector") && n_args == 1) {
        /* std::vector< double >( n, 0.0 ).swap( B_.x ) of a host-only Buffers_ member */
        CXCursor arg = cursor_strip(clang_Cursor_getArgument(e, 0));
        CXCursor ctor = find_call_below(member_base(e), "vector");
        int zero = 0;
        if (!clang_Cursor_isNull(ctor) && clang_Cursor_getNumArguments(ctor) >= 2) {
          CXEvalResult r = clang_Cursor_Evaluate(clang_Cursor_getArgument(ctor, 1));
          zero = r &&
            ((clang_EvalResult_getKind(r) == CXEval_Float && clang_EvalResult_getAsDouble(r) == 0.0) ||
             (clang_EvalResult_getKind(r) == CXEval_Int && clang_EvalResult_getAsLongLong(r) == 0));
          if (r)
            clang_EvalResult_dispose(r);
        }
        if (zero && clang_getCursorKind(arg) == CXCursor_MemberRefExpr &&
            is_host_buffer_member(c, clang_getCursorReferenced(arg)) && no_side_effect(ctor))
          drop(c, s,
               "resets a host-only gap-junction buffer to zeros, which it holds as long as no gap-junction event "
               "arrives and no waveform relaxation runs (the NEST glue refuses the node otherwise)");
      }
    }
    (void)sk;
  }
  free(stack.c);
  if (c->mode == RW_INIT) {
    cursor_kids st = cursor_children(body);
    for (k = 0; k < st.n; k++)
      if (rw_is_runtime_setup(m, st.c[k]))
        drop(c, st.c[k], "set up by the runtime");
    free(st.c);
  }
  if (c->mode == RW_UPDATE && !clang_Cursor_isNull(m->update_forward) &&
      clang_equalCursors(c->fn, m->methods[IR_M_UPDATE])) {
    cursor_kids st = cursor_children(body);
    if (st.n && clang_getCursorKind(st.c[st.n - 1]) == CXCursor_ReturnStmt && no_side_effect(st.c[st.n - 1]))
      drop(c, st.c[st.n - 1], "update() discards the value");
    free(st.c);
  }
  collect_locals(&p, body);
  p.uses = xcalloc((size_t)(p.n ? p.n : 1), sizeof *p.uses);
  do {
    changed = 0;
    memset(p.uses, 0, sizeof *p.uses * (size_t)(p.n ? p.n : 1));
    p.n_stores = 0;
    count_uses(&p, body);
    for (k = 0; k < p.n; k++) {
      int all = 1;
      if (is_dropped(c, p.decls[k], NULL))
        continue;
      for (int j = 0; j < p.n; j++)
        if (clang_equalCursors(p.decls[j], p.decls[k]) && p.uses[j])
          all = 0;
      if (all && decl_is_droppable(p.decls[k])) {
        drop(c, p.decls[k], "a local that nothing on the device path reads");
        changed = 1;
      }
    }
    for (k = 0; k < p.n_stores; k++)
      if (is_dropped(c, p.decls[p.store_var[k]], NULL) && !is_dropped(c, p.stores[k], NULL)) {
        drop(c, p.stores[k], "a store into a local that nothing on the device path reads");
        changed = 1;
      }
  } while (changed);
  free(p.vars);
  free(p.decls);
  free(p.uses);
  free(p.stores);
  free(p.store_var);
}

/* flush_event_is_due( t ) other than as a condition the if rule folds: false on the device (const_value). */
int call_flush_event_is_due(rw_ctx *c, const call_info *ci, strbuf *out)
{
  long long v;
  const char *why = NULL;
  if (!name_is(ci, "flush_event_is_due") || !const_value(c, ci->cur, &v, &why, 1))
    return 0;
  sb_printf(out, "(%lld /* flush_event_is_due(): %s */)", v, why);
  return 1;
}

/*
 * FlushEventMechanism::set_last_event_time( t ): only flush_event_is_due()
 * reads the time, and it is false on the device (const_value), so the call
 * goes; its argument must not act.
 */
int call_set_last_event_time(rw_ctx *c, const call_info *ci, strbuf *out)
{
  if (!name_is(ci, "set_last_event_time") || !strstr(ci->cls, "FlushEventMechanism") || ci->nargs != 1)
    return 0;
  if (!pure_expr(clang_Cursor_getArgument(ci->cur, 0))) {
    error_at(c, ci->cur, "set_last_event_time with an argument that acts", "the device drops the call");
    return 1;
  }
  c->m->drops_flush_events = 1;
  sb_puts(out, "((void)0) /* set_last_event_time: read only by flush_event_is_due(), false on the device */");
  return 1;
}

/*
 * FlushEventMechanism::pre_run_hook() in pre_run_hook(): it converts the flush
 * interval to steps, which only flush_event_is_due() reads, and that is false
 * on the device (the NEST glue refuses a node with a finite interval), so the
 * call goes and the model's other host work still translates.
 */
int call_flush_pre_run_hook(rw_ctx *c, const call_info *ci, strbuf *out)
{
  (void)c;
  if (!name_is(ci, "pre_run_hook") || !strstr(ci->cls, "FlushEventMechanism") || ci->nargs != 0)
    return 0;
  sb_puts(out, "((void)0) /* FlushEventMechanism::pre_run_hook: the flush interval, unused on the device */");
  return 1;
}

/* kernel().simulation_manager.get_wfr_interpolation_order(): NEST's default, 3 (const_value). */
int call_wfr_order(rw_ctx *c, const call_info *ci, strbuf *out)
{
  long long v;
  const char *why = NULL;
  if (!name_is(ci, "get_wfr_interpolation_order") || !const_value(c, ci->cur, &v, &why, 1))
    return 0;
  sb_printf(out, "((nestcl_u64)%lld /* wfr_interpolation_order: %s */)", v, why);
  return 1;
}

/* assert( cond ): a checked condition in pre_run_hook(), nothing elsewhere. */
void render_assert(rw_ctx *c, const node_info *ni, strbuf *out)
{
  const char *t = ni->t;
  unsigned b = ni->b, e = ni->e;
  if (c->mode == RW_PRERUN) {
    /* the condition: the argument text between the parentheses */
    unsigned lp = b, rp = e;
    while (lp < e && t[lp] != '(')
      lp++;
    while (rp > lp && t[rp - 1] != ')')
      rp--;
    if (lp < e && rp > lp + 1) {
      /* re-render the argument's AST: the first descendant inside the parentheses */
      sb_puts(out, "if (!(");
      {
        cursor_kids stack = cursor_children(ni->cur);
        int done = 0;
        while (stack.n && !done) {
          CXCursor x = stack.c[0];
          CXFile xf;
          unsigned xb, xe;
          memmove(stack.c, stack.c + 1, sizeof *stack.c * (size_t)(stack.n - 1));
          stack.n--;
          if (!cursor_offsets(x, &xf, &xb, &xe) && xb > lp && xe < rp && clang_File_isEqual(xf, ni->f)) {
            render_sub(c, x, out);
            done = 1;
          } else {
            cursor_append_children(&stack, x);
          }
        }
        free(stack.c);
        if (!done)
          sb_puts(out, "1");
      }
      sb_puts(out, ")) return nestcl_set_error(NESTCL_EINVAL, \"");
      sb_put_c_escaped(out, c->m->name);
      sb_puts(out, ": assertion failed: ");
      {
        char *txt = xstrndup(t + lp + 1, rp - lp - 2);
        sb_put_c_escaped(out, txt);
        free(txt);
      }
      sb_puts(out, "\")");
      return;
    }
  }
  sb_puts(out, "((void)0) /* assert */");
}

/* Parameters_::set returns the E_L shift that State_::set takes. */
int node_set_return(rw_ctx *c, const node_info *ni, strbuf *out)
{
  cursor_kids ch = cursor_children(ni->cur);
  sb_puts(out, "{ ");
  if (ch.n == 1) {
    sb_puts(out, "nestcl_ret = (");
    render_sub(c, ch.c[0], out);
    sb_puts(out, "); ");
  }
  sb_printf(out, "goto %s; }", c->label[0] ? c->label : "nestcl_done");
  free(ch.c);
  return 1;
}

/* throw BadProperty( "why" ) in set(), or in handle() (a weight the model refuses): the message travels with the error code. */
int node_set_throw(rw_ctx *c, const node_info *ni, strbuf *out)
{
  CXCursor lit = clang_getNullCursor();
  cursor_kids stack = cursor_children(ni->cur);
  while (stack.n && clang_Cursor_isNull(lit)) {
    CXCursor x = stack.c[--stack.n];
    if (clang_getCursorKind(x) == CXCursor_StringLiteral) {
      lit = x;
    } else {
      cursor_append_children(&stack, x);
    }
  }
  free(stack.c);
  sb_printf(out, "return nestcl_set_error(NESTCL_EINVAL, \"%%s: %%s\", \"%s\", ", c->m->name);
  if (!clang_Cursor_isNull(lit)) {
    CXFile lf;
    unsigned lb, le;
    if (!cursor_offsets(lit, &lf, &lb, &le) && clang_File_isEqual(lf, ni->f))
      sb_putn(out, ni->t + lb, le - lb);
    else
      sb_puts(out, "\"rejected by the model\"");
  } else {
    sb_puts(out, "\"rejected by the model\"");
  }
  sb_putc(out, ')');
  return 1;
}

/* throw in pre_run_hook() or a constructor: the model rejects its parameters. */
int node_host_throw(rw_ctx *c, const node_info *ni, strbuf *out)
{
  (void)ni;
  sb_printf(out, "return nestcl_set_error(NESTCL_EINVAL, \"%s: rejected by the model\")", c->m->name);
  return 1;
}

/* The first call below cur that constructs an object (the thrown exception). */
static enum CXChildVisitResult visit_find_ctor(CXCursor x, CXCursor parent, CXClientData data)
{
  CXCursor *found = data;
  (void)parent;
  if (clang_getCursorKind(x) == CXCursor_CallExpr &&
      clang_getCursorKind(clang_getCursorReferenced(x)) == CXCursor_Constructor) {
    *found = x;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

/*
 * throw X( ... ) in update() (GSLSolverFailure( get_name(), status ),
 * NumericalInstability( get_name() )): the failure is recorded beside the
 * spike counter with the neuron, the lag and the status (the exception's first
 * integer argument), and the neuron's update ends; the runtime stops the run
 * with an error that names them (nestcl/model.h, Failures).
 */
int node_update_throw(rw_ctx *c, const node_info *ni, strbuf *out)
{
  cursor_kids k = cursor_children(ni->cur);
  CXCursor e = k.n == 1 ? k.c[0] : clang_getNullCursor();
  free(k.c);
  if (clang_Cursor_isNull(e) || !c->lag_var) {
    error_at(c, ni->cur, clang_Cursor_isNull(e) ? "a rethrow" : "a throw outside the lag loop",
             "a failure is reported with its neuron and lag");
    return 1;
  }
  char *cls = decl_name_of_type(clang_getCursorType(e));
  if (!*cls) {
    free(cls);
    error_at(c, ni->cur, "throwing a value that is not an object", "failures are reported by exception class");
    return 1;
  }
  CXCursor ctor = clang_getNullCursor();
  if (clang_getCursorKind(cursor_strip(e)) == CXCursor_CallExpr &&
      clang_getCursorKind(clang_getCursorReferenced(cursor_strip(e))) == CXCursor_Constructor)
    ctor = cursor_strip(e);
  else
    clang_visitChildren(e, visit_find_ctor, &ctor);
  const int code = ir_add_failure(c->m, cls);
  sb_printf(out, "do { nestcl_report_failure(spike_count, %du /* %s */, nestcl_i, (nestcl_u32)(%s), (int)(", code, cls,
            c->lag_var);
  int have = 0;
  for (int a = 0; !clang_Cursor_isNull(ctor) && a < clang_Cursor_getNumArguments(ctor) && !have; a++) {
    CXCursor arg = clang_Cursor_getArgument(ctor, (unsigned)a);
    enum CXTypeKind tk = clang_getCanonicalType(clang_getCursorType(arg)).kind;
    if (tk == CXType_Int || tk == CXType_Long || tk == CXType_UInt || tk == CXType_ULong) {
      render_sub(c, arg, out);
      have = 1;
    }
  }
  if (!have)
    sb_putc(out, '0');
  sb_puts(out, ")); NESTCL_ABANDON_NEURON; } while (0)");
  free(cls);
  return 1;
}

/* A statement rendered on its own: expression statements get their semicolon. */
static void render_stmt(rw_ctx *c, CXCursor s, strbuf *out)
{
  enum CXCursorKind k = clang_getCursorKind(s);
  render_sub(c, s, out);
  if (k != CXCursor_CompoundStmt && k != CXCursor_IfStmt && k != CXCursor_ForStmt && k != CXCursor_WhileStmt &&
      k != CXCursor_SwitchStmt && k != CXCursor_DeclStmt && k != CXCursor_DoStmt)
    sb_putc(out, ';');
}

/* A statement plan_drops() left out: a comment (an expression statement keeps a no-op before its semicolon). */
int node_dropped(rw_ctx *c, const node_info *ni, strbuf *out)
{
  const char *why = NULL;
  if (!is_dropped(c, ni->cur, &why))
    return 0;
  if (ni->kind == CXCursor_DeclStmt)
    sb_printf(out, "/* left out: %s */", why);
  else
    sb_printf(out, "((void)0) /* left out: %s */", why);
  return 1;
}

/* if ( c ) with c constant on the device (const_value): only the branch that runs. */
int node_if_constant(rw_ctx *c, const node_info *ni, strbuf *out)
{
  long long v;
  const char *why = NULL;
  cursor_kids ch = cursor_children(ni->cur);
  if (!((ch.n == 2 || ch.n == 3) && clang_isExpression(clang_getCursorKind(ch.c[0])) &&
        const_value(c, ch.c[0], &v, &why, 1))) {
    free(ch.c);
    return 0;
  }
  CXCursor live = v ? ch.c[1] : ch.n == 3 ? ch.c[2] : clang_getNullCursor();
  sb_printf(out, "/* an if whose condition is %s on the device (%s): the %s */ ", v ? "true" : "false", why,
            clang_Cursor_isNull(live) ? "branch is left out" : "other branch is left out");
  if (clang_Cursor_isNull(live)) {
    sb_puts(out, "{ }");
  } else if (clang_getCursorKind(live) == CXCursor_CompoundStmt) {
    render_sub(c, live, out);
  } else {
    sb_puts(out, "{ ");
    render_stmt(c, live, out);
    sb_puts(out, " }");
  }
  free(ch.c);
  return 1;
}

/* switch ( c ) with c constant on the device: the statements of the case that runs. */
int node_switch_constant(rw_ctx *c, const node_info *ni, strbuf *out)
{
  long long v;
  const char *why = NULL;
  cursor_kids live;
  if (!switch_live(c, ni->cur, &live, &v, &why, 1))
    return 0;
  sb_printf(out, "{ /* a switch on %lld on the device (%s): that case alone */\n", v, why);
  for (int j = 0; j < live.n; j++) {
    render_stmt(c, live.c[j], out);
    sb_putc(out, '\n');
  }
  sb_puts(out, "}");
  free(live.c);
  return 1;
}
