/*
 * The emitters of nestcl-translate and what they share: translate_model()
 * renders every method of a checked model once (the update body for kernel
 * and C loop alike, the handlers, the host helpers), and each emitter turns
 * that into one output file's text. Nothing here touches the file system;
 * main.c writes the texts atomically once the whole model has succeeded.
 */
#ifndef NESTCL_TR_EMIT_H
#define NESTCL_TR_EMIT_H

#include "ir.h"
#include "strbuf.h"

typedef struct tr_rendered {
  char *update_body; /* the CompoundStmt of update(), rewritten */
  int update_transcendental;
  char *route_spike; /* body statements of route_spike, or NULL (no handler) */
  char *route_current;
  char *prerun_body; /* NULL: not translated (see the model's notes) */
  unsigned char *prerun_used;
  char *defaults_body;
  unsigned char *defaults_used;
  char *get_status_body;
  unsigned char *get_used;
  char *set_status_body; /* NULL: not translated */
  char *init_body; /* init_buffers_(): the Buffers_ fields' start values, or NULL */
  unsigned char *init_used;
  char *dyn_body; /* ODE models: the dynamics callback's body, rewritten (RW_DYN) */
  unsigned char *dyn_used;
  /* NEST's recordables (RecordablesMap): names and, per name, the value's expression over one lag's record */
  char **rec_names;
  char **rec_exprs;
  int n_rec_names;
  unsigned char *rec_used;
  /* update()'s helpers (the model's methods it calls): each a whole function, in m->helpers order */
  char **helpers;
  char **helper_protos;
  int n_helpers;
} tr_rendered;

/* The helpers' definitions (shared verbatim by the kernel and the C loop), or nothing without helpers. */
void emit_helpers(strbuf *b, const ir_model *m, const tr_rendered *r);

/* Renders everything; errors go to m->diags (m->failed set). 0 or -1. */
int translate_model(ir_model *m, tr_rendered *r);
void tr_rendered_free(tr_rendered *r);

/* Host helpers shared by neuron and synapse models: a constructor's member
 * initialisers and body (0 when it could not be translated; a note says why),
 * and a get()/get_status() body as `if (!strcmp(name, "X")) { *value = ...; }`. */
int render_ctor_fn(ir_model *m, CXCursor fn, strbuf *out, unsigned char *used);
void render_getter_fn(ir_model *m, CXCursor fn, strbuf *out, unsigned char *used);

/* The nestcl_set_* helpers that translated set_status() bodies call. */
void emit_set_helpers(strbuf *b);

/* The comment header every generated file starts with. */
void emit_file_header(strbuf *b, const ir_model *m, const char *what, const char *comment_open,
                      const char *comment_close);
/* Definitions shared verbatim by the kernel and the C loop. */
void emit_update_prelude(strbuf *b, const ir_model *m);
void emit_update_epilogue(strbuf *b, const ir_model *m);
/* ODE models: the dynamics' context and function, the RKF45 instance and the
 * evolve helper update() calls (cl: OpenCL C, else C), before update. */
void emit_ode(strbuf *b, const ir_model *m, const tr_rendered *r, int cl);

void emit_cl(strbuf *b, const ir_model *m, const tr_rendered *r);
void emit_c(strbuf *b, const ir_model *m, const tr_rendered *r);
void emit_desc(strbuf *b, const ir_model *m, const tr_rendered *r, const char *kernel_text);
void emit_glue(strbuf *b, const ir_model *m);
/* <model>_syn_glue.hpp: a synapse model's connections into its translated struct and back (nest_patch). */
void emit_syn_glue(strbuf *b, const ir_model *m);
/* nestcl_syn_glue_table.hpp: which NEST connectors hold translated synapses, and their glue (nest_patch). */
void emit_syn_glue_table(strbuf *b, ir_model *const *models, int n);
/* nestcl_glue_table.hpp: the glue functions of every translated model by name (nest_patch). */
void emit_glue_table(strbuf *b, ir_model *const *models, int n);
/* nestcl_models.c for the translated neuron and synapse models (sorted by name by the caller). */
void emit_registry(strbuf *b, ir_model *const *models, int n, ir_model *const *synapses, int n_syn);

#endif
