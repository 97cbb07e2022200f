/*
 * Instantiation of the described network (the first simulate()): the
 * partition of every population into weighted contiguous blocks over the VPs
 * (CPU VPs first, then the GPU streams, per MPI rank; partition.c), the
 * neurons' state (defaults, settings, pre_run), the synapses onto each block
 * drawn in the VP that owns the targets into a CSR over global source ids, and
 * the upload of everything a GPU VP needs to stay resident on the device
 * (stream_upload.c, through the VP's table).
 *
 * Draws never depend on the partition: sources of target t in projection p
 * come from the Philox stream (seed, CONNECT; id t, step p<<34 | kind<<32 | j),
 * see engine.h. Memory: per block the CSR keeps row pointers over all global
 * sources (8 bytes x (N + 1), amortised over the block's synapses), a 32-bit
 * target word (channel << 24 | local index), a float or double weight, and a
 * 16-bit delay per synapse only when the block's delays differ.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "engine_internal.h"
#include "engine_kernels_source.h"
#include "nestcl_fixed.h"
#include "nestcl_libm.h"
#include "nestcl_philox.h"
#include "specialise.h"

/* Work-items per spike of the delivery kernel on CPU devices (contiguous chunks). */
#define DELIVER_CPU_WIDTH 1u
#include "nestcl_rt_source.h"
#include "core/nestcl_core.h"

/* ---- neurons (the partition: partition.c) ------------------------------- */

static size_t field_len(const nestcl_field *f, uint32_t K)
{
  return nestcl_field_len(f, K);
}

static int redraw_failed(const char *what, const nestcl_value *v)
{
  return nestcl_set_error(NESTCL_EINVAL, "%s: 1000 draws of normal(%g, %g) fell outside [%g, %g] (NEST's redraw limit)",
                          what, v->a, v->b, v->lo, v->hi);
}

static int build_nodes(nestcl_engine *e, eng_vp *vp, eng_block *b)
{
  const eng_population *p = &e->desc.pops[b->pop];
  const nestcl_model *m = p->model;
  b->fields = calloc((size_t)m->n_fields, sizeof *b->fields);
  if (!b->fields) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  size_t state_bytes = 0;
  for (int f = 0; f < m->n_fields; ++f) {
    size_t bytes = nestcl_field_type_size(m->fields[f].type) * field_len(&m->fields[f], p->K) * b->n;
    b->fields[f] = calloc(bytes ? bytes : 1, 1);
    if (!b->fields[f]) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory (%zu bytes for %s.%s)", bytes, m->name,
                              m->fields[f].member);
    }
    state_bytes += bytes;
  }
  for (uint32_t i = 0; i < b->n; ++i) {
    m->set_defaults(b->fields, b->n, i, p->K);
    uint64_t gid = b->first_gid + i;
    for (int k = 0; k < p->n_settings; ++k) {
      double v = eng_draw(&p->settings[k].v, e->desc.cfg.seed, NESTCL_RNG_PURPOSE_INIT, gid, (uint64_t)k);
      if (isnan(v)) {
        return redraw_failed(p->settings[k].name, &p->settings[k].v);
      }
      if (eng_set_value(m, b->fields, b->n, i, p->K, p->settings[k].name, v) != 0) {
        return nestcl_set_error(NESTCL_EINVAL, "%s neuron %llu: %s = %g rejected: %s", m->name, (unsigned long long)gid,
                                p->settings[k].name, v, nestcl_last_error());
      }
    }
    if (m->init_buffers && m->init_buffers(b->fields, b->n, i, p->K, e->desc.cfg.resolution_ms) != 0) {
      return nestcl_set_error(NESTCL_EINVAL, "%s neuron %llu: init_buffers failed: %s", m->name,
                              (unsigned long long)gid, nestcl_last_error());
    }
    if (m->pre_run(b->fields, b->n, i, p->K, e->desc.cfg.resolution_ms) != 0) {
      return nestcl_set_error(NESTCL_EINVAL, "%s neuron %llu: pre_run failed: %s", m->name, (unsigned long long)gid,
                              nestcl_last_error());
    }
  }
  size_t ring_bytes = (size_t)e->clock.ring_slots * b->n_channels * b->n * sizeof(int64_t);
  b->spike_cap = b->n * (uint32_t)e->clock.min_delay;
  b->ring = calloc(ring_bytes ? ring_bytes : 1, 1);
  b->spikes = calloc(b->spike_cap ? b->spike_cap : 1, sizeof *b->spikes);
  int rc = vp->ops->block_arrays(e, vp, b);
  if (rc) {
    return rc;
  }
  if (p->rec_interval_steps) {
    b->rec_elems = (size_t)e->clock.min_delay * eng_rec_width(m, p->K) * b->n;
    b->rec = calloc(b->rec_elems ? b->rec_elems : 1, sizeof(double));
  }
  if (!b->ring || !b->spikes || (p->rec_interval_steps && !b->rec)) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory (ring of %zu bytes)", ring_bytes);
  }
  vp->ops->account(vp, NESTCL_MEM_STATE, state_bytes);
  vp->ops->account(vp, NESTCL_MEM_RING, ring_bytes);
  vp->ops->account(vp, NESTCL_MEM_RECORDING, b->rec_elems * sizeof(double));
  vp->ops->account(vp, NESTCL_MEM_OTHER, (size_t)b->spike_cap * sizeof *b->spikes);
  return 0;
}

/* ---- connectivity ------------------------------------------------------- */

/* Words of the partner-draw stream of one (id, projection): word a of block a / 4. */
typedef struct wordseq {
  nestcl_philox_key key;
  uint64_t id, base, blk;
  nestcl_philox_ctr buf;
  int have;
} wordseq;

static void wordseq_init(wordseq *w, uint32_t seed, uint64_t id, uint64_t base)
{
  w->key = nestcl_rng_key(seed, NESTCL_RNG_PURPOSE_CONNECT);
  w->id = id;
  w->base = base;
  w->have = 0;
  w->blk = 0;
}

static uint32_t wordseq_get(wordseq *w, uint64_t a)
{
  uint64_t b = a >> 2;
  if (!w->have || b != w->blk) {
    w->buf = nestcl_philox4x32_10(nestcl_rng_counter(w->id, w->base | b), w->key);
    w->blk = b;
    w->have = 1;
  }
  return w->buf.v[a & 3];
}

/* Uniform integer in [0, n) from a 32-bit word (multiply-shift; bias below n / 2^32). */
static inline uint32_t word_below(uint32_t word, uint32_t n)
{
  return (uint32_t)(((uint64_t)word * (uint64_t)n) >> 32);
}

static uint64_t proj_step(int p, int kind, uint64_t j)
{
  return ((uint64_t)p << 34) | ((uint64_t)kind << 32) | (j & 0xffffffffu);
}

/* A uniform in [0, 1) from words a, a + 1 of the stream. */
static double wordseq_uniform(wordseq *w, uint64_t *a)
{
  uint32_t hi = wordseq_get(w, (*a)++);
  uint32_t lo = wordseq_get(w, (*a)++);
  return nestcl_u01_53(hi, lo);
}

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
    wordseq ws;
    wordseq_init(&ws, seed, ((uint64_t)1 << 41) | c, proj_step(p, 3, 0));
    uint64_t a = 0;
    double u = wordseq_uniform(&ws, &a);
    counts[c] = c + 1 == n_chunks ? left : draw_binomial(left, (double)size / (double)(n_targets - first), u);
    left -= counts[c];
  }
}

/*
 * The CSR is built in two passes over the same deterministic draws, so no
 * temporary list of all synapses is ever held: pass 0 counts each source's row
 * (and sees whether all delays are equal), pass 1 redraws and places every
 * synapse at its row's cursor. Within a row synapses stay in target-major
 * draw order.
 */
typedef struct sink {
  int pass;
  uint64_t *row_ptr; /* pass 0: counts at [src + 1] */
  uint64_t *cursor; /* pass 1: next free slot per source */
  uint32_t *target;
  float *weight_f;
  double *weight_d;
  uint16_t *delay; /* pass 1, only when delays differ */
  uint32_t *indegree; /* pass 1: synapses per local target (for the overflow bound) */
  double max_abs; /* pass 1: largest |weight| routed into the ring */
  uint64_t n;
  int have_delay, hom;
  uint16_t delay0;
  /* the projection being drawn: route of a constant weight, computed once */
  int const_route, const_ch;
  double const_value;
  /* translated synapses: the block's CSR of the projection (rows: the source population) */
  eng_plastic *pl;
  uint64_t row_base; /* global id of row 0 */
  unsigned char *scratch; /* a synapse, for checking drawn weights through set_status */
  uint32_t *nin; /* pass 1: synapses that read the history, per local target */
  double *maxd; /* pass 1: largest delay (ms) of those per local target */
  int history; /* the model reads the target's history */
  double ms_per_step;
} sink;

typedef struct marks {
  uint32_t *stamp;
  uint32_t size, now;
} marks;

static int marks_next(marks *m, uint32_t size)
{
  if (size > m->size) {
    uint32_t *s = realloc(m->stamp, (size_t)size * sizeof *s);
    if (!s) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
    memset(s + m->size, 0, (size_t)(size - m->size) * sizeof *s);
    m->stamp = s;
    m->size = size;
  }
  if (++m->now == 0) {
    memset(m->stamp, 0, (size_t)m->size * sizeof *m->stamp);
    m->now = 1;
  }
  return 0;
}

/*
 * One translated synapse (pass 1): its weight drawn as a static one's (the
 * same draw), kept unrouted in the model's per-synapse state; a drawn weight
 * is checked through the model's set_status, as NEST's Connect does.
 */
static int add_plastic(const nestcl_engine *e, sink *k, const eng_projection *pr, int p, uint64_t row_id, uint64_t j,
                       uint64_t row, uint32_t tgt_local, int64_t d)
{
  eng_plastic *pl = k->pl;
  double w = pr->syn.weight.a;
  if (pr->syn.weight.kind != NESTCL_DIST_CONSTANT) {
    w = eng_draw(&pr->syn.weight, e->desc.cfg.seed, NESTCL_RNG_PURPOSE_CONNECT, row_id, proj_step(p, 1, j));
    if (isnan(w)) {
      return redraw_failed("weight", &pr->syn.weight);
    }
    memcpy(k->scratch, pr->tmpl, pr->sm->syn_size);
    unsigned char cp[512];
    if (pr->sm->cp_size > sizeof cp) {
      return nestcl_set_error(NESTCL_EINVAL, "%s: common properties too large", pr->sm->name);
    }
    memcpy(cp, pr->cp, pr->sm->cp_size);
    if (pr->sm->set_status(k->scratch, cp, "weight", w) != 0) {
      return nestcl_set_error(NESTCL_EINVAL, "%s rejects the drawn weight %g: %s", pr->sm->name, w,
                              nestcl_last_error());
    }
  }
  uint64_t at = k->cursor[row]++;
  pl->target[at] = tgt_local;
  memcpy(pl->state + pr->lay.weight_off * pl->nnz + at * sizeof(double), &w, sizeof w);
  if (pl->delay) {
    pl->delay[at] = (uint16_t)d;
  }
  k->indegree[tgt_local]++;
  if (k->history) {
    k->nin[tgt_local]++;
    double dms = (double)d * k->ms_per_step; /* NEST's Time::delay_steps_to_ms */
    k->maxd[tgt_local] = dms > k->maxd[tgt_local] ? dms : k->maxd[tgt_local];
  }
  double reach = pr->max_abs > fabs(w) ? pr->max_abs : fabs(w);
  k->max_abs = reach > k->max_abs ? reach : k->max_abs;
  k->n++;
  return 0;
}

/* One synapse: the weight and delay of the row's j-th synapse, routed through the model. */
static int add_synapse(const nestcl_engine *e, sink *k, const eng_projection *pr, int p, const eng_population *tp,
                       uint64_t row_id, uint64_t j, uint32_t src_gid, uint32_t tgt_local)
{
  int64_t d = k->have_delay ? k->delay0 : 0;
  if (pr->syn.delay_ms.kind != NESTCL_DIST_CONSTANT || !k->have_delay) {
    double dms = eng_draw(&pr->syn.delay_ms, e->desc.cfg.seed, NESTCL_RNG_PURPOSE_CONNECT, row_id, proj_step(p, 2, j));
    if (isnan(dms)) {
      return redraw_failed("delay", &pr->syn.delay_ms);
    }
    d = eng_delay_ms_to_steps(dms, e->desc.cfg.resolution_ms);
    if (d < e->clock.min_delay || d > e->clock.max_delay) {
      return nestcl_set_error(NESTCL_EINVAL, "drawn delay %g ms outside [min_delay, max_delay]", dms);
    }
  }
  uint64_t row = src_gid - k->row_base;
  if (k->pass == 0) {
    if (!k->have_delay) {
      k->have_delay = 1;
      k->delay0 = (uint16_t)d;
    }
    k->hom = k->hom && d == k->delay0;
    k->row_ptr[row + 1]++;
    k->n++;
    return 0;
  }
  if (k->pl) {
    return add_plastic(e, k, pr, p, row_id, j, row, tgt_local, d);
  }
  int ch = k->const_ch;
  double value = k->const_value;
  if (!k->const_route) {
    double w = eng_draw(&pr->syn.weight, e->desc.cfg.seed, NESTCL_RNG_PURPOSE_CONNECT, row_id, proj_step(p, 1, j));
    if (isnan(w)) {
      return redraw_failed("weight", &pr->syn.weight);
    }
    if (eng_route_spike(e->desc.pops[pr->src].model, tp->model, w, pr->syn.rport, tp->K, &ch, &value) != 0 || ch < 0 ||
        (uint32_t)ch >= tp->n_channels) {
      return nestcl_set_error(NESTCL_EINVAL, "%s rejects a spike of weight %g at rport %ld", tp->model->name, w,
                              pr->syn.rport);
    }
  }
  uint64_t at = k->cursor[row]++;
  k->target[at] = ((uint32_t)ch << NESTCL_TARGET_INDEX_BITS) | tgt_local;
  k->indegree[tgt_local]++;
  if (fabs(value) > k->max_abs) {
    k->max_abs = fabs(value);
  }
  if (k->weight_d) {
    k->weight_d[at] = value;
  } else {
    k->weight_f[at] = (float)value;
  }
  if (k->delay) {
    k->delay[at] = (uint16_t)d;
  }
  k->n++;
  return 0;
}

/* One projection drawn onto one block: what every connection rule's draw needs. */
typedef struct draw_ctx {
  const nestcl_engine *e;
  const eng_block *b;
  int p; /* the projection's index: its streams' key */
  sink *c;
  marks *mk;
  const eng_projection *pr;
  const eng_population *sp, *tp;
  uint32_t seed;
  int same; /* source and target are one population (autapses possible) */
} draw_ctx;

static int draw_fixed_indegree(const draw_ctx *x)
{
  const eng_projection *pr = x->pr;
  const eng_population *sp = x->sp;
  marks *mk = x->mk;
  int rc = 0;
  for (uint32_t i = 0; i < x->b->n && !rc; ++i) {
    uint64_t t = x->b->first_gid + i;
    wordseq ws;
    wordseq_init(&ws, x->seed, t, proj_step(x->p, 0, 0));
    if (!pr->conn.allow_multapses && (rc = marks_next(mk, sp->n))) {
      break;
    }
    uint64_t a = 0;
    for (uint32_t j = 0; j < pr->conn.degree && !rc;) {
      uint32_t s = word_below(wordseq_get(&ws, a++), sp->n);
      uint64_t sg = sp->first + s;
      if (!pr->conn.allow_autapses && x->same && sg == t) {
        continue;
      }
      if (!pr->conn.allow_multapses) {
        if (mk->stamp[s] == mk->now) {
          continue;
        }
        mk->stamp[s] = mk->now;
      }
      rc = add_synapse(x->e, x->c, pr, x->p, x->tp, t, j, (uint32_t)sg, i);
      ++j;
    }
  }
  return rc;
}

/* Every block redraws all sources' targets and keeps its own: the draw is keyed by source. */
static int draw_fixed_outdegree(const draw_ctx *x)
{
  const eng_projection *pr = x->pr;
  const eng_population *sp = x->sp, *tp = x->tp;
  marks *mk = x->mk;
  int rc = 0;
  uint64_t lo = x->b->first_gid, hi = x->b->first_gid + x->b->n;
  for (uint32_t s = 0; s < sp->n && !rc; ++s) {
    uint64_t sg = sp->first + s;
    wordseq ws;
    wordseq_init(&ws, x->seed, sg, proj_step(x->p, 0, 0));
    if (!pr->conn.allow_multapses && (rc = marks_next(mk, tp->n))) {
      break;
    }
    uint64_t a = 0;
    for (uint32_t j = 0; j < pr->conn.degree && !rc;) {
      uint32_t t = word_below(wordseq_get(&ws, a++), tp->n);
      uint64_t tg = tp->first + t;
      if (!pr->conn.allow_autapses && x->same && sg == tg) {
        continue;
      }
      if (!pr->conn.allow_multapses) {
        if (mk->stamp[t] == mk->now) {
          continue;
        }
        mk->stamp[t] = mk->now;
      }
      if (tg >= lo && tg < hi) {
        rc = add_synapse(x->e, x->c, pr, x->p, tp, sg, j, (uint32_t)sg, (uint32_t)(tg - lo));
      }
      ++j;
    }
  }
  return rc;
}

static int draw_all_to_all(const draw_ctx *x)
{
  int rc = 0;
  for (uint32_t i = 0; i < x->b->n && !rc; ++i) {
    uint64_t t = x->b->first_gid + i;
    for (uint32_t s = 0; s < x->sp->n && !rc; ++s) {
      uint64_t sg = x->sp->first + s;
      if (!x->pr->conn.allow_autapses && x->same && sg == t) {
        continue;
      }
      rc = add_synapse(x->e, x->c, x->pr, x->p, x->tp, t, s, (uint32_t)sg, i);
    }
  }
  return rc;
}

/* Every block draws the chunks that overlap its targets whole and keeps its own. */
static int draw_fixed_total(const draw_ctx *x)
{
  const eng_projection *pr = x->pr;
  const eng_population *sp = x->sp, *tp = x->tp;
  if (x->b->n == 0 || pr->conn.N == 0) {
    return 0;
  }
  uint32_t n_chunks = (tp->n + NESTCL_FTN_CHUNK - 1) / NESTCL_FTN_CHUNK;
  uint64_t *counts = malloc((size_t)n_chunks * sizeof *counts);
  if (!counts) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  ftn_counts(x->seed, x->p, pr->conn.N, tp->n, counts);
  int rc = 0;
  uint32_t lo = (uint32_t)(x->b->first_gid - tp->first), hi = lo + x->b->n;
  for (uint32_t ch = lo / NESTCL_FTN_CHUNK; ch <= (hi - 1) / NESTCL_FTN_CHUNK && !rc; ++ch) {
    uint32_t first = ch * NESTCL_FTN_CHUNK;
    uint32_t size = tp->n - first < NESTCL_FTN_CHUNK ? tp->n - first : NESTCL_FTN_CHUNK;
    uint64_t row_id = ((uint64_t)1 << 40) | ch;
    wordseq ws;
    wordseq_init(&ws, x->seed, row_id, proj_step(x->p, 0, 0));
    uint64_t a = 0;
    for (uint64_t j = 0; j < counts[ch] && !rc;) {
      uint32_t s = word_below(wordseq_get(&ws, a), sp->n);
      uint32_t t = first + word_below(wordseq_get(&ws, a + 1), size);
      a += 2;
      uint64_t sg = sp->first + s, tg = tp->first + t;
      if (!pr->conn.allow_autapses && x->same && sg == tg) {
        continue;
      }
      if (t >= lo && t < hi) {
        rc = add_synapse(x->e, x->c, pr, x->p, tp, row_id, j, (uint32_t)sg, t - lo);
      }
      ++j;
    }
  }
  free(counts);
  return rc;
}

static int draw_bernoulli(const draw_ctx *x)
{
  const eng_projection *pr = x->pr;
  if (!(pr->conn.p > 0.0)) {
    return 0;
  }
  /* Geometric gaps: the number of sources skipped before the next one taken is floor(ln(1 - u) / ln(1 - p)). */
  double l1p = log1p(-pr->conn.p);
  int rc = 0;
  for (uint32_t i = 0; i < x->b->n && !rc; ++i) {
    uint64_t t = x->b->first_gid + i;
    wordseq ws;
    wordseq_init(&ws, x->seed, t, proj_step(x->p, 0, 0));
    uint64_t a = 0, j = 0;
    double s = -1.0;
    for (;;) {
      double gap = floor(log1p(-wordseq_uniform(&ws, &a)) / l1p);
      s += gap + 1.0;
      if (!(s < (double)x->sp->n)) {
        break;
      }
      uint64_t sg = x->sp->first + (uint64_t)s;
      if (!pr->conn.allow_autapses && x->same && sg == t) {
        continue;
      }
      if ((rc = add_synapse(x->e, x->c, pr, x->p, x->tp, t, j, (uint32_t)sg, i))) {
        break;
      }
      ++j;
    }
  }
  return rc;
}

static int draw_one_to_one(const draw_ctx *x)
{
  int rc = 0;
  for (uint32_t i = 0; i < x->b->n && !rc; ++i) {
    uint64_t t = x->b->first_gid + i;
    uint64_t sg = x->sp->first + (t - x->tp->first);
    if (!x->pr->conn.allow_autapses && x->same) {
      continue;
    }
    rc = add_synapse(x->e, x->c, x->pr, x->p, x->tp, t, 0, (uint32_t)sg, i);
  }
  return rc;
}

static int draw_projection(const nestcl_engine *e, const eng_block *b, int p, sink *c, marks *mk)
{
  const eng_projection *pr = &e->desc.projs[p];
  const eng_population *sp = &e->desc.pops[pr->src], *tp = &e->desc.pops[pr->tgt];
  draw_ctx x = {e, b, p, c, mk, pr, sp, tp, e->desc.cfg.seed, pr->src == pr->tgt};
  c->const_route = pr->syn.weight.kind == NESTCL_DIST_CONSTANT;
  if (c->const_route && !c->pl &&
      (eng_route_spike(sp->model, tp->model, pr->syn.weight.a, pr->syn.rport, tp->K, &c->const_ch, &c->const_value) !=
         0 ||
       c->const_ch < 0 || (uint32_t)c->const_ch >= tp->n_channels)) {
    return nestcl_set_error(NESTCL_EINVAL, "%s rejects a spike of weight %g at rport %ld", tp->model->name,
                            pr->syn.weight.a, pr->syn.rport);
  }
  /* A constant delay is drawn (rounded) once per projection. */
  if (pr->syn.delay_ms.kind == NESTCL_DIST_CONSTANT) {
    int64_t dd = eng_delay_ms_to_steps(pr->syn.delay_ms.a, e->desc.cfg.resolution_ms);
    if (c->pass == 0) {
      c->hom = c->hom && (!c->have_delay || dd == c->delay0);
    }
    c->have_delay = 1;
    c->delay0 = (uint16_t)dd;
  }
  switch (pr->conn.rule) {
  case NESTCL_RULE_FIXED_INDEGREE:
    return draw_fixed_indegree(&x);
  case NESTCL_RULE_FIXED_OUTDEGREE:
    return draw_fixed_outdegree(&x);
  case NESTCL_RULE_ALL_TO_ALL:
    return draw_all_to_all(&x);
  case NESTCL_RULE_FIXED_TOTAL_NUMBER:
    return draw_fixed_total(&x);
  case NESTCL_RULE_PAIRWISE_BERNOULLI:
    return draw_bernoulli(&x);
  case NESTCL_RULE_ONE_TO_ONE:
    return draw_one_to_one(&x);
  }
  return 0;
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

/* The static CSR of the block (projections without a synapse model), over global source ids. */
static int build_static(nestcl_engine *e, eng_vp *vp, eng_block *b, marks *mk, uint32_t *indegree, double *max_abs)
{
  uint64_t N = e->desc.n_global;
  sink k;
  memset(&k, 0, sizeof k);
  k.hom = 1;
  k.indegree = indegree;
  b->row_ptr = calloc(N + 1, sizeof *b->row_ptr);
  if (!b->row_ptr) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory for row pointers");
  }
  k.row_ptr = b->row_ptr;
  int rc = 0;
  for (int pass = 0; pass < 2 && !rc; ++pass) {
    k.pass = pass;
    k.n = 0;
    if (pass == 1) {
      for (uint64_t s = 0; s < N; ++s) {
        uint64_t len = b->row_ptr[s + 1];
        if (len > b->max_row) {
          b->max_row = (uint32_t)len;
        }
        b->row_ptr[s + 1] += b->row_ptr[s];
      }
      b->nnz = b->row_ptr[N];
      size_t wsize = e->desc.cfg.weight_type == NESTCL_WEIGHT_DOUBLE ? sizeof(double) : sizeof(float);
      b->target = malloc((b->nnz ? b->nnz : 1) * sizeof *b->target);
      b->weight = malloc((b->nnz ? b->nnz : 1) * wsize);
      k.cursor = malloc((N ? N : 1) * sizeof *k.cursor);
      if (!k.hom) {
        b->delay = malloc((b->nnz ? b->nnz : 1) * sizeof *b->delay);
      }
      if (!b->target || !b->weight || !k.cursor || (!k.hom && !b->delay)) {
        rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory for %llu synapses", (unsigned long long)b->nnz);
        break;
      }
      memcpy(k.cursor, b->row_ptr, N * sizeof *k.cursor);
      k.target = b->target;
      k.weight_f = wsize == sizeof(float) ? b->weight : NULL;
      k.weight_d = wsize == sizeof(double) ? b->weight : NULL;
      k.delay = b->delay;
      b->delay_hom = k.hom ? (k.have_delay ? k.delay0 : (uint32_t)e->clock.min_delay) : NESTCL_DELAY_PER_SYNAPSE;
    }
    k.have_delay = 0;
    for (int p = 0; p < e->desc.n_projs && !rc && b->n > 0; ++p) {
      if (e->desc.projs[p].tgt == b->pop && !e->desc.projs[p].sm) {
        rc = draw_projection(e, b, p, &k, mk);
      }
    }
    if (!rc && pass == 1 && k.n != b->nnz) {
      rc = nestcl_set_error(NESTCL_ERUNTIME, "internal: the second pass drew %llu synapses, the first %llu",
                            (unsigned long long)k.n, (unsigned long long)b->nnz);
    }
  }
  free(k.cursor);
  *max_abs = k.max_abs > *max_abs ? k.max_abs : *max_abs;
  if (rc) {
    return rc;
  }
  vp->synapses += b->nnz;
  size_t wsize = e->desc.cfg.weight_type == NESTCL_WEIGHT_DOUBLE ? sizeof(double) : sizeof(float);
  vp->ops->account(vp, NESTCL_MEM_SYNAPSES,
                   (N + 1) * sizeof(uint64_t) + b->nnz * (sizeof(uint32_t) + wsize) +
                     (b->delay ? b->nnz * sizeof(uint16_t) : 0));
  return 0;
}

/* The CSR of translated-synapse projection p onto the block, over the source population's rows. */
static int build_plastic(nestcl_engine *e, eng_vp *vp, eng_block *b, int p, eng_plastic *pl, marks *mk,
                         uint32_t *indegree, double *max_abs, uint32_t *nin, double *maxd)
{
  const eng_projection *pr = &e->desc.projs[p];
  const eng_population *sp = &e->desc.pops[pr->src];
  sink k;
  memset(&k, 0, sizeof k);
  k.hom = 1;
  k.indegree = indegree;
  k.nin = nin;
  k.maxd = maxd;
  k.history = pr->sm->uses_history;
  k.ms_per_step = eng_delay_ms(e, 1);
  k.pl = pl;
  k.row_base = sp->first;
  pl->proj = p;
  pl->src_first = sp->first;
  pl->n_rows = sp->n;
  pl->row_ptr = calloc((size_t)sp->n + 1, sizeof *pl->row_ptr);
  k.scratch = malloc(pr->sm->syn_size);
  if (!pl->row_ptr || !k.scratch) {
    free(k.scratch);
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory for row pointers");
  }
  k.row_ptr = pl->row_ptr;
  int rc = 0;
  for (int pass = 0; pass < 2 && !rc; ++pass) {
    k.pass = pass;
    k.n = 0;
    if (pass == 1) {
      for (uint32_t r = 0; r < pl->n_rows; ++r) {
        uint64_t len = pl->row_ptr[r + 1];
        pl->max_row = len > pl->max_row ? (uint32_t)len : pl->max_row;
        pl->row_ptr[r + 1] += pl->row_ptr[r];
      }
      pl->nnz = pl->row_ptr[pl->n_rows];
      pl->target = malloc((pl->nnz ? pl->nnz : 1) * sizeof *pl->target);
      pl->state = malloc(pl->nnz * pr->lay.state_bytes + 8);
      pl->src_state = malloc((size_t)pl->n_rows * pr->lay.src_bytes + 8);
      k.cursor = malloc(((size_t)pl->n_rows + 1) * sizeof *k.cursor);
      if (!k.hom) {
        pl->delay = malloc((pl->nnz ? pl->nnz : 1) * sizeof *pl->delay);
      }
      if (!pl->target || !pl->state || !pl->src_state || !k.cursor || (!k.hom && !pl->delay)) {
        rc =
          nestcl_set_error(NESTCL_ENOMEM, "out of host memory for %llu plastic synapses", (unsigned long long)pl->nnz);
        break;
      }
      memcpy(k.cursor, pl->row_ptr, (size_t)pl->n_rows * sizeof *k.cursor);
      pl->delay_hom = k.hom ? (k.have_delay ? k.delay0 : (uint32_t)e->clock.min_delay) : NESTCL_DELAY_PER_SYNAPSE;
    }
    k.have_delay = 0;
    rc = draw_projection(e, b, p, &k, mk);
    if (!rc && pass == 1 && k.n != pl->nnz) {
      rc = nestcl_set_error(NESTCL_ERUNTIME, "internal: the second pass drew %llu plastic synapses, the first %llu",
                            (unsigned long long)k.n, (unsigned long long)pl->nnz);
    }
  }
  free(k.cursor);
  free(k.scratch);
  *max_abs = k.max_abs > *max_abs ? k.max_abs : *max_abs;
  if (!rc) {
    vp->synapses += pl->nnz;
    vp->st.plastic_synapses += pl->nnz;
  }
  return rc;
}

static int build_synapses(nestcl_engine *e, eng_vp *vp, eng_block *b, marks *mk)
{
  uint32_t *indegree = calloc(b->n ? b->n : 1, sizeof *indegree);
  double max_abs = 0.0;
  if (!indegree) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  int rc = build_static(e, vp, b, mk, indegree, &max_abs);
  int history = 0;
  for (int p = 0; p < e->desc.n_projs; ++p) {
    if (e->desc.projs[p].tgt == b->pop && e->desc.projs[p].sm) {
      b->n_plastic++;
      history |= e->desc.projs[p].sm->uses_history;
    }
  }
  uint32_t *nin = NULL;
  double *maxd = NULL;
  if (!rc && b->n_plastic) {
    b->plastic = calloc((size_t)b->n_plastic, sizeof *b->plastic);
    nin = history ? calloc(b->n ? b->n : 1, sizeof *nin) : NULL;
    maxd = history ? calloc(b->n ? b->n : 1, sizeof *maxd) : NULL;
    if (!b->plastic || (history && (!nin || !maxd))) {
      rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
    for (int p = 0, j = 0; p < e->desc.n_projs && !rc; ++p) {
      if (e->desc.projs[p].tgt == b->pop && e->desc.projs[p].sm) {
        rc = build_plastic(e, vp, b, p, &b->plastic[j++], mk, indegree, &max_abs, nin, maxd);
      }
    }
    if (!rc) {
      rc = eng_plastic_init_state(e, vp, b, nin, maxd);
    }
  }
  if (!rc) {
    rc = check_fixed_range(e, b, indegree, max_abs);
  }
  free(indegree);
  free(nin);
  free(maxd);
  return rc;
}

/* ---- device (a stream's part: stream_upload.c) -------------------------- */

/*
 * The device memory of the streams: everything resident when it fits the
 * budget (the device's memory, or NESTCL_DEVICE_MEMORY_LIMIT, or the config's
 * device_memory, less what is allocated already). Otherwise the plastic
 * synapses go batched: the rest stays resident and the room left is shared
 * by the (VP, projection) pairs as batch slots; a budget that leaves no room
 * for the longest row of some projection is an error.
 */
static int check_device_budget(nestcl_engine *e)
{
  size_t need = 0, plastic = 0;
  int units = 0;
  for (int v = 0; v < e->n_vps; ++v) {
    need += e->vps[v].ops->device_need(e, &e->vps[v], &plastic, &units);
  }
  const nestcl_device_info *info = nestcl_device_get_info(e->device.dev);
  size_t avail = (size_t)info->global_mem_bytes;
  size_t lim = eng_memory_limit_env();
  if (lim < avail) {
    avail = lim;
  }
  if (e->desc.cfg.device_memory > 0 && e->desc.cfg.device_memory < avail) {
    avail = e->desc.cfg.device_memory;
  }
  size_t used = nestcl_device_bytes_total(e->device.dev);
  avail = avail > used ? avail - used : 0;
  if (need <= avail) {
    return 0;
  }
  if (plastic == 0 || need - plastic >= avail) {
    return nestcl_set_error(NESTCL_ENOMEM,
                            "the network needs %zu bytes on device '%s' (%llu synapses) but only %zu bytes are "
                            "available; use fewer neurons, a smaller --gpu-fraction, or more devices",
                            plastic ? need - plastic : need, info->device_name,
                            (unsigned long long)e->stats.local_synapses, avail);
  }
  size_t room = (avail - (need - plastic)) / (size_t)units;
  for (int v = 0; v < e->n_vps; ++v) {
    int rc = e->vps[v].ops->batch(e, &e->vps[v], room);
    if (rc) {
      return rc;
    }
  }
  return 0;
}

/* Parameters equal over a population's GPU neurons become constants of its kernel (specialise.h). */
static int specialisation_options(const nestcl_engine *e, int pop, char *buf, size_t cap)
{
  void *const **sets = malloc((size_t)e->n_vps * sizeof *sets);
  uint32_t *n = malloc((size_t)e->n_vps * sizeof *n);
  if (!sets || !n) {
    free(sets);
    free(n);
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  int k = 0;
  for (int v = 0; v < e->n_vps; ++v) {
    k += e->vps[v].ops->kernel_block(&e->vps[v], pop, &sets[k], &n[k]);
  }
  nestcl_const_options(e->desc.pops[pop].model, sets, n, k, buf, cap);
  free(sets);
  free(n);
  return 0;
}

static int build_programs(nestcl_engine *e)
{
  int rc = 0;
  e->device.model_programs = calloc((size_t)e->desc.n_pops, sizeof *e->device.model_programs);
  char **opts = calloc((size_t)e->desc.n_pops, sizeof *opts);
  if (!e->device.model_programs || !opts) {
    free(opts);
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  for (int p = 0; p < e->desc.n_pops && !rc; ++p) {
    opts[p] = malloc(4096);
    if (!opts[p]) {
      rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
      break;
    }
    if ((rc = specialisation_options(e, p, opts[p], 4096 - 32))) {
      break;
    }
    /* Translated code calls nestcl_glibc_exp(x, NESTCL_LIBM_VARIANT): the variant the C path runs too. */
    size_t used = strlen(opts[p]);
    /* An ODE state vector of A + B K elements gets room for the population's K (NESTCL_K_MAX). */
    snprintf(opts[p] + used, 4096 - used, "%s-DNESTCL_LIBM_VARIANT=%d -DNESTCL_K_MAX=%u", used ? " " : "",
             e->device.libm_fused, e->desc.pops[p].K ? (unsigned)e->desc.pops[p].K : 1u);
    int same = -1;
    for (int q = 0; q < p && same < 0; ++q) {
      if (e->desc.pops[q].model == e->desc.pops[p].model && strcmp(opts[q], opts[p]) == 0) {
        same = q;
      }
    }
    if (same >= 0) {
      e->device.model_programs[p] = e->device.model_programs[same];
      clRetainProgram(e->device.model_programs[p]);
      continue;
    }
    const char *ks = e->desc.pops[p].model->kernel_source;
    size_t len = strlen(nestcl_rt_source) + strlen(ks) + 2;
    char *src = malloc(len);
    if (!src) {
      rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
      break;
    }
    snprintf(src, len, "%s\n%s", nestcl_rt_source, ks);
    rc = nestcl_program_build(e->device.dev, src, opts[p], &e->device.model_programs[p]);
    free(src);
  }
  for (int p = 0; p < e->desc.n_pops; ++p) {
    free(opts[p]);
  }
  free(opts);
  if (rc) {
    return rc;
  }
  size_t len = strlen(nestcl_rt_source) + strlen(nestcl_engine_kernels_source) + 2;
  char *src = malloc(len);
  if (!src) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  snprintf(src, len, "%s\n%s", nestcl_rt_source, nestcl_engine_kernels_source);
  char opt[160];
  snprintf(opt, sizeof opt, "%s%s",
           e->desc.cfg.weight_type == NESTCL_WEIGHT_DOUBLE ? "-DNESTCL_W_T=double -DNESTCL_W_SUFFIX=_d"
                                                           : "-DNESTCL_W_T=float -DNESTCL_W_SUFFIX=_f",
           e->device.deliver_contiguous ? " -DNESTCL_DELIVER_CONTIGUOUS=1" : "");
  rc = nestcl_program_build(e->device.dev, src, opt, &e->device.core_program);
  free(src);
  if (!rc && e->desc.any_plastic) {
    rc = eng_plastic_build_programs(e);
  }
  return rc;
}

/* ---- driver ------------------------------------------------------------- */

static int poisson_table(eng_drive *d, double mu, double exp_neg_mu)
{
  return nestcl_poisson_cdf(mu, exp_neg_mu, &d->cdf, &d->cdf_len, &d->kstop);
}

/* Each drive's target channel, fixed-point value, window in steps and Poisson table. */
static int resolve_drives(nestcl_engine *e)
{
  double h = e->desc.cfg.resolution_ms;
  for (int k = 0; k < e->desc.n_drives; ++k) {
    eng_drive *d = &e->desc.drives[k];
    const eng_population *tp = &e->desc.pops[d->pop];
    double value;
    int rc = d->is_poisson ? eng_route_spike(NULL, tp->model, d->weight, d->rport, tp->K, &d->channel, &value)
                           : tp->model->route_current(d->amplitude, 1.0, 0, tp->K, &d->channel, &value);
    if (rc || d->channel < 0 || (uint32_t)d->channel >= tp->n_channels) {
      return nestcl_set_error(NESTCL_EINVAL, "%s rejects the input of generator %d", tp->model->name, k);
    }
    d->value_fixed = nestcl_fixed_from_double(value);
    d->delay_steps = (int)eng_delay_ms_to_steps(d->delay_ms, h);
    d->start_step = d->start_ms > 0.0 ? eng_ms_to_steps(d->start_ms, h) : -1;
    d->stop_step = isfinite(d->stop_ms) ? eng_ms_to_steps(d->stop_ms, h) : INT64_MAX;
    if (d->is_poisson) {
      nestcl_poisson_param pp;
      if (nestcl_poisson_setup(d->rate_hz * h * 1e-3, &pp) != 0) {
        return nestcl_set_error(NESTCL_EINVAL, "poisson_generator rate %g Hz is too high for one stream", d->rate_hz);
      }
      d->chunks = pp.chunks;
      int rc2 = poisson_table(d, pp.mu, pp.exp_neg_mu);
      if (rc2) {
        return rc2;
      }
    } else {
      d->chunks = 0;
      int rc2 = poisson_table(d, 0.0, 1.0); /* a valid one-entry table for the kernel argument */
      if (rc2) {
        return rc2;
      }
    }
  }
  return 0;
}

/* The VPs of this rank (CPU threads first, then streams), each with one block per population. */
static int partition_vps(nestcl_engine *e)
{
  e->vps = calloc((size_t)e->n_vps, sizeof *e->vps);
  e->stats.vp_stats = calloc((size_t)e->n_vps, sizeof *e->stats.vp_stats);
  if (!e->vps || !e->stats.vp_stats) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  for (int v = 0; v < e->n_vps; ++v) {
    eng_vp *vp = &e->vps[v];
    eng_vp_set_kind(e, vp, v);
    vp->blocks = calloc((size_t)e->desc.n_pops, sizeof *vp->blocks);
    if (!vp->blocks) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
    for (int p = 0; p < e->desc.n_pops; ++p) {
      eng_block *b = &vp->blocks[p];
      uint32_t first, n;
      eng_block_range(e, &e->desc.pops[p], v, e->exchange.rank, e->exchange.n_ranks, &first, &n);
      b->pop = p;
      b->n = n;
      b->first_gid = e->desc.pops[p].first + first;
      b->n_channels = e->desc.pops[p].n_channels;
      if (n > NESTCL_TARGET_INDEX_MASK) {
        return nestcl_set_error(NESTCL_EINVAL,
                                "a VP would hold %u neurons of one population; at most 2^24 (use "
                                "more threads or streams)",
                                n);
      }
      vp->neurons += n;
    }
    vp->st.neurons = vp->neurons;
  }
  return 0;
}

/* The device of the streams, and the delivery kernel's shape on it; nothing without streams. */
static int open_device(nestcl_engine *e)
{
  if (e->desc.cfg.gpu_streams <= 0) {
    return 0;
  }
  /* With plastic synapses each stream gets a second queue, for batch transfers. */
  int rc =
    nestcl_device_open(e->desc.cfg.device, e->desc.cfg.gpu_streams * (e->desc.any_plastic ? 2 : 1), &e->device.dev);
  if (rc) {
    return rc;
  }
  const nestcl_device_info *info = nestcl_device_get_info(e->device.dev);
  /*
   * The delivery kernel's shape (engine_kernels.cl): one work-group per spike,
   * of deliver_width work-items. GPUs (and accelerators): 256 lanes striding
   * through the row, so that neighbouring lanes read neighbouring synapses.
   * CPU devices: contiguous chunks, and DELIVER_CPU_WIDTH work-items per spike
   * (1 was best of 1, 2, 4 on PoCL here: delivery 3.2x faster at scale 0.1 and
   * 4.5x at scale 1 than the former spike x lane kernel with 256 strided lanes
   * and the runtime's choice of work-group, medians of 3). NESTCL_DELIVER_WIDTH
   * and NESTCL_DELIVER_MODE (strided, contiguous) override both, for tuning.
   */
  e->device.deliver_contiguous = strcmp(info->type, "cpu") == 0;
  const char *mode = getenv("NESTCL_DELIVER_MODE");
  if (mode && strcmp(mode, "strided") == 0) {
    e->device.deliver_contiguous = 0;
  } else if (mode && strcmp(mode, "contiguous") == 0) {
    e->device.deliver_contiguous = 1;
  }
  e->device.deliver_width = e->device.deliver_contiguous ? DELIVER_CPU_WIDTH : 256u;
  const char *w = getenv("NESTCL_DELIVER_WIDTH");
  if (w && atoi(w) > 0) {
    e->device.deliver_width = (uint32_t)atoi(w);
  }
  return nestcl_device_require(e->device.dev, "the engine");
}

/* Neurons and synapses: each VP builds its own blocks, in parallel; *t_nodes: when the neurons were done. */
static int build_blocks(nestcl_engine *e, double *t_nodes)
{
  double t = 0.0;
#pragma omp parallel num_threads(e->n_vps)
  {
    marks mk = {NULL, 0, 0};
#pragma omp for schedule(dynamic, 1)
    for (int v = 0; v < e->n_vps; ++v) {
      for (int p = 0; p < e->desc.n_pops && e->vps[v].status == 0; ++p) {
        eng_vp_fail(&e->vps[v], build_nodes(e, &e->vps[v], &e->vps[v].blocks[p]));
      }
    }
#pragma omp single
    t = eng_now();
#pragma omp for schedule(dynamic, 1)
    for (int v = 0; v < e->n_vps; ++v) {
      for (int p = 0; p < e->desc.n_pops && e->vps[v].status == 0; ++p) {
        eng_vp_fail(&e->vps[v], build_synapses(e, &e->vps[v], &e->vps[v].blocks[p], &mk));
      }
    }
    free(mk.stamp);
  }
  *t_nodes = t;
  return eng_vps_status(e);
}

/* Synapse counts per VP, the out-degree of every source and the totals, over every rank. */
static int count_synapses(nestcl_engine *e)
{
  e->stats.local_synapses = 0;
  for (int v = 0; v < e->n_vps; ++v) {
    e->stats.local_synapses += e->vps[v].synapses;
    e->vps[v].st.synapses = e->vps[v].synapses;
  }
  /* Out-degrees over the whole network, for the synaptic event count. */
  e->exchange.out_degree = calloc(e->desc.n_global ? e->desc.n_global : 1, sizeof *e->exchange.out_degree);
  if (!e->exchange.out_degree) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  for (int v = 0; v < e->n_vps; ++v) {
    for (int p = 0; p < e->desc.n_pops; ++p) {
      const eng_block *b = &e->vps[v].blocks[p];
      for (uint64_t s = 0; s < e->desc.n_global; ++s) {
        e->exchange.out_degree[s] += (uint32_t)(b->row_ptr[s + 1] - b->row_ptr[s]);
      }
      for (int j = 0; j < b->n_plastic; ++j) {
        const eng_plastic *pl = &b->plastic[j];
        for (uint32_t r = 0; r < pl->n_rows; ++r) {
          e->exchange.out_degree[pl->src_first + r] += (uint32_t)(pl->row_ptr[r + 1] - pl->row_ptr[r]);
        }
      }
    }
  }
  e->stats.synapses_total = e->stats.local_synapses;
  e->stats.plastic_synapses_total = 0;
  for (int v = 0; v < e->n_vps; ++v) {
    e->stats.plastic_synapses_total += e->vps[v].st.plastic_synapses;
  }
  /* Totals over every rank (each a no-op on one rank). */
  eng_mpi_allreduce(e, &e->stats.plastic_synapses_total, 1, ENG_MPI_U64, ENG_MPI_SUM);
  eng_mpi_allreduce(e, e->exchange.out_degree, (int)e->desc.n_global, ENG_MPI_U32, ENG_MPI_SUM);
  eng_mpi_allreduce(e, &e->stats.synapses_total, 1, ENG_MPI_U64, ENG_MPI_SUM);
  return 0;
}

/* The super step's spike lists: the global one, its gather buffer, the spiking sources, each VP's own. */
static int alloc_spike_lists(nestcl_engine *e)
{
  e->exchange.mpi_counts = calloc(2 * (size_t)e->exchange.n_ranks, sizeof *e->exchange.mpi_counts);
  if (!e->exchange.mpi_counts) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  e->exchange.global_cap = e->desc.n_global * (size_t)e->clock.min_delay;
  e->exchange.global = malloc(2 * e->exchange.global_cap * sizeof *e->exchange.global);
  e->exchange.gather_tmp = malloc(2 * e->exchange.global_cap * sizeof *e->exchange.gather_tmp);
  if (!e->exchange.global || !e->exchange.gather_tmp) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory for the spike lists");
  }
  if (e->desc.any_plastic) {
    e->exchange.src_list =
      malloc(3 * (e->exchange.global_cap ? e->exchange.global_cap : 1) * sizeof *e->exchange.src_list);
    e->exchange.src_lags = malloc((e->exchange.global_cap ? e->exchange.global_cap : 1) * sizeof *e->exchange.src_lags);
    e->exchange.src_q = malloc((e->exchange.global_cap ? e->exchange.global_cap : 1) * sizeof *e->exchange.src_q);
    if (!e->exchange.src_list || !e->exchange.src_lags || !e->exchange.src_q) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory for the spike lists");
    }
  }
  for (int v = 0; v < e->n_vps; ++v) {
    eng_vp *vp = &e->vps[v];
    vp->out_cap = vp->neurons * (size_t)e->clock.min_delay;
    vp->out = malloc(2 * (vp->out_cap ? vp->out_cap : 1) * sizeof *vp->out);
    if (!vp->out) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory for the spike lists");
    }
  }
  return 0;
}

/* The device's part: budget check, programs, Poisson tables, the stream VPs' buffers and blocks, the device loop. */
static int upload_device(nestcl_engine *e)
{
  if (!e->device.dev) {
    return 0;
  }
  int rc = check_device_budget(e);
  if (!rc)
    rc = eng_kernel_profile_open(e);
  if (!rc)
    rc = build_programs(e);
  for (int k = 0; k < e->desc.n_drives && !rc; ++k) {
    eng_drive *d = &e->desc.drives[k];
    rc = nestcl_buffer_alloc(e->device.dev, NESTCL_MEM_OTHER, "poisson table", d->cdf_len * sizeof(double),
                             CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, d->cdf, &d->b_cdf);
  }
  for (int v = 0; v < e->n_vps && !rc; ++v) {
    rc = e->vps[v].ops->upload(e, &e->vps[v]);
  }
  /* The device loop, where it applies (resident.c); its stream VP becomes the resident kind. */
  if (!rc)
    rc = eng_resident_setup(e);
  /* A whole super step as one command buffer, where the device offers them (resident_graph.c). */
  if (!rc && e->device.res.on)
    rc = eng_resident_graph_setup(e, &e->vps[e->device.res.vp]);
  if (!rc && e->device.res.on) {
    eng_vp_set_kind(e, &e->vps[e->device.res.vp], e->device.res.vp);
  }
  return rc;
}

int eng_build(nestcl_engine *e)
{
  double t0 = eng_now();
  if (e->desc.cfg.use_mpi && !eng_mpi_initialised()) {
    return nestcl_set_error(NESTCL_EINVAL, "use_mpi set but MPI is not initialised");
  }
  eng_world(e, &e->exchange.rank, &e->exchange.n_ranks);
  if (e->desc.n_pops == 0) {
    return nestcl_set_error(NESTCL_EINVAL, "no neurons to simulate");
  }
  /* glibc's exp/pow as the host computes them (NEST's results); an unknown libm gets the FMA variant. */
  e->device.libm_fused = nestcl_libm_exp_fused() != 0;
  e->desc.any_plastic = 0;
  for (int p = 0; p < e->desc.n_projs; ++p) {
    e->desc.any_plastic |= e->desc.projs[p].sm != NULL;
  }
  e->n_vps = e->desc.cfg.cpu_threads + e->desc.cfg.gpu_streams;
  uint64_t total_vps = (uint64_t)e->n_vps * (uint64_t)e->exchange.n_ranks;
  if (total_vps > e->desc.n_global) {
    return nestcl_set_error(NESTCL_EINVAL,
                            "more virtual processes (%llu = %d ranks x (%d threads + %d streams)) than "
                            "neurons (%llu)",
                            (unsigned long long)total_vps, e->exchange.n_ranks, e->desc.cfg.cpu_threads,
                            e->desc.cfg.gpu_streams, (unsigned long long)e->desc.n_global);
  }
  int64_t lo, hi;
  eng_delay_steps(e, &lo, &hi);
  e->clock.min_delay = (int)lo;
  e->clock.max_delay = (int)hi;
  e->clock.ring_slots = (int)(lo + hi);

  int rc = resolve_drives(e);
  if (!rc)
    rc = partition_vps(e);
  if (!rc)
    rc = open_device(e);
  if (rc) {
    return rc;
  }
  /* Admission: refuse what cannot fit before building anything (estimate.c). */
  int adm = eng_admit(e);
  if (adm) {
    return adm;
  }

  double t_nodes = 0.0;
  rc = build_blocks(e, &t_nodes);
  if (rc) {
    return rc;
  }
  e->stats.build_nodes_s = t_nodes - t0;
  rc = count_synapses(e);
  if (rc) {
    return rc;
  }
  double t1 = eng_now();
  e->stats.build_conn_s = t1 - t_nodes;

  rc = alloc_spike_lists(e);
  if (!rc)
    rc = upload_device(e);
  if (rc) {
    return rc;
  }
  e->stats.build_upload_s = eng_now() - t1;
  return 0;
}

/* A block's host arrays, device buffers, plastic synapses and kernels (eng_free_built). */
static void free_block(nestcl_engine *e, eng_block *b, const nestcl_model *m)
{
  if (b->fields) {
    for (int f = 0; f < m->n_fields; ++f) {
      free(b->fields[f]);
    }
  }
  free(b->fields);
  free(b->ring);
  free(b->spikes);
  free(b->spike_offsets);
  free(b->rec);
  free(b->row_ptr);
  free(b->target);
  free(b->weight);
  free(b->delay);
  if (e->device.dev) {
    if (b->b_fields) {
      for (int f = 0; f < m->n_fields; ++f) {
        nestcl_buffer_free(e->device.dev, &b->b_fields[f]);
      }
    }
    nestcl_buffer_free(e->device.dev, &b->b_ring);
    nestcl_buffer_free(e->device.dev, &b->b_count);
    nestcl_buffer_free(e->device.dev, &b->b_spikes);
    nestcl_buffer_free(e->device.dev, &b->b_rec);
    nestcl_buffer_free(e->device.dev, &b->b_offsets);
    nestcl_buffer_free(e->device.dev, &b->b_row);
    nestcl_buffer_free(e->device.dev, &b->b_target);
    nestcl_buffer_free(e->device.dev, &b->b_weight);
    nestcl_buffer_free(e->device.dev, &b->b_delay);
  }
  free(b->b_fields);
  eng_plastic_free(e, b);
  if (b->k_update)
    clReleaseKernel(b->k_update);
  if (b->k_deliver)
    clReleaseKernel(b->k_deliver);
  if (b->k_drive)
    clReleaseKernel(b->k_drive);
}

void eng_free_built(nestcl_engine *e)
{
  eng_kernel_profile_close(e);
  for (int v = 0; e->vps && v < e->n_vps; ++v) {
    eng_vp *vp = &e->vps[v];
    for (int p = 0; vp->blocks && p < e->desc.n_pops; ++p) {
      free_block(e, &vp->blocks[p], e->desc.pops[p].model);
    }
    if (e->device.dev) {
      nestcl_buffer_free(e->device.dev, &vp->b_global);
      nestcl_buffer_free(e->device.dev, &vp->b_srcs);
      nestcl_buffer_free(e->device.dev, &vp->b_lags);
    }
    free(vp->blocks);
    free(vp->out);
    free(vp->syn_scratch);
  }
  free(e->vps);
  e->vps = NULL;
  free(e->stats.vp_stats);
  e->stats.vp_stats = NULL;
  if (e->device.model_programs) {
    for (int p = 0; p < e->desc.n_pops; ++p) {
      if (e->device.model_programs[p])
        clReleaseProgram(e->device.model_programs[p]);
    }
  }
  free(e->device.model_programs);
  e->device.model_programs = NULL;
  if (e->device.plastic_programs) {
    for (int p = 0; p < e->desc.n_projs; ++p) {
      if (e->device.plastic_programs[p])
        clReleaseProgram(e->device.plastic_programs[p]);
    }
  }
  free(e->device.plastic_programs);
  e->device.plastic_programs = NULL;
  if (e->device.core_program)
    clReleaseProgram(e->device.core_program);
  e->device.core_program = NULL;
  for (int k = 0; k < e->desc.n_drives; ++k) {
    if (e->device.dev) {
      nestcl_buffer_free(e->device.dev, &e->desc.drives[k].b_cdf);
    }
    free(e->desc.drives[k].cdf);
    e->desc.drives[k].cdf = NULL;
  }
  /* The recorded super step before the kernels and buffers it was recorded with. */
  eng_resident_graph_free(e);
  eng_resident_free(e);
  if (e->device.dev)
    nestcl_device_close(e->device.dev);
  e->device.dev = NULL;
  free(e->exchange.global);
  free(e->exchange.gather_tmp);
  free(e->exchange.out_degree);
  free(e->exchange.src_list);
  free(e->exchange.src_lags);
  free(e->exchange.src_q);
  e->exchange.src_list = e->exchange.src_lags = e->exchange.src_q = NULL;
  free(e->exchange.mpi_counts);
  e->exchange.mpi_counts = NULL;
  e->exchange.global = e->exchange.gather_tmp = e->exchange.out_degree = NULL;
  e->built = 0;
}
