/*
 * Descriptor emitter: <model>_desc.c defines nestcl_model_<model> (model.h)
 * with the field table, channel groups, recordables, the kernel source as a
 * string, and the host helpers translated from the model's constructors,
 * pre_run_hook(), handle() and get(). A helper that could not be translated
 * is a NULL pointer; the report says why.
 */
#include "emit.h"

#include <stdlib.h>
#include <string.h>

static void field_decls(strbuf *b, const ir_model *m, const unsigned char *used)
{
  int j;
  for (j = 0; j < m->n_fields; j++)
    if (used[j])
      sb_printf(b, "  %s *const %s = (%s *)fields[%d];\n", ir_type_c(m->fields[j].type), m->fields[j].c_name,
                ir_type_c(m->fields[j].type), j);
}

/* The nestcl_set_* helpers that translated set_status() bodies call (NEST's update_value_param). */
void emit_set_helpers(strbuf *b)
{
  sb_puts(b,
          "/* NEST's update_value_param(): sets the member when the dictionary names it. */\n"
          "static int nestcl_set_d(const char *name, const char *key, double value, double *member, int *hit)\n"
          "{\n  if (strcmp(name, key))\n    return 0;\n  *member = value;\n  *hit = 1;\n  return 1;\n}\n"
          "static int nestcl_set_l(const char *name, const char *key, double value, int64_t *member, int *hit)\n"
          "{\n  if (strcmp(name, key))\n    return 0;\n  *member = (int64_t)value;\n  *hit = 1;\n  return 1;\n}\n"
          "static int nestcl_set_i(const char *name, const char *key, double value, int32_t *member, int *hit)\n"
          "{\n  if (strcmp(name, key))\n    return 0;\n  *member = (int32_t)value;\n  *hit = 1;\n  return 1;\n}\n"
          "/* A per-receptor vector is set through NEST and the glue, never from one double. */\n"
          "static int nestcl_set_vector(const char *key)\n{\n  (void)key;\n  return 0;\n}\n"
          "static int nestcl_set_u(const char *name, const char *key, double value, uint32_t *member, int *hit)\n"
          "{\n  if (strcmp(name, key))\n    return 0;\n  *member = (uint32_t)value;\n  *hit = 1;\n  return 1;\n}\n"
          "static int nestcl_set_b32(const char *name, const char *key, double value, int32_t *member, int *hit)\n"
          "{\n  if (strcmp(name, key))\n    return 0;\n  *member = value != 0.0;\n  *hit = 1;\n  return 1;\n}\n"
          "static int nestcl_set_bool(const char *name, const char *key, double value, bool *member, int *hit)\n"
          "{\n  if (strcmp(name, key))\n    return 0;\n  *member = value != 0.0;\n  *hit = 1;\n  return 1;\n}\n"
          "/* A bool field is an int32_t on the device; a bool local of set_status() stays a bool. */\n"
          "#define nestcl_set_b(name, key, value, member, hit) \\\n"
          "  _Generic((member), bool *: nestcl_set_bool, default: nestcl_set_b32)(name, key, value, member, hit)\n\n");
}

/* The includes, the warnings the model's own code may raise, and update_cpu's prototype. */
static void emit_desc_prologue(strbuf *b, const ir_model *m)
{
  const char *nm = m->name;
  emit_file_header(b, m, "field descriptor and host helpers.", "/*", "*/");
  sb_puts(b,
          "#include <float.h>\n#include <limits.h>\n#include <math.h>\n#include <stdbool.h>\n"
          "#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n\n"
          "#include \"nestcl/device.h\"\n#include \"nestcl/model.h\"\n"
          "#include \"nestcl_libm.h\" /* numerics::expm1 in host helpers: NEST's series (nestcl_nest_expm1) */\n\n"
          "/* The model's own locals and parameters may go unused in a helper. */\n"
          "#pragma GCC diagnostic ignored \"-Wunused-variable\"\n"
          "#pragma GCC diagnostic ignored \"-Wunused-but-set-variable\"\n"
          "/* The model's own mixed-sign comparisons are kept as written (same semantics as in C++). */\n"
          "#pragma GCC diagnostic ignored \"-Wsign-compare\"\n"
          "#pragma GCC diagnostic ignored \"-Wunused-parameter\"\n"
          "#pragma GCC diagnostic ignored \"-Wunused-function\"\n"
          "#pragma GCC diagnostic ignored \"-Wunused-label\"\n\n");
  sb_printf(b, "void %s_update_cpu(const nestcl_update_args *a, void *const *fields);\n\n", nm);
}

/* The descriptor's tables: fields, channel groups, recordable fields, the kernel's source. */
static void emit_desc_tables(strbuf *b, const ir_model *m, const char *kernel_text)
{
  int j;
  const char *nm = m->name;
  sb_printf(b, "static const nestcl_field %s_fields[] = {\n", nm);
  for (j = 0; j < m->n_fields; j++) {
    const ir_field *f = &m->fields[j];
    static const char *const roles[] = {"NESTCL_ROLE_STATE", "NESTCL_ROLE_PARAMETER", "NESTCL_ROLE_INTERNAL",
                                        "NESTCL_ROLE_BUFFER"};
    sb_printf(b, "  {\"%s\", \"%s\", ", f->member, f->struct_name);
    if (f->nest_name)
      sb_printf(b, "\"%s\", ", f->nest_name);
    else
      sb_puts(b, "NULL, ");
    sb_printf(b, "%s, %s, %d, %d},\n", roles[f->role], ir_type_enum(f->type), f->array_len, f->array_base);
  }
  if (!m->n_fields)
    sb_puts(b, "  {NULL, NULL, NULL, NESTCL_ROLE_STATE, NESTCL_T_DOUBLE, 0, 0},\n");
  sb_puts(b, "};\n\n");

  sb_printf(b, "static const nestcl_channel_group %s_channels[] = {\n", nm);
  for (j = 0; j < m->n_channels; j++)
    sb_printf(b, "  {\"%s\", \"%s\", %d, %d},\n", m->channels[j].buffer, m->channels[j].name, m->channels[j].count,
              m->channels[j].is_current);
  if (!m->n_channels)
    sb_puts(b, "  {NULL, NULL, 0, 0},\n");
  sb_puts(b, "};\n\n");

  sb_printf(b, "static const int %s_recordables[] = {", nm);
  for (j = 0; j < m->n_recordables; j++)
    sb_printf(b, "%s%d", j ? ", " : "", m->recordables[j]);
  if (!m->n_recordables)
    sb_puts(b, "0");
  sb_puts(b, "};\n\n");

  sb_printf(b, "static const char %s_kernel_source[] =\n  \"", nm);
  sb_put_c_escaped(b, kernel_text);
  sb_puts(b, "\";\n\n");
}

/* Host helpers every descriptor file has (time conversions, the route's result). */
static void emit_desc_common(strbuf *b)
{
  /* Host helpers. */
  sb_puts(b,
          "/* NEST's Time( Time::ms( x ) ).get_steps(): round to the nearest tic (1000 per ms),\n"
          "   then up to whole steps. */\n"
          "static long nestcl_ms_to_steps(double ms, double resolution_ms)\n{\n"
          "  const long tics_per_step = (long)(resolution_ms * 1000.0 + 0.5);\n"
          "  const long tics = (long)(ms * 1000.0 + 0.5);\n"
          "  return (tics + tics_per_step - 1) / tics_per_step;\n}\n\n"
          "/* Time::delay_ms_to_steps(): rounds to the nearest step. */\n"
          "static long nestcl_delay_ms_to_steps(double ms, double resolution_ms)\n{\n"
          "  return (long)floor(ms / resolution_ms + 0.5);\n}\n\n"
          "static int nestcl_route(int *channel, double *value, int ch, double v)\n{\n"
          "  *channel = ch;\n  *value = v;\n  return 0;\n}\n\n");
}

/* set_defaults, pre_run and init_buffers: the host's per-neuron start values. */
static void emit_desc_init(strbuf *b, const ir_model *m, const tr_rendered *r)
{
  int j;
  const char *nm = m->name;
  if (r->defaults_body) {
    sb_printf(b, "static void %s_set_defaults(void *const *fields, size_t n, size_t nestcl_i, uint32_t K)\n{\n", nm);
    for (j = 0; j < m->n_fields; j++) {
      const ir_field *f = &m->fields[j];
      const char *ct = ir_type_c(f->type);
      if (j == m->last_spike_field) /* ArchivingNode's constructor: no spike yet */
        sb_printf(b, "  ((%s *)fields[%d])[nestcl_i] = -1.0; /* ArchivingNode::last_spike_ */\n", ct, j);
      else if (f->array_len == 0)
        sb_printf(b, "  ((%s *)fields[%d])[nestcl_i] = 0;\n", ct, j);
      else if (f->array_len > 0)
        sb_printf(
          b,
          "  for (size_t nestcl_k = 0; nestcl_k < %d; ++nestcl_k)\n    ((%s *)fields[%d])[nestcl_k * n + nestcl_i] = 0;\n",
          f->array_len, ct, j);
      else if (ir_per_receptor(f))
        sb_printf(
          b,
          "  for (size_t nestcl_k = 0; nestcl_k < K; ++nestcl_k)\n    ((%s *)fields[%d])[nestcl_k * n + nestcl_i] = 0;\n",
          ct, j);
      else
        sb_printf(
          b,
          "  for (size_t nestcl_k = 0; nestcl_k < %d + %d * (size_t)K; ++nestcl_k)\n    ((%s *)fields[%d])[nestcl_k * n + nestcl_i] = 0;\n",
          f->array_base, -f->array_len, ct, j);
    }
    sb_puts(b, "  {\n");
    field_decls(b, m, r->defaults_used);
    sb_puts(b, r->defaults_body);
    sb_puts(b, "  }\n}\n\n");
  }
  if (r->prerun_body) {
    sb_printf(
      b, "static int %s_pre_run(void *const *fields, size_t n, size_t nestcl_i, uint32_t K, double resolution_ms)\n{\n",
      nm);
    field_decls(b, m, r->prerun_used);
    sb_puts(b, "  ");
    sb_puts(b, r->prerun_body);
    sb_puts(b, "\n  return 0;\n}\n\n");
  }
  if (r->init_body) {
    sb_printf(
      b,
      "static int %s_init_buffers(void *const *fields, size_t n, size_t nestcl_i, uint32_t K, double resolution_ms)\n{\n",
      nm);
    field_decls(b, m, r->init_used);
    sb_puts(b, r->init_body);
    sb_puts(b, "  return 0;\n}\n\n");
  }
}

/* The failure names and the recordables' names and values. */
static void emit_desc_recordables(strbuf *b, const ir_model *m, const tr_rendered *r)
{
  int j;
  const char *nm = m->name;
  if (m->n_failures) {
    sb_printf(b, "static const char *const %s_failures[] = {", nm);
    for (j = 0; j < m->n_failures; j++)
      sb_printf(b, "%s\"%s\"", j ? ", " : "", m->failures[j]);
    sb_puts(b, "};\n\n");
  }
  if (r->n_rec_names) {
    sb_printf(b, "static const char *const %s_recordable_names[] = {", nm);
    for (j = 0; j < r->n_rec_names; j++)
      sb_printf(b, "%s\"%s\"", j ? ", " : "", r->rec_names[j]);
    sb_puts(b, "};\n\n");
    sb_printf(b,
              "/* NEST's recordables from one lag's record (RecordablesMap< %s >::create()'s getters). */\n"
              "static int %s_recordable_value(int which, const double *nestcl_rec, void *const *fields, size_t n,\n"
              "                                size_t nestcl_i, uint32_t K, double resolution_ms, double *value)\n{\n",
              nm, nm);
    field_decls(b, m, r->rec_used);
    sb_puts(b, "  switch (which) {\n");
    for (j = 0; j < r->n_rec_names; j++)
      sb_printf(b, "  case %d: /* %s */\n    *value = (double)(%s);\n    return 0;\n", j, r->rec_names[j],
                r->rec_exprs[j]);
    sb_printf(
      b, "  default:\n    return nestcl_set_error(NESTCL_EINVAL, \"%s: no recordable %%d\", which);\n  }\n}\n\n", nm);
  }
}

/* route_spike (with its offset variant) and route_current: handle()'s channel for an event. */
static void emit_desc_routes(strbuf *b, const ir_model *m, const tr_rendered *r)
{
  const char *nm = m->name;
  if (m->event_queue) {
    sb_printf(
      b,
      "/* handle(SpikeEvent&) queues each spike with its offset in the SliceRingBuffer %s (model.h,\n"
      "   event_queue), which only NEST's glue reads: no ring channel takes a spike. */\n"
      "static int %s_route_spike(double weight, long rport, uint32_t K, int *channel, double *value)\n{\n"
      "  (void)weight;\n  (void)K;\n  (void)channel;\n  (void)value;\n"
      "  return nestcl_set_error(NESTCL_EINVAL, \"%s: handle(SpikeEvent&) queues spikes with their precise \"\n"
      "                          \"offsets (SliceRingBuffer %s), which only NEST's glue delivers (rport %%ld)\", rport);\n}\n\n",
      m->evq_member, nm, nm, m->evq_member);
  } else if (r->route_spike && m->reads_offset) {
    /* handle(SpikeEvent&) reads e.get_offset(): the route takes the spike's offset and says whether it read it */
    sb_printf(b,
              "static int %s_route_spike_offset(double weight, long rport, uint32_t K, double offset,\n"
              "                                  int *nestcl_offset_read, int *channel, double *value)\n{\n"
              "  *nestcl_offset_read = 0;\n  ",
              nm);
    sb_puts(b, r->route_spike);
    sb_puts(b, "\n  return NESTCL_EINVAL;\n}\n\n");
    sb_printf(
      b,
      "/* Where the spike's offset is not carried: refused wherever handle() would read it. */\n"
      "static int %s_route_spike(double weight, long rport, uint32_t K, int *channel, double *value)\n{\n"
      "  int offset_read = 0;\n"
      "  const int rc = %s_route_spike_offset(weight, rport, K, 0.0, &offset_read, channel, value);\n"
      "  if (rc == 0 && offset_read)\n"
      "    return nestcl_set_error(NESTCL_EINVAL, \"%s: handle(SpikeEvent&) reads the spike's offset \"\n"
      "                            \"(SpikeEvent::get_offset) at rport %%ld, and this path does not carry it\", rport);\n"
      "  return rc;\n}\n\n",
      nm, nm, nm);
  } else if (r->route_spike) {
    sb_printf(b, "static int %s_route_spike(double weight, long rport, uint32_t K, int *channel, double *value)\n{\n  ",
              nm);
    sb_puts(b, r->route_spike);
    sb_puts(b, "\n  return NESTCL_EINVAL;\n}\n\n");
  }
  if (r->route_current) {
    sb_printf(b,
              "static int %s_route_current(double current, double weight, long rport, uint32_t K, int *channel,\n"
              "                                double *value)\n{\n  ",
              nm);
    sb_puts(b, r->route_current);
    sb_puts(b, "\n  return NESTCL_EINVAL;\n}\n\n");
  }
}

/* get_status and set_status over a neuron's fields. */
static void emit_desc_status(strbuf *b, const ir_model *m, const tr_rendered *r)
{
  int j;
  const char *nm = m->name;
  if (r->get_status_body) {
    sb_printf(b,
              "static int %s_get_status(void *const *fields, size_t n, size_t nestcl_i, uint32_t K, const char *name,\n"
              "                             double *value)\n{\n",
              nm);
    field_decls(b, m, r->get_used);
    sb_puts(b, r->get_status_body);
    sb_printf(b, "  return nestcl_set_error(NESTCL_EINVAL, \"%s: no status entry '%%s'\", name);\n}\n\n", nm);
  }

  if (r->set_status_body) {
    emit_set_helpers(b);
    sb_printf(b,
              "static int %s_set_status(void *const *fields, size_t n, size_t nestcl_i, uint32_t K, const char *name,\n"
              "                             double value)\n{\n",
              nm);
    for (j = 0; j < m->n_fields; j++) {
      const ir_field *f = &m->fields[j];
      if (f->array_len == 0 && (f->role == IR_ROLE_PARAMETER || f->role == IR_ROLE_STATE))
        sb_printf(b, "  %s %s = ((%s *)fields[%d])[nestcl_i];\n", ir_type_c(f->type), f->c_name, ir_type_c(f->type), j);
      else if (f->role == IR_ROLE_PARAMETER || f->role == IR_ROLE_STATE)
        sb_printf(b, "  %s *const %s = (%s *)fields[%d];\n", ir_type_c(f->type), f->c_name, ir_type_c(f->type), j);
    }
    sb_puts(b, "  double nestcl_shift = 0.0;\n  int nestcl_hit = 0;\n");
    sb_puts(b, r->set_status_body);
    sb_printf(
      b, "  if (!nestcl_hit)\n    return nestcl_set_error(NESTCL_EINVAL, \"%s: no status entry '%%s'\", name);\n", nm);
    for (j = 0; j < m->n_fields; j++) {
      const ir_field *f = &m->fields[j];
      if (f->array_len == 0 && (f->role == IR_ROLE_PARAMETER || f->role == IR_ROLE_STATE))
        sb_printf(b, "  ((%s *)fields[%d])[nestcl_i] = %s;\n", ir_type_c(f->type), j, f->c_name);
    }
    sb_puts(b, "  return 0;\n}\n\n");
  }
}

/* The nestcl_model itself, naming every table and helper above. */
static void emit_desc_model(strbuf *b, const ir_model *m, const tr_rendered *r)
{
  const char *nm = m->name;
  sb_printf(b, "const nestcl_model nestcl_model_%s = {\n", nm);
  sb_printf(b, "  \"%s\",\n  \"", nm);
  sb_put_c_escaped(b, ir_input_name(m->source_file));
  sb_printf(b, "\",\n  \"%s\",\n", m->source_hash);
  sb_printf(b, "  %s_fields,\n  %d,\n  %s_channels,\n  %d,\n  %s_recordables,\n  %d,\n  %d,\n", nm, m->n_fields, nm,
            m->n_channels, nm, m->n_recordables, m->has_receptors);
  sb_printf(b, "  %s_kernel_source,\n  \"nestcl_update_%s\",\n  %s_update_cpu,\n", nm, nm, nm);
  if (r->defaults_body)
    sb_printf(b, "  %s_set_defaults,\n", nm);
  else
    sb_puts(b, "  NULL,\n");
  if (r->prerun_body)
    sb_printf(b, "  %s_pre_run,\n", nm);
  else
    sb_puts(b, "  NULL,\n");
  if (r->route_spike || m->event_queue)
    sb_printf(b, "  %s_route_spike,\n", nm);
  else
    sb_puts(b, "  NULL,\n");
  if (r->route_current)
    sb_printf(b, "  %s_route_current,\n", nm);
  else
    sb_puts(b, "  NULL,\n");
  if (r->get_status_body)
    sb_printf(b, "  %s_get_status,\n", nm);
  else
    sb_puts(b, "  NULL,\n");
  if (r->set_status_body)
    sb_printf(b, "  %s_set_status,\n", nm);
  else
    sb_puts(b, "  NULL,\n");
  if (r->init_body)
    sb_printf(b, "  %s_init_buffers,\n", nm);
  else
    sb_puts(b, "  NULL,\n");
  if (m->n_failures)
    sb_printf(b, "  %s_failures,\n  %d,\n", nm, m->n_failures);
  else
    sb_puts(b, "  NULL,\n  0,\n");
  if (r->n_rec_names)
    sb_printf(b, "  %s_recordable_names,\n  %d,\n  %s_recordable_value,\n", nm, r->n_rec_names, nm);
  else
    sb_puts(b, "  NULL,\n  0,\n  NULL,\n");
  sb_printf(b, "  %d,\n", m->multiplicity);
  sb_printf(b, "  %d,\n", m->spike_offsets);
  if (r->route_spike && m->reads_offset)
    sb_printf(b, "  %s_route_spike_offset,\n", nm);
  else
    sb_puts(b, "  NULL,\n");
  sb_printf(b, "  %d,\n", m->event_queue);
  sb_puts(b, "};\n");
}

void emit_desc(strbuf *b, const ir_model *m, const tr_rendered *r, const char *kernel_text)
{
  emit_desc_prologue(b, m);
  emit_desc_tables(b, m, kernel_text);
  emit_desc_common(b);
  emit_desc_init(b, m, r);
  emit_desc_recordables(b, m, r);
  emit_desc_routes(b, m, r);
  emit_desc_status(b, m, r);
  emit_desc_model(b, m, r);
}

void emit_registry(strbuf *b, ir_model *const *models, int n, ir_model *const *synapses, int n_syn)
{
  int j;
  sb_puts(
    b,
    "/* Generated by nestcl-translate. Do not edit.\n   nestcl_models.c: every model translated in this run, sorted by name. */\n");
  sb_puts(b, "#include <stddef.h>\n\n#include \"nestcl/model.h\"\n\n");
  for (j = 0; j < n; j++)
    sb_printf(b, "extern const nestcl_model nestcl_model_%s;\n", models[j]->name);
  sb_puts(b, "\nconst nestcl_model *const nestcl_builtin_models[] = {\n");
  for (j = 0; j < n; j++)
    sb_printf(b, "  &nestcl_model_%s,\n", models[j]->name);
  if (!n)
    sb_puts(b, "  NULL,\n");
  sb_printf(b, "};\nconst int nestcl_builtin_model_count = %d;\n\n", n);
  for (j = 0; j < n_syn; j++)
    sb_printf(b, "extern const nestcl_synapse_model nestcl_synapse_%s;\n", synapses[j]->name);
  sb_puts(b, "\nconst nestcl_synapse_model *const nestcl_builtin_synapses[] = {\n");
  for (j = 0; j < n_syn; j++)
    sb_printf(b, "  &nestcl_synapse_%s,\n", synapses[j]->name);
  if (!n_syn)
    sb_puts(b, "  NULL,\n");
  sb_printf(b, "};\nconst int nestcl_builtin_synapse_count = %d;\n", n_syn);
}
