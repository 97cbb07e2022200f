/*
 * The CPU VPs' plastic delivery (issue 42; docs/architecture.md, "Plastic synapses and the spike history"): the C
 * path of a translated synapse's send() over a thread's sets of synapses, and the sharing of that work between the
 * threads.
 *
 * The C path runs what plastic_kernels.cl runs, through the descriptor: per spiking source the row's template with
 * the source's state, per synapse a copy of it with the synapse's own state, then send() for each of the source's
 * spikes of the super step in time order. The copies go through a plan of the set's fields made once per set and
 * task (offsets, sizes, arrays) and whole 8-byte words, not through calls per field: at one thread this loop cost as
 * many instructions per synapse as send() itself with its exponentials (callgrind, docs/performance.md).
 *
 * Sharing: a thread's synapses are cut into tasks, each the synapses onto one range of target neurons of one block.
 * Everything a task writes (weights, the targets' ring cells and spike-history read counts, a row's per-source
 * state through the task that holds the row's first synapse) belongs to a target in its range, so two tasks never
 * write the same memory and any thread may run any task. A thread runs its own VP's tasks first, then takes those of
 * the others still open; so a thread that finishes early (less work, or a core it did not have to share) takes over
 * part of the slowest one's instead of waiting for it at the next barrier. Results are unchanged: each synapse is run
 * by exactly one task and sees its source's spikes in time order, ring cells hold exact integer sums, read counts are
 * counts, and every task starts a row from the per-source state of the super step's start (copied before the tasks
 * are handed out, since the task with the row's first synapse writes the new state back meanwhile).
 *
 * Handing out: per VP one word (super step, tasks, next task) in a cache line of its own, taken by compare-and-swap.
 * The owner publishes it (release) once its histories and copies are ready; every CPU VP does so in every super step
 * that delivers, also one that failed (with no tasks), so a thread may wait for the others' words. The owner goes on
 * to its next update only when all its tasks are done (a counter in another line): the update adds the Poisson drive
 * into the rings the tasks write. Tasks cut a block's targets only where every row of its sets lists its targets in
 * ascending order (all connection rules but fixed_outdegree and fixed_total_number), so that a task finds its part
 * of a row by binary search; other blocks are one task each.
 */
#define _GNU_SOURCE /* sched_yield */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine_internal.h"
#include "nestcl_synapse.h"
#include "core/nestcl_core.h"

#define CPU_LINE 64

/*
 * A thread's working memory (vp->syn_scratch, one allocation of whole cache lines): the words by which its VP's
 * tasks are handed out and counted done, then two synapse structs (the row's template, one synapse).
 */
typedef struct cpu_work {
  _Alignas(CPU_LINE) atomic_uint_least64_t claim; /* super step << 32 | tasks << 16 | next task */
  _Alignas(CPU_LINE) atomic_uint done; /* tasks of this super step finished, by any thread */
} cpu_work;

/* One field of a synapse struct and its SoA array of one set: self + at <-> arr + k * size. */
typedef struct field_plan {
  size_t at, size;
  unsigned char *arr;
} field_plan;

enum { TASKS_MAX = 0xffff };

static cpu_work *work_of(const eng_vp *vp)
{
  return (cpu_work *)(void *)vp->syn_scratch;
}

/* Per block, the tasks its plastic delivery is cut into (0 when it has none); share: the tasks per sortable block. */
static uint32_t block_tasks(const eng_block *b, uint32_t share)
{
  if (b->n_plastic == 0 || b->n == 0) {
    return 0;
  }
  for (int j = 0; j < b->n_plastic; ++j) {
    if (!b->plastic[j].rows_sorted) {
      return 1;
    }
  }
  return share < b->n ? share : b->n;
}

/* Tasks per sortable block: the configuration's, fewer when the VP would have more than a word holds. */
static uint32_t tasks_per_block(const nestcl_engine *e)
{
  uint32_t share = e->desc.cfg.plastic_tasks > 0 ? (uint32_t)e->desc.cfg.plastic_tasks : NESTCL_PLASTIC_TASKS_DEFAULT;
  uint32_t blocks = 0; /* populations with plastic synapses onto them */
  for (int p = 0; p < e->desc.n_pops; ++p) {
    int onto = 0;
    for (int q = 0; q < e->desc.n_projs && !onto; ++q) {
      onto = e->desc.projs[q].sm && e->desc.projs[q].tgt == p;
    }
    blocks += (uint32_t)onto;
  }
  uint32_t cap = blocks ? TASKS_MAX / blocks : TASKS_MAX;
  return share < cap ? share : (cap ? cap : 1);
}

/* Whether threads share their plastic delivery: more than one CPU VP, and not turned off. */
static int sharing(const nestcl_engine *e)
{
  return e->desc.cfg.cpu_threads > 1 && e->desc.cfg.plastic_tasks >= 0;
}

/* ---- the set's plan -------------------------------------------------------- */

static int plan_fields(const nestcl_synapse_model *sm, int n, const int *fi, const size_t *off, unsigned char *arrays,
                       uint64_t count, field_plan *out)
{
  for (int j = 0; j < n; ++j) {
    out[j].at = sm->fields[fi[j]].offset;
    out[j].size = eng_syn_field_size(&sm->fields[fi[j]]);
    out[j].arr = arrays + off[j] * count;
  }
  return n;
}

/* Field sizes are 8 or 4 (eng_syn_layout_init): copies of a constant size, which the compiler turns into moves. */
static inline void copy_field(unsigned char *dst, const unsigned char *src, size_t size)
{
  if (size == 8) {
    memcpy(dst, src, 8);
  } else {
    memcpy(dst, src, 4);
  }
}

static inline void load_fields(unsigned char *self, const field_plan *f, int n, uint64_t k)
{
  for (int j = 0; j < n; ++j) {
    copy_field(self + f[j].at, f[j].arr + k * f[j].size, f[j].size);
  }
}

static inline void store_fields(const unsigned char *self, const field_plan *f, int n, uint64_t k)
{
  for (int j = 0; j < n; ++j) {
    copy_field(f[j].arr + k * f[j].size, self + f[j].at, f[j].size);
  }
}

/* The first synapse of row [r0, r1) (targets ascending) whose target is at least i. */
static uint64_t first_at_least(const uint32_t *target, uint64_t r0, uint64_t r1, uint32_t i)
{
  while (r0 < r1) {
    uint64_t mid = r0 + (r1 - r0) / 2;
    if (target[mid] < i) {
      r0 = mid + 1;
    } else {
      r1 = mid;
    }
  }
  return r0;
}

/* ---- the C path -------------------------------------------------------------- */

/* What deliver_set needs of the super step and the block, fixed for one task. */
typedef struct task_ctx {
  const nestcl_engine *e;
  eng_block *b;
  int64_t origin;
  uint32_t i0, i1; /* the task's targets */
  int shared; /* per-source state from the copy of the super step's start (pl->src_prev) */
  unsigned char *base, *self; /* the thread's two synapse structs */
} task_ctx;

/* Row row's synapses onto targets [i0, i1): each through send() for spikes [q0, q1) of its source, in time order. */
static void deliver_row(const task_ctx *t, const eng_plastic *pl, const nestcl_synapse_model *sm,
                        const eng_projection *pr, nestcl_syn_env *env, const field_plan *st, int n_st,
                        const field_plan *src, int n_src, uint32_t row, uint32_t q0, uint32_t q1)
{
  const uint64_t r0 = pl->row_ptr[row], r1 = pl->row_ptr[row + 1];
  uint64_t k0 = r0, k1 = r1;
  if (t->i0 > 0 || t->i1 < t->b->n) { /* only tasks of blocks whose rows are sorted are cut */
    k0 = first_at_least(pl->target, r0, r1, t->i0);
    k1 = first_at_least(pl->target, k0, r1, t->i1);
  }
  if (k0 == k1) {
    return;
  }
  const nestcl_engine *e = t->e;
  eng_block *b = t->b;
  unsigned char *base = t->base, *self = t->self;
  const size_t words = (sm->syn_size + 7) / 8;
  const int64_t tps = eng_tics_per_step(e->desc.cfg.resolution_ms);
  const double mps = eng_delay_ms(e, 1);
  const uint32_t slots = (uint32_t)e->clock.ring_slots, ch_pos = (uint32_t)pr->ch_pos, ch_neg = (uint32_t)pr->ch_neg,
                 ch_zero = (uint32_t)pr->ch_zero;
  const uint32_t *lags = e->exchange.src_lags;
  for (int j = 0; j < n_src; ++j) {
    const unsigned char *from = t->shared ? pl->src_prev + (size_t)(src[j].arr - pl->src_state) : src[j].arr;
    copy_field(base + src[j].at, from + (size_t)row * src[j].size, src[j].size);
  }
  for (uint64_t k = k0; k < k1; ++k) {
    for (size_t w = 0; w < words; ++w) {
      memcpy(self + 8 * w, base + 8 * w, 8);
    }
    load_fields(self, st, n_st, k);
    const uint32_t i = pl->target[k];
    const int64_t d = pl->delay ? pl->delay[k] : pl->delay_hom;
    env->target = i;
    env->delay_steps = d;
    env->delay_ms = (double)d * mps;
    for (uint32_t q = q0; q < q1; ++q) {
      const int64_t step = t->origin + (int64_t)lags[q];
      env->t_spike = nestcl_step_ms(step + 1, tps, 1e-3);
      double wt = 0.0;
      if (sm->send_cpu(self, pr->cp, env, &wt)) {
        nestcl_plastic_emit(b->ring, b->n_channels, b->n, slots, step, d, i, wt, ch_pos, ch_neg, ch_zero);
      }
    }
    store_fields(self, st, n_st, k);
    if (k == r0) { /* every synapse of the row computes the same per-source state: the first one's goes back */
      store_fields(self, src, n_src, row);
    }
  }
}

/* Set pl's part of a task: every spiking source's row. */
static void deliver_set(const task_ctx *t, const eng_plastic *pl)
{
  const nestcl_engine *e = t->e;
  const eng_projection *pr = &e->desc.projs[pl->proj];
  const nestcl_synapse_model *sm = pr->sm;
  const eng_syn_layout *L = &pr->lay;
  field_plan st[ENG_SYN_FIELDS_MAX], src[ENG_SYN_FIELDS_MAX];
  int n_st = plan_fields(sm, L->n_state, L->state_f, L->state_off, pl->state, pl->nnz, st);
  int n_src = plan_fields(sm, L->n_src, L->src_f, L->src_off, pl->src_state, pl->n_rows, src);
  nestcl_history hv = eng_hist_view(&t->b->hist);
  nestcl_syn_env env;
  memset(&env, 0, sizeof env);
  env.hist = t->b->hist.cap ? &hv : NULL;
  env.rport = pr->syn.rport;
  env.multiplicity = 1;
  env.tau_minus_inv = t->b->hist.cap ? t->b->hist.tau_minus_inv : 0.0;
  env.eps = ENG_STDP_EPS;
  env.fused = e->device.libm_fused;
  memcpy(t->base, pr->tmpl, sm->syn_size); /* the template's words past syn_size stay the scratch's zeros */
  const uint32_t *list = e->exchange.src_list;
  for (size_t s = 0; s < e->exchange.n_src_list; ++s) {
    uint64_t gid = list[3 * s];
    if (gid < pl->src_first || gid - pl->src_first >= pl->n_rows) {
      continue;
    }
    deliver_row(t, pl, sm, pr, &env, st, n_st, src, n_src, (uint32_t)(gid - pl->src_first), list[3 * s + 1],
                list[3 * s + 2]);
  }
}

/* Task `task` of VP u (tasks numbered over its blocks in order), with the thread's scratch. */
static void run_task(const nestcl_engine *e, eng_vp *u, uint32_t task, uint32_t share, int64_t origin,
                     unsigned char *syn, size_t half)
{
  for (int p = 0; p < e->desc.n_pops; ++p) {
    eng_block *b = &u->blocks[p];
    uint32_t m = block_tasks(b, share);
    if (task >= m) {
      task -= m;
      continue;
    }
    task_ctx t = {
      e,          b,   origin,    (uint32_t)((uint64_t)b->n * task / m), (uint32_t)((uint64_t)b->n * (task + 1) / m),
      sharing(e), syn, syn + half};
    for (int j = 0; j < b->n_plastic; ++j) {
      deliver_set(&t, &b->plastic[j]);
    }
    return;
  }
}

/* ---- sharing ----------------------------------------------------------------- */

/*
 * The calling thread's CPU time: beside the wall time, it tells a thread that worked slower (the same CPU time,
 * more wall time per task: another hardware thread on its core, a lower clock) from one that was not running.
 */
static double thread_cpu_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* One turn of a wait for another thread: spin a while, then give the core away (threads may outnumber cores). */
static void wait_turn(unsigned *spins)
{
  if (++*spins < 2000u) {
    cpu_relax();
  } else {
    sched_yield();
  }
}

static uint64_t claim_word(uint32_t step, uint32_t tasks, uint32_t next)
{
  return (uint64_t)step << 32 | (uint64_t)tasks << 16 | next;
}

/* A task of w in super step `step`, or -1 when none is left; waits for w's word of this super step first. */
static long take_task(cpu_work *w, uint32_t step, double *waited)
{
  uint64_t c = atomic_load_explicit(&w->claim, memory_order_acquire);
  if ((uint32_t)(c >> 32) != step) {
    double t0 = eng_now();
    unsigned spins = 0;
    while ((uint32_t)(c >> 32) != step) {
      wait_turn(&spins);
      c = atomic_load_explicit(&w->claim, memory_order_acquire);
    }
    *waited += eng_now() - t0;
  }
  while ((c & 0xffff) < ((c >> 16) & 0xffff)) {
    if (atomic_compare_exchange_weak_explicit(&w->claim, &c, c + 1, memory_order_acquire, memory_order_acquire)) {
      return (long)(c & 0xffff);
    }
  }
  return -1;
}

/* The per-source state of every spiking row of the VP's sets, as it is at the super step's start. */
static void copy_sources(const nestcl_engine *e, eng_vp *vp)
{
  const uint32_t *list = e->exchange.src_list;
  for (int p = 0; p < e->desc.n_pops; ++p) {
    eng_block *b = &vp->blocks[p];
    for (int j = 0; j < b->n_plastic && b->n; ++j) {
      eng_plastic *pl = &b->plastic[j];
      const eng_syn_layout *L = &e->desc.projs[pl->proj].lay;
      for (size_t s = 0; s < e->exchange.n_src_list && L->src_bytes; ++s) {
        uint64_t gid = list[3 * s];
        if (gid < pl->src_first || gid - pl->src_first >= pl->n_rows) {
          continue;
        }
        uint64_t row = gid - pl->src_first;
        for (int f = 0; f < L->n_src; ++f) {
          size_t sz = eng_syn_field_size(&e->desc.projs[pl->proj].sm->fields[L->src_f[f]]);
          size_t at = L->src_off[f] * pl->n_rows + row * sz;
          copy_field(pl->src_prev + at, pl->src_state + at, sz);
        }
      }
    }
  }
}

/*
 * The shared delivery of one super step on VP vp: publish its tasks (none when failed), run them, then the other
 * CPU VPs' open ones, then wait until its own are done. *waited: the time spent waiting for other threads.
 */
static void deliver_shared(nestcl_engine *e, eng_vp *vp, int64_t origin, int failed, double *waited)
{
  const uint32_t share = tasks_per_block(e);
  const uint32_t step = (uint32_t)((uint64_t)(origin / e->clock.min_delay) % 0xffffffffu) + 1u;
  const int v = (int)(vp - e->vps), threads = e->desc.cfg.cpu_threads;
  uint32_t n = 0;
  if (!failed) {
    for (int p = 0; p < e->desc.n_pops; ++p) {
      n += block_tasks(&vp->blocks[p], share);
    }
    copy_sources(e, vp);
  }
  cpu_work *mine = work_of(vp);
  atomic_store_explicit(&mine->done, 0u, memory_order_relaxed);
  atomic_store_explicit(&mine->claim, claim_word(step, n, 0), memory_order_release);
  unsigned char *syn = vp->syn_scratch + sizeof(cpu_work);
  for (int d = 0; d < threads; ++d) {
    eng_vp *u = &e->vps[(v + d) % threads];
    cpu_work *w = work_of(u);
    long task;
    while ((task = take_task(w, step, waited)) >= 0) {
      double c0 = thread_cpu_now();
      run_task(e, u, (uint32_t)task, share, origin, syn, vp->syn_scratch_half);
      vp->st.plastic_cpu_seconds += thread_cpu_now() - c0;
      atomic_fetch_add_explicit(&w->done, 1u, memory_order_release);
      vp->st.plastic_tasks++;
      vp->st.plastic_tasks_other += d != 0;
    }
  }
  if (atomic_load_explicit(&mine->done, memory_order_acquire) < n) {
    double t0 = eng_now();
    unsigned spins = 0;
    while (atomic_load_explicit(&mine->done, memory_order_acquire) < n) {
      wait_turn(&spins);
    }
    *waited += eng_now() - t0;
  }
}

/* Every set of every block of the VP, by this thread alone. */
static void deliver_alone(nestcl_engine *e, eng_vp *vp, int64_t origin)
{
  for (int p = 0; p < e->desc.n_pops; ++p) {
    eng_block *b = &vp->blocks[p];
    if (b->n_plastic == 0 || b->n == 0) {
      continue;
    }
    task_ctx t = {e,
                  b,
                  origin,
                  0,
                  b->n,
                  0,
                  vp->syn_scratch + sizeof(cpu_work),
                  vp->syn_scratch + sizeof(cpu_work) + vp->syn_scratch_half};
    for (int j = 0; j < b->n_plastic; ++j) {
      deliver_set(&t, &b->plastic[j]);
    }
    vp->st.plastic_tasks++;
  }
}

/*
 * A thread's part of the super step's plastic work (eng_vp_ops.plastic; called on a failed VP too, which then hands
 * out no tasks): the history of its own spikes, then the delivery, each timed; waiting for other threads is waiting.
 */
int eng_plastic_deliver_host(nestcl_engine *e, eng_vp *vp, int64_t origin)
{
  double t0 = eng_now();
  int rc = 0;
  for (int p = 0; p < e->desc.n_pops && !rc && !vp->status; ++p) {
    eng_block *b = &vp->blocks[p];
    if (b->hist.cap && b->n) {
      eng_plastic_hist_pairs(vp, b);
      rc = eng_hist_append_host(&b->hist, origin);
    }
  }
  double t1 = eng_now();
  vp->st.seconds[NESTCL_PHASE_UPDATE] += t1 - t0;
  /* Every VP sees the same list: with none, no VP hands out tasks or waits for another's. */
  if (e->exchange.n_src_list == 0 || !vp->syn_scratch) {
    return rc;
  }
  double waited = 0.0;
  if (sharing(e)) {
    deliver_shared(e, vp, origin, rc || vp->status, &waited);
  } else if (!rc && !vp->status) {
    double c0 = thread_cpu_now();
    deliver_alone(e, vp, origin);
    vp->st.plastic_cpu_seconds += thread_cpu_now() - c0;
  }
  double dt = eng_now() - t1 - waited;
  vp->st.plastic_seconds += dt;
  vp->st.seconds[NESTCL_PHASE_DELIVER] += dt;
  vp->st.seconds[NESTCL_PHASE_OTHER] += waited;
  vp->st.wait_seconds += waited;
  return rc;
}

/* ---- a thread's sets ----------------------------------------------------------- */

/* Whether every row of a set lists its targets in ascending order (then tasks may cut its block's targets). */
static int rows_sorted(const eng_plastic *pl)
{
  for (uint32_t r = 0; r < pl->n_rows; ++r) {
    for (uint64_t k = pl->row_ptr[r] + 1; k < pl->row_ptr[r + 1]; ++k) {
      if (pl->target[k] < pl->target[k - 1]) {
        return 0;
      }
    }
  }
  return 1;
}

/*
 * A thread's set (vp_ops.plastic_init): its host memory counted; the copy of its per-source state when threads
 * share; the thread's working memory, sized for the largest synapse struct of the network (the thread may run any
 * VP's tasks), in whole cache lines of its own, so that no other thread's writes share a line with it.
 */
int eng_plastic_host_init(nestcl_engine *e, eng_vp *vp, eng_plastic *pl)
{
  const eng_projection *pr = &e->desc.projs[pl->proj];
  vp->host_bytes[NESTCL_MEM_SYNAPSES] += (pl->n_rows + 1) * 8 + pl->nnz * (4 + pr->lay.state_bytes) +
    (pl->delay ? pl->nnz * 2 : 0) + pl->n_rows * pr->lay.src_bytes;
  pl->rows_sorted = sharing(e) && rows_sorted(pl); /* only shared delivery cuts blocks into tasks */
  if (sharing(e) && pr->lay.src_bytes) {
    pl->src_prev = calloc(pl->n_rows ? pl->n_rows : 1, pr->lay.src_bytes);
    if (!pl->src_prev) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
    vp->host_bytes[NESTCL_MEM_SYNAPSES] += pl->n_rows * pr->lay.src_bytes;
  }
  if (vp->syn_scratch) {
    return 0;
  }
  size_t half = 8;
  for (int q = 0; q < e->desc.n_projs; ++q) {
    const nestcl_synapse_model *sm = e->desc.projs[q].sm;
    half = sm && (sm->syn_size + 7) / 8 * 8 > half ? (sm->syn_size + 7) / 8 * 8 : half;
  }
  size_t bytes = (sizeof(cpu_work) + 2 * half + CPU_LINE - 1) / CPU_LINE * CPU_LINE;
  vp->syn_scratch = aligned_alloc(CPU_LINE, bytes);
  if (!vp->syn_scratch) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  memset(vp->syn_scratch, 0, bytes);
  cpu_work *w = work_of(vp);
  atomic_init(&w->claim, 0);
  atomic_init(&w->done, 0u);
  vp->syn_scratch_half = half;
  vp->host_bytes[NESTCL_MEM_OTHER] += bytes;
  return 0;
}
