/* Constant parameters as build options (specialise.h). Values are printed with
 * 17 significant digits (they round-trip) and always as floating literals for
 * doubles, so the arithmetic is unchanged. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "specialise.h"

void nestcl_const_options(const nestcl_model *m, void *const *const *fields, const uint32_t *n, int n_sets,
                          char *buf, size_t cap)
{
  size_t used = 0;
  buf[0] = 0;
  for (int f = 0; f < m->n_fields; ++f) {
    const nestcl_field *fd = &m->fields[f];
    if (fd->role != NESTCL_ROLE_PARAMETER || fd->array_len != 0 ||
        (fd->type != NESTCL_T_DOUBLE && fd->type != NESTCL_T_INT && fd->type != NESTCL_T_LONG)) {
      continue;
    }
    size_t size = nestcl_field_type_size(fd->type);
    int have = 0, same = 1;
    uint64_t first = 0;
    for (int s = 0; s < n_sets && same; ++s) {
      for (uint32_t i = 0; i < n[s] && same; ++i) {
        uint64_t bits = 0;
        memcpy(&bits, (const char *)fields[s][f] + size * (size_t)i, size);
        if (!have) {
          first = bits;
          have = 1;
        } else if (bits != first) {
          same = 0;
        }
      }
    }
    if (!have || !same) {
      continue;
    }
    char val[64];
    if (fd->type == NESTCL_T_DOUBLE) {
      double d;
      memcpy(&d, &first, 8);
      if (!isfinite(d)) {
        continue;
      }
      snprintf(val, sizeof val, "%.17g", d);
      if (!strpbrk(val, ".e")) {
        strcat(val, ".0");
      }
    } else if (fd->type == NESTCL_T_INT) {
      int32_t x;
      memcpy(&x, &first, 4);
      snprintf(val, sizeof val, "%d", (int)x);
    } else {
      int64_t x;
      memcpy(&x, &first, 8);
      snprintf(val, sizeof val, "%lldL", (long long)x);
    }
    int w = snprintf(buf + used, cap - used, "%s-DNESTCL_CONST_%s=%s", used ? " " : "", fd->member, val);
    if (w < 0 || (size_t)w >= cap - used) {
      buf[used] = 0; /* out of room: the rest stay arrays, which is merely slower */
      break;
    }
    used += (size_t)w;
  }
}

cl_int nestcl_update_kernel_fixed_args(cl_kernel k, uint32_t n, uint32_t K, double resolution_ms, uint32_t ring_slots,
                                       uint32_t n_channels, cl_mem ring, cl_mem spike_count, cl_mem spikes,
                                       uint32_t spike_capacity, int64_t rec_interval, cl_mem rec,
                                       uint32_t rng_seed, uint64_t id_first, uint64_t id_stride,
                                       const nestcl_buffer *fields, int n_fields, cl_mem spike_offsets)
{
  cl_uint un = n, uK = K, slots = ring_slots, nch = n_channels, cap = spike_capacity;
  cl_double h = resolution_ms;
  cl_long riv = rec_interval;
  cl_int err = clSetKernelArg(k, 0, sizeof un, &un);
  err |= clSetKernelArg(k, 1, sizeof uK, &uK);
  err |= clSetKernelArg(k, 5, sizeof h, &h);
  err |= clSetKernelArg(k, 6, sizeof slots, &slots);
  err |= clSetKernelArg(k, 7, sizeof nch, &nch);
  err |= clSetKernelArg(k, 8, sizeof(cl_mem), &ring);
  err |= clSetKernelArg(k, 9, sizeof(cl_mem), &spike_count);
  err |= clSetKernelArg(k, 10, sizeof(cl_mem), &spikes);
  err |= clSetKernelArg(k, 11, sizeof cap, &cap);
  err |= clSetKernelArg(k, 12, sizeof riv, &riv);
  err |= clSetKernelArg(k, 13, sizeof(cl_mem), &rec);
  cl_uint seed = rng_seed;
  cl_ulong id0 = id_first, ids = id_stride;
  err |= clSetKernelArg(k, 14, sizeof seed, &seed);
  err |= clSetKernelArg(k, 15, sizeof id0, &id0);
  err |= clSetKernelArg(k, 16, sizeof ids, &ids);
  for (int f = 0; f < n_fields; ++f) {
    err |= clSetKernelArg(k, (cl_uint)(NESTCL_UPDATE_FIXED_ARGS + f), sizeof(cl_mem), &fields[f].mem);
  }
  if (spike_offsets) {
    err |= clSetKernelArg(k, (cl_uint)(NESTCL_UPDATE_FIXED_ARGS + n_fields), sizeof(cl_mem), &spike_offsets);
  }
  return err;
}

cl_int nestcl_update_kernel_evq_args(cl_kernel k, const nestcl_model *m, const cl_mem evq[4])
{
  const cl_uint first = (cl_uint)(NESTCL_UPDATE_FIXED_ARGS + m->n_fields + (m->spike_offsets ? 1 : 0));
  cl_int err = CL_SUCCESS;
  for (cl_uint a = 0; a < 4; ++a) {
    err |= clSetKernelArg(k, first + a, sizeof(cl_mem), &evq[a]);
  }
  return err;
}

int nestcl_poisson_cdf(double mu, double exp_neg_mu, double **cdf, uint32_t *len, uint32_t *kstop)
{
  size_t cap = 64;
  free(*cdf);
  *len = 0;
  *cdf = malloc(cap * sizeof **cdf);
  if (!*cdf) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  double p = exp_neg_mu, F = p;
  (*cdf)[0] = F;
  *len = 1;
  for (uint32_t k = 1;; ++k) {
    p = p * mu / (double)k;
    double next = F + p;
    if (next == F || k > 1000000u) {
      *kstop = k;
      return 0;
    }
    F = next;
    if (*len == cap) {
      cap *= 2;
      double *t = realloc(*cdf, cap * sizeof *t);
      if (!t) {
        return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
      }
      *cdf = t;
    }
    (*cdf)[(*len)++] = F;
  }
}

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
