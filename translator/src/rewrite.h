/*
 * The rewriter of nestcl-translate: renders a method body (or one expression)
 * of a model as C / OpenCL C text. It is Clang's Rewriter idea in C: the
 * original source text is copied between the AST nodes that need a change,
 * and only those nodes' ranges are replaced, so comments, layout and the
 * author's structure survive. What a node becomes depends on the mode: the
 * same S_.y3_ is a SoA read in update(), a host array slot in pre_run, and
 * e.get_weight() only means something in a handler.
 */
#ifndef NESTCL_TR_REWRITE_H
#define NESTCL_TR_REWRITE_H

#include "ir.h"
#include "strbuf.h"

typedef enum rw_mode {
  RW_UPDATE = 0, /* update(): kernel and C loop body */
  RW_PRERUN, /* pre_run_hook(): host C */
  RW_DEFAULTS, /* constructors: host C */
  RW_ROUTE_SPIKE, /* handle(SpikeEvent&) */
  RW_ROUTE_CURRENT, /* handle(CurrentEvent&) */
  RW_GET, /* one expression of get() */
  RW_SET, /* Parameters_::set / State_::set on local copies of one slot */
  RW_SEND, /* a synapse's send() and the helpers it calls: device function and C twin */
  RW_DYN, /* an ODE model's dynamics callback: device function and C twin over nestcl_ctx */
  RW_INIT, /* init_buffers_(): host C, the Buffers_ fields' start values */
  RW_RECORD /* a RecordablesMap getter: host C over one lag's recorded fields (nestcl_rec) */
} rw_mode;

typedef struct rw_ctx rw_ctx;

/*
 * fatal: errors become the model's diagnostics (the model is then CPU-only);
 * otherwise the first reason is kept for a note and the text is discarded.
 */
rw_ctx *rw_new(ir_model *m, rw_mode mode, CXCursor fn, int fatal);
void rw_free(rw_ctx *c);
void rw_render(rw_ctx *c, CXCursor cur, strbuf *out);
int rw_errors(const rw_ctx *c);
/* RW_UPDATE: the function rendered is a helper of update() (a method it calls), a function of its own. */
void rw_set_helper(rw_ctx *c);
/* Whether t (through a reference) is NEST's Time (a helper's Time parameters stand for update()'s origin). */
int rw_is_time_type(CXType t);
/* A neuron helper's generated function name, nestcl_h_<model>_<method>. */
void rw_helper_name(const ir_model *m, CXCursor method, strbuf *out);
/* RW_SET: the label a return statement jumps to (after storing its value in nestcl_ret). */
void rw_set_return_label(rw_ctx *c, const char *label);
const char *rw_first_error(const rw_ctx *c);
/* Per field of the model: referenced by what was rendered. */
const unsigned char *rw_used_fields(const rw_ctx *c);
/* Whether the render used transcendental built-ins (documented in the output). */
int rw_used_transcendental(const rw_ctx *c);

/*
 * RW_DYN: a field the dynamics reads by value from its context (a parameter
 * that update() never writes: it cannot change during a step), not through
 * a pointer to its SoA array.
 */
int rw_dyn_by_value(const ir_field *f);
/*
 * RW_INIT: whether a statement of init_buffers_() only sets up what the
 * runtime provides itself (input buffers, the logger, the spike history, the
 * GSL stepper, control, evolve and system that nestcl_rkf45.h replaces).
 */
int rw_is_runtime_setup(ir_model *m, CXCursor stmt);

/* RW_RECORD and inlined getters: the parameter (or template parameter) parm stands for text. */
void rw_add_subst(rw_ctx *c, CXCursor parm, const char *text);

/* The body of a function definition (its CompoundStmt), or a null cursor. */
CXCursor rw_body_of(CXCursor fn);

#endif
