/*
 * OpenCL emitter: the kernel nestcl_update_<model>, one work-item per neuron
 * with NEST's lag loop inside, the fixed arguments (nestcl/update_args.h) and then one
 * __global pointer per field in descriptor order (then, for a model that sets
 * spike offsets, the offsets of the spike list). The runtime prepends its
 * headers (nestcl_rt_source), so this text includes nothing.
 */
#include "emit.h"
#include "uargs.h"

void emit_cl(strbuf *b, const ir_model *m, const tr_rendered *r)
{
  /* the signature's lines end after from, n_channels, spike_capacity and id_first */
  static const int kernel_breaks[] = {NESTCL_UARG_from, NESTCL_UARG_n_channels, NESTCL_UARG_spike_capacity,
                                      NESTCL_UARG_id_first, -1};
  int j;
  emit_file_header(b, m, "OpenCL C kernel (the runtime prepends nestcl_rt_source).", "/*", "*/");
  if (r->update_transcendental)
    sb_puts(b,
            "/* update() calls transcendental built-ins: their results may differ from the\n"
            "   C library's in the last ulp. */\n");
  sb_puts(b, "#pragma OPENCL FP_CONTRACT OFF\n\n");
  sb_puts(
    b,
    "#ifndef NESTCL_LIBM_VARIANT\n#error \"NESTCL_LIBM_VARIANT: build with -DNESTCL_LIBM_VARIANT=<0|1>, the host glibc's exp/pow variant\"\n#endif\n");
  emit_update_prelude(b, m);
  emit_ode(b, m, r, 1);
  emit_helpers(b, m, r);
  if (m->n_failures)
    sb_puts(b, "/* a failure ends this neuron's update */\n#define NESTCL_ABANDON_NEURON return\n");
  sb_printf(b, "__kernel void nestcl_update_%s(", m->name);
  tr_uarg_list(b, TR_UARG_CL, ", ", ",\n    ", kernel_breaks);
  for (j = 0; j < m->n_fields; j++)
    sb_printf(b, ",\n    __global %s *%s", ir_type_cl(m->fields[j].type), m->fields[j].c_name);
  if (m->spike_offsets) /* after the fields: the offset of each spike-list entry (model.h, spike_offsets) */
    sb_puts(b, ",\n    __global double *spike_offsets");
  if (m->event_queue) /* then the events of the call (model.h, event_queue) */
    sb_puts(b,
            ",\n    __global const uint *evq_first, __global const uint *evq_lag,\n"
            "    __global const double *evq_offset, __global const double *evq_weight");
  sb_puts(b, ")\n{\n  const uint nestcl_i = (uint)get_global_id(0);\n  if (nestcl_i >= n)\n    return;\n  ");
  sb_puts(b, r->update_body);
  sb_puts(b, "\n}\n");
  if (m->n_failures)
    sb_puts(b, "#undef NESTCL_ABANDON_NEURON\n");
  emit_update_epilogue(b, m);
}
