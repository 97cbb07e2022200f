/*
 * Source-range rewriting of model code (see rewrite.h): the driver. render()
 * copies the text of a node, recursing into its children in source order; a
 * node that needs translating is replaced as a whole by text built from its
 * rendered operands. Nodes from macro expansions are recognised by their
 * extent (the expansion's range, recorded by parse.c) and handled by macro
 * name. This file holds the rewriting context and the two rule tables
 * (calls, other nodes) that dispatch to the construct families in
 * rewrite_*.c; the diagnostics, source text and type helpers are in
 * rewrite_common.c, the AST queries in rewrite_query.c (rewrite_internal.h
 * lists them all and how they are layered). rw_new gives the context a
 * pointer to rw_render, through which the rules render their nodes' parts.
 *
 * Every identifier the generated code introduces is one of the kernel's fixed
 * arguments (nestcl/update_args.h), a name of its own (is_reserved_name,
 * rewrite_common.c), the neuron index nestcl_i, a field array (S__x, P__x,
 * V__x, B__x) or a nestcl_/NESTCL_ helper. Model locals named like one of the
 * arguments are renamed nestcl_l_<name>; check.c refuses locals with the
 * nestcl_ prefix.
 */
#include "rewrite_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the rewriting context ---- */

/* The lag loop of update(): the for statement whose condition reads the 'to' parameter. */
typedef struct lag_find {
  CXCursor to;
  char *name;
  CXCursor loop;
} lag_find;

static enum CXChildVisitResult visit_find_lag(CXCursor c, CXCursor parent, CXClientData data)
{
  lag_find *lf = data;
  (void)parent;
  if (lf->name)
    return CXChildVisit_Break;
  if (clang_getCursorKind(c) == CXCursor_ForStmt) {
    cursor_kids k = cursor_children(c);
    if (k.n >= 2 && clang_getCursorKind(k.c[0]) == CXCursor_DeclStmt) {
      cursor_kids d = cursor_children(k.c[0]);
      if (cursor_refers_to(k.c[1], lf->to) && d.n >= 1 && clang_getCursorKind(d.c[0]) == CXCursor_VarDecl) {
        lf->name = cursor_spelling(d.c[0]);
        lf->loop = c;
      }
      free(d.c);
    }
    free(k.c);
  }
  return CXChildVisit_Recurse;
}

typedef struct class_calls {
  const char *name;
  int hit;
} class_calls;

static enum CXChildVisitResult visit_class_method(CXCursor x, CXCursor parent, CXClientData data)
{
  class_calls *cc = data;
  (void)parent;
  if (clang_getCursorKind(x) == CXCursor_CXXMethod) {
    CXCursor def = clang_getCursorDefinition(x);
    if (!clang_Cursor_isNull(def) && calls_method(def, cc->name))
      cc->hit = 1;
  }
  return cc->hit ? CXChildVisit_Break : CXChildVisit_Continue;
}

/* Whether update() or any method of the model class (the helpers update() calls) calls name. */
static int model_calls(ir_model *m, CXCursor fn, const char *name)
{
  class_calls cc;
  cc.name = name;
  cc.hit = calls_method(fn, name);
  if (!cc.hit && !clang_Cursor_isNull(m->cls))
    clang_visitChildren(m->cls, visit_class_method, &cc);
  return cc.hit;
}

rw_ctx *rw_new(ir_model *m, rw_mode mode, CXCursor fn, int fatal)
{
  rw_ctx *c = xcalloc(1, sizeof *c);
  c->m = m;
  c->mode = mode;
  c->fn = fn;
  c->fatal = fatal;
  c->render = rw_render;
  c->used = xcalloc((size_t)(m->n_fields ? m->n_fields : 1), 1);
  c->target_var = clang_getNullCursor();
  c->node_var = clang_getNullCursor();
  c->lag_loop = clang_getNullCursor();
  if (mode == RW_UPDATE) {
    /* update() sets the multiplicity (the offset) of the spikes it sends: each SpikeEvent local gets a
     * count (an offset) */
    c->multiplicity = model_calls(m, fn, "set_multiplicity");
    if (c->multiplicity)
      m->multiplicity = 1;
    c->offsets = model_calls(m, fn, "set_offset");
    if (c->offsets)
      m->spike_offsets = 1;
  }
  if (mode == RW_UPDATE && clang_Cursor_getNumArguments(fn) >= 3) {
    lag_find lf;
    lf.to = clang_Cursor_getArgument(fn, 2);
    lf.name = NULL;
    lf.loop = clang_getNullCursor();
    clang_visitChildren(fn, visit_find_lag, &lf);
    c->lag_var = lf.name;
    c->lag_loop = lf.loop;
  }
  if (mode == RW_UPDATE && m->n_bound && clang_equalCursors(fn, m->methods[IR_M_UPDATE]))
    for (int k = 0; k < m->n_bound; k++) {
      /* update() passes a constant here (parse.c, detect_update_forward) */
      char *v = xasprintf("%lld", m->bound_value[k]);
      rw_add_subst(c, m->bound_parm[k], v);
      free(v);
    }
  if (mode == RW_UPDATE || mode == RW_DYN || mode == RW_INIT)
    plan_drops(c);
  return c;
}

void rw_free(rw_ctx *c)
{
  int k;
  if (!c)
    return;
  for (k = 0; k < c->n_aliases; k++)
    free(c->aliases[k].slot);
  for (k = 0; k < c->n_substs; k++)
    free(c->substs[k].text);
  free(c->aliases);
  free(c->substs);
  free(c->dropped);
  free(c->drop_why);
  free(c->used);
  free(c->first_error);
  free(c->lag_var);
  free(c);
}

int rw_errors(const rw_ctx *c)
{
  return c->n_errors;
}

void rw_set_helper(rw_ctx *c)
{
  c->helper = 1;
  free(c->lag_var);
  c->lag_var = xstrdup("nestcl_lag");
}

void rw_set_return_label(rw_ctx *c, const char *label)
{
  snprintf(c->label, sizeof c->label, "%s", label);
}

const char *rw_first_error(const rw_ctx *c)
{
  return c->first_error ? c->first_error : "";
}

const unsigned char *rw_used_fields(const rw_ctx *c)
{
  return c->used;
}

int rw_used_transcendental(const rw_ctx *c)
{
  return c->transcendental;
}

static int is_host_mode(rw_ctx *c)
{
  return c->mode == RW_PRERUN || c->mode == RW_DEFAULTS || c->mode == RW_GET || c->mode == RW_SET ||
    c->mode == RW_INIT || c->mode == RW_RECORD;
}

void rw_add_subst(rw_ctx *c, CXCursor parm, const char *text)
{
  c->substs = xrealloc(c->substs, sizeof *c->substs * (size_t)(c->n_substs + 1));
  c->substs[c->n_substs].parm = parm;
  c->substs[c->n_substs].text = xasprintf("(%s)", text);
  c->n_substs++;
}

/* ---- calls: the rules in the order they are tried (each in its family's file) ---- */

/* In order: the first rule that takes a call translates it; the last two refuse what nothing took. */
static const call_rule call_rules[] = {
  {"subscript", RW_ANY, call_subscript},
  {"per-receptor size()/empty()", RW_ANY, call_receptor_count},
  {"Time::get_resolution().get_ms()", RW_ANY, call_resolution_ms},
  {"get_steps()", RW_ANY, call_get_steps},
  {"spike time stamp", RW_BIT(RW_SEND), call_spike_time},
  {"delay, rport, stdp_eps", RW_BIT(RW_SEND), call_connection_base},
  {"target's spike history", RW_BIT(RW_SEND), call_target_history},
  {"event setters and e()", RW_BIT(RW_SEND), call_event_send},
  {"history iterator", RW_BIT(RW_SEND), call_history_iterator},
  {"NEST's numerics::expm1", RW_ANY, call_nest_expm1},
  {"glibc exp, pow and expm1", RW_BIT(RW_SEND) | RW_BIT(RW_DYN) | RW_BIT(RW_UPDATE), call_libm},
  {"gsl_odeiv_evolve_apply", RW_BIT(RW_UPDATE), call_evolve_apply},
  {"synapse helper", RW_BIT(RW_SEND), call_syn_helper},
  {"get_target", RW_BIT(RW_SEND), call_get_target},
  {"Time::delay_ms_to_steps", RW_BIT(RW_PRERUN), call_delay_ms_to_steps},
  {"math", RW_ANY, call_math},
  {"RingBuffer::get_value", RW_BIT(RW_UPDATE), call_ring_get_value},
  {"get_modulo", RW_BIT(RW_UPDATE), call_ring_modulo},
  {"reset_values_all_channels", RW_BIT(RW_UPDATE), call_ring_reset},
  {"set_spiketime", RW_BIT(RW_UPDATE), call_set_spiketime},
  {"SliceRingBuffer", RW_BIT(RW_UPDATE), call_slice_ring_buffer},
  {"EventDeliveryManager::send", RW_BIT(RW_UPDATE), call_send},
  {"record_data", RW_BIT(RW_UPDATE), call_record_data},
  {"SpikeEvent::set_multiplicity", RW_BIT(RW_UPDATE), call_set_multiplicity},
  {"SpikeEvent::set_offset", RW_BIT(RW_UPDATE), call_set_offset},
  {"ArchivingNode::get_spiketime_ms", RW_BIT(RW_UPDATE), call_get_spiketime},
  {"SpikeEvent::get_offset", RW_BIT(RW_ROUTE_SPIKE), call_get_offset},
  {"Clopath history", RW_BIT(RW_UPDATE) | RW_HOST_INIT | RW_BIT(RW_INIT), call_clopath_history},
  {"random draw", RW_BIT(RW_UPDATE), call_random_draw},
  {"random distribution", RW_BIT(RW_UPDATE), call_random_dist},
  {"RandomDistribution::param", RW_BIT(RW_PRERUN), call_dist_param},
  {"spike_event_is_due", RW_BIT(RW_UPDATE), call_spike_event_is_due},
  {"flush_event_is_due", RW_BIT(RW_UPDATE), call_flush_event_is_due},
  {"set_last_event_time", RW_BIT(RW_UPDATE), call_set_last_event_time},
  {"FlushEventMechanism::pre_run_hook", RW_BIT(RW_PRERUN), call_flush_pre_run_hook},
  {"wfr_interpolation_order", RW_BIT(RW_UPDATE) | RW_BIT(RW_DYN), call_wfr_order},
  {"handler add_value", RW_ROUTES, call_route_add_value},
  {"event getter", RW_ROUTES, call_event_getter},
  {"logger init / per-receptor storage", RW_HOST_INIT, call_host_storage},
  {"synapse base set_status", RW_BIT(RW_SET), call_base_status},
  {"update_value_param", RW_BIT(RW_SET), call_update_value_param},
  {"update_value", RW_BIT(RW_SET), call_update_value},
  {"model getter", RW_ANY, call_model_getter},
  {"regula_falsi", RW_BIT(RW_UPDATE), call_regula_falsi},
  {"IAFPropagator::evaluate", RW_BIT(RW_UPDATE), call_propagator},
  {"std::tie = IAFPropagatorAlpha::evaluate", RW_BIT(RW_UPDATE), call_tie_propagator},
  {"neuron helper", RW_BIT(RW_UPDATE), call_neuron_helper},
  {"virtual call", RW_ANY, call_virtual},
  {"unknown call", RW_ANY, call_unknown},
};

static int handle_call(rw_ctx *c, CXCursor cur, strbuf *out)
{
  call_info ci;
  char *name, *qname, *cls;
  ci.cur = cur;
  ci.callee = clang_getCursorReferenced(cur);
  name = cursor_spelling(ci.callee);
  qname = cursor_qualified_name(ci.callee);
  cls = cursor_spelling(clang_getCursorSemanticParent(ci.callee));
  if (!*name) {
    free(name);
    name = call_name(cur);
  }
  ci.name = name;
  ci.qname = qname;
  ci.cls = cls;
  ci.base = member_base(cur);
  ci.nargs = clang_Cursor_getNumArguments(cur);
  ci.ck = clang_getCursorKind(ci.callee);
  for (size_t k = 0; k < sizeof call_rules / sizeof *call_rules; k++)
    if ((call_rules[k].modes & RW_BIT(c->mode)) && call_rules[k].apply(c, &ci, out))
      break;
  free(name);
  free(qname);
  free(cls);
  return 1;
}

/* ---- the renderer: node rules in the order they are tried, then the pass-through ---- */

static int is_ref_or_attribute(enum CXCursorKind k)
{
  return is_type_ref(k) || k == CXCursor_TemplateRef || k == CXCursor_MemberRef || clang_isAttribute(k);
}

/* A node from a macro expansion: assert, LOG and the built-in constants; any other macro is refused. */
static void render_macro(rw_ctx *c, const node_info *ni, const ir_macro *mc, strbuf *out)
{
  static const char *const constants[] = {"INFINITY", "NAN", "M_PI", "M_E", "DBL_MAX", "HUGE_VAL"};
  if (!strcmp(mc->name, "assert")) {
    render_assert(c, ni, out);
    return;
  }
  if (!strcmp(mc->name, "LOG") && is_host_mode(c)) {
    sb_puts(out, "((void)0) /* NEST's LOG: messages stay with NEST */");
    return;
  }
  for (size_t k = 0; k < sizeof constants / sizeof *constants; k++)
    if (!strcmp(mc->name, constants[k])) {
      sb_putn(out, ni->t + ni->b, ni->e - ni->b);
      return;
    }
  char *what = xasprintf("macro '%s'", mc->name);
  error_at(c, ni->cur, what, "macros are only expanded for the built-in constants and assert");
  free(what);
}

static int node_call(rw_ctx *c, const node_info *ni, strbuf *out)
{
  return handle_call(c, ni->cur, out);
}

/* By kind, in order within a kind. Unsupported constructs go last (node_unsupported, for every kind). */
static const node_rule node_rules[] = {
  {CXCursor_IfStmt, "if on a constant", RW_BIT(RW_UPDATE) | RW_BIT(RW_DYN) | RW_BIT(RW_INIT), node_if_constant},
  {CXCursor_SwitchStmt, "switch on a constant", RW_BIT(RW_UPDATE) | RW_BIT(RW_DYN) | RW_BIT(RW_INIT),
   node_switch_constant},
  {CXCursor_CallExpr, "call", RW_ANY, node_call},
  {CXCursor_MemberRefExpr, "history entry", RW_BIT(RW_SEND), node_history_entry},
  {CXCursor_MemberRefExpr, "member", RW_ANY, node_member_ref},
  {CXCursor_ArraySubscriptExpr, "array field element", RW_ANY, node_array_subscript},
  {CXCursor_DeclRefExpr, "inlined getter's parameter", RW_ANY, ref_substitution},
  {CXCursor_DeclRefExpr, "E_L shift", RW_BIT(RW_SET), ref_set_shift},
  {CXCursor_DeclRefExpr, "enumerator", RW_ANY, ref_enum_constant},
  {CXCursor_DeclRefExpr, "update()'s parameters", RW_BIT(RW_UPDATE), ref_update_parameter},
  {CXCursor_DeclRefExpr, "handler's event", RW_ROUTES, ref_route_event},
  {CXCursor_DeclRefExpr, "send()'s target, event, common properties", RW_BIT(RW_SEND), ref_send_object},
  {CXCursor_DeclRefExpr, "dynamics' node", RW_BIT(RW_DYN), ref_dyn_node},
  {CXCursor_DeclRefExpr, "renamed local", RW_ANY, ref_reserved_local},
  {CXCursor_DeclRefExpr, "variable", RW_ANY, ref_variable},
  {CXCursor_DeclRefExpr, "member without object", RW_ANY, ref_field},
  {CXCursor_ReturnStmt, "set()'s return", RW_BIT(RW_SET), node_set_return},
  {CXCursor_ReturnStmt, "send()'s return", RW_BIT(RW_SEND), node_send_return},
  {CXCursor_DeclStmt, "target and iterator declarations", RW_BIT(RW_SEND), node_send_declstmt},
  {CXCursor_DeclStmt, "typedef of a scope, dynamics' node", RW_BIT(RW_UPDATE) | RW_BIT(RW_DYN), node_scope_declstmt},
  {CXCursor_DeclStmt, "declaration", RW_ANY, node_declstmt},
  {CXCursor_VarDecl, "variable declaration", RW_ANY, node_vardecl},
  {CXCursor_CXXThrowExpr, "set()'s or a handler's throw", RW_BIT(RW_SET) | RW_ROUTES, node_set_throw},
  {CXCursor_CXXThrowExpr, "host throw", RW_HOST_INIT | RW_BIT(RW_INIT), node_host_throw},
  {CXCursor_CXXThrowExpr, "update()'s throw", RW_BIT(RW_UPDATE), node_update_throw},
  {CXCursor_CXXStaticCastExpr, "cast", RW_ANY, node_cast},
  {CXCursor_CXXFunctionalCastExpr, "cast", RW_ANY, node_cast},
  {CXCursor_CStyleCastExpr, "cast", RW_ANY, node_cast},
};

void rw_render(rw_ctx *c, CXCursor cur, strbuf *out)
{
  node_info ni;
  size_t size;
  const ir_macro *mc;

  ni.cur = cur;
  ni.kind = clang_getCursorKind(cur);
  if (cursor_offsets(cur, &ni.f, &ni.b, &ni.e))
    return; /* implicit node (default argument, ...) */
  ni.t = file_text(c, ni.f, &size);
  if (!ni.t || ni.e > size)
    return;

  if (c->n_dropped && node_dropped(c, &ni, out))
    return;
  mc = macro_at(c, ni.f, ni.b, ni.e);
  if (mc) {
    render_macro(c, &ni, mc, out);
    return;
  }
  if ((c->mode == RW_PRERUN || c->mode == RW_DEFAULTS) && node_host_member_assign(c, &ni, out))
    return;
  for (size_t k = 0; k < sizeof node_rules / sizeof *node_rules; k++)
    if (node_rules[k].kind == ni.kind && (node_rules[k].modes & RW_BIT(c->mode)) && node_rules[k].apply(c, &ni, out))
      return;
  if (node_unsupported(c, &ni, out))
    return;

  /* Pass-through: the original text with the children rendered in place. */
  render_children_in_place(c, cur, ni.f, ni.t, ni.b, ni.e, is_ref_or_attribute, out);
}
