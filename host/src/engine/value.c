/*
 * Values and the models' hooks that the description (api.c), the build and
 * the synapses share: a parameter's draw from its Philox stream and the range
 * it can reach, a spike's routing into a target's ring channel, and a write of
 * one neuron's setting. It depends on no other engine file.
 */
#include <math.h>
#include <string.h>

#include "engine_internal.h"
#include "nestcl_philox.h"
#include "core/nestcl_connect.h"

/* The draw of the connection rules' weights and delays too (nestcl_connect.h): one text for host and device. */
double eng_draw(const nestcl_value *v, uint32_t seed, uint32_t purpose, uint64_t id, uint64_t step)
{
  return nestcl_conn_value((uint32_t)v->kind, v->a, v->b, v->lo, v->hi, seed, purpose, id, step);
}

void eng_value_range(const nestcl_value *v, double *lo, double *hi)
{
  switch (v->kind) {
  case NESTCL_DIST_UNIFORM:
    *lo = v->a;
    *hi = v->b;
    return;
  case NESTCL_DIST_NORMAL:
    *lo = v->a - NESTCL_NORMAL_BOUND * v->b;
    *hi = v->a + NESTCL_NORMAL_BOUND * v->b;
    return;
  case NESTCL_DIST_NORMAL_CLIPPED:
    *lo = fmax(v->lo, v->a - NESTCL_NORMAL_BOUND * v->b);
    *hi = fmin(v->hi, v->a + NESTCL_NORMAL_BOUND * v->b);
    return;
  default:
    *lo = *hi = v->a;
    return;
  }
}

int eng_route_spike(const nestcl_model *src, const nestcl_model *tgt, double w, long rport, uint32_t K, int *ch,
                    double *value)
{
  if (!tgt->route_spike_offset) {
    return tgt->route_spike(w, rport, K, ch, value);
  }
  int read = 0;
  int rc = tgt->route_spike_offset(w, rport, K, 0.0, &read, ch, value);
  if (rc == 0 && read && src && src->spike_offsets) {
    return nestcl_set_error(NESTCL_EINVAL,
                            "%s reads the offset of the spikes it receives at rport %ld (SpikeEvent::get_offset), "
                            "and %s sends spikes with offsets, which the engine does not deliver",
                            tgt->name, rport, src->name);
  }
  return rc;
}

int eng_set_value(const nestcl_model *m, void *const *fields, size_t n, size_t i, uint32_t K, const char *name,
                  double v)
{
  if (m->set_status) {
    return m->set_status(fields, n, i, K, name, v);
  }
  /*
   * A model without a translated set_status: only a scalar field that NEST's
   * get_status exposes directly (nest_name) can be written, as NEST would.
   */
  for (int f = 0; f < m->n_fields; ++f) {
    const nestcl_field *fd = &m->fields[f];
    if (fd->nest_name && strcmp(fd->nest_name, name) == 0 && fd->array_len == 0) {
      switch (fd->type) {
      case NESTCL_T_DOUBLE:
        ((double *)fields[f])[i] = v;
        return 0;
      case NESTCL_T_LONG:
        ((int64_t *)fields[f])[i] = (int64_t)v;
        return 0;
      case NESTCL_T_INT:
        ((int32_t *)fields[f])[i] = (int32_t)v;
        return 0;
      case NESTCL_T_BOOL:
        ((int32_t *)fields[f])[i] = v != 0.0;
        return 0;
      case NESTCL_T_SIZE:
        ((uint64_t *)fields[f])[i] = (uint64_t)v;
        return 0;
      }
    }
  }
  (void)n;
  (void)K;
  return nestcl_set_error(NESTCL_EINVAL, "%s has no translated set_status and '%s' is not a field it exposes directly",
                          m->name, name);
}
