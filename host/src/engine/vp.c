/*
 * What every kind of VP (eng_vp_ops) shares and what reads its outcome: a
 * VP's first error, the engine's status over its VPs, the order of spike
 * lists, and a block's recorded update failure. Kept below the build, the
 * cycle and the device loop, which all report through it, so that none of
 * them depends on another for it; it calls no other engine file but clock.c.
 */
#include <stdio.h>

#include "engine_internal.h"
#include "model_failure.h"

/* The first failure of a VP's thread is kept with its message: error messages are per thread. */
void eng_vp_fail(eng_vp *vp, int rc)
{
  if (rc && !vp->status) {
    vp->status = rc;
    snprintf(vp->err, sizeof vp->err, "%s", nestcl_last_error());
  }
}

int eng_vps_status(nestcl_engine *e)
{
  for (int v = 0; v < e->n_vps; ++v) {
    if (e->vps[v].status) {
      return nestcl_set_error(e->vps[v].status, "%s", e->vps[v].err);
    }
  }
  return 0;
}

/* Spike lists as (gid, lag) pairs, ordered by lag, then gid: the order every partition agrees on. */
int eng_cmp_spike(const void *a, const void *b)
{
  const uint32_t *x = a, *y = b;
  if (x[1] != y[1]) {
    return x[1] < y[1] ? -1 : 1;
  }
  return x[0] < y[0] ? -1 : (x[0] > y[0]);
}

/*
 * A failure that the update of block b recorded (model.h, Failures) as the
 * VP's error, naming the model, the neuron's gid and the start of its step.
 */
int eng_block_failure(const nestcl_engine *e, const eng_block *b, const uint32_t *words, int64_t origin)
{
  if (words[1] == 0) {
    return 0;
  }
  return nestcl_failure_error(e->desc.pops[b->pop].model, words, b->first_gid + words[2],
                              eng_step_ms(e, origin + (int64_t)words[3]));
}
