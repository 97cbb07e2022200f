/*
 * connect_kernels.cl: a projection drawn on the device (issue 40;
 * docs/architecture.md, "Building the network"), from the same counter-based
 * streams as the host's build threads (nestcl_connect.h) into the same CSR,
 * bit for bit. The host's two passes (host/src/engine/connect.c), with one
 * work-item per unit when counting and one per chunk of units when placing:
 *
 *   nestcl_conn_count  per unit: its synapses per source row of its chunk
 *                      (atomic counts), its targets' tallies, the delays'
 *                      homogeneity;
 *   nestcl_conn_rows   per source row: the chunks' counts become their
 *                      cursors in the row, after the projections before;
 *   nestcl_conn_fill   per chunk: its units' synapses drawn again and put at
 *                      its cursors, so a row holds them in the order one
 *                      thread would have drawn them.
 *
 * What the host must report with its own message (a redraw that failed, a
 * delay out of range, a pairwise_bernoulli gap the host's log1p might floor
 * otherwise) is a bit in the status word: the host then draws the block itself.
 * The host builds this after nestcl_rt_source and nestcl_connect.h; the
 * projection comes as words and doubles (nestcl_connect.h's indices).
 */

static nestcl_conn_rule conn_rule(__global const ulong *w, __global const double *d)
{
  nestcl_conn_rule r;
  r.rule = (uint)w[NESTCL_CW_RULE];
  r.p = (uint)w[NESTCL_CW_P];
  r.seed = (uint)w[NESTCL_CW_SEED];
  r.n_src = (uint)w[NESTCL_CW_N_SRC];
  r.n_tgt = (uint)w[NESTCL_CW_N_TGT];
  r.src_first = w[NESTCL_CW_SRC_FIRST];
  r.tgt_first = w[NESTCL_CW_TGT_FIRST];
  r.lo = (uint)w[NESTCL_CW_LO];
  r.hi = (uint)w[NESTCL_CW_HI];
  r.degree = (uint)w[NESTCL_CW_DEGREE];
  r.no_autapse = (int)w[NESTCL_CW_NO_AUTAPSE];
  r.l1p = d[NESTCL_CD_L1P];
  return r;
}

/* The delay of synapse j of the unit with streams id, in steps; a failure is a bit in *bad. */
static long conn_delay(__global const ulong *w, __global const double *d, ulong id, ulong j, uint *bad)
{
  uint kind = (uint)w[NESTCL_CW_DELAY_KIND];
  if (kind == NESTCL_CONN_CONSTANT) {
    return (long)w[NESTCL_CW_DELAY_CONST];
  }
  double ms = nestcl_conn_value(kind, d[NESTCL_CD_DELAY_A], d[NESTCL_CD_DELAY_B], d[NESTCL_CD_DELAY_LO],
                                d[NESTCL_CD_DELAY_HI], (uint)w[NESTCL_CW_SEED], NESTCL_RNG_PURPOSE_CONNECT, id,
                                nestcl_conn_step((uint)w[NESTCL_CW_P], 2u, j));
  long lo = (long)w[NESTCL_CW_MIN_DELAY], hi = (long)w[NESTCL_CW_MAX_DELAY];
  if (isnan(ms)) {
    *bad |= NESTCL_CONN_DELAY_REDRAW;
    return lo;
  }
  long steps = nestcl_conn_delay_steps(ms, (long)w[NESTCL_CW_TICS_PER_STEP]);
  if (steps < lo || steps > hi) {
    *bad |= NESTCL_CONN_DELAY_RANGE;
    return lo;
  }
  return steps;
}

/* The targets [*t0, *t1) of the block that unit u draws for (its own: no other unit draws for them). */
static void unit_targets(const nestcl_conn_rule *r, uint u, uint *t0, uint *t1)
{
  if (r->rule == NESTCL_CONN_FIXED_TOTAL_NUMBER) {
    uint first = u * NESTCL_CONN_FTN_CHUNK;
    uint last = first + NESTCL_CONN_FTN_CHUNK < r->n_tgt ? first + NESTCL_CONN_FTN_CHUNK : r->n_tgt;
    *t0 = first > r->lo ? first : r->lo;
    *t1 = last < r->hi ? last : r->hi;
  } else {
    *t0 = u;
    *t1 = u + 1u;
  }
}

/*
 * Pass 0, one work-item per unit: each synapse onto the block counted in its
 * source's row of the unit's chunk (cnt, [chunks][n_src], zeroed), and in its
 * target's tallies (tcount: synapses, tmaxd: the largest delay); drawn delays
 * compared with status' reference (the first one to come), for whether the
 * block's delays are one value.
 */
__kernel void nestcl_conn_count(__global const ulong *w, __global const double *d, __global const ulong *ftn,
                                __global uint *cnt, __global uint *tcount, __global uint *tmaxd, __global int *status)
{
  ulong k = get_global_id(0);
  if (k >= w[NESTCL_CW_UNITS]) {
    return;
  }
  nestcl_conn_rule r = conn_rule(w, d);
  uint u = (uint)(w[NESTCL_CW_UNIT0] + k);
  __global uint *row = cnt + (k / w[NESTCL_CW_PER_CHUNK]) * (ulong)r.n_src;
  uint t0, t1;
  unit_targets(&r, u, &t0, &t1);
  for (uint t = t0; t < t1; ++t) {
    tcount[t - r.lo] = 0u;
    tmaxd[t - r.lo] = 0u;
  }
  int track = w[NESTCL_CW_DELAY_KIND] != NESTCL_CONN_CONSTANT;
  int ref = -1, differ = 0, unsure = 0;
  uint bad = 0u;
  nestcl_conn_iter it;
  nestcl_conn_begin(&it, &r, u, r.rule == NESTCL_CONN_FIXED_TOTAL_NUMBER ? ftn[u] : 0ul);
  uint s, t;
  while (nestcl_conn_next(&it, &r, &s, &t, &unsure)) {
    ulong j = it.j;
    nestcl_conn_take(&it, &r);
    if (t < r.lo || t >= r.hi) {
      continue;
    }
    atomic_inc(&row[s]);
    long dl = conn_delay(w, d, it.id, j, &bad);
    tcount[t - r.lo] += 1u;
    tmaxd[t - r.lo] = (uint)dl > tmaxd[t - r.lo] ? (uint)dl : tmaxd[t - r.lo];
    if (track && !differ) {
      if (ref < 0) {
        int old = atomic_cmpxchg(&status[NESTCL_CONN_STATUS_DELAY_REF], -1, (int)dl);
        ref = old < 0 ? (int)dl : old;
      }
      differ = (int)dl != ref;
    }
  }
  if (differ) {
    atomic_or(&status[NESTCL_CONN_STATUS_DELAYS_DIFFER], 1);
  }
  if (bad || unsure) {
    atomic_or(&status[NESTCL_CONN_STATUS_BITS], (int)(bad | (unsure ? NESTCL_CONN_GAP_UNSURE : 0u)));
  }
}

/*
 * Between the passes, one work-item per source row: the chunks' counts become
 * their cursors in the row, after the synapses of the projections before
 * (row_len[row0 + s + 1], which ends as the row's length).
 */
__kernel void nestcl_conn_rows(__global const ulong *w, __global uint *cnt, __global ulong *row_len)
{
  ulong s = get_global_id(0);
  ulong n_src = w[NESTCL_CW_N_SRC];
  if (s >= n_src) {
    return;
  }
  ulong per = w[NESTCL_CW_PER_CHUNK];
  ulong chunks = (w[NESTCL_CW_UNITS] + per - 1ul) / per;
  ulong g = w[NESTCL_CW_ROW0] + s;
  ulong pos = row_len[g + 1ul];
  for (ulong c = 0; c < chunks; ++c) {
    uint x = cnt[c * n_src + s];
    cnt[c * n_src + s] = (uint)pos; /* the host refuses rows of 2^32 synapses or more */
    pos += x;
  }
  row_len[g + 1ul] = pos;
}

/* A translated synapse's state at slot at: the weight, and the template's other per-synapse fields. */
static void place_plastic(__global const ulong *w, double weight, ulong at, __global uchar *state,
                          __global const ulong *fields, __global const uchar *tmpl)
{
  ulong nnz = w[NESTCL_CW_NNZ];
  vstore8(as_uchar8(weight), 0, state + w[NESTCL_CW_WEIGHT_OFF] * nnz + at * 8ul);
  for (ulong f = 0; f < w[NESTCL_CW_N_FIELDS]; ++f) {
    /* (per-synapse offset, size, offset in the template) */
    ulong off = fields[3ul * f], size = fields[3ul * f + 1ul], from = fields[3ul * f + 2ul];
    for (ulong b = 0; b < size; ++b) {
      state[off * nnz + at * size + b] = tmpl[from + b];
    }
  }
}

/*
 * Pass 1, one work-item per chunk: its units' synapses drawn again and put at
 * the chunk's cursors of their rows (row_ptr: the CSR's row starts): the
 * target word (a static synapse's ring channel by its weight's sign, as the
 * host's eligibility check made sure the model routes it) or index, the
 * weight, the delay when they differ. chunk_max: each chunk's largest
 * |weight|.
 */
__kernel void nestcl_conn_fill(__global const ulong *w, __global const double *d, __global const ulong *ftn,
                               __global const ulong *row_ptr, __global uint *cnt, __global uint *target,
                               __global float *weight_f, __global double *weight_d, __global ushort *delay,
                               __global uchar *state, __global const ulong *fields, __global const uchar *tmpl,
                               __global double *chunk_max, __global int *status)
{
  ulong c = get_global_id(0);
  ulong per = w[NESTCL_CW_PER_CHUNK], units = w[NESTCL_CW_UNITS];
  if (c * per >= units) {
    return;
  }
  nestcl_conn_rule r = conn_rule(w, d);
  __global uint *cur = cnt + c * (ulong)r.n_src;
  int plastic = (int)w[NESTCL_CW_PLASTIC], unsure = 0;
  uint wkind = (uint)w[NESTCL_CW_WEIGHT_KIND], bad = 0u;
  double most = 0.0;
  for (ulong k = c * per; k < (c + 1ul) * per && k < units; ++k) {
    uint u = (uint)(w[NESTCL_CW_UNIT0] + k);
    nestcl_conn_iter it;
    nestcl_conn_begin(&it, &r, u, r.rule == NESTCL_CONN_FIXED_TOTAL_NUMBER ? ftn[u] : 0ul);
    uint s, t;
    while (nestcl_conn_next(&it, &r, &s, &t, &unsure)) {
      ulong j = it.j;
      nestcl_conn_take(&it, &r);
      if (t < r.lo || t >= r.hi) {
        continue;
      }
      long dl = conn_delay(w, d, it.id, j, &bad);
      ulong at = row_ptr[w[NESTCL_CW_ROW0] + s] + cur[s]++;
      double v = d[NESTCL_CD_VALUE_CONST];
      uint ch = (uint)w[NESTCL_CW_CH_CONST];
      if (wkind != NESTCL_CONN_CONSTANT) {
        v = nestcl_conn_value(wkind, d[NESTCL_CD_WEIGHT_A], d[NESTCL_CD_WEIGHT_B], d[NESTCL_CD_WEIGHT_LO],
                              d[NESTCL_CD_WEIGHT_HI], r.seed, NESTCL_RNG_PURPOSE_CONNECT, it.id,
                              nestcl_conn_step(r.p, 1u, j));
        if (isnan(v)) {
          bad |= NESTCL_CONN_WEIGHT_REDRAW;
          v = 0.0;
        }
        ch = (uint)(v > 0.0 ? w[NESTCL_CW_CH_POS] : v < 0.0 ? w[NESTCL_CW_CH_NEG] : w[NESTCL_CW_CH_ZERO]);
      }
      if (plastic) {
        target[at] = t - r.lo;
        place_plastic(w, v, at, state, fields, tmpl);
      } else {
        target[at] = (ch << NESTCL_TARGET_INDEX_BITS) | (t - r.lo);
        if (w[NESTCL_CW_WEIGHT_DOUBLE]) {
          weight_d[at] = v;
        } else {
          weight_f[at] = (float)v;
        }
      }
      if (w[NESTCL_CW_PER_SYNAPSE_DELAY]) {
        delay[at] = (ushort)dl;
      }
      most = fabs(v) > most ? fabs(v) : most;
    }
  }
  chunk_max[c] = most;
  if (bad || unsure) {
    atomic_or(&status[NESTCL_CONN_STATUS_BITS], (int)(bad | (unsure ? NESTCL_CONN_GAP_UNSURE : 0u)));
  }
}
