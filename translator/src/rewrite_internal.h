/*
 * What the rewriter's files share (rewrite.c, the construct families
 * rewrite_*.c, and the two files below them, rewrite_query.c and
 * rewrite_common.c): the rewriting context, the call and node rules' types,
 * and per file the functions the others use. Only these files include it;
 * the rest of the translator sees rewrite.h.
 */
#ifndef NESTCL_TR_REWRITE_INTERNAL_H
#define NESTCL_TR_REWRITE_INTERNAL_H

#include "parse.h"
#include "rewrite.h"

#include <string.h>

typedef struct rw_alias {
  CXCursor var;
  int group; /* first channel group of the buffer */
  char *slot; /* rendered slot expression */
} rw_alias;

typedef struct rw_subst {
  CXCursor parm;
  char *text;
} rw_subst;

struct rw_ctx {
  /* rw_render, set by rw_new: the rules below rewrite.c reach it only through here (render_sub) */
  void (*render)(rw_ctx *c, CXCursor cur, strbuf *out);
  ir_model *m;
  rw_mode mode;
  CXCursor fn;
  int fatal;
  int n_errors;
  char *first_error;
  unsigned char *used;
  int transcendental;
  rw_alias *aliases;
  int n_aliases;
  rw_subst *substs;
  int n_substs;
  int depth;
  char label[64]; /* RW_SET: where a return statement goes */
  char *lag_var; /* RW_UPDATE: the variable of the lag loop (for random draws) */
  CXCursor target_var; /* RW_SEND: the local that holds get_target( t ) */
  CXCursor node_var; /* RW_DYN: the local that holds the node (reinterpret_cast of the params pointer) */
  int multiplicity; /* RW_UPDATE: update() calls SpikeEvent::set_multiplicity */
  int offsets; /* RW_UPDATE: update() (or a helper of it) calls SpikeEvent::set_offset */
  int helper; /* RW_UPDATE: rendering a method that update() calls, as a function of its own */
  CXCursor lag_loop; /* RW_UPDATE: update()'s lag loop (a null cursor in a helper) */
  int rng_sites; /* random draws rendered so far: each call site gets its own stream */
  /* statements left out of this render, with why (plan_drops) */
  CXCursor *dropped;
  const char **drop_why;
  int n_dropped;
};

/* What every call rule looks at: the call, what it calls, and its object (a null cursor for free functions). */
typedef struct call_info {
  CXCursor cur, callee, base;
  const char *name; /* the callee's name (the call's spelling when it has none) */
  const char *qname; /* qualified name */
  const char *cls; /* the callee's class */
  int nargs;
  enum CXCursorKind ck;
} call_info;

/*
 * A rule returns 1 when the call is its construct: it has then emitted the
 * translation, or reported why there is none. 0 lets the next rule try.
 */
typedef struct call_rule {
  const char *construct; /* what it translates */
  unsigned modes; /* the modes it applies in (RW_BIT) */
  int (*apply)(rw_ctx *c, const call_info *ci, strbuf *out);
} call_rule;

#define RW_BIT(m) (1u << (m))

#define RW_ANY 0xffffffffu

#define RW_ROUTES (RW_BIT(RW_ROUTE_SPIKE) | RW_BIT(RW_ROUTE_CURRENT))

#define RW_HOST_INIT (RW_BIT(RW_PRERUN) | RW_BIT(RW_DEFAULTS))

static inline int name_is(const call_info *ci, const char *n)
{
  return !strcmp(ci->name, n);
}

/* A node and its source text: the file's text t, the node's extent [b, e). */
typedef struct node_info {
  CXCursor cur;
  CXFile f;
  const char *t;
  unsigned b, e;
  enum CXCursorKind kind;
} node_info;

/*
 * A rule for one kind of node. It returns 1 when it rendered the node (or
 * reported why it cannot be), 0 to let the next rule for the kind try; a node
 * that no rule takes is copied with its children rendered in place.
 */
typedef struct node_rule {
  enum CXCursorKind kind;
  const char *construct; /* what it translates */
  unsigned modes; /* the modes it applies in (RW_BIT) */
  int (*apply)(rw_ctx *c, const node_info *ni, strbuf *out);
} node_rule;

/*
 * Per file, what the others use. The files are layered, each using only the
 * ones below it (no circle, tests/style's style_circles checks it):
 *   rewrite.c            the context and the rule tables; names every rule
 *   rewrite_<family>.c   the rules (call_*, node_*, ref_*) of one construct family
 *   rewrite_query.c      questions about the AST that several families ask
 *   rewrite_common.c     diagnostics, source text, names and types, rendering a part
 * A rule renders a part of its node with render_sub, through the context, so
 * no file below rewrite.c names its dispatcher.
 */

/* Renders cur (a part of the node a rule translates) with the context's dispatcher, rw_render. */
static inline void render_sub(rw_ctx *c, CXCursor cur, strbuf *out)
{
  c->render(c, cur, out);
}

/* rewrite_common.c */
void error_at(rw_ctx *c, CXCursor at, const char *construct, const char *why);
void warning_at(rw_ctx *c, CXCursor at, const char *text);
const char *file_text(rw_ctx *c, CXFile f, size_t *size);
int is_ident_char(char ch);
void emit_gap(const char *t, unsigned from, unsigned to, strbuf *out);
const ir_macro *macro_at(rw_ctx *c, CXFile f, unsigned b, unsigned e);
int is_reserved_name(const char *n);
int is_local_decl(CXCursor d);
int is_model_scope(rw_ctx *c, CXCursor decl);
char *decl_name_of_type(CXType t);
char *c_type_spelling(CXType t);
void render_to(rw_ctx *c, CXCursor cur, char **out);
void render_arg(rw_ctx *c, CXCursor call, int k, strbuf *out);
int is_type_ref(enum CXCursorKind k);
void render_children_in_place(rw_ctx *c, CXCursor cur, CXFile f, const char *t, unsigned pos, unsigned e,
                              int (*skip)(enum CXCursorKind), strbuf *out);

/* rewrite_query.c */
CXCursor member_base(CXCursor call);
char *call_name(CXCursor call);
int callee_named(CXCursor call, const char *name);
CXCursor find_call_below(CXCursor cur, const char *name);
int calls_method(CXCursor fn, const char *name);
const char *call_lag(rw_ctx *c, CXCursor call);
void add_neuron_helper(ir_model *m, CXCursor def);
enum CXChildVisitResult visit_side_effect(CXCursor x, CXCursor parent, CXClientData data);
int no_side_effect(CXCursor e);
enum CXChildVisitResult visit_pure_init(CXCursor x, CXCursor parent, CXClientData data);
int pure_expr(CXCursor e);
CXCursor getter_target(rw_ctx *c, CXCursor e);
CXCursor var_construct(CXCursor v);
const char *dist_kind(CXType t);
int is_plain_assign(rw_ctx *c, cursor_kids ops);
int is_host_buffer_member(rw_ctx *c, CXCursor ref);
int is_gap_input(rw_ctx *c, CXCursor ref);

/* rewrite_calls.c */
int call_resolution_ms(rw_ctx *c, const call_info *ci, strbuf *out);
int call_get_steps(rw_ctx *c, const call_info *ci, strbuf *out);
int call_delay_ms_to_steps(rw_ctx *c, const call_info *ci, strbuf *out);
int call_math(rw_ctx *c, const call_info *ci, strbuf *out);
int call_model_getter(rw_ctx *c, const call_info *ci, strbuf *out);
int call_neuron_helper(rw_ctx *c, const call_info *ci, strbuf *out);
int call_nest_expm1(rw_ctx *c, const call_info *ci, strbuf *out);
int call_libm(rw_ctx *c, const call_info *ci, strbuf *out);

/* rewrite_access.c */
int call_subscript(rw_ctx *c, const call_info *ci, strbuf *out);
int call_receptor_count(rw_ctx *c, const call_info *ci, strbuf *out);
int call_host_storage(rw_ctx *c, const call_info *ci, strbuf *out);
int call_update_value_param(rw_ctx *c, const call_info *ci, strbuf *out);
int call_update_value(rw_ctx *c, const call_info *ci, strbuf *out);
int node_host_member_assign(rw_ctx *c, const node_info *ni, strbuf *out);
int node_member_ref(rw_ctx *c, const node_info *ni, strbuf *out);
int node_array_subscript(rw_ctx *c, const node_info *ni, strbuf *out);
int ref_substitution(rw_ctx *c, const node_info *ni, strbuf *out);
int ref_set_shift(rw_ctx *c, const node_info *ni, strbuf *out);
int ref_enum_constant(rw_ctx *c, const node_info *ni, strbuf *out);
int ref_update_parameter(rw_ctx *c, const node_info *ni, strbuf *out);
int ref_reserved_local(rw_ctx *c, const node_info *ni, strbuf *out);
int ref_variable(rw_ctx *c, const node_info *ni, strbuf *out);
int ref_field(rw_ctx *c, const node_info *ni, strbuf *out);
int ref_dyn_node(rw_ctx *c, const node_info *ni, strbuf *out);

/* rewrite_decls.c */
int node_declstmt(rw_ctx *c, const node_info *ni, strbuf *out);
int node_vardecl(rw_ctx *c, const node_info *ni, strbuf *out);
int node_scope_declstmt(rw_ctx *c, const node_info *ni, strbuf *out);
int node_cast(rw_ctx *c, const node_info *ni, strbuf *out);

/* rewrite_input.c */
int call_ring_get_value(rw_ctx *c, const call_info *ci, strbuf *out);
int call_ring_modulo(rw_ctx *c, const call_info *ci, strbuf *out);
int call_ring_reset(rw_ctx *c, const call_info *ci, strbuf *out);
int call_slice_ring_buffer(rw_ctx *c, const call_info *ci, strbuf *out);
int call_get_offset(rw_ctx *c, const call_info *ci, strbuf *out);
int call_spike_event_is_due(rw_ctx *c, const call_info *ci, strbuf *out);
int call_route_add_value(rw_ctx *c, const call_info *ci, strbuf *out);
int call_event_getter(rw_ctx *c, const call_info *ci, strbuf *out);
int ref_route_event(rw_ctx *c, const node_info *ni, strbuf *out);

/* rewrite_spikes.c */
int call_set_spiketime(rw_ctx *c, const call_info *ci, strbuf *out);
int call_send(rw_ctx *c, const call_info *ci, strbuf *out);
int call_clopath_history(rw_ctx *c, const call_info *ci, strbuf *out);
int call_set_multiplicity(rw_ctx *c, const call_info *ci, strbuf *out);
int call_set_offset(rw_ctx *c, const call_info *ci, strbuf *out);
int call_get_spiketime(rw_ctx *c, const call_info *ci, strbuf *out);
int call_record_data(rw_ctx *c, const call_info *ci, strbuf *out);

/* rewrite_random.c */
int call_random_draw(rw_ctx *c, const call_info *ci, strbuf *out);
int call_random_dist(rw_ctx *c, const call_info *ci, strbuf *out);
int call_dist_param(rw_ctx *c, const call_info *ci, strbuf *out);

/* rewrite_ode.c */
int call_regula_falsi(rw_ctx *c, const call_info *ci, strbuf *out);
int call_propagator(rw_ctx *c, const call_info *ci, strbuf *out);
int call_tie_propagator(rw_ctx *c, const call_info *ci, strbuf *out);
int call_evolve_apply(rw_ctx *c, const call_info *ci, strbuf *out);

/* rewrite_synapse.c */
int call_spike_time(rw_ctx *c, const call_info *ci, strbuf *out);
int call_connection_base(rw_ctx *c, const call_info *ci, strbuf *out);
int call_target_history(rw_ctx *c, const call_info *ci, strbuf *out);
int call_event_send(rw_ctx *c, const call_info *ci, strbuf *out);
int call_history_iterator(rw_ctx *c, const call_info *ci, strbuf *out);
int call_syn_helper(rw_ctx *c, const call_info *ci, strbuf *out);
int call_base_status(rw_ctx *c, const call_info *ci, strbuf *out);
int call_get_target(rw_ctx *c, const call_info *ci, strbuf *out);
int node_send_declstmt(rw_ctx *c, const node_info *ni, strbuf *out);
int node_history_entry(rw_ctx *c, const node_info *ni, strbuf *out);
int ref_send_object(rw_ctx *c, const node_info *ni, strbuf *out);
int node_send_return(rw_ctx *c, const node_info *ni, strbuf *out);

/* rewrite_control.c */
void plan_drops(rw_ctx *c);
int call_flush_event_is_due(rw_ctx *c, const call_info *ci, strbuf *out);
int call_set_last_event_time(rw_ctx *c, const call_info *ci, strbuf *out);
int call_flush_pre_run_hook(rw_ctx *c, const call_info *ci, strbuf *out);
int call_wfr_order(rw_ctx *c, const call_info *ci, strbuf *out);
void render_assert(rw_ctx *c, const node_info *ni, strbuf *out);
int node_set_return(rw_ctx *c, const node_info *ni, strbuf *out);
int node_set_throw(rw_ctx *c, const node_info *ni, strbuf *out);
int node_host_throw(rw_ctx *c, const node_info *ni, strbuf *out);
int node_update_throw(rw_ctx *c, const node_info *ni, strbuf *out);
int node_dropped(rw_ctx *c, const node_info *ni, strbuf *out);
int node_if_constant(rw_ctx *c, const node_info *ni, strbuf *out);
int node_switch_constant(rw_ctx *c, const node_info *ni, strbuf *out);

/* rewrite_unsupported.c */
int call_virtual(rw_ctx *c, const call_info *ci, strbuf *out);
int call_unknown(rw_ctx *c, const call_info *ci, strbuf *out);
int node_unsupported(rw_ctx *c, const node_info *ni, strbuf *out);

#endif
