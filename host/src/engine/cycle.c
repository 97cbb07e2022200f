/*
 * The simulation cycle (docs/architecture.md, "The simulation cycle"). One OpenMP thread per VP runs, per
 * slice of a super step: update (CPU VPs: the model's C loop; GPU VPs: the
 * model kernel on the VP's own queue, so streams and threads co-execute), the
 * Poisson/DC drive, and at the end of a full super step the spike lists:
 * sorted per VP by (lag, gid), gathered into one global list (MPI_Allgatherv
 * across ranks), sorted again by (lag, gid) so that everything downstream sees
 * the same order whatever the partition, and delivered by every VP into its own
 * ring through its CSR (fixed-point, so the sum does not depend on the order).
 * Only spike lists, and multimeter samples when asked for, cross between host
 * and device; nothing is allocated in the loop.
 */
#define _GNU_SOURCE /* syscall(): the futex of the cycle's barrier */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "engine_internal.h"
#include "enqueue.h"
#include "specialise.h"
#include "core/nestcl_core.h"

static int cl_fail(cl_int err, const char *what)
{
  return nestcl_set_error(NESTCL_ECL, "%s failed: %s", what, nestcl_cl_error_name(err));
}

/* Update and drive of one slice on a CPU VP. */
static int cpu_update(nestcl_engine *e, eng_vp *vp, int64_t origin, int from, int to)
{
  double t0 = eng_now();
  for (int p = 0; p < e->desc.n_pops; ++p) {
    eng_block *b = &vp->blocks[p];
    if (b->n == 0) {
      continue;
    }
    const eng_population *pop = &e->desc.pops[p];
    if (from == 0) {
      memset(b->spike_count, 0, sizeof b->spike_count);
    }
    nestcl_update_args a;
    nestcl_update_args_init(&a, b->n, pop->K, e->desc.cfg.resolution_ms, (uint32_t)e->clock.ring_slots, b->n_channels,
                            b->spike_cap, pop->rec_interval_steps, e->desc.cfg.seed, b->first_gid, 1);
    nestcl_update_args_slice(&a, origin, from, to);
    a.ring = b->ring;
    a.spike_count = b->spike_count;
    a.spikes = b->spikes;
    a.rec = b->rec;
    a.spike_offsets = b->spike_offsets;
    pop->model->update_cpu(&a, b->fields);
    int rc = eng_block_failure(e, b, b->spike_count, origin);
    if (rc) {
      return rc;
    }
  }
  double t1 = eng_now();
  for (int p = 0; p < e->desc.n_pops; ++p) {
    eng_block *b = &vp->blocks[p];
    for (int k = 0; k < e->desc.n_drives && b->n; ++k) {
      int f2, t2;
      if (e->desc.drives[k].pop == p && eng_drive_window(&e->desc.drives[k], origin, from, to, &f2, &t2)) {
        eng_cpu_drive(b, &e->desc.drives[k], e->desc.cfg.seed, (uint32_t)e->clock.ring_slots, origin, f2, t2);
      }
    }
  }
  double t2 = eng_now();
  vp->st.seconds[NESTCL_PHASE_UPDATE] += t1 - t0;
  vp->st.seconds[NESTCL_PHASE_POISSON] += t2 - t1;
  return 0;
}

/*
 * A stream's update kernels for the slice [from, to). host_counts: the host
 * clock's loop, which zeroes each block's count words at the start of a super
 * step and reads them back after every slice (the device loop's gather kernel
 * does both on the device).
 */
cl_int eng_gpu_enqueue_update(nestcl_engine *e, eng_vp *vp, int64_t origin, int from, int to, int host_counts)
{
  static const cl_uint zero[NESTCL_COUNT_WORDS] = {0};
  cl_command_queue q = nestcl_device_queue(e->device.dev, vp->queue);
  cl_int err = CL_SUCCESS;
  cl_long org = origin;
  cl_int f = from, t = to;
  for (int p = 0; p < e->desc.n_pops && err == CL_SUCCESS; ++p) {
    eng_block *b = &vp->blocks[p];
    if (b->n == 0) {
      continue;
    }
    if (host_counts && from == 0) {
      err = nestcl_enq_write(&vp->st.enqueued, q, b->b_count.mem, CL_FALSE, 0, sizeof zero, zero, 0, NULL, NULL);
    }
    err |= clSetKernelArg(b->k_update, 2, sizeof org, &org);
    err |= clSetKernelArg(b->k_update, 3, sizeof f, &f);
    err |= clSetKernelArg(b->k_update, 4, sizeof t, &t);
    size_t gsize = b->n;
    if (err == CL_SUCCESS) {
      err = nestcl_enq_launch(&vp->st.enqueued, q, b->k_update, 1, &gsize, NULL, 0, NULL, NULL);
    }
    /* The spike count and the failure record, read back after every slice (collect_spikes uses the count). */
    if (err == CL_SUCCESS && host_counts) {
      err = nestcl_enq_read(&vp->st.enqueued, q, b->b_count.mem, CL_FALSE, 0, sizeof b->spike_count, b->spike_count, 0,
                            NULL, NULL);
    }
  }
  return err;
}

/* A stream's Poisson and DC drive kernels for the slice [from, to). */
cl_int eng_gpu_enqueue_drives(nestcl_engine *e, eng_vp *vp, int64_t origin, int from, int to)
{
  cl_command_queue q = nestcl_device_queue(e->device.dev, vp->queue);
  cl_int err = CL_SUCCESS;
  cl_long org = origin;
  for (int p = 0; p < e->desc.n_pops && err == CL_SUCCESS; ++p) {
    eng_block *b = &vp->blocks[p];
    for (int k = 0; k < e->desc.n_drives && b->n && err == CL_SUCCESS; ++k) {
      const eng_drive *d = &e->desc.drives[k];
      int f2, t2;
      if (d->pop != p || !eng_drive_window(d, origin, from, to, &f2, &t2)) {
        continue;
      }
      cl_int fw = f2, tw = t2;
      cl_uint ch = (cl_uint)d->channel, gen = d->gen, chunks = d->chunks;
      cl_int delay = d->delay_steps, isp = d->is_poisson;
      cl_long value = d->value_fixed;
      cl_uint cdf_len = d->cdf_len, kstop = d->kstop;
      err = clSetKernelArg(b->k_drive, 4, sizeof ch, &ch);
      err |= clSetKernelArg(b->k_drive, 6, sizeof gen, &gen);
      err |= clSetKernelArg(b->k_drive, 7, sizeof org, &org);
      err |= clSetKernelArg(b->k_drive, 8, sizeof fw, &fw);
      err |= clSetKernelArg(b->k_drive, 9, sizeof tw, &tw);
      err |= clSetKernelArg(b->k_drive, 10, sizeof delay, &delay);
      err |= clSetKernelArg(b->k_drive, 11, sizeof value, &value);
      err |= clSetKernelArg(b->k_drive, 12, sizeof isp, &isp);
      err |= clSetKernelArg(b->k_drive, 14, sizeof(cl_mem), &d->b_cdf.mem);
      err |= clSetKernelArg(b->k_drive, 15, sizeof cdf_len, &cdf_len);
      err |= clSetKernelArg(b->k_drive, 16, sizeof kstop, &kstop);
      err |= clSetKernelArg(b->k_drive, 17, sizeof chunks, &chunks);
      size_t gsize = b->n;
      if (err == CL_SUCCESS) {
        err = nestcl_enq_launch(&vp->st.enqueued, q, b->k_drive, 1, &gsize, NULL, 0, NULL, NULL);
      }
    }
  }
  return err;
}

static int gpu_update(nestcl_engine *e, eng_vp *vp, int64_t origin, int from, int to)
{
  cl_command_queue q = nestcl_device_queue(e->device.dev, vp->queue);
  double t0 = eng_now();
  cl_int err = eng_gpu_enqueue_update(e, vp, origin, from, to, 1);
  if (err == CL_SUCCESS) {
    err = nestcl_enq_finish(&vp->st.enqueued, q);
  }
  if (err != CL_SUCCESS) {
    return cl_fail(err, "update kernel");
  }
  for (int p = 0; p < e->desc.n_pops; ++p) {
    eng_block *b = &vp->blocks[p];
    int rc = b->n ? eng_block_failure(e, b, b->spike_count, origin) : 0;
    if (rc) {
      return rc;
    }
  }
  double t1 = eng_now();
  err = eng_gpu_enqueue_drives(e, vp, origin, from, to);
  if (err == CL_SUCCESS) {
    err = nestcl_enq_finish(&vp->st.enqueued, q);
  }
  if (err != CL_SUCCESS) {
    return cl_fail(err, "drive kernel");
  }
  vp->st.seconds[NESTCL_PHASE_UPDATE] += t1 - t0;
  vp->st.seconds[NESTCL_PHASE_POISSON] += eng_now() - t1;
  return 0;
}

/* A stream's spike list of block b, read back (gpu_update read its count after the super step's last slice). */
static int gpu_read_spikes(nestcl_engine *e, eng_vp *vp, eng_block *b)
{
  const uint32_t count = b->spike_count[0];
  cl_command_queue q = nestcl_device_queue(e->device.dev, vp->queue);
  uint32_t n = count < b->spike_cap ? count : b->spike_cap;
  cl_int err = CL_SUCCESS;
  if (n > 0) {
    err = nestcl_enq_read(&vp->st.enqueued, q, b->b_spikes.mem, CL_TRUE, 0, (size_t)n * 8, b->spikes, 0, NULL, NULL);
  }
  if (err != CL_SUCCESS) {
    return cl_fail(err, "reading the spike list");
  }
  return 0;
}

/* The VP's spikes of the finished super step as sorted (gid, lag) pairs; read: each block's list to the host, or NULL. */
static int collect_spikes(nestcl_engine *e, eng_vp *vp, int (*read)(nestcl_engine *, eng_vp *, eng_block *))
{
  vp->n_out = 0;
  for (int p = 0; p < e->desc.n_pops; ++p) {
    eng_block *b = &vp->blocks[p];
    if (b->n == 0) {
      continue;
    }
    const uint32_t count = b->spike_count[0];
    int rc = read ? read(e, vp, b) : 0;
    if (rc) {
      return rc;
    }
    if (count > b->spike_cap) {
      return nestcl_set_error(NESTCL_ERUNTIME, "spike list overflow: %u spikes for a capacity of %u", count,
                              b->spike_cap);
    }
    for (uint32_t j = 0; j < count; ++j) {
      if (b->spikes[j].index >= b->n || b->spikes[j].lag >= (uint32_t)e->clock.min_delay) {
        return nestcl_set_error(NESTCL_ERUNTIME, "bad spike (%u, %u) from %s", b->spikes[j].index, b->spikes[j].lag,
                                e->desc.pops[p].model->name);
      }
      vp->out[2 * vp->n_out] = (uint32_t)(b->first_gid + b->spikes[j].index);
      vp->out[2 * vp->n_out + 1] = b->spikes[j].lag;
      vp->n_out++;
    }
  }
  qsort(vp->out, vp->n_out, 2 * sizeof(uint32_t), eng_cmp_spike);
  return 0;
}

static int cpu_collect(nestcl_engine *e, eng_vp *vp, int64_t origin)
{
  (void)origin;
  return collect_spikes(e, vp, NULL);
}

static int gpu_collect(nestcl_engine *e, eng_vp *vp, int64_t origin)
{
  (void)origin;
  return collect_spikes(e, vp, gpu_read_spikes);
}

static int any_failed(const nestcl_engine *e)
{
  for (int v = 0; v < e->n_vps; ++v) {
    if (e->vps[v].status) {
      return 1;
    }
  }
  return 0;
}

/*
 * Under MPI the ranks must stop together: a rank that stops alone leaves the
 * others waiting forever in their next collective. So the master of every
 * rank takes the decision to go on at the same points of every slice, from
 * all ranks' failures: at the end of a super step through the exchange's
 * first collective (a failed rank sends -1 for its count), else (slices that
 * end inside a super step, the recording's check, the end of a run) through
 * ranks_failed. Once one rank has failed, all ranks learn its message here:
 * the failed ranks keep their own errors; the others take the first failed
 * rank's, as "rank R: <message>", and stop with it.
 */
/* A failure of this process (a VP's, or the master's exchange or recording): its code, and its message. */
static int local_failure(const nestcl_engine *e, const char **msg)
{
  for (int v = 0; v < e->n_vps; ++v) {
    if (e->vps[v].status) {
      *msg = e->vps[v].err;
      return e->vps[v].status;
    }
  }
  *msg = e->exchange.ex_err;
  return e->exchange.ex_status;
}

typedef struct rank_failure {
  int code;
  char msg[508];
} rank_failure;

/* src into dst[cap], cut to fit. */
static void copy_text(char *dst, size_t cap, const char *src)
{
  size_t n = strnlen(src, cap - 1);
  memcpy(dst, src, n);
  dst[n] = 0;
}

static void share_failure(nestcl_engine *e, int failed)
{
  int first = failed ? e->exchange.rank : e->exchange.n_ranks;
  eng_mpi_allreduce(e, &first, 1, ENG_MPI_INT, ENG_MPI_MIN);
  if (first >= e->exchange.n_ranks) {
    return; /* cannot happen: some rank said it failed */
  }
  rank_failure f;
  memset(&f, 0, sizeof f);
  if (e->exchange.rank == first) {
    const char *msg;
    f.code = local_failure(e, &msg);
    copy_text(f.msg, sizeof f.msg, msg);
  }
  eng_mpi_bcast(e, &f, (int)sizeof f, first);
  if (!failed) {
    e->exchange.ex_status = f.code ? f.code : NESTCL_ERUNTIME;
    int k = snprintf(e->exchange.ex_err, sizeof e->exchange.ex_err, "rank %d: ", first);
    copy_text(e->exchange.ex_err + k, sizeof e->exchange.ex_err - (size_t)k, f.msg);
  }
}

/* Whether any rank failed, given this one's state (a collective under MPI: every rank's master calls it). */
static int ranks_failed(nestcl_engine *e, int failed)
{
  if (e->exchange.n_ranks > 1) {
    int any = failed;
    eng_mpi_allreduce(e, &any, 1, ENG_MPI_INT, ENG_MPI_MAX);
    if (any) {
      share_failure(e, failed);
    }
    return any;
  }
  return failed;
}

/*
 * Master thread: the global list of the super step (all VPs, all ranks),
 * sorted. *failed: in, whether this rank failed (then it only takes part in
 * the first collective); out, whether any rank did (then nothing is exchanged).
 */
static int exchange(nestcl_engine *e, int64_t origin, int *failed)
{
  size_t n = 0;
  for (int v = 0; v < e->n_vps && !*failed; ++v) {
    memcpy(e->exchange.global + 2 * n, e->vps[v].out, e->vps[v].n_out * 2 * sizeof(uint32_t));
    n += e->vps[v].n_out;
  }
  if (e->exchange.n_ranks > 1) {
    int *counts = e->exchange.mpi_counts;
    int *displs = counts + e->exchange.n_ranks;
    int mine = *failed ? -1 : (int)(2 * n);
    /* The first collective is where a rank waits for the slowest one: timed apart as waiting. */
    double t_sync = eng_now();
    eng_mpi_allgather(e, &mine, counts, 1, ENG_MPI_INT);
    e->stats.sync_s = eng_now() - t_sync;
    int any = 0;
    for (int r = 0; r < e->exchange.n_ranks; ++r) {
      any |= counts[r] < 0;
    }
    if (any) {
      share_failure(e, *failed);
      *failed = 1;
      return 0;
    }
    size_t total = 0;
    for (int r = 0; r < e->exchange.n_ranks; ++r) {
      displs[r] = (int)total;
      total += (size_t)counts[r];
    }
    if (total > 2 * e->exchange.global_cap) {
      return nestcl_set_error(NESTCL_ERUNTIME, "global spike list overflow");
    }
    memcpy(e->exchange.gather_tmp, e->exchange.global, 2 * n * sizeof(uint32_t));
    int rc = eng_mpi_allgatherv_u32(e, e->exchange.gather_tmp, mine, e->exchange.global, counts, displs);
    if (rc) {
      return rc;
    }
    n = total / 2;
  }
  qsort(e->exchange.global, n, 2 * sizeof(uint32_t), eng_cmp_spike);
  e->exchange.n_global_spikes = n;
  e->stats.spikes_total += n;
  for (size_t s = 0; s < n; ++s) {
    e->stats.events_total += e->exchange.out_degree[e->exchange.global[2 * s]];
  }
  if (e->desc.any_plastic) {
    eng_plastic_sources(e);
  }
  double t_rec = eng_now();
  int rc = eng_record_spikes(e, e->exchange.global, n, origin);
  e->stats.record_s = eng_now() - t_rec;
  return rc;
}

/* The global list into a thread's rings (core_cpu.c). */
static int cpu_deliver(nestcl_engine *e, eng_vp *vp, int64_t origin)
{
  size_t n = e->exchange.n_global_spikes;
  int wd = e->desc.cfg.weight_type == NESTCL_WEIGHT_DOUBLE;
  for (int p = 0; p < e->desc.n_pops && n > 0; ++p) {
    eng_cpu_deliver(&vp->blocks[p], wd, (uint32_t)e->clock.ring_slots, e->exchange.global, n, origin);
  }
  return 0;
}

/* The global list to a stream's device, and its delivery kernels. */
static int gpu_deliver(nestcl_engine *e, eng_vp *vp, int64_t origin)
{
  size_t n = e->exchange.n_global_spikes;
  if (n == 0) {
    return 0;
  }
  cl_command_queue q = nestcl_device_queue(e->device.dev, vp->queue);
  cl_int err =
    nestcl_enq_write(&vp->st.enqueued, q, vp->b_global.mem, CL_TRUE, 0, n * 8, e->exchange.global, 0, NULL, NULL);
  cl_uint ns = (cl_uint)n;
  cl_long org = origin;
  for (int p = 0; p < e->desc.n_pops && err == CL_SUCCESS; ++p) {
    eng_block *b = &vp->blocks[p];
    if (b->n == 0 || b->nnz == 0) {
      continue;
    }
    err = clSetKernelArg(b->k_deliver, 1, sizeof ns, &ns);
    err |= clSetKernelArg(b->k_deliver, 2, sizeof org, &org);
    /* One work-group of g work-items per spike (engine_kernels.cl). */
    size_t g = b->deliver_width < b->max_row ? b->deliver_width : (b->max_row ? b->max_row : 1);
    size_t gsize[2] = {g, n}, lsize[2] = {g, 1};
    if (err == CL_SUCCESS) {
      err = nestcl_enq_launch(&vp->st.enqueued, q, b->k_deliver, 2, gsize, lsize, 0, NULL, NULL);
    }
  }
  if (err == CL_SUCCESS) {
    err = nestcl_enq_finish(&vp->st.enqueued, q);
  }
  return err == CL_SUCCESS ? 0 : cl_fail(err, "delivery kernel");
}

/* A thread's samples are in its host mirrors already. */
static int cpu_drain(nestcl_engine *e, eng_vp *vp)
{
  (void)e;
  (void)vp;
  return 0;
}

/* A stream's multimeter buffers into the blocks' host mirrors. */
static int gpu_drain(nestcl_engine *e, eng_vp *vp)
{
  cl_command_queue q = nestcl_device_queue(e->device.dev, vp->queue);
  for (int p = 0; p < e->desc.n_pops; ++p) {
    eng_block *b = &vp->blocks[p];
    if (b->rec_elems && b->n) {
      cl_int err =
        nestcl_enq_read(&vp->st.enqueued, q, b->b_rec.mem, CL_TRUE, 0, b->rec_elems * 8, b->rec, 0, NULL, NULL);
      if (err != CL_SUCCESS) {
        return cl_fail(err, "reading recording buffers");
      }
    }
  }
  return 0;
}

/* Time at barriers waiting for other VPs: part of "other", and reported on its own. */
static void account_wait(eng_vp *vp, double s)
{
  if (s > 0.0) {
    vp->st.seconds[NESTCL_PHASE_OTHER] += s;
    vp->st.wait_seconds += s;
  }
}

/*
 * The cycle's barrier. OpenMP's waits spin (libgomp by default for about
 * 300,000 iterations) before they sleep, and a spinning VP takes a core from
 * whoever else needs it: the VPs themselves when there are more than cores,
 * another process, or a CPU device's workers (PoCL). So the cycle uses its
 * own barrier: a bounded spin, then a futex sleep. Measured on 2 cores with
 * PoCL, 1 thread + 1 stream at scale 0.2, 200 ms, alternated runs: on a quiet
 * machine the same as OpenMP's barrier (medians 2.48 s and 2.47 s with a
 * spin of 20,000; 2.52-2.55 s with 200-2,000); beside another busy process
 * 4.3 s instead of 4.7-7.0 s. The spin is 20,000 iterations, 200 when the
 * VPs outnumber the cores; NESTCL_SPIN overrides it.
 */
#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
static void futex_wait(atomic_uint *addr, unsigned val)
{
  syscall(SYS_futex, (unsigned *)addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}
static void futex_wake_all(atomic_uint *addr)
{
  syscall(SYS_futex, (unsigned *)addr, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
}
#else
#include <sched.h>
static void futex_wait(atomic_uint *addr, unsigned val)
{
  (void)addr;
  (void)val;
  sched_yield();
}
static void futex_wake_all(atomic_uint *addr)
{
  (void)addr;
}
#endif

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* All n threads arrive before any leaves; what each wrote before is visible to all after (seq_cst). */
static void bar_wait(eng_barrier *b)
{
  unsigned gen = atomic_load(&b->gen);
  if (atomic_fetch_add(&b->count, 1u) + 1u == b->n) {
    atomic_store(&b->count, 0u);
    atomic_fetch_add(&b->gen, 1u);
    futex_wake_all(&b->gen);
    return;
  }
  for (long i = 0; i < b->spin; ++i) {
    if (atomic_load_explicit(&b->gen, memory_order_acquire) != gen) {
      return;
    }
    cpu_relax();
  }
  while (atomic_load(&b->gen) == gen) {
    futex_wait(&b->gen, gen);
  }
}

static void bar_init(nestcl_engine *e)
{
  eng_barrier *b = &e->clock.bar;
  atomic_store(&b->count, 0u);
  b->n = (unsigned)e->n_vps;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  b->spin = e->n_vps > cores ? 200 : 20000;
  const char *env = getenv("NESTCL_SPIN");
  if (env && *env) {
    b->spin = atol(env) > 0 ? atol(env) : 0;
  }
}

/*
 * Master, when OpenMP gave fewer threads than the VPs need: the run fails.
 * Under MPI the other ranks wait at the first slice's decision: this rank
 * takes part in it, failed.
 */
static void threads_short(nestcl_engine *e, int64_t origin0, int lag0, int64_t steps)
{
  e->exchange.ex_status = NESTCL_ERUNTIME;
  snprintf(e->exchange.ex_err, sizeof e->exchange.ex_err, "OpenMP gave fewer than the %d threads the VPs need",
           e->n_vps);
  int failed = 1;
  int to = (int64_t)(e->clock.min_delay - lag0) < steps ? e->clock.min_delay : lag0 + (int)steps;
  if (to == e->clock.min_delay && e->exchange.n_ranks > 1) {
    (void)exchange(e, origin0, &failed);
  } else {
    (void)ranks_failed(e, failed);
  }
  e->clock.abort = 1;
}

/*
 * Master, between the two barriers of a slice's end: the exchange (when the
 * super step is complete) and the decisions to abort and to stop, which every
 * thread reads after the second barrier.
 */
static void master_decide(nestcl_engine *e, int64_t origin, int to)
{
  double t_g = eng_now();
  e->stats.sync_s = 0.0;
  e->stats.record_s = 0.0;
  /*
   * One rank: stop on any failure. More: on any rank's failure as
   * known at the decision (an error of this exchange itself is
   * decided at the next one, at the latest at the end of the run).
   */
  int failed = any_failed(e) || e->exchange.ex_status != 0;
  if (to == e->clock.min_delay && (!failed || e->exchange.n_ranks > 1)) {
    int rc = exchange(e, origin, &failed);
    if (rc) {
      e->exchange.ex_status = rc;
      snprintf(e->exchange.ex_err, sizeof e->exchange.ex_err, "%s", nestcl_last_error());
      e->exchange.n_global_spikes = 0;
    }
  } else {
    failed = ranks_failed(e, failed);
  }
  e->clock.abort = failed || (e->exchange.n_ranks == 1 && e->exchange.ex_status != 0);
  /* A stop request, decided with the super step's exchange and taken after its delivery. */
  e->clock.stop = 0;
  if (!e->clock.abort && to == e->clock.min_delay && e->clock.stop_flag) {
    e->clock.stop = *e->clock.stop_flag != 0;
    eng_mpi_allreduce(e, &e->clock.stop, 1, ENG_MPI_INT, ENG_MPI_MAX);
  }
  e->stats.serial_s = eng_now() - t_g - e->stats.sync_s - e->stats.record_s;
}

/*
 * Every VP's thread: the multimeters' samples of the slice [from, to), drained
 * by each VP, recorded by the master. Returns 1 when the run aborts. Every
 * thread must take the same branch at every barrier, or the region deadlocks:
 * the decision to stop is taken by the master between two barriers and only
 * read after the second.
 */
static int record_slice(nestcl_engine *e, eng_vp *vp, int64_t origin, int from, int to)
{
  double t_o = eng_now();
  eng_vp_fail(vp, vp->ops->drain(e, vp));
  double t_drained = eng_now();
  bar_wait(&e->clock.bar);
#pragma omp master
  e->clock.abort = ranks_failed(e, any_failed(e) || e->exchange.ex_status != 0);
  bar_wait(&e->clock.bar);
  if (e->clock.abort) {
    account_wait(vp, eng_now() - t_drained);
    vp->st.seconds[NESTCL_PHASE_OTHER] += t_drained - t_o;
    return 1;
  }
#pragma omp master
  {
    double t_r = eng_now();
    int rc = eng_record_samples(e, origin, from, to);
    if (rc) {
      e->exchange.ex_status = rc;
      snprintf(e->exchange.ex_err, sizeof e->exchange.ex_err, "%s", nestcl_last_error());
    }
    e->stats.serial_s = eng_now() - t_r;
  }
  bar_wait(&e->clock.bar);
  /* Draining and the master's sorting of the samples are work; the rest is waiting. */
  double t_end = eng_now();
  account_wait(vp, (t_end - t_drained) - e->stats.serial_s);
  vp->st.seconds[NESTCL_PHASE_OTHER] += (t_drained - t_o) + e->stats.serial_s;
  return 0;
}

/*
 * Exchange is this VP's own collection plus the gather (and MPI), a serial
 * section no VP can deliver before; the spike recorders' share of that
 * section is other; the rest of the interval is waiting at the barriers for
 * the slowest VP of this process, or in MPI for the slowest rank (load
 * imbalance): other, and also on its own.
 */
static void account_exchange(const nestcl_engine *e, eng_vp *vp, double t_ex, double t_collected, double t_dl)
{
  double exch = (t_collected - t_ex) + e->stats.serial_s;
  account_wait(vp, (t_dl - t_ex) - exch - e->stats.record_s);
  vp->st.seconds[NESTCL_PHASE_EXCHANGE] += exch;
  vp->st.seconds[NESTCL_PHASE_OTHER] += e->stats.record_s;
}

/* One VP's thread through `left` steps from (origin, lag): slices of at most a super step, each ending at the barriers. */
static void vp_run(nestcl_engine *e, eng_vp *vp, int64_t origin, int lag, int64_t left, int recording)
{
  while (left > 0) {
    int from = lag;
    int to = (int64_t)(e->clock.min_delay - from) < left ? e->clock.min_delay : from + (int)left;
    const eng_vp_ops *ops = vp->ops;
    eng_vp_fail(vp, ops->update(e, vp, origin, from, to));
    if (ops->partial && to < e->clock.min_delay && left == to - from && !vp->status) {
      /* The run ends inside a super step: the update's failures so far. */
      eng_vp_fail(vp, ops->partial(e, vp, origin, to));
    }
    double t_ex = eng_now();
    if (to == e->clock.min_delay && !vp->status) {
      eng_vp_fail(vp, ops->collect(e, vp, origin));
    }
    double t_collected = eng_now();
    /* Two barriers per slice: the master exchanges and decides whether to stop between them. */
    bar_wait(&e->clock.bar);
#pragma omp master
    master_decide(e, origin, to);
    bar_wait(&e->clock.bar);
    double t_dl = eng_now();
    account_exchange(e, vp, t_ex, t_collected, t_dl);
    if (e->clock.abort) {
      break;
    }
    if (to == e->clock.min_delay) {
      eng_vp_fail(vp, ops->deliver(e, vp, origin));
      vp->st.seconds[NESTCL_PHASE_DELIVER] += eng_now() - t_dl;
      /*
       * Translated synapses: the history of this VP's spikes, then their delivery (timed inside). A failed VP
       * is called too: CPU threads share this work and wait for each other's part (plastic_cpu.c).
       */
      if (e->desc.any_plastic) {
        eng_vp_fail(vp, ops->plastic(e, vp, origin));
      }
    }
    if (recording && record_slice(e, vp, origin, from, to)) {
      break;
    }
    left -= to - from;
    lag = to;
    if (lag == e->clock.min_delay) {
      origin += e->clock.min_delay;
      lag = 0;
    }
    if (e->clock.stop && left > 0) {
#pragma omp master
      e->clock.steps_left = left;
      break;
    }
  }
}

/* After the threads: the run's outcome, and the engine's clock advanced by the steps it simulated. */
static int run_end(nestcl_engine *e, int64_t origin0, int lag0, int64_t steps)
{
  /*
   * Errors after the run's last decision (delivery, recording of its last
   * slice) are decided here; a run that stopped on a failure shared it already.
   */
  if (e->exchange.n_ranks > 1 && !e->clock.abort) {
    (void)ranks_failed(e, any_failed(e) || e->exchange.ex_status != 0);
  }
  int rc = eng_vps_status(e);
  if (rc) {
    return rc;
  }
  if (e->exchange.ex_status) {
    return nestcl_set_error(e->exchange.ex_status, "%s", e->exchange.ex_err);
  }
  /* All threads advanced identically; replay the arithmetic for the engine's clock. */
  int64_t run = steps - e->clock.steps_left;
  int64_t total = (int64_t)lag0 + run;
  e->clock.origin = origin0 + (total / e->clock.min_delay) * e->clock.min_delay;
  e->clock.lag = (int)(total % e->clock.min_delay);
  e->clock.steps_done += run;
  if (e->clock.steps_left > 0) {
    return nestcl_set_error(
      NESTCL_EINTR, "stopped on request at t = %.10g ms, the end of a super step (%lld of %lld steps of this call)",
      (double)(e->clock.origin + e->clock.lag) * e->desc.cfg.resolution_ms, (long long)run, (long long)steps);
  }
  return 0;
}

int eng_run(nestcl_engine *e, int64_t steps)
{
  if (steps <= 0) {
    return 0;
  }
  if (e->device.res.on && e->device.res.full) {
    return eng_resident_run(e, steps);
  }
  int recording = 0;
  for (int p = 0; p < e->desc.n_pops; ++p) {
    recording |= e->desc.pops[p].rec_interval_steps != 0;
  }
  omp_set_dynamic(0);
  bar_init(e);
  int threads_ok = 1;
  const int64_t origin0 = e->clock.origin;
  const int lag0 = e->clock.lag;
  e->clock.abort = 0;
  e->exchange.ex_status = 0;
  e->clock.stop = 0;
  e->clock.steps_left = 0;
#pragma omp parallel num_threads(e->n_vps)
  {
    if (omp_get_num_threads() != e->n_vps) {
#pragma omp master
      {
        threads_ok = 0;
        threads_short(e, origin0, lag0, steps);
      }
    } else {
      vp_run(e, &e->vps[omp_get_thread_num()], origin0, lag0, steps, recording);
    }
  }
  /* A resident stream beside threads or ranks left its last super step queued: the device finishes it first. */
  eng_resident_run_end(e);
  if (!threads_ok) {
    return nestcl_set_error(e->exchange.ex_status, "%s", e->exchange.ex_err);
  }
  return run_end(e, origin0, lag0, steps);
}

/* ---- the kinds of VP ------------------------------------------------------ */

/* A thread's host arrays stay for the run: counted as its host memory. */
static void cpu_account(eng_vp *vp, nestcl_mem_class c, size_t bytes)
{
  vp->host_bytes[c] += bytes;
}

/* A stream's host arrays are freed after the upload: not counted. */
static void gpu_account(eng_vp *vp, nestcl_mem_class c, size_t bytes)
{
  (void)vp;
  (void)c;
  (void)bytes;
}

/* A stream's plastic step (eng_vp_ops.plastic), nothing once the stream has failed. */
static int stream_plastic(nestcl_engine *e, eng_vp *vp, int64_t origin)
{
  return vp->status ? 0 : eng_plastic_deliver_device(e, vp, origin);
}

static int resident_plastic(nestcl_engine *e, eng_vp *vp, int64_t origin)
{
  return vp->status ? 0 : eng_resident_plastic_step(e, vp, origin);
}

/* A stream keeps no host copy of its plastic synapses, and uses no C path. */
static int no_plastic_init(nestcl_engine *e, eng_vp *vp, eng_plastic *pl)
{
  (void)e;
  (void)vp;
  (void)pl;
  return 0;
}

/* A thread's blocks stay where the build made them. */
static int no_upload(nestcl_engine *e, eng_vp *vp)
{
  (void)e;
  (void)vp;
  return 0;
}

/* A thread's block keeps the spikes' offsets on the host, where its C loop writes them (eng_vp_ops.block_arrays). */
static int cpu_block_arrays(nestcl_engine *e, eng_vp *vp, eng_block *b)
{
  if (e->desc.pops[b->pop].model->spike_offsets) {
    b->spike_offsets = calloc(b->spike_cap ? b->spike_cap : 1, sizeof *b->spike_offsets);
    if (!b->spike_offsets) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
    vp->host_bytes[NESTCL_MEM_OTHER] += (size_t)b->spike_cap * sizeof *b->spike_offsets;
  }
  return 0;
}

/* A stream's offsets live on its device (stream_upload.c). */
static int no_block_arrays(nestcl_engine *e, eng_vp *vp, eng_block *b)
{
  (void)e;
  (void)vp;
  (void)b;
  return 0;
}

/* A thread needs nothing on the device, and runs no kernel to specialise (eng_vp_ops.device_need, batch, kernel_block). */
static size_t cpu_device_need(const nestcl_engine *e, const eng_vp *vp, size_t *plastic, int *units)
{
  (void)e;
  (void)vp;
  (void)plastic;
  (void)units;
  return 0;
}

static int cpu_batch(nestcl_engine *e, eng_vp *vp, size_t room)
{
  (void)e;
  (void)vp;
  (void)room;
  return 0;
}

static int cpu_kernel_block(const eng_vp *vp, int pop, void *const **fields, uint32_t *n)
{
  (void)vp;
  (void)pop;
  (void)fields;
  (void)n;
  return 0;
}

/* A CPU thread: the models' C update, the C twins of the core kernels (core_cpu.c), the C path of the synapses. */
static const eng_vp_ops thread_ops = {
  .kind = "thread",
  .account = cpu_account,
  .plastic_init = eng_plastic_host_init,
  .upload = no_upload,
  .block_arrays = cpu_block_arrays,
  .device_need = cpu_device_need,
  .batch = cpu_batch,
  .kernel_block = cpu_kernel_block,
  .plastic_snapshot = eng_plastic_snapshot_host,
  .ck_open = eng_ck_view_alias,
  .ck_write_back = NULL,
  .update = cpu_update,
  .partial = NULL,
  .collect = cpu_collect,
  .deliver = cpu_deliver,
  .plastic = eng_plastic_deliver_host,
  .drain = cpu_drain,
};

/* An OpenCL stream on the host's clock: one wait per kernel group, lists read back every super step. */
static const eng_vp_ops stream_ops = {
  .kind = "stream",
  .account = gpu_account,
  .plastic_init = no_plastic_init,
  .upload = eng_stream_upload,
  .stage = eng_stream_stage,
  .staged = eng_stream_staged,
  .block_arrays = no_block_arrays,
  .device_need = eng_stream_device_need,
  .batch = eng_stream_batch,
  .kernel_block = eng_stream_kernel_block,
  .plastic_snapshot = eng_plastic_snapshot_device,
  .ck_open = eng_ck_view_read,
  .ck_write_back = eng_ck_view_write_device,
  .update = gpu_update,
  .partial = NULL,
  .collect = gpu_collect,
  .deliver = gpu_deliver,
  .plastic = stream_plastic,
  .drain = gpu_drain,
};

/* The resident stream beside threads or ranks (resident_step.c): no wait in the update; one in the collection. */
static const eng_vp_ops resident_ops = {
  .kind = "resident stream",
  .account = gpu_account,
  .plastic_init = no_plastic_init,
  .upload = eng_stream_upload,
  .stage = eng_stream_stage,
  .staged = eng_stream_staged,
  .block_arrays = no_block_arrays,
  .device_need = eng_stream_device_need,
  .batch = eng_stream_batch,
  .kernel_block = eng_stream_kernel_block,
  .plastic_snapshot = eng_plastic_snapshot_device,
  .ck_open = eng_ck_view_read,
  .ck_write_back = eng_ck_view_write_device,
  .update = eng_resident_update,
  .partial = eng_resident_partial,
  .collect = eng_resident_collect,
  .deliver = eng_resident_deliver,
  .plastic = resident_plastic,
  .drain = gpu_drain,
};

void eng_vp_set_kind(nestcl_engine *e, eng_vp *vp, int v)
{
  vp->is_gpu = v >= e->desc.cfg.cpu_threads;
  vp->queue = vp->is_gpu ? v - e->desc.cfg.cpu_threads : -1;
  vp->st.is_gpu = vp->is_gpu;
  vp->ops = vp->is_gpu ? &stream_ops : &thread_ops;
  if (e->device.res.on && v == e->device.res.vp) {
    vp->ops = &resident_ops;
  }
}
