/*
 * nestcl_connect.h: the connectivity draws of the engine's connection rules,
 * written once and compiled as C (host/src/engine/connect.c: the host's build
 * threads) and as OpenCL C (connect_kernels.cl: a projection drawn on the
 * device), so that both make the same network bit for bit
 * (docs/architecture.md, "Building the network"). The keying is engine.h's:
 * key (seed, NESTCL_RNG_PURPOSE_CONNECT), counter (id, step) with
 * step = p << 34 | kind << 32 | j, kind 0 the partner draws (word a of the
 * stream is word a % 4 of block a / 4), 1 the weight and 2 the delay of the
 * unit's j-th synapse, 3 the split of fixed_total_number over its chunks.
 *
 * A rule's draws come in units, each with its own streams: a target
 * (fixed_indegree, pairwise_bernoulli, all_to_all, one_to_one), a source
 * (fixed_outdegree) or a chunk of NESTCL_FTN_CHUNK targets
 * (fixed_total_number). nestcl_conn_next walks one unit's synapses in draw
 * order; whoever walks them decides nothing but where they go, so any split of
 * the units over threads, work-items or VPs draws the same synapses.
 *
 * Everything here is integer arithmetic, correctly rounded IEEE operations
 * (+ - * / sqrt floor) and nestcl_math.h's log, the same bits in C and OpenCL C,
 * with one exception: pairwise_bernoulli's gaps floor(log1p(-u) / log1p(-p))
 * use the C library's log1p on the host (as the engine always has), which
 * OpenCL C cannot reproduce. The device computes the quotient with
 * nestcl_log1p (both are within 1 ulp of the exact value) and reports a gap
 * whose quotient lies so close to an integer that the two could floor
 * differently (nestcl_conn_gap_unsure); the build then draws that projection
 * on the host. It does not happen in practice: the quotient would have to fall
 * within 2^-40 of an integer.
 */
#ifndef NESTCL_CONNECT_H
#define NESTCL_CONNECT_H

#ifndef __OPENCL_C_VERSION__
#include "nestcl_types.h"
#include "nestcl_math.h"
#include "nestcl_philox.h"
#endif

/* The rules, as nestcl_rule numbers them (engine.h; connect.c checks the two agree). */
#define NESTCL_CONN_FIXED_INDEGREE 0u
#define NESTCL_CONN_FIXED_OUTDEGREE 1u
#define NESTCL_CONN_ALL_TO_ALL 2u
#define NESTCL_CONN_ONE_TO_ONE 3u
#define NESTCL_CONN_FIXED_TOTAL_NUMBER 4u
#define NESTCL_CONN_PAIRWISE_BERNOULLI 5u
/* A value's distribution, as nestcl_dist_kind numbers them. */
#define NESTCL_CONN_CONSTANT 0u
#define NESTCL_CONN_NORMAL 1u
#define NESTCL_CONN_UNIFORM 2u
#define NESTCL_CONN_NORMAL_CLIPPED 3u
/* Targets per chunk of fixed_total_number (engine.h's NESTCL_FTN_CHUNK). */
#define NESTCL_CONN_FTN_CHUNK 256u
/* The id of chunk c's partner, weight and delay streams, and of its share of N. */
#define NESTCL_CONN_FTN_ID(c) ((NESTCL_U64_C(1) << 40) | (nestcl_u64)(c))
#define NESTCL_CONN_FTN_SPLIT_ID(c) ((NESTCL_U64_C(1) << 41) | (nestcl_u64)(c))

NESTCL_INLINE nestcl_u64 nestcl_conn_step(nestcl_u32 p, nestcl_u32 kind, nestcl_u64 j)
{
  return ((nestcl_u64)p << 34) | ((nestcl_u64)kind << 32) | (j & NESTCL_U64_C(0xffffffff));
}

/* The partner words of one (id, projection): word a is word a % 4 of block a / 4, each block made once. */
typedef struct nestcl_conn_words {
  nestcl_philox_key key;
  nestcl_u64 id, base, blk;
  nestcl_philox_ctr buf;
  int have;
} nestcl_conn_words;

NESTCL_INLINE void nestcl_conn_words_init(nestcl_conn_words *w, nestcl_u32 seed, nestcl_u64 id, nestcl_u64 base)
{
  w->key = nestcl_rng_key(seed, NESTCL_RNG_PURPOSE_CONNECT);
  w->id = id;
  w->base = base;
  w->blk = 0;
  w->have = 0;
}

NESTCL_INLINE nestcl_u32 nestcl_conn_word(nestcl_conn_words *w, nestcl_u64 a)
{
  nestcl_u64 b = a >> 2;
  if (!w->have || b != w->blk) {
    w->buf = nestcl_philox4x32_10(nestcl_rng_counter(w->id, w->base | b), w->key);
    w->blk = b;
    w->have = 1;
  }
  return w->buf.v[a & 3u];
}

/* A uniform integer in [0, n) from a 32-bit word (multiply-shift; its bias is below n / 2^32). */
NESTCL_INLINE nestcl_u32 nestcl_conn_below(nestcl_u32 word, nestcl_u32 n)
{
  return (nestcl_u32)(((nestcl_u64)word * (nestcl_u64)n) >> 32);
}

/* A uniform in [0, 1) from words *a, *a + 1. */
NESTCL_INLINE double nestcl_conn_uniform(nestcl_conn_words *w, nestcl_u64 *a)
{
  nestcl_u32 hi = nestcl_conn_word(w, *a);
  nestcl_u32 lo = nestcl_conn_word(w, *a + 1u);
  *a += 2u;
  return nestcl_u01_53(hi, lo);
}

/*
 * A value drawn from the (id, step) stream of purpose: constant a, uniform in
 * [a, b), normal(a, b), or normal(a, b) redrawn until in [lo, hi] (NEST's
 * redraw, bounds included; after 1000 draws outside, NaN, which the caller
 * reports as NEST does). The engine's eng_draw is this function.
 */
NESTCL_INLINE double nestcl_conn_value(nestcl_u32 kind, double a, double b, double lo, double hi, nestcl_u32 seed,
                                       nestcl_u32 purpose, nestcl_u64 id, nestcl_u64 step)
{
  if (kind == NESTCL_CONN_CONSTANT) {
    return a;
  }
  nestcl_rng_stream s = nestcl_stream_init(nestcl_rng_key(seed, purpose), nestcl_rng_counter(id, step));
  if (kind == NESTCL_CONN_UNIFORM) {
    return a + (b - a) * nestcl_stream_uniform(&s);
  }
  if (kind == NESTCL_CONN_NORMAL) {
    return a + b * nestcl_stream_normal(&s);
  }
  if (kind == NESTCL_CONN_NORMAL_CLIPPED) {
    for (int attempt = 0; attempt < 1000; ++attempt) {
      double x = a + b * nestcl_stream_normal(&s);
      if (x >= lo && x <= hi) {
        return x;
      }
    }
    return NAN;
  }
  return a;
}

/*
 * NEST's Time::delay_ms_to_steps for tics_per_step tics of 1 us per step:
 * ld_round(ms * STEPS_PER_MS), not rounded to tics first. The engine's
 * eng_delay_ms_to_steps is this function.
 */
NESTCL_INLINE nestcl_i64 nestcl_conn_delay_steps(double ms, nestcl_i64 tics_per_step)
{
  if (tics_per_step <= 0) {
    return 0;
  }
  double steps_per_ms = 1.0 / ((double)tics_per_step / 1000.0);
  return (nestcl_i64)floor(ms * steps_per_ms + 0.5);
}

/*
 * pairwise_bernoulli's gap before the next source: floor(log1p(-u) / l1p),
 * l1p = log1p(-p) (computed once, on the host). On the device, *unsure is set
 * when the quotient lies within 2^-40 (relative) of an integer, where the C
 * library's log1p, which the host uses, might floor to the other side.
 */
NESTCL_INLINE double nestcl_conn_gap(double u, double l1p, int *unsure)
{
#ifdef __OPENCL_C_VERSION__
  double q = nestcl_log1p(-u) / l1p;
  double f = floor(q);
  /*
   * Both log1p's are negative for u > 0 and 0 for u = 0, and p = 1 (l1p =
   * -inf) gives 0: a quotient below 1 floors to 0 on both sides. Otherwise the
   * two quotients differ by a few ulp at most.
   */
  double margin = 9.094947017729282e-13 * q; /* 2^-40 */
  if ((f > 0.0 && q - f < margin) || f + 1.0 - q < margin) {
    *unsure = 1;
  }
  return f;
#else
  (void)unsure;
  return floor(log1p(-u) / l1p);
#endif
}

/* What the draws of one projection onto one block need (kernel arguments on the device). */
typedef struct nestcl_conn_rule {
  nestcl_u32 rule, p, seed;
  nestcl_u32 n_src, n_tgt; /* the populations' sizes */
  nestcl_u64 src_first, tgt_first; /* global ids of their neuron 0 */
  nestcl_u32 lo, hi; /* the block's targets: indices [lo, hi) of the target population */
  nestcl_u32 degree; /* fixed_indegree, fixed_outdegree */
  int no_autapse; /* autapses forbidden, and source and target are one population */
  double l1p; /* pairwise_bernoulli: log1p(-p) */
} nestcl_conn_rule;

/* The units of a rule onto the block: [*first, *first + *count). */
NESTCL_INLINE void nestcl_conn_units(const nestcl_conn_rule *r, nestcl_u32 *first, nestcl_u32 *count)
{
  if (r->hi <= r->lo) {
    *first = r->lo;
    *count = 0;
  } else if (r->rule == NESTCL_CONN_FIXED_OUTDEGREE) {
    *first = 0;
    *count = r->n_src;
  } else if (r->rule == NESTCL_CONN_FIXED_TOTAL_NUMBER) {
    *first = r->lo / NESTCL_CONN_FTN_CHUNK;
    *count = (r->hi - 1u) / NESTCL_CONN_FTN_CHUNK + 1u - *first;
  } else {
    *first = r->lo;
    *count = r->hi - r->lo;
  }
}

/* One unit's walk through its synapses. */
typedef struct nestcl_conn_iter {
  nestcl_conn_words w;
  nestcl_u64 a; /* the next partner word */
  nestcl_u64 j; /* the index of the unit's next synapse (its weight's and delay's step) */
  nestcl_u64 count; /* synapses the unit draws: the degree, or an ftn chunk's share of N */
  nestcl_u64 id; /* the unit's streams: a target's or source's global id, or the ftn chunk's id */
  nestcl_u32 unit;
  nestcl_u32 first, size; /* fixed_total_number: the chunk's first target and its size */
  double s; /* pairwise_bernoulli: the last source taken */
  int done;
} nestcl_conn_iter;

/* Unit u of the rule; ftn_count: fixed_total_number's synapses of chunk u (else unused). */
NESTCL_INLINE void nestcl_conn_begin(nestcl_conn_iter *it, const nestcl_conn_rule *r, nestcl_u32 u,
                                     nestcl_u64 ftn_count)
{
  it->unit = u;
  it->a = 0;
  it->j = 0;
  it->s = -1.0;
  it->done = 0;
  it->count = r->degree;
  it->first = 0;
  it->size = 0;
  if (r->rule == NESTCL_CONN_FIXED_OUTDEGREE) {
    it->id = r->src_first + u;
  } else if (r->rule == NESTCL_CONN_FIXED_TOTAL_NUMBER) {
    it->id = NESTCL_CONN_FTN_ID(u);
    it->count = ftn_count;
    it->first = u * NESTCL_CONN_FTN_CHUNK;
    it->size = r->n_tgt - it->first < NESTCL_CONN_FTN_CHUNK ? r->n_tgt - it->first : NESTCL_CONN_FTN_CHUNK;
  } else {
    it->id = r->tgt_first + u;
  }
  nestcl_conn_words_init(&it->w, r->seed, it->id, nestcl_conn_step(r->p, 0u, 0u));
}

/*
 * The unit's next candidate: 1 with its source *s and target *t (indices in
 * their populations; *t may lie outside the block, which takes nothing but
 * still consumes the synapse's index); 0 after the last. The caller then
 * calls nestcl_conn_take, or, for a multapse its rule forbids (fixed in- and
 * out-degree without multapses: the host's marks), nothing, and the draw
 * goes on as if the candidate had not been drawn.
 */
NESTCL_INLINE int nestcl_conn_next(nestcl_conn_iter *it, const nestcl_conn_rule *r, nestcl_u32 *s, nestcl_u32 *t,
                                   int *unsure)
{
  for (;;) {
    if (it->done) {
      return 0;
    }
    if (r->rule == NESTCL_CONN_FIXED_INDEGREE || r->rule == NESTCL_CONN_FIXED_OUTDEGREE) {
      if (it->j >= it->count) {
        return 0;
      }
      nestcl_u32 x = nestcl_conn_below(nestcl_conn_word(&it->w, it->a++),
                                       r->rule == NESTCL_CONN_FIXED_INDEGREE ? r->n_src : r->n_tgt);
      *s = r->rule == NESTCL_CONN_FIXED_INDEGREE ? x : it->unit;
      *t = r->rule == NESTCL_CONN_FIXED_INDEGREE ? it->unit : x;
    } else if (r->rule == NESTCL_CONN_FIXED_TOTAL_NUMBER) {
      if (it->j >= it->count) {
        return 0;
      }
      *s = nestcl_conn_below(nestcl_conn_word(&it->w, it->a), r->n_src);
      *t = it->first + nestcl_conn_below(nestcl_conn_word(&it->w, it->a + 1u), it->size);
      it->a += 2u;
    } else if (r->rule == NESTCL_CONN_PAIRWISE_BERNOULLI) {
      /* Geometric gaps: the sources skipped before the next one taken. */
      double u = nestcl_conn_uniform(&it->w, &it->a);
      it->s += nestcl_conn_gap(u, r->l1p, unsure) + 1.0;
      if (!(it->s < (double)r->n_src)) {
        it->done = 1;
        return 0;
      }
      *s = (nestcl_u32)it->s;
      *t = it->unit;
    } else if (r->rule == NESTCL_CONN_ALL_TO_ALL) {
      if (it->a >= r->n_src) {
        return 0;
      }
      *s = (nestcl_u32)it->a++;
      *t = it->unit;
      it->j = *s; /* the synapse's index is its source's */
    } else { /* one_to_one */
      it->done = 1;
      *s = it->unit;
      *t = it->unit;
    }
    if (r->no_autapse && r->src_first + *s == r->tgt_first + *t) {
      if (r->rule == NESTCL_CONN_ONE_TO_ONE) {
        return 0;
      }
      continue; /* redrawn whole, as NEST does; all_to_all and bernoulli just skip it */
    }
    return 1;
  }
}

/* The candidate is a synapse: its index is it->j before the call. */
NESTCL_INLINE void nestcl_conn_take(nestcl_conn_iter *it, const nestcl_conn_rule *r)
{
  if (r->rule != NESTCL_CONN_ALL_TO_ALL && r->rule != NESTCL_CONN_ONE_TO_ONE) {
    it->j += 1u;
  }
}

/*
 * A projection onto a block as the device's kernels get it (connect_kernels.cl,
 * host/src/engine/connect_device.c): integer words and doubles, by these
 * indices, instead of three dozen kernel arguments.
 */
enum nestcl_conn_word_index {
  NESTCL_CW_RULE = 0,
  NESTCL_CW_P,
  NESTCL_CW_SEED,
  NESTCL_CW_N_SRC,
  NESTCL_CW_N_TGT,
  NESTCL_CW_SRC_FIRST,
  NESTCL_CW_TGT_FIRST,
  NESTCL_CW_LO,
  NESTCL_CW_HI,
  NESTCL_CW_DEGREE,
  NESTCL_CW_NO_AUTAPSE,
  NESTCL_CW_UNIT0, /* the units [unit0, unit0 + units), per_chunk of them to a chunk */
  NESTCL_CW_UNITS,
  NESTCL_CW_PER_CHUNK,
  NESTCL_CW_TICS_PER_STEP,
  NESTCL_CW_MIN_DELAY,
  NESTCL_CW_MAX_DELAY,
  NESTCL_CW_DELAY_KIND,
  NESTCL_CW_DELAY_CONST, /* a constant delay's steps */
  NESTCL_CW_WEIGHT_KIND,
  NESTCL_CW_CH_CONST, /* a constant weight's channel (static synapses) */
  NESTCL_CW_CH_POS, /* a drawn weight's channel by its sign (static synapses) */
  NESTCL_CW_CH_NEG,
  NESTCL_CW_CH_ZERO,
  NESTCL_CW_ROW0, /* the CSR's row of source 0 */
  NESTCL_CW_PLASTIC, /* 1: a set of translated synapses (target index, weight into the state) */
  NESTCL_CW_WEIGHT_DOUBLE,
  NESTCL_CW_PER_SYNAPSE_DELAY,
  NESTCL_CW_NNZ,
  NESTCL_CW_WEIGHT_OFF, /* plastic: the weight's byte offset per synapse in the state (times nnz: its array) */
  NESTCL_CW_N_FIELDS, /* plastic: other per-synapse fields, set from the template */
  NESTCL_CW_WORDS
};
enum nestcl_conn_double_index {
  NESTCL_CD_L1P = 0,
  NESTCL_CD_DELAY_A,
  NESTCL_CD_DELAY_B,
  NESTCL_CD_DELAY_LO,
  NESTCL_CD_DELAY_HI,
  NESTCL_CD_WEIGHT_A,
  NESTCL_CD_WEIGHT_B,
  NESTCL_CD_WEIGHT_LO,
  NESTCL_CD_WEIGHT_HI,
  NESTCL_CD_VALUE_CONST, /* a constant weight's routed value (static), or the weight (plastic) */
  NESTCL_CD_DOUBLES
};
/* Bits of a draw's status word: what the host must redo itself, for the message it gives. */
#define NESTCL_CONN_WEIGHT_REDRAW 1u
#define NESTCL_CONN_DELAY_REDRAW 2u
#define NESTCL_CONN_DELAY_RANGE 4u
#define NESTCL_CONN_GAP_UNSURE 8u
/* Status words: the bits, the delay every other must equal (-1: none yet), whether two differ. */
#define NESTCL_CONN_STATUS_BITS 0
#define NESTCL_CONN_STATUS_DELAY_REF 1
#define NESTCL_CONN_STATUS_DELAYS_DIFFER 2
#define NESTCL_CONN_STATUS_WORDS 4

#endif
