/*
 * Recorders. spike_recorder reads the global spike list after the exchange,
 * which every rank holds in full, so each rank's recorder sees every spike of
 * the recorded neurons in (step, gid) order without another collective.
 * multimeter reads the blocks' recording buffers (the model's record_data hook
 * wrote them on the device or in the C loop during update; GPU VPs copied them
 * back once per slice) and keeps the rows of its neurons, in (step, gid) order.
 */
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
  if (need <= *cap) {
    return 0;
  }
  size_t c = *cap ? *cap : 1024;
  while (c < need) {
    c *= 2;
  }
  void *q = realloc(*p, c * elem);
  if (!q) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory for recordings");
  }
  *p = q;
  *cap = c;
  return 0;
}

int eng_record_spikes(nestcl_engine *e, const uint32_t *spikes, size_t n, int64_t origin)
{
  for (int r = 0; r < e->desc.n_recs; ++r) {
    eng_recorder *rc = &e->desc.recs[r];
    if (rc->is_multimeter) {
      continue;
    }
    uint64_t lo = e->desc.pops[rc->pop].first + rc->first, hi = lo + rc->count;
    for (size_t s = 0; s < n; ++s) {
      uint64_t gid = spikes[2 * s];
      if (gid < lo || gid >= hi) {
        continue;
      }
      if (grow((void **)&rc->gids, &rc->cap_gids, rc->n + 1, sizeof *rc->gids) ||
          grow((void **)&rc->steps, &rc->cap_steps, rc->n + 1, sizeof *rc->steps)) {
        return NESTCL_ENOMEM;
      }
      rc->gids[rc->n] = gid;
      rc->steps[rc->n] = origin + spikes[2 * s + 1];
      rc->n++;
    }
  }
  return 0;
}

size_t eng_rec_width(const nestcl_model *m, uint32_t K)
{
  size_t w = 0;
  for (int r = 0; r < m->n_recordables; ++r) {
    const nestcl_field *f = &m->fields[m->recordables[r]];
    w += nestcl_field_len(f, K);
  }
  return w;
}

int eng_record_samples(nestcl_engine *e, int64_t origin, int from, int to)
{
  for (int r = 0; r < e->desc.n_recs; ++r) {
    eng_recorder *rc = &e->desc.recs[r];
    if (!rc->is_multimeter) {
      continue;
    }
    const eng_population *p = &e->desc.pops[rc->pop];
    const size_t width = eng_rec_width(p->model, p->K);
    uint64_t lo = p->first + rc->first, hi = lo + rc->count;
    for (int lag = from; lag < to; ++lag) {
      int64_t step = origin + lag;
      if ((step + 1) % p->rec_interval_steps != 0) {
        continue;
      }
      for (int v = 0; v < e->n_vps; ++v) {
        const eng_block *b = &e->vps[v].blocks[rc->pop];
        for (uint32_t i = 0; i < b->n; ++i) {
          uint64_t gid = b->first_gid + i;
          if (gid < lo || gid >= hi) {
            continue;
          }
          if (grow((void **)&rc->s_steps, &rc->cap_s_steps, rc->s_n + 1, sizeof *rc->s_steps) ||
              grow((void **)&rc->s_gids, &rc->cap_s_gids, rc->s_n + 1, sizeof *rc->s_gids) ||
              grow((void **)&rc->s_values, &rc->cap_s_values, (rc->s_n + 1) * (size_t)rc->n_rec,
                   sizeof *rc->s_values)) {
            return NESTCL_ENOMEM;
          }
          rc->s_steps[rc->s_n] = step;
          rc->s_gids[rc->s_n] = gid;
          const double *rec_lag = b->rec + (size_t)(lag - from) * width * b->n;
          for (int k = 0; k < rc->n_rec; ++k) {
            double v;
            if (rc->rec_named[k]) {
              int err = p->model->recordable_value(rc->rec_index[k], rec_lag, b->fields, b->n, i, p->K,
                                                   e->desc.cfg.resolution_ms, &v);
              if (err) {
                return err;
              }
            } else {
              v = rec_lag[(size_t)rc->rec_index[k] * b->n + i];
            }
            rc->s_values[rc->s_n * (size_t)rc->n_rec + k] = v;
          }
          rc->s_n++;
        }
      }
    }
  }
  return 0;
}

void eng_recorders_free(nestcl_engine *e)
{
  for (int r = 0; r < e->desc.n_recs; ++r) {
    free(e->desc.recs[r].gids);
    free(e->desc.recs[r].steps);
    free(e->desc.recs[r].s_steps);
    free(e->desc.recs[r].s_gids);
    free(e->desc.recs[r].s_values);
  }
}
