/*
 * The network's partition and its delays, as the build lays them out and the
 * memory estimate predicts them before the build: one file below both, so
 * that the estimate does not reach into the build it admits.
 */
#include <math.h>
#include <stdint.h>

#include "engine_internal.h"

/*
 * Population p's block on VP vp of rank `rank`: each rank takes a contiguous
 * share, split between the CPU threads and the GPU streams by gpu_fraction.
 */
void eng_block_range(const nestcl_engine *e, const eng_population *p, int vp, int rank, int n_ranks, uint32_t *lo,
                     uint32_t *n)
{
  uint64_t R = (uint64_t)n_ranks, r = (uint64_t)rank;
  uint64_t rlo = p->n * r / R, rhi = p->n * (r + 1) / R;
  uint64_t nr = rhi - rlo;
  uint64_t n_gpu = (uint64_t)llround(e->desc.cfg.gpu_fraction * (double)nr);
  if (e->desc.cfg.gpu_streams == 0) {
    n_gpu = 0;
  }
  if (e->desc.cfg.cpu_threads == 0) {
    n_gpu = nr;
  }
  uint64_t n_cpu = nr - n_gpu;
  uint64_t a, b;
  int TC = e->desc.cfg.cpu_threads, TG = e->desc.cfg.gpu_streams;
  if (vp < TC) {
    a = rlo + n_cpu * (uint64_t)vp / (uint64_t)TC;
    b = rlo + n_cpu * (uint64_t)(vp + 1) / (uint64_t)TC;
  } else {
    int g = vp - TC;
    a = rlo + n_cpu + n_gpu * (uint64_t)g / (uint64_t)TG;
    b = rlo + n_cpu + n_gpu * (uint64_t)(g + 1) / (uint64_t)TG;
  }
  *lo = (uint32_t)a;
  *n = (uint32_t)(b - a);
}

/* The range of the projections' and drives' delays in steps (INT64_MAX, 0 when there are none). */
static void delay_bounds(const nestcl_engine *e, int64_t *lo, int64_t *hi)
{
  double h = e->desc.cfg.resolution_ms;
  *lo = INT64_MAX;
  *hi = 0;
  for (int p = 0; p < e->desc.n_projs; ++p) {
    double a, b;
    eng_value_range(&e->desc.projs[p].syn.delay_ms, &a, &b);
    int64_t sa = eng_delay_ms_to_steps(a, h), sb = eng_delay_ms_to_steps(b, h);
    *lo = sa < *lo ? sa : *lo;
    *hi = sb > *hi ? sb : *hi;
  }
  for (int k = 0; k < e->desc.n_drives; ++k) {
    int64_t s = eng_delay_ms_to_steps(e->desc.drives[k].delay_ms, h);
    *lo = s < *lo ? s : *lo;
    *hi = s > *hi ? s : *hi;
  }
}

/* min_delay and max_delay in steps: the delays' range, or the configured bounds where given. */
void eng_delay_steps(const nestcl_engine *e, int64_t *lo, int64_t *hi)
{
  double h = e->desc.cfg.resolution_ms;
  delay_bounds(e, lo, hi);
  if (*lo == INT64_MAX) {
    *lo = *hi = eng_ms_to_steps(1.0, h) > 0 ? eng_ms_to_steps(1.0, h) : 1;
  }
  if (e->desc.cfg.min_delay_ms > 0.0) {
    *lo = eng_ms_to_steps(e->desc.cfg.min_delay_ms, h);
  }
  if (e->desc.cfg.max_delay_ms > 0.0) {
    *hi = eng_ms_to_steps(e->desc.cfg.max_delay_ms, h);
  }
  if (*hi < *lo) {
    *hi = *lo;
  }
}
