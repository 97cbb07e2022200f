/*
 * The synapses onto one block, drawn by every build thread (issue 40;
 * docs/architecture.md, "Static synapses" and "Building the network"): the
 * block's static CSR over global source ids and one CSR per projection of
 * translated synapses, as build.c asks for them block by block.
 *
 * The draws are nestcl_connect.h's, keyed by the unit that draws (a target, a
 * source or a chunk of targets), so they do not depend on who draws them. A
 * projection's units are cut into chunks (a few per thread, taken
 * dynamically), and the CSR is made in two passes over the same draws, as it
 * always was, so that no list of all synapses is ever held: pass 0 counts
 * each chunk's synapses per source row; the counts become, row by row, each
 * chunk's cursor in the row (projections in order, then chunks in order);
 * pass 1 draws again and puts every synapse at its chunk's cursor. A row thus
 * holds its synapses in the order one thread would have drawn them
 * (projection, unit, draw), and the CSR is the same bit for bit on any number
 * of threads; only the time differs.
 *
 * Pass 0 draws a delay only while it can still tell whether the block's delays
 * are all one value (then no per-synapse delay is stored): once two differ,
 * the rest are drawn in pass 1 alone, where they are needed.
 *
 * A stream's arrays are drawn into memory its device reads and sent while
 * the next block is drawn (the VP's stage and staged: stream_upload.c); where
 * the device can draw a block or plastic set itself, it does
 * (connect_device.c), and the host draws what it cannot.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "engine_internal.h"
#include "connect_internal.h"
#include "nestcl_fixed.h"
#include "core/nestcl_connect.h"
#include "core/nestcl_core.h"

_Static_assert(NESTCL_RULE_FIXED_INDEGREE == NESTCL_CONN_FIXED_INDEGREE &&
                 NESTCL_RULE_FIXED_OUTDEGREE == NESTCL_CONN_FIXED_OUTDEGREE &&
                 NESTCL_RULE_ALL_TO_ALL == NESTCL_CONN_ALL_TO_ALL && NESTCL_RULE_ONE_TO_ONE == NESTCL_CONN_ONE_TO_ONE &&
                 NESTCL_RULE_FIXED_TOTAL_NUMBER == NESTCL_CONN_FIXED_TOTAL_NUMBER &&
                 NESTCL_RULE_PAIRWISE_BERNOULLI == NESTCL_CONN_PAIRWISE_BERNOULLI,
               "nestcl_connect.h numbers the rules as engine.h does");
_Static_assert(NESTCL_FTN_CHUNK == NESTCL_CONN_FTN_CHUNK, "one chunk size of fixed_total_number");

/* Chunks per build thread: enough that a slow thread (a shared machine) does not hold the others up. */
#define CN_CHUNKS_PER_THREAD 4

/* ---- fixed_total_number's split of N over its chunks -------------------- */

/* ln k! : summed below 16, else Stirling's series (relative error below 1e-16 there). Thread-safe, unlike lgamma. */
static double log_factorial(uint64_t k)
{
  if (k < 16) {
    double s = 0.0;
    for (uint64_t i = 2; i <= k; ++i) {
      s += log((double)i);
    }
    return s;
  }
  double x = (double)k + 1.0, x2 = x * x;
  return (x - 0.5) * log(x) - x + 0.91893853320467274178 + 1.0 / (12.0 * x) - 1.0 / (360.0 * x * x2) +
    1.0 / (1260.0 * x * x2 * x2);
}

/*
 * Binomial(n, q) by inversion of one uniform, searching outwards from the mode
 * (m, m - 1, m + 1, m - 2, ...: a fixed order of the outcomes, so the draw is
 * exact up to the rounding of the probabilities), in O(sqrt(n q (1 - q))) steps.
 */
static uint64_t draw_binomial(uint64_t n, double q, double u)
{
  if (n == 0 || q <= 0.0) {
    return 0;
  }
  if (q >= 1.0) {
    return n;
  }
  uint64_t m = (uint64_t)floor(((double)n + 1.0) * q);
  m = m > n ? n : m;
  double pm =
    exp(log_factorial(n) - log_factorial(m) - log_factorial(n - m) + (double)m * log(q) + (double)(n - m) * log1p(-q));
  double r_down = (1.0 - q) / q, r_up = q / (1.0 - q);
  u -= pm;
  if (u < 0.0) {
    return m;
  }
  uint64_t lo = m, hi = m;
  double plo = pm, phi = pm;
  for (;;) {
    if (lo > 0) {
      plo *= (double)lo / (double)(n - lo + 1) * r_down;
      lo--;
      u -= plo;
      if (u < 0.0) {
        return lo;
      }
    }
    if (hi < n) {
      phi *= (double)(n - hi) / (double)(hi + 1) * r_up;
      hi++;
      u -= phi;
      if (u < 0.0) {
        return hi;
      }
    }
    /* Both tails below any double: what is left of u is rounding; the mode takes it. */
    if ((lo == 0 || plo == 0.0) && (hi == n || phi == 0.0)) {
      return m;
    }
  }
}

/*
 * fixed_total_number: the synapses of every chunk of NESTCL_FTN_CHUNK targets
 * (engine.h), N split by conditional binomials; counts[c] for all chunks.
 */
static void ftn_counts(uint32_t seed, int p, uint64_t N, uint32_t n_targets, uint64_t *counts)
{
  uint32_t n_chunks = (n_targets + NESTCL_FTN_CHUNK - 1) / NESTCL_FTN_CHUNK;
  uint64_t left = N;
  for (uint32_t c = 0; c < n_chunks; ++c) {
    uint32_t first = c * NESTCL_FTN_CHUNK;
    uint32_t size = n_targets - first < NESTCL_FTN_CHUNK ? n_targets - first : NESTCL_FTN_CHUNK;
    nestcl_conn_words ws;
    nestcl_conn_words_init(&ws, seed, NESTCL_CONN_FTN_SPLIT_ID(c), nestcl_conn_step((uint32_t)p, 3, 0));
    uint64_t a = 0;
    double u = nestcl_conn_uniform(&ws, &a);
    counts[c] = c + 1 == n_chunks ? left : draw_binomial(left, (double)size / (double)(n_targets - first), u);
    left -= counts[c];
  }
}

/* ---- the plan: projections, chunks, threads ------------------------------ */

/* A build thread's own: multapse marks, a synapse to check drawn weights through set_status, and its
   tallies per target (shared_targets); a cache line of its own (the marks' counter changes per unit). */
typedef struct cn_thread {
  _Alignas(64) uint32_t *stamp;
  uint32_t stamp_size, now;
  unsigned char *scratch;
  uint32_t *indegree, *nin;
  double *maxd;
} cn_thread;

/* Where pass 1 puts the synapses: the block's static CSR, or one set of translated synapses. */
typedef struct cn_out {
  uint64_t *row_ptr;
  uint64_t n_rows;
  uint32_t *target;
  float *weight_f;
  double *weight_d;
  uint16_t *delay;
  eng_plastic *pl;
  uint32_t *indegree, *nin; /* per target of the block */
  double *maxd;
  int history; /* the synapses read their targets' spike history */
} cn_out;

/* One draw (a static CSR or a plastic set): its projections, threads and passes. */
typedef struct cn_draw {
  nestcl_engine *e;
  eng_vp *vp;
  eng_block *b;
  cn_proj *pj;
  int n_pj;
  cn_out out;
  int threads;
  cn_thread *th;
  /*
   * Chunks that run at once may share targets (the chunks of different
   * projections onto the block, fixed_outdegree's of one): on more than one
   * thread each keeps its own tallies per target, summed after pass 1.
   */
  int shared_targets;
  int pass;
  atomic_int delay_ref; /* pass 0: -1, or the delay that every other must equal */
  atomic_int delays_differ;
  int64_t tps;
  double ms_per_step;
  int reports; /* this draw's thread 0 is the build's own thread (the progress' reporter) */
} cn_draw;

/* A chunk's failure: the first one stops the chunk; its message is kept for the calling thread. */
static void chunk_fail(cn_chunk *c, int rc)
{
  if (rc && !c->rc) {
    c->rc = rc;
    const char *m = nestcl_last_error();
    size_t len = strlen(m) + 1;
    c->err = malloc(len);
    if (c->err) {
      memcpy(c->err, m, len);
    }
  }
}

/* The first failure of any chunk of any projection, re-raised in the calling thread; 0 if none. */
static int chunks_status(const cn_draw *d)
{
  for (int k = 0; k < d->n_pj; ++k) {
    for (int c = 0; c < d->pj[k].n_chunks; ++c) {
      const cn_chunk *ch = &d->pj[k].ch[c];
      if (ch->rc) {
        return nestcl_set_error(ch->rc, "%s", ch->err ? ch->err : "out of host memory");
      }
    }
  }
  return 0;
}

static int redraw_failed(const char *what, const nestcl_value *v)
{
  return nestcl_set_error(NESTCL_EINVAL, "%s: 1000 draws of normal(%g, %g) fell outside [%g, %g] (NEST's redraw limit)",
                          what, v->a, v->b, v->lo, v->hi);
}

/* Fresh marks for the next unit over size partners. */
static int marks_next(cn_thread *t, uint32_t size)
{
  if (size > t->stamp_size) {
    uint32_t *s = realloc(t->stamp, (size_t)size * sizeof *s);
    if (!s) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
    memset(s + t->stamp_size, 0, (size_t)(size - t->stamp_size) * sizeof *s);
    t->stamp = s;
    t->stamp_size = size;
  }
  if (++t->now == 0) {
    memset(t->stamp, 0, (size_t)t->stamp_size * sizeof *t->stamp);
    t->now = 1;
  }
  return 0;
}

/* Projection q's rule on block b, its units cut into chunks for `threads` threads. */
static int plan_proj(const nestcl_engine *e, const eng_block *b, int p, int threads, uint64_t row0, cn_proj *q)
{
  const eng_projection *pr = &e->desc.projs[p];
  memset(q, 0, sizeof *q);
  q->p = p;
  q->pr = pr;
  q->sp = &e->desc.pops[pr->src];
  q->tp = &e->desc.pops[pr->tgt];
  q->row0 = row0;
  uint32_t lo = (uint32_t)(b->first_gid - q->tp->first);
  nestcl_conn_rule r = {(uint32_t)pr->conn.rule,
                        (uint32_t)p,
                        e->desc.cfg.seed,
                        q->sp->n,
                        q->tp->n,
                        q->sp->first,
                        q->tp->first,
                        lo,
                        lo + b->n,
                        pr->conn.degree,
                        !pr->conn.allow_autapses && pr->src == pr->tgt,
                        0.0};
  q->r = r;
  q->marks = !pr->conn.allow_multapses &&
    (pr->conn.rule == NESTCL_RULE_FIXED_INDEGREE || pr->conn.rule == NESTCL_RULE_FIXED_OUTDEGREE);
  nestcl_conn_units(&q->r, &q->unit0, &q->n_units);
  if ((pr->conn.rule == NESTCL_RULE_PAIRWISE_BERNOULLI && !(pr->conn.p > 0.0)) ||
      (pr->conn.rule == NESTCL_RULE_FIXED_TOTAL_NUMBER && pr->conn.N == 0)) {
    q->n_units = 0;
  }
  if (pr->conn.rule == NESTCL_RULE_PAIRWISE_BERNOULLI) {
    q->r.l1p = log1p(-pr->conn.p);
  }
  uint32_t per = threads > 1 ? (uint32_t)threads * CN_CHUNKS_PER_THREAD : 1u;
  q->n_chunks = (int)(q->n_units < per ? q->n_units : per);
  q->ch = calloc((size_t)(q->n_chunks ? q->n_chunks : 1), sizeof *q->ch);
  q->cnt = calloc((size_t)(q->n_chunks ? q->n_chunks : 1) * q->sp->n, sizeof *q->cnt);
  if (!q->ch || !q->cnt) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory for the build's row counts");
  }
  for (int c = 0; c < q->n_chunks; ++c) {
    q->ch[c].u0 = q->unit0 + (uint32_t)((uint64_t)q->n_units * (uint64_t)c / (uint64_t)q->n_chunks);
    q->ch[c].u1 = q->unit0 + (uint32_t)((uint64_t)q->n_units * (uint64_t)(c + 1) / (uint64_t)q->n_chunks);
  }
  if (pr->conn.rule == NESTCL_RULE_FIXED_TOTAL_NUMBER && q->n_units) {
    uint32_t n = (q->tp->n + NESTCL_FTN_CHUNK - 1) / NESTCL_FTN_CHUNK;
    q->ftn = malloc((size_t)n * sizeof *q->ftn);
    if (!q->ftn) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
    ftn_counts(e->desc.cfg.seed, p, pr->conn.N, q->tp->n, q->ftn);
  }
  if (pr->syn.delay_ms.kind == NESTCL_DIST_CONSTANT) {
    q->delay_const = 1;
    q->delay_steps = (uint16_t)eng_delay_ms_to_steps(pr->syn.delay_ms.a, e->desc.cfg.resolution_ms);
  }
  q->route_const = pr->syn.weight.kind == NESTCL_DIST_CONSTANT;
  if (q->route_const && !pr->sm &&
      (eng_route_spike(q->sp->model, q->tp->model, pr->syn.weight.a, pr->syn.rport, q->tp->K, &q->ch_const,
                       &q->value_const) != 0 ||
       q->ch_const < 0 || (uint32_t)q->ch_const >= q->tp->n_channels)) {
    return nestcl_set_error(NESTCL_EINVAL, "%s rejects a spike of weight %g at rport %ld", q->tp->model->name,
                            pr->syn.weight.a, pr->syn.rport);
  }
  return 0;
}

static void free_projs(cn_proj *pj, int n)
{
  for (int k = 0; k < n; ++k) {
    for (int c = 0; c < pj[k].n_chunks; ++c) {
      free(pj[k].ch[c].err);
    }
    free(pj[k].ch);
    free(pj[k].cnt);
    free(pj[k].ftn);
  }
  free(pj);
}

/* ---- the two passes ------------------------------------------------------ */

/* The delay of synapse j of the unit with streams id: constant, or drawn and checked. */
static int synapse_delay(const cn_draw *d, const cn_proj *q, uint64_t id, uint64_t j, int64_t *steps)
{
  if (q->delay_const) {
    *steps = q->delay_steps;
    return 0;
  }
  const nestcl_value *v = &q->pr->syn.delay_ms;
  double dms = nestcl_conn_value((uint32_t)v->kind, v->a, v->b, v->lo, v->hi, d->e->desc.cfg.seed,
                                 NESTCL_RNG_PURPOSE_CONNECT, id, nestcl_conn_step((uint32_t)q->p, 2, j));
  if (isnan(dms)) {
    return redraw_failed("delay", v);
  }
  *steps = nestcl_conn_delay_steps(dms, d->tps);
  if (*steps < d->e->clock.min_delay || *steps > d->e->clock.max_delay) {
    return nestcl_set_error(NESTCL_EINVAL, "drawn delay %g ms outside [min_delay, max_delay]", dms);
  }
  return 0;
}

/* Pass 0 of one synapse: its row's count, and its delay while the block's delays may still be one value. */
static int count_synapse(cn_draw *d, const cn_proj *q, cn_chunk *c, uint32_t *cnt, uint64_t id, uint64_t j, uint32_t s)
{
  cnt[s]++;
  c->n++;
  if (q->delay_const || atomic_load_explicit(&d->delays_differ, memory_order_relaxed)) {
    return 0;
  }
  int64_t steps;
  int rc = synapse_delay(d, q, id, j, &steps);
  if (rc) {
    return rc;
  }
  int ref = -1;
  if (!atomic_compare_exchange_strong(&d->delay_ref, &ref, (int)steps) && ref != (int)steps) {
    atomic_store_explicit(&d->delays_differ, 1, memory_order_relaxed);
  }
  return 0;
}

/* A drawn weight of a translated synapse, checked through the model's set_status as NEST's Connect does. */
static int check_plastic_weight(const eng_projection *pr, unsigned char *scratch, double w)
{
  unsigned char cp[512];
  if (pr->sm->cp_size > sizeof cp) {
    return nestcl_set_error(NESTCL_EINVAL, "%s: common properties too large", pr->sm->name);
  }
  memcpy(scratch, pr->tmpl, pr->sm->syn_size);
  memcpy(cp, pr->cp, pr->sm->cp_size);
  if (pr->sm->set_status(scratch, cp, "weight", w) != 0) {
    return nestcl_set_error(NESTCL_EINVAL, "%s rejects the drawn weight %g: %s", pr->sm->name, w, nestcl_last_error());
  }
  return 0;
}

/* Pass 1 of one translated synapse at slot `at`: its weight unrouted in the model's per-synapse state. */
static int place_plastic(cn_draw *d, const cn_proj *q, cn_chunk *c, cn_thread *th, uint64_t id, uint64_t j, uint64_t at,
                         uint32_t i, int64_t dl)
{
  eng_plastic *pl = d->out.pl;
  const eng_projection *pr = q->pr;
  double w = pr->syn.weight.a;
  if (pr->syn.weight.kind != NESTCL_DIST_CONSTANT) {
    const nestcl_value *v = &pr->syn.weight;
    w = nestcl_conn_value((uint32_t)v->kind, v->a, v->b, v->lo, v->hi, d->e->desc.cfg.seed, NESTCL_RNG_PURPOSE_CONNECT,
                          id, nestcl_conn_step((uint32_t)q->p, 1, j));
    if (isnan(w)) {
      return redraw_failed("weight", v);
    }
    int rc = check_plastic_weight(pr, th->scratch, w);
    if (rc) {
      return rc;
    }
  }
  pl->target[at] = i;
  if (!q->route_const) {
    memcpy(pl->state + pr->lay.weight_off * pl->nnz + at * sizeof(double), &w, sizeof w);
  }
  if (pl->delay) {
    pl->delay[at] = (uint16_t)dl;
  }
  double reach = pr->max_abs > fabs(w) ? pr->max_abs : fabs(w);
  c->max_abs = reach > c->max_abs ? reach : c->max_abs;
  return 0;
}

/* Pass 1 of one static synapse at slot `at`: the target word (channel, index), the routed weight, the delay. */
static int place_static(cn_draw *d, const cn_proj *q, cn_chunk *c, uint64_t id, uint64_t j, uint64_t at, uint32_t i,
                        int64_t dl)
{
  int ch = q->ch_const;
  double value = q->value_const;
  if (!q->route_const) {
    const eng_projection *pr = q->pr;
    const nestcl_value *v = &pr->syn.weight;
    double w = nestcl_conn_value((uint32_t)v->kind, v->a, v->b, v->lo, v->hi, d->e->desc.cfg.seed,
                                 NESTCL_RNG_PURPOSE_CONNECT, id, nestcl_conn_step((uint32_t)q->p, 1, j));
    if (isnan(w)) {
      return redraw_failed("weight", v);
    }
    if (eng_route_spike(q->sp->model, q->tp->model, w, pr->syn.rport, q->tp->K, &ch, &value) != 0 || ch < 0 ||
        (uint32_t)ch >= q->tp->n_channels) {
      return nestcl_set_error(NESTCL_EINVAL, "%s rejects a spike of weight %g at rport %ld", q->tp->model->name, w,
                              pr->syn.rport);
    }
  }
  d->out.target[at] = ((uint32_t)ch << NESTCL_TARGET_INDEX_BITS) | i;
  if (!q->route_const) {
    if (d->out.weight_d) {
      d->out.weight_d[at] = value;
    } else {
      d->out.weight_f[at] = (float)value;
    }
  }
  if (d->out.delay) {
    d->out.delay[at] = (uint16_t)dl;
  }
  c->max_abs = fabs(value) > c->max_abs ? fabs(value) : c->max_abs;
  return 0;
}

/* Pass 1 of one synapse: its slot at the chunk's cursor in its row, its delay, its placing, its target's tallies. */
static int fill_synapse(cn_draw *d, const cn_proj *q, cn_chunk *c, cn_thread *th, uint32_t *cur, uint64_t id,
                        uint64_t j, uint32_t s, uint32_t i)
{
  int64_t dl;
  int rc = synapse_delay(d, q, id, j, &dl);
  if (rc) {
    return rc;
  }
  uint64_t at = d->out.row_ptr[q->row0 + s] + cur[s]++;
  rc = d->out.pl ? place_plastic(d, q, c, th, id, j, at, i, dl) : place_static(d, q, c, id, j, at, i, dl);
  if (rc) {
    return rc;
  }
  c->n++;
  uint32_t *indegree = d->shared_targets ? th->indegree : d->out.indegree;
  indegree[i]++;
  if (d->out.history) {
    uint32_t *nin = d->shared_targets ? th->nin : d->out.nin;
    double *maxd = d->shared_targets ? th->maxd : d->out.maxd;
    double dms = (double)dl * d->ms_per_step; /* NEST's Time::delay_steps_to_ms */
    nin[i]++;
    maxd[i] = dms > maxd[i] ? dms : maxd[i];
  }
  return 0;
}

/* One chunk of one projection in the current pass: its units' synapses onto the block, in draw order. */
static void draw_chunk(cn_draw *d, cn_proj *q, int ci, cn_thread *th)
{
  /*
   * Its count and largest weight are kept on the thread's stack while it
   * draws: neighbouring chunks' records share cache lines, and other threads
   * draw those chunks at the same time.
   */
  cn_chunk acc = q->ch[ci], *c = &acc;
  uint32_t *cnt = q->cnt + (size_t)ci * q->sp->n;
  const nestcl_conn_rule *r = &q->r;
  uint32_t mark_size = r->rule == NESTCL_CONN_FIXED_INDEGREE ? r->n_src : r->n_tgt;
  int rc = 0;
  for (uint32_t u = c->u0; u < c->u1 && !rc; ++u) {
    if (q->marks && (rc = marks_next(th, mark_size))) {
      break;
    }
    nestcl_conn_iter it;
    nestcl_conn_begin(&it, r, u, q->ftn ? q->ftn[u] : 0);
    uint32_t s, t;
    int unsure = 0;
    while (!rc && nestcl_conn_next(&it, r, &s, &t, &unsure)) {
      if (q->marks) {
        uint32_t m = r->rule == NESTCL_CONN_FIXED_INDEGREE ? s : t;
        if (th->stamp[m] == th->now) {
          continue;
        }
        th->stamp[m] = th->now;
      }
      uint64_t j = it.j;
      nestcl_conn_take(&it, r);
      if (t < r->lo || t >= r->hi) {
        continue;
      }
      rc = d->pass == 0 ? count_synapse(d, q, c, cnt, it.id, j, s)
                        : fill_synapse(d, q, c, th, cnt, it.id, j, s, t - r->lo);
    }
  }
  chunk_fail(c, rc);
  q->ch[ci] = acc;
}

void eng_build_progress(nestcl_engine *e, uint64_t n, int report)
{
  uint64_t done = atomic_fetch_add(&e->stats.build_work, n) + n;
  const nestcl_engine_config *c = &e->desc.cfg;
  if (!report || !c->build_progress) {
    return;
  }
  double now = eng_now();
  if (now - e->stats.build_t0 < 1.0 || now - e->stats.build_reported < 0.5) {
    return;
  }
  e->stats.build_reported = now;
  double f = e->stats.build_work_expected > 0 ? (double)done / e->stats.build_work_expected : 1.0;
  c->build_progress(c->build_progress_arg, f < 1.0 ? f : 1.0, now - e->stats.build_t0);
}

/* One pass over every chunk of every projection, on the build threads (chunks taken dynamically). */
static void run_pass(cn_draw *d, int pass)
{
  d->pass = pass;
  int total = 0;
  for (int k = 0; k < d->n_pj; ++k) {
    total += d->pj[k].n_chunks;
  }
#pragma omp parallel for num_threads(d->threads) if (d->threads > 1) schedule(dynamic, 1)
  for (int w = 0; w < total; ++w) {
    int k = 0, ci = w;
    while (ci >= d->pj[k].n_chunks) {
      ci -= d->pj[k].n_chunks;
      k++;
    }
    cn_proj *q = &d->pj[k];
    int t = d->threads > 1 ? omp_get_thread_num() : 0;
    q->ch[ci].n = 0;
    draw_chunk(d, q, ci, &d->th[t]);
    /* The progress of the build's own thread (thread 0 of the team; with VPs on threads, the first VP's). */
    eng_build_progress(d->e, q->ch[ci].n, t == 0 && d->reports);
  }
}

/* ---- between the passes: rows, cursors, the delays' homogeneity ---------- */

/*
 * Row lengths into row_ptr (then their prefix sums), and each chunk's count
 * turned into its cursor in the row, in the order projections then chunks;
 * rows in parallel. *max_row: the longest row.
 */
static int make_rows(cn_draw *d, uint32_t *max_row)
{
  uint64_t *row_ptr = d->out.row_ptr;
  int64_t n_rows = (int64_t)d->out.n_rows;
  int too_long = 0;
#pragma omp parallel for num_threads(d->threads) if (d->threads > 1) schedule(static) reduction(| : too_long)
  for (int64_t g = 0; g < n_rows; ++g) {
    uint64_t pos = 0;
    for (int k = 0; k < d->n_pj; ++k) {
      const cn_proj *q = &d->pj[k];
      uint64_t s = (uint64_t)g - q->row0;
      if ((uint64_t)g < q->row0 || s >= q->sp->n) {
        continue;
      }
      for (int c = 0; c < q->n_chunks; ++c) {
        uint32_t *x = &q->cnt[(size_t)c * q->sp->n + s];
        uint32_t n = *x;
        *x = (uint32_t)pos;
        pos += n;
      }
    }
    too_long |= pos > UINT32_MAX;
    row_ptr[g + 1] = pos;
  }
  if (too_long) {
    return nestcl_set_error(NESTCL_EINVAL, "a source has more than 2^32 synapses onto one block (use more VPs)");
  }
  row_ptr[0] = 0;
  uint32_t longest = 0;
  for (int64_t g = 0; g < n_rows; ++g) {
    longest = row_ptr[g + 1] > longest ? (uint32_t)row_ptr[g + 1] : longest;
    row_ptr[g + 1] += row_ptr[g];
  }
  *max_row = longest;
  return 0;
}

/*
 * Whether the block's delays are one value: the projections' constants and
 * every delay drawn in pass 0 compared with one reference (exact: all equal
 * it, or two differ). Returns the delay_hom to store.
 */
static uint32_t delay_homogeneity(const cn_draw *d)
{
  if (atomic_load(&d->delays_differ)) {
    return NESTCL_DELAY_PER_SYNAPSE;
  }
  int ref = atomic_load(&d->delay_ref);
  return ref >= 0 ? (uint32_t)ref : (uint32_t)d->e->clock.min_delay;
}

/* The constant delays of the projections, before pass 0 draws the others. */
static void delay_reference(cn_draw *d)
{
  atomic_init(&d->delay_ref, -1);
  atomic_init(&d->delays_differ, 0);
  for (int k = 0; k < d->n_pj; ++k) {
    const cn_proj *q = &d->pj[k];
    if (!q->delay_const) {
      continue;
    }
    int ref = -1;
    if (!atomic_compare_exchange_strong(&d->delay_ref, &ref, (int)q->delay_steps) && ref != (int)q->delay_steps) {
      atomic_store(&d->delays_differ, 1);
    }
  }
}

/* ---- a draw: threads, passes, checks ------------------------------------- */

static int threads_init(cn_draw *d)
{
  d->th = aligned_alloc(64, (size_t)d->threads * sizeof *d->th);
  if (!d->th) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  memset(d->th, 0, (size_t)d->threads * sizeof *d->th);
  uint32_t n = d->b->n ? d->b->n : 1;
  for (int t = 0; t < d->threads; ++t) {
    cn_thread *th = &d->th[t];
    if (d->out.pl) {
      th->scratch = malloc(d->e->desc.projs[d->out.pl->proj].sm->syn_size);
      if (!th->scratch) {
        return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
      }
    }
    if (d->shared_targets) {
      th->indegree = calloc(n, sizeof *th->indegree);
      th->nin = d->out.history ? calloc(n, sizeof *th->nin) : NULL;
      th->maxd = d->out.history ? calloc(n, sizeof *th->maxd) : NULL;
      if (!th->indegree || (d->out.history && (!th->nin || !th->maxd))) {
        return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
      }
    }
  }
  return 0;
}

/* The threads' tallies per target (shared_targets) into the block's; the threads' memory freed. */
static void threads_done(cn_draw *d, int merge)
{
  for (int t = 0; d->th && t < d->threads; ++t) {
    cn_thread *th = &d->th[t];
    for (uint32_t i = 0; merge && d->shared_targets && i < d->b->n; ++i) {
      d->out.indegree[i] += th->indegree[i];
      if (d->out.history) {
        d->out.nin[i] += th->nin[i];
        d->out.maxd[i] = th->maxd[i] > d->out.maxd[i] ? th->maxd[i] : d->out.maxd[i];
      }
    }
    free(th->stamp);
    free(th->scratch);
    free(th->indegree);
    free(th->nin);
    free(th->maxd);
  }
  free(d->th);
  d->th = NULL;
}

/* Synapses counted in pass 0, drawn in pass 1, and the largest |weight| of pass 1. */
static uint64_t chunks_total(const cn_draw *d, double *max_abs)
{
  uint64_t n = 0;
  for (int k = 0; k < d->n_pj; ++k) {
    for (int c = 0; c < d->pj[k].n_chunks; ++c) {
      n += d->pj[k].ch[c].n;
      if (max_abs && d->pj[k].ch[c].max_abs > *max_abs) {
        *max_abs = d->pj[k].ch[c].max_abs;
      }
    }
  }
  return n;
}

/*
 * The constant weights, after pass 1: each row's segment of such a projection
 * (from the previous projection's end to its last chunk's cursor) in one
 * sweep. The scattered writes of pass 1 then touch the targets alone, half
 * the cache lines or less: they bound a build of constant weights (the
 * microcircuit's drawn weights are bound by their draws instead).
 */
static void fill_constant_weights(cn_draw *d)
{
  const eng_projection *pr0 = d->out.pl ? &d->e->desc.projs[d->out.pl->proj] : NULL;
  unsigned char *state = d->out.pl ? d->out.pl->state + pr0->lay.weight_off * d->out.pl->nnz : NULL;
  int64_t n_rows = (int64_t)d->out.n_rows;
#pragma omp parallel for num_threads(d->threads) if (d->threads > 1) schedule(static)
  for (int64_t g = 0; g < n_rows; ++g) {
    uint64_t pos = d->out.row_ptr[g], end = pos;
    for (int k = 0; k < d->n_pj; ++k) {
      const cn_proj *q = &d->pj[k];
      uint64_t s = (uint64_t)g - q->row0;
      if ((uint64_t)g < q->row0 || s >= q->sp->n || q->n_chunks == 0) {
        continue;
      }
      end = d->out.row_ptr[g] + q->cnt[(size_t)(q->n_chunks - 1) * q->sp->n + s];
      for (uint64_t at = pos; q->route_const && at < end; ++at) {
        if (state) {
          memcpy(state + at * sizeof(double), &q->pr->syn.weight.a, sizeof(double));
        } else if (d->out.weight_d) {
          d->out.weight_d[at] = q->value_const;
        } else {
          d->out.weight_f[at] = (float)q->value_const;
        }
      }
      pos = end;
    }
  }
}

/* Both passes of a draw whose projections are planned, with the output's arrays made between them by alloc. */
static int draw_passes(cn_draw *d, int (*alloc)(cn_draw *d, uint64_t nnz, uint32_t delay_hom, uint32_t max_row),
                       double *max_abs, eng_build_times *bt)
{
  double t0 = eng_now();
  delay_reference(d);
  int rc = threads_init(d);
  if (!rc) {
    run_pass(d, 0);
    rc = chunks_status(d);
  }
  double t1 = eng_now();
  uint32_t max_row = 0;
  if (!rc)
    rc = make_rows(d, &max_row);
  uint64_t nnz = d->out.row_ptr[d->out.n_rows];
  if (!rc)
    rc = alloc(d, nnz, delay_homogeneity(d), max_row);
  double t2 = eng_now();
  if (!rc) {
    run_pass(d, 1);
    rc = chunks_status(d);
  }
  if (!rc) {
    fill_constant_weights(d);
  }
  if (!rc && chunks_total(d, max_abs) != nnz) {
    rc = nestcl_set_error(NESTCL_ERUNTIME, "internal: the second pass drew %llu synapses, the first %llu",
                          (unsigned long long)chunks_total(d, NULL), (unsigned long long)nnz);
  }
  threads_done(d, !rc);
  double t3 = eng_now();
  bt->draw_s += (t1 - t0) + (t3 - t2);
  bt->csr_s += t2 - t1;
  return rc;
}

/*
 * Room for one synapse array of the block: the stream's device buffer,
 * staged (stream_upload.c), or host memory. Nothing after an earlier
 * failure in *rc, which keeps the first.
 */
static void *syn_array(cn_draw *d, int staged, nestcl_buffer *buf, eng_stage *st, cl_mem_flags access, const char *what,
                       size_t bytes, int *rc)
{
  if (!staged) {
    void *p = *rc ? NULL : malloc(bytes ? bytes : 1);
    *rc = *rc ? *rc : (p ? 0 : nestcl_set_error(NESTCL_ENOMEM, "out of host memory for %zu bytes of %s", bytes, what));
    return p;
  }
  void *host = NULL;
  if (!*rc) {
    *rc = d->vp->ops->stage(d->e, d->vp, buf, st, NESTCL_MEM_SYNAPSES, access, what, bytes, &host);
  }
  return host;
}

/* The static CSR's arrays for nnz synapses (per-synapse delays unless delay_hom is one value). */
static int alloc_static(cn_draw *d, uint64_t nnz, uint32_t delay_hom, uint32_t max_row)
{
  eng_block *b = d->b;
  size_t wsize = d->e->desc.cfg.weight_type == NESTCL_WEIGHT_DOUBLE ? sizeof(double) : sizeof(float);
  b->nnz = nnz;
  b->max_row = max_row;
  b->delay_hom = delay_hom;
  int rc = 0, st = d->vp->ops->stage != NULL;
  b->target =
    syn_array(d, st, &b->b_target, &b->stage[0], CL_MEM_READ_ONLY, "CSR targets", nnz * sizeof *b->target, &rc);
  b->weight = syn_array(d, st, &b->b_weight, &b->stage[1], CL_MEM_READ_ONLY, "CSR weights", nnz * wsize, &rc);
  if (delay_hom == NESTCL_DELAY_PER_SYNAPSE) {
    b->delay = syn_array(d, st, &b->b_delay, &b->stage[2], CL_MEM_READ_ONLY, "CSR delays", nnz * sizeof *b->delay, &rc);
  } else if (st) {
    rc = rc ? rc
            : nestcl_buffer_alloc(d->e->device.dev, NESTCL_MEM_SYNAPSES, "CSR delays", 0, CL_MEM_READ_ONLY, NULL,
                                  &b->b_delay);
  }
  d->out.target = b->target;
  d->out.weight_f = wsize == sizeof(float) ? b->weight : NULL;
  d->out.weight_d = wsize == sizeof(double) ? b->weight : NULL;
  d->out.delay = b->delay;
  return rc;
}

/* A stream's static CSR is complete: its arrays go to the device while the build goes on. */
static int static_staged(cn_draw *d)
{
  eng_block *b = d->b;
  if (!d->vp->ops->staged) {
    return 0;
  }
  size_t wsize = d->e->desc.cfg.weight_type == NESTCL_WEIGHT_DOUBLE ? sizeof(double) : sizeof(float);
  size_t bytes[3] = {b->nnz * sizeof *b->target, b->nnz * wsize, b->nnz * sizeof *b->delay};
  nestcl_buffer *buf[3] = {&b->b_target, &b->b_weight, &b->b_delay};
  int rc = 0;
  for (int k = 0; k < 3 && !rc; ++k) {
    rc = d->vp->ops->staged(d->e, d->vp, buf[k], &b->stage[k], bytes[k]);
  }
  /* The host's pointers were into mapped memory. */
  b->target = NULL;
  b->weight = NULL;
  b->delay = NULL;
  return rc;
}

/*
 * The arrays of a set of translated synapses for nnz synapses: a stream's
 * staged when they stay resident (stage_plastic), else host memory.
 */
static int alloc_plastic(cn_draw *d, uint64_t nnz, uint32_t delay_hom, uint32_t max_row)
{
  eng_plastic *pl = d->out.pl;
  const eng_projection *pr = &d->e->desc.projs[pl->proj];
  int rc = 0, st = d->vp->ops->stage && d->e->device.stage_plastic;
  pl->nnz = nnz;
  pl->max_row = max_row;
  pl->delay_hom = delay_hom;
  /* The host's copies have room for 8 bytes more: a state of none is still an array. */
  size_t host = st ? 0 : 8;
  pl->target =
    syn_array(d, st, &pl->b_target, &pl->stage[0], CL_MEM_READ_ONLY, "plastic targets", nnz * sizeof *pl->target, &rc);
  pl->state = syn_array(d, st, &pl->b_state, &pl->stage[1], CL_MEM_READ_WRITE, "plastic state",
                        nnz * pr->lay.state_bytes + host, &rc);
  if (delay_hom == NESTCL_DELAY_PER_SYNAPSE) {
    pl->delay =
      syn_array(d, st, &pl->b_delay, &pl->stage[2], CL_MEM_READ_ONLY, "plastic delays", nnz * sizeof *pl->delay, &rc);
  } else if (st) {
    rc = rc ? rc
            : nestcl_buffer_alloc(d->e->device.dev, NESTCL_MEM_SYNAPSES, "plastic delays", 0, CL_MEM_READ_ONLY, NULL,
                                  &pl->b_delay);
  }
  pl->src_state = syn_array(d, st, &pl->b_src_state, &pl->stage[3], CL_MEM_READ_WRITE, "per-source state",
                            (size_t)pl->n_rows * pr->lay.src_bytes + host, &rc);
  return rc;
}

/* A stream's staged plastic set is complete (its state from the templates too): its arrays go to the device. */
static int plastic_staged(nestcl_engine *e, eng_vp *vp, eng_plastic *pl)
{
  const eng_syn_layout *L = &e->desc.projs[pl->proj].lay;
  size_t bytes[4] = {pl->nnz * sizeof *pl->target, pl->nnz * L->state_bytes, pl->nnz * sizeof *pl->delay,
                     (size_t)pl->n_rows * L->src_bytes};
  nestcl_buffer *buf[4] = {&pl->b_target, &pl->b_state, &pl->b_delay, &pl->b_src_state};
  int rc = 0;
  for (int k = 0; k < 4 && !rc; ++k) {
    rc = vp->ops->staged(e, vp, buf[k], &pl->stage[k], bytes[k]);
  }
  pl->target = NULL;
  pl->state = NULL;
  pl->delay = NULL;
  pl->src_state = NULL;
  return rc;
}

/* Plans the projections of one draw: every static one onto the block (plastic_p < 0), or plastic projection plastic_p. */
static int plan_draw(cn_draw *d, int plastic_p)
{
  const nestcl_engine *e = d->e;
  d->pj = calloc((size_t)(e->desc.n_projs ? e->desc.n_projs : 1), sizeof *d->pj);
  if (!d->pj) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  int rc = 0;
  /* An empty block has no static CSR; its plastic sets are empty, but keep their constant delay. */
  for (int p = 0; p < e->desc.n_projs && !rc && (d->b->n > 0 || plastic_p >= 0); ++p) {
    const eng_projection *pr = &e->desc.projs[p];
    if (pr->tgt != d->b->pop || (plastic_p >= 0 ? p != plastic_p : pr->sm != NULL)) {
      continue;
    }
    cn_proj *q = &d->pj[d->n_pj++];
    rc = plan_proj(e, d->b, p, d->threads, plastic_p >= 0 ? 0 : e->desc.pops[pr->src].first, q);
    d->shared_targets = d->threads > 1;
  }
  return rc;
}

static void draw_init(cn_draw *d, nestcl_engine *e, eng_vp *vp, eng_block *b, int threads)
{
  memset(d, 0, sizeof *d);
  d->reports = threads > 1 || omp_get_thread_num() == 0;
  d->e = e;
  d->vp = vp;
  d->b = b;
  d->threads = threads > 0 ? threads : 1;
  d->tps = eng_tics_per_step(e->desc.cfg.resolution_ms);
  d->ms_per_step = eng_delay_ms(e, 1);
}

/* The static CSR of the block (projections without a synapse model), over global source ids. */
static int build_static(nestcl_engine *e, eng_vp *vp, eng_block *b, int threads, uint32_t *indegree, double *max_abs,
                        eng_build_times *bt)
{
  cn_draw d;
  draw_init(&d, e, vp, b, threads);
  d.out.n_rows = e->desc.n_global;
  d.out.indegree = indegree;
  b->row_ptr = calloc(e->desc.n_global + 1, sizeof *b->row_ptr);
  d.out.row_ptr = b->row_ptr;
  int rc = b->row_ptr ? plan_draw(&d, -1) : nestcl_set_error(NESTCL_ENOMEM, "out of host memory for row pointers");
  int drawn = 0;
  if (!rc) {
    double t0 = eng_now();
    cn_device_out o = {b->row_ptr, e->desc.n_global, NULL, indegree, NULL, NULL, 0, 0.0};
    rc = eng_conn_device_draw(e, vp, b, d.pj, d.n_pj, &o, &drawn);
    *max_abs = drawn && o.max_abs > *max_abs ? o.max_abs : *max_abs;
    eng_build_progress(e, drawn ? 2 * b->nnz : 0, d.reports);
    bt->draw_s += drawn ? eng_now() - t0 : 0.0;
  }
  if (!rc && !drawn)
    rc = draw_passes(&d, alloc_static, max_abs, bt);
  if (!rc && !drawn)
    rc = static_staged(&d);
  if (!rc && d.n_pj) {
    bt->device_csrs += drawn;
    bt->host_csrs += !drawn;
  }
  free_projs(d.pj, d.n_pj);
  if (rc) {
    return rc;
  }
  vp->synapses += b->nnz;
  size_t wsize = e->desc.cfg.weight_type == NESTCL_WEIGHT_DOUBLE ? sizeof(double) : sizeof(float);
  vp->ops->account(vp, NESTCL_MEM_SYNAPSES,
                   (e->desc.n_global + 1) * sizeof(uint64_t) + b->nnz * (sizeof(uint32_t) + wsize) +
                     (b->delay ? b->nnz * sizeof(uint16_t) : 0));
  return 0;
}

/* The CSR of translated-synapse projection p onto the block, over the source population's rows. */
static int build_plastic(nestcl_engine *e, eng_vp *vp, eng_block *b, int p, eng_plastic *pl, int threads,
                         cn_out *tallies, double *max_abs, eng_build_times *bt)
{
  const eng_projection *pr = &e->desc.projs[p];
  const eng_population *sp = &e->desc.pops[pr->src];
  cn_draw d;
  draw_init(&d, e, vp, b, threads);
  d.out = *tallies;
  d.out.pl = pl;
  d.out.history = tallies->history && pr->sm->uses_history;
  d.out.n_rows = sp->n;
  pl->proj = p;
  pl->src_first = sp->first;
  pl->n_rows = sp->n;
  pl->row_ptr = calloc((size_t)sp->n + 1, sizeof *pl->row_ptr);
  d.out.row_ptr = pl->row_ptr;
  int rc = pl->row_ptr ? plan_draw(&d, p) : nestcl_set_error(NESTCL_ENOMEM, "out of host memory for row pointers");
  int drawn = 0;
  if (!rc) {
    double t0 = eng_now();
    cn_device_out o = {pl->row_ptr, sp->n, pl, tallies->indegree, tallies->nin, tallies->maxd, d.out.history, 0.0};
    rc = eng_conn_device_draw(e, vp, b, d.pj, d.n_pj, &o, &drawn);
    eng_build_progress(e, drawn ? 2 * pl->nnz : 0, d.reports);
    if (drawn && pl->nnz) {
      double reach = pr->max_abs > o.max_abs ? pr->max_abs : o.max_abs;
      *max_abs = reach > *max_abs ? reach : *max_abs;
    }
    if (drawn) {
      /* The per-source state stays the host's to write (eng_plastic_init_state), staged. */
      pl->src_state = syn_array(&d, 1, &pl->b_src_state, &pl->stage[3], CL_MEM_READ_WRITE, "per-source state",
                                (size_t)pl->n_rows * pr->lay.src_bytes, &rc);
    }
    bt->draw_s += drawn ? eng_now() - t0 : 0.0;
  }
  if (!rc && !drawn)
    rc = draw_passes(&d, alloc_plastic, max_abs, bt);
  bt->device_csrs += !rc && drawn;
  bt->host_csrs += !rc && !drawn;
  free_projs(d.pj, d.n_pj);
  if (!rc) {
    vp->synapses += pl->nnz;
    vp->st.plastic_synapses += pl->nnz;
  }
  return rc;
}

/*
 * The fixed-point ring holds |sum| < 2^31 per slot (nestcl_fixed.h). Bound the
 * worst case of one slot of one neuron: every synapse onto it at the largest
 * weight, plus every drive at its largest count (the inversion table's end
 * times its chunks), and refuse a network that could overflow.
 */
static int check_fixed_range(const nestcl_engine *e, const eng_block *b, const uint32_t *indegree, double max_abs)
{
  uint64_t max_in = 0;
  for (uint32_t i = 0; i < b->n; ++i) {
    max_in = indegree[i] > max_in ? indegree[i] : max_in;
  }
  uint64_t events = max_in;
  for (int k = 0; k < e->desc.n_drives; ++k) {
    const eng_drive *d = &e->desc.drives[k];
    if (d->pop != b->pop) {
      continue;
    }
    double v = fabs(nestcl_fixed_to_double(d->value_fixed));
    max_abs = v > max_abs ? v : max_abs;
    events += d->is_poisson ? (uint64_t)d->kstop * d->chunks : 1u;
  }
  if (!nestcl_fixed_fits(max_abs, events)) {
    return nestcl_set_error(NESTCL_EINVAL,
                            "%s: up to %llu inputs of |w| <= %g per step could overflow the fixed-point ring "
                            "(|sum| must stay below 2^31)",
                            e->desc.pops[b->pop].model->name, (unsigned long long)events, max_abs);
  }
  return 0;
}

/* The block's plastic sets, the targets' tallies for their spike history, and the sets' state from templates. */
static int build_plastic_sets(nestcl_engine *e, eng_vp *vp, eng_block *b, int threads, uint32_t *indegree,
                              double *max_abs, eng_build_times *bt)
{
  int history = 0;
  for (int p = 0; p < e->desc.n_projs; ++p) {
    if (e->desc.projs[p].tgt == b->pop && e->desc.projs[p].sm) {
      b->n_plastic++;
      history |= e->desc.projs[p].sm->uses_history;
    }
  }
  if (!b->n_plastic) {
    return 0;
  }
  cn_out t = {0};
  t.indegree = indegree;
  t.history = history;
  b->plastic = calloc((size_t)b->n_plastic, sizeof *b->plastic);
  t.nin = history ? calloc(b->n ? b->n : 1, sizeof *t.nin) : NULL;
  t.maxd = history ? calloc(b->n ? b->n : 1, sizeof *t.maxd) : NULL;
  int rc = 0;
  if (!b->plastic || (history && (!t.nin || !t.maxd))) {
    rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  for (int p = 0, j = 0; p < e->desc.n_projs && !rc; ++p) {
    if (e->desc.projs[p].tgt == b->pop && e->desc.projs[p].sm) {
      rc = build_plastic(e, vp, b, p, &b->plastic[j++], threads, &t, max_abs, bt);
    }
  }
  if (!rc) {
    rc = eng_plastic_init_state(e, vp, b, t.nin, t.maxd);
  }
  for (int j = 0; j < b->n_plastic && !rc && vp->ops->staged && e->device.stage_plastic; ++j) {
    rc = plastic_staged(e, vp, &b->plastic[j]);
  }
  free(t.nin);
  free(t.maxd);
  return rc;
}

int eng_connect_block(nestcl_engine *e, eng_vp *vp, eng_block *b, int threads, eng_build_times *bt)
{
  uint32_t *indegree = calloc(b->n ? b->n : 1, sizeof *indegree);
  double max_abs = 0.0;
  if (!indegree) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  int rc = build_static(e, vp, b, threads, indegree, &max_abs, bt);
  if (!rc)
    rc = build_plastic_sets(e, vp, b, threads, indegree, &max_abs, bt);
  if (!rc)
    rc = check_fixed_range(e, b, indegree, max_abs);
  free(indegree);
  return rc;
}
