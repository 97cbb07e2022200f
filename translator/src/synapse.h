/*
 * Synapse models in nestcl-translate: a NEST synapse class template
 * (Connection< targetidentifierT > with a CommonPropertiesType) becomes
 *   - <model>_syn.cl: OpenCL C (and C: the same text) with the synapse and
 *     common properties structs, the model's helpers and
 *     nestcl_syn_<model>_send(), which the delivery calls for one synapse and
 *     one presynaptic spike (kernels_templates/nestcl_synapse.h gives it the
 *     target's spike history, the spike time, delay, rport and stdp_eps);
 *   - <model>_syn.c: the same functions compiled as C (send_cpu) and the
 *     nestcl_synapse_model descriptor: fields with their roles (per synapse,
 *     per source, parameter, common) and NEST names, the device text, and the
 *     host helpers translated from the constructors and get/set_status.
 * A field is per source when send() writes it only in top-level statements
 * from the spike time, common properties, parameters and other per-source
 * fields: then every synapse of one source holds the same value, and the
 * engine keeps it once per source (Kplus_, t_lastspike_).
 */
#ifndef NESTCL_TR_SYNAPSE_H
#define NESTCL_TR_SYNAPSE_H

#include "ir.h"
#include "strbuf.h"

typedef struct syn_rendered {
  char *send_body; /* send()'s CompoundStmt, rewritten */
  char **helper_sigs; /* per m->helpers[k]: the parameter list after the fixed ones, and the return type */
  char **helper_rets;
  char **helper_bodies;
  int n_helpers;
  char *defaults_body; /* host C: the constructors' initialisers and bodies */
  char *get_body; /* host C */
  char *set_body; /* host C, NULL when set_status could not be translated */
} syn_rendered;

/* Classifies the fields and renders everything; errors go to m->diags (m->failed set). 0 or -1. */
int translate_synapse(ir_model *m, syn_rendered *r);
void syn_rendered_free(syn_rendered *r);
/* <model>_syn.cl: the device text (also included by the C file). */
void emit_syn_cl(strbuf *b, const ir_model *m, const syn_rendered *r);
/* <model>_syn.c: the same functions as C, host helpers and the descriptor. */
void emit_syn_c(strbuf *b, const ir_model *m, const syn_rendered *r, const char *cl_text);

#endif
