/*
 * C emitter: <model>_update_cpu, the same update text as the kernel inside a
 * plain loop over the neurons of the block, on the same SoA arrays and with
 * the same runtime helpers (kernels_templates/nestcl_*.h compiled as C), so
 * the floating-point operations are the kernel's and the original's.
 */
#include "emit.h"
#include "uargs.h"

void emit_c(strbuf *b, const ir_model *m, const tr_rendered *r)
{
  int j;
  emit_file_header(b, m, "C loop of update() for the CPU path.", "/*", "*/");
  sb_puts(
    b,
    "#include <float.h>\n#include <limits.h>\n#include <math.h>\n#include <stdbool.h>\n"
    "#include <stddef.h>\n#include <stdint.h>\n\n"
    "#include \"nestcl_types.h\"\n#include \"nestcl_philox.h\"\n#include \"nestcl_dist.h\"\n#include \"nestcl_fixed.h\"\n#include \"nestcl_ring.h\"\n"
    "#include \"nestcl_libm.h\"\n#include \"nestcl_rkf45.h\"\n"
    "#include \"nestcl/model.h\"\n\n"
    "/* The model's own locals may go unused once its buffers became ring reads. */\n"
    "#pragma GCC diagnostic ignored \"-Wunused-variable\"\n"
    "#pragma GCC diagnostic ignored \"-Wunused-but-set-variable\"\n"
    "#pragma GCC diagnostic ignored \"-Wunused-parameter\"\n"
    "/* a failure only a helper reports leaves update()'s own exit unused */\n"
    "#pragma GCC diagnostic ignored \"-Wunused-label\"\n"
    "/* The model's own mixed-sign comparisons are kept as written (same semantics as in C++). */\n"
    "#pragma GCC diagnostic ignored \"-Wsign-compare\"\n\n");
  /* std::exp / std::pow in update() are glibc's (nestcl_glibc_exp): the variant the host's libm runs */
  sb_puts(b, "#ifndef NESTCL_LIBM_VARIANT\n#define NESTCL_LIBM_VARIANT (nestcl_libm_host_variant() != 0)\n#endif\n");
  emit_update_prelude(b, m);
  emit_ode(b, m, r, 0);
  emit_helpers(b, m, r);
  sb_printf(b, "void %s_update_cpu(const nestcl_update_args *a, void *const *fields);\n\n", m->name);
  sb_printf(b, "void %s_update_cpu(const nestcl_update_args *a, void *const *fields)\n{\n", m->name);
  /* the fixed arguments as locals of the kernel's names (nestcl/update_args.h) */
  for (j = 0; j < NESTCL_UPDATE_FIXED_ARGS; j++) {
    const nestcl_update_arg_desc *u = &tr_uargs[j];
    if (u->is_pointer)
      sb_printf(b, "  %s *const %s = a->%s;\n", u->c_type, u->name, u->name);
    else
      sb_printf(b, "  const %s %s = a->%s;\n", u->c_type, u->name, u->name);
  }
  for (j = 0; j < m->n_fields; j++)
    sb_printf(b, "  %s *const %s = (%s *)fields[%d];\n", ir_type_c(m->fields[j].type), m->fields[j].c_name,
              ir_type_c(m->fields[j].type), j);
  if (m->spike_offsets)
    sb_puts(b, "  double *const spike_offsets = a->spike_offsets;\n  (void)spike_offsets;\n");
  if (m->event_queue)
    sb_puts(b,
            "  const uint32_t *const evq_first = a->evq_first;\n  const uint32_t *const evq_lag = a->evq_lag;\n"
            "  const double *const evq_offset = a->evq_offset;\n  const double *const evq_weight = a->evq_weight;\n"
            "  (void)evq_lag;\n  (void)evq_offset;\n  (void)evq_weight;\n");
  for (j = 0; j < NESTCL_UPDATE_FIXED_ARGS; j++)
    sb_printf(b, "  (void)%s;\n", tr_uargs[j].name);
  for (j = 0; j < m->n_fields; j++)
    sb_printf(b, "  (void)%s;\n", m->fields[j].c_name);
  if (!m->n_fields)
    sb_puts(b, "  (void)fields; /* a model without fields (parrot_neuron) */\n");
  if (m->n_failures) {
    /* a failure ends this neuron's update (the kernel returns) */
    sb_puts(b,
            "#define NESTCL_ABANDON_NEURON goto nestcl_next_neuron\n"
            "  for (uint32_t nestcl_i = 0; nestcl_i < n; ++nestcl_i)\n  {\n  ");
    sb_puts(b, r->update_body);
    sb_puts(b, "\n  nestcl_next_neuron:;\n  }\n#undef NESTCL_ABANDON_NEURON\n}\n");
  } else {
    sb_puts(b, "  for (uint32_t nestcl_i = 0; nestcl_i < n; ++nestcl_i)\n  ");
    sb_puts(b, r->update_body);
    sb_puts(b, "\n}\n");
  }
  emit_update_epilogue(b, m);
}
