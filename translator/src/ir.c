/*
 * Construction and lookup helpers of the model IR (see ir.h).
 */
#include "ir.h"

#include "strbuf.h"

#include <stdlib.h>
#include <string.h>

const char *const ir_struct_names[4] = {"State_", "Parameters_", "Variables_", "Buffers_"};
const char *const ir_struct_prefix[4] = {"S_", "P_", "V_", "B_"};

ir_model *ir_model_new(const char *name)
{
  ir_model *m = xcalloc(1, sizeof *m);
  int k;
  m->name = xstrdup(name);
  for (k = 0; k < 4; k++)
    m->structs[k] = clang_getNullCursor();
  for (k = 0; k < IR_M_COUNT; k++)
    m->methods[k] = clang_getNullCursor();
  m->cls = clang_getNullCursor();
  m->ode_dyn = m->ode_control = m->ode_step = m->ode_assign = clang_getNullCursor();
  m->rec_create = clang_getNullCursor();
  m->update_forward = m->gap_handler = m->evq_decl = m->regula_falsi = clang_getNullCursor();
  m->last_spike_field = -1;
  return m;
}

void ir_model_free(ir_model *m)
{
  int k;
  if (!m)
    return;
  for (k = 0; k < m->n_fields; k++) {
    free(m->fields[k].member);
    free(m->fields[k].struct_name);
    free(m->fields[k].nest_name);
    free(m->fields[k].c_name);
  }
  for (k = 0; k < m->n_channels; k++) {
    free(m->channels[k].buffer);
    free(m->channels[k].name);
  }
  for (k = 0; k < m->n_diags; k++)
    free(m->diags[k].text);
  for (k = 0; k < m->n_helper_notes; k++)
    free(m->helper_notes[k]);
  free(m->helper_notes);
  for (k = 0; k < m->n_named; k++)
    free(m->named[k].name);
  free(m->named);
  for (k = 0; k < m->n_failures; k++)
    free(m->failures[k]);
  free(m->failures);
  free(m->cp_name);
  free(m->helpers);
  free(m->evq_member);
  free(m->diags);
  free(m->fields);
  free(m->channels);
  free(m->recordables);
  free(m->dists);
  free(m->name);
  free(m->source_file);
  free(m->header_file);
  free(m);
}

ir_field *ir_add_field(ir_model *m)
{
  ir_field *f;
  m->fields = xrealloc(m->fields, sizeof *m->fields * (size_t)(m->n_fields + 1));
  f = &m->fields[m->n_fields++];
  memset(f, 0, sizeof *f);
  f->decl = clang_getNullCursor();
  return f;
}

ir_channel_group *ir_add_channel_group(ir_model *m)
{
  ir_channel_group *g;
  m->channels = xrealloc(m->channels, sizeof *m->channels * (size_t)(m->n_channels + 1));
  g = &m->channels[m->n_channels++];
  memset(g, 0, sizeof *g);
  g->decl = clang_getNullCursor();
  return g;
}

int ir_find_field(const ir_model *m, CXCursor decl)
{
  int k;
  CXCursor c = clang_getCanonicalCursor(decl);
  for (k = 0; k < m->n_fields; k++)
    if (clang_equalCursors(clang_getCanonicalCursor(m->fields[k].decl), c))
      return k;
  return -1;
}

int ir_ode_field(const ir_model *m)
{
  int j;
  for (j = 0; j < m->n_fields; j++)
    if (m->fields[j].role == IR_ROLE_STATE && m->fields[j].array_len > 0 && m->fields[j].type == IR_T_DOUBLE)
      return j;
  for (j = 0; j < m->n_fields; j++)
    if (m->fields[j].role == IR_ROLE_STATE && m->fields[j].array_len < 0 && !ir_per_receptor(&m->fields[j]) &&
        m->fields[j].type == IR_T_DOUBLE)
      return j;
  return -1;
}

int ir_find_field_by_name(const ir_model *m, const char *struct_name, const char *member)
{
  int k;
  for (k = 0; k < m->n_fields; k++)
    if (!strcmp(m->fields[k].struct_name, struct_name) && !strcmp(m->fields[k].member, member))
      return k;
  return -1;
}

int ir_find_channel_group(const ir_model *m, CXCursor decl)
{
  int k;
  CXCursor c = clang_getCanonicalCursor(decl);
  for (k = 0; k < m->n_channels; k++)
    if (clang_equalCursors(clang_getCanonicalCursor(m->channels[k].decl), c))
      return k;
  return -1;
}

char *ir_channel_base_expr(const ir_channel_group *g)
{
  if (g->base_k == 0)
    return xasprintf("%d", g->base_fixed);
  if (g->base_k == 1)
    return xasprintf("(%d + K)", g->base_fixed);
  return xasprintf("(%d + %d * K)", g->base_fixed, g->base_k);
}

void ir_diag_add(ir_model *m, int is_error, const char *text)
{
  m->diags = xrealloc(m->diags, sizeof *m->diags * (size_t)(m->n_diags + 1));
  m->diags[m->n_diags].text = xstrdup(text);
  m->diags[m->n_diags].is_error = is_error;
  m->n_diags++;
  if (is_error)
    m->failed = 1;
}

void ir_note_add(ir_model *m, const char *text)
{
  m->helper_notes = xrealloc(m->helper_notes, sizeof *m->helper_notes * (size_t)(m->n_helper_notes + 1));
  m->helper_notes[m->n_helper_notes++] = xstrdup(text);
}

const char *ir_input_name(const char *path)
{
  const char *b = strrchr(path, '/');
  return b ? b + 1 : path;
}

const char *ir_type_enum(ir_type t)
{
  static const char *const n[] = {"NESTCL_T_DOUBLE", "NESTCL_T_LONG", "NESTCL_T_INT",
                                  "NESTCL_T_BOOL",   "NESTCL_T_SIZE", "NESTCL_T_INT"};
  return n[t];
}

const char *ir_type_c(ir_type t)
{
  static const char *const n[] = {"double", "int64_t", "int32_t", "int32_t", "uint64_t", "uint32_t"};
  return n[t];
}

const char *ir_type_cl(ir_type t)
{
  static const char *const n[] = {"double", "long", "int", "int", "ulong", "uint"};
  return n[t];
}

int ir_add_failure(ir_model *m, const char *name)
{
  int k;
  for (k = 0; k < m->n_failures; k++)
    if (!strcmp(m->failures[k], name))
      return k + 1;
  m->failures = xrealloc(m->failures, sizeof *m->failures * (size_t)(m->n_failures + 1));
  m->failures[m->n_failures++] = xstrdup(name);
  return m->n_failures;
}
