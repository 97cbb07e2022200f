/* A translated model's failures as errors (model_failure.h). */
#include "model_failure.h"

const char *nestcl_failure_name(const nestcl_model *m, uint32_t code)
{
  if (m->failures && code >= 1u && code <= (uint32_t)(m->n_failures > 0 ? m->n_failures : 0) &&
      m->failures[code - 1u]) {
    return m->failures[code - 1u];
  }
  return "failure";
}

int nestcl_failure_error(const nestcl_model *m, const uint32_t *count, uint64_t id, double t_ms)
{
  return nestcl_set_error(NESTCL_ERUNTIME, "%s neuron %llu at t = %g ms: %s (status %d)", m->name,
                          (unsigned long long)id, t_ms, nestcl_failure_name(m, count[1]), (int)count[4]);
}
