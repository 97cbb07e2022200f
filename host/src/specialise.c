/* Constant parameters as build options (specialise.h). Values are printed with
 * 17 significant digits (they round-trip) and always as floating literals for
 * doubles, so the arithmetic is unchanged. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "specialise.h"

void nestcl_const_options(const nestcl_model *m, void *const *const *fields, const uint32_t *n, int n_sets, char *buf,
                          size_t cap)
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
