/*
 * The streams' kernels timed (issue 41; docs/architecture.md, "The device
 * loop"): each stream VP gets a kernel profile (kprof.h) on its counts, so
 * that every counted launch of the host clock, the device loop and the
 * plastic synapses is counted by its kernel's name and a sample of them is
 * timed from profiling events; nestcl_engine_kernel_profile merges the VPs'
 * profiles into the rank's table. CPU VPs launch nothing and get none.
 */
#include <string.h>

#include "engine_internal.h"
#include "kprof.h"

int eng_kernel_profile_open(nestcl_engine *e)
{
  if (e->desc.cfg.kernel_sample == 0) {
    return 0;
  }
  for (int v = 0; v < e->n_vps; ++v) {
    eng_vp *vp = &e->vps[v];
    if (vp->is_gpu && !vp->st.enqueued.profile) {
      vp->st.enqueued.profile = nestcl_kprof_create(e->desc.cfg.kernel_sample);
      if (!vp->st.enqueued.profile) {
        return nestcl_set_error(NESTCL_ENOMEM, "out of host memory for the kernel profile");
      }
    }
  }
  return 0;
}

void eng_kernel_profile_close(nestcl_engine *e)
{
  for (int v = 0; e->vps && v < e->n_vps; ++v) {
    nestcl_kprof_destroy(e->vps[v].st.enqueued.profile);
    e->vps[v].st.enqueued.profile = NULL;
  }
}

int nestcl_engine_kernel_profile(const nestcl_engine *e, nestcl_kernel_profile *out)
{
  memset(out, 0, sizeof *out); /* sample_every stays 0 without a stream's profile */
  if (!e->built) {
    return nestcl_set_error(NESTCL_EINVAL, "kernel profile before the network is built");
  }
  for (int v = 0; v < e->n_vps; ++v) {
    int rc = nestcl_kprof_add_to(e->vps[v].st.enqueued.profile, out);
    if (rc) {
      nestcl_kernel_profile_free(out);
      return rc;
    }
  }
  return 0;
}
