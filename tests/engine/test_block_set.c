/*
 * nestcl_block_set (nestcl/block_set.h), what a NEST stream VP runs its
 * blocks through: the same network of two models run three ways must give the
 * same spikes, state, weights and histories bit for bit:
 *   A. each block on its own (nestcl/block.h), as before the sets;
 *   B. the set slice by slice (merged update and delivery), one slice split
 *      into two partial updates as NEST does when Simulate() is not a multiple
 *      of min_delay;
 *   C. the device loop for runs of whole slices, between and after slices
 *      run slice by slice (the transitions NEST makes), with a sync interval
 *      that makes several drains.
 * The network: 60 iaf_psc_alpha and 40 aeif_cond_exp neurons, recurrent
 * static synapses over both (rows are loop ids), device Poisson drives, and
 * stdp_pl_synapse_hom onto the iaf_psc_alpha block, one of whose sources
 * never spikes, so that no history entry is ever pruned and the histories
 * outgrow their first rings (the loop must halt, grow and run again). On
 * top: the set's launches per slice (a network without plastic synapses:
 * two, whatever the number of models), and refusals (rows that are not loop
 * ids). Exit 77 without an OpenCL device. For a device simulator, --slices S and --small: 24
 * iaf_psc_alpha and 16 iaf_psc_exp neurons, the set slice by slice against the loop only.
 * --plastic-shape S: B and C deliver the plastic synapses in shape S (NESTCL_PLASTIC_SHAPE,
 * plastic_dev.h), A in the device's own, so that one shape is checked against the other.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NESTCL_CHECK_FATAL
#include "nestcl/block_set.h"
#include "nestcl_check.h"
#include "nestcl_philox.h"
#include "builtin_models.h"

/* 60 iaf_psc_alpha and 40 aeif_cond_exp neurons; --small: 24 and 16 iaf_psc_exp (a device simulator). */
static uint32_t NA = 60u, NB = 40u;
static const char *model_b = "aeif_cond_exp";
static int small;
#define N (NA + NB)
#define MD 10u
#define SLOTS 40u
#define H 0.1
#define FAN 6u
#define PFAN 4u
#define SILENT (NA - 1u) /* this iaf_psc_alpha neuron gets no input and never spikes */
#define MAX_N 100u
static int slices = 600;
static const char *plastic_shape; /* --plastic-shape: NESTCL_PLASTIC_SHAPE of runs B and C */

static uint32_t draw(uint64_t id, uint64_t k, uint32_t n)
{
  nestcl_rng_stream s = nestcl_stream_init(nestcl_rng_key(11, 3), nestcl_rng_counter(id, k));
  return nestcl_stream_u32(&s) % n;
}

typedef struct net {
  nestcl_block *b[2];
  int set; /* the plastic set on block 0, or -1 */
  size_t n_syn;
  unsigned char *syn, *cp;
  const nestcl_synapse_model *sm;
} net;

/* One block: defaults, a bias current for some neurons, prepared and uploaded. */
static nestcl_block *make_block(nestcl_device *dev, const nestcl_model *m, uint32_t n, uint64_t id_first)
{
  nestcl_block_config c = {m, n, 0, H, MD, SLOTS, 0, 0, 7, id_first, 1, 0};
  nestcl_block *b;
  CHECK(nestcl_block_create(dev, &c, &b) == 0, "create %s: %s", m->name, nestcl_last_error());
  void *const *f = nestcl_block_fields(b);
  for (uint32_t i = 0; i < n; ++i) {
    m->set_defaults(f, n, i, 0);
    if (id_first == 1 && i == SILENT) {
      CHECK(m->set_status(f, n, i, 0, "I_e", -500.0) == 0, "I_e");
    } else if (i % 3 == 0) {
      CHECK(m->set_status(f, n, i, 0, "I_e", 200.0 + 3.0 * i) == 0, "I_e");
    }
    CHECK(!m->init_buffers || m->init_buffers(f, n, i, 0, H) == 0, "init_buffers");
    CHECK(m->pre_run(f, n, i, 0, H) == 0, "pre_run");
  }
  CHECK(nestcl_block_upload(b) == 0, "upload: %s", nestcl_last_error());
  return b;
}

/* Static synapses onto block k from every source (rows are loop ids 0..N), and its Poisson drive. */
static void add_static(net *nw, int k, uint32_t n, const nestcl_model *m)
{
  uint64_t *rp = calloc(N + 1, 8);
  uint32_t *tg = calloc((size_t)N * FAN, 4);
  double *val = calloc((size_t)N * FAN, 8);
  uint16_t *dl = calloc((size_t)N * FAN, 2);
  CHECK(rp && tg && val && dl, "memory");
  uint64_t nnz = 0;
  for (uint32_t r = 0; r < N; ++r) {
    rp[r] = nnz;
    for (uint32_t j = 0; j < FAN; ++j) {
      const uint32_t i = draw(r * 2 + (uint32_t)k, j, n);
      if (k == 0 && i == SILENT) {
        continue;
      }
      const double w = draw(r, 50 + j, 5) == 0 ? -8.0 : 3.0 + draw(r, 90 + j, 8);
      int ch = -1;
      double v = 0;
      CHECK(m->route_spike(w, 0, 0, &ch, &v) == 0 && ch >= 0, "route");
      tg[nnz] = (uint32_t)ch << 24 | i;
      val[nnz] = v;
      dl[nnz++] = (uint16_t)(MD + draw(r, 200 + j, SLOTS - 2 * MD + 1));
    }
  }
  rp[N] = nnz;
  CHECK(nestcl_block_set_synapses(nw->b[k], N, rp, tg, val, dl) == 0, "synapses: %s", nestcl_last_error());
  uint32_t *pt = calloc(n, 4), *salt = calloc(n, 4), np = 0;
  double *pv = calloc(n, 8);
  uint16_t *pd = calloc(n, 2);
  CHECK(pt && salt && pv && pd, "memory");
  for (uint32_t i = 0; i < n; ++i) {
    if (k == 0 && i == SILENT)
      continue;
    int ch = -1;
    double v = 0;
    CHECK(m->route_spike(k == 0 ? 9.0 : 1.5, 0, 0, &ch, &v) == 0, "route");
    pt[np] = (uint32_t)ch << 24 | i;
    pv[np] = v;
    pd[np] = MD;
    salt[np++] = 17;
  }
  CHECK(nestcl_block_add_poisson(nw->b[k], 9000.0, np, pt, pv, pd, salt) == 0, "poisson: %s", nestcl_last_error());
  free(rp);
  free(tg);
  free(val);
  free(dl);
  free(pt);
  free(salt);
  free(pv);
  free(pd);
}

/* stdp_pl_synapse_hom from every source onto block 0 (rows are loop ids), with its neurons' histories. */
static void add_plastic(net *nw)
{
  const nestcl_synapse_model *sm = nw->sm = find_syn("stdp_pl_synapse_hom");
  CHECK(sm, "stdp_pl_synapse_hom");
  uint64_t rp[MAX_N + 1];
  uint32_t *tg = calloc((size_t)N * PFAN, 4), nin[MAX_N] = {0};
  uint16_t *dl = calloc((size_t)N * PFAN, 2);
  nw->syn = calloc((size_t)N * PFAN, sm->syn_size);
  nw->cp = calloc(1, sm->cp_size + 8);
  CHECK(tg && dl && nw->syn && nw->cp, "memory");
  uint64_t nnz = 0;
  for (uint32_t r = 0; r < N; ++r) {
    rp[r] = nnz;
    for (uint32_t j = 0; j < PFAN; ++j) {
      const uint32_t i = draw(5000 + r, j, NA);
      if (i == SILENT)
        continue;
      unsigned char *s = nw->syn + nnz * sm->syn_size;
      sm->set_defaults(s, nw->cp);
      CHECK(sm->set_status(s, nw->cp, "weight", 20.0) == 0 && sm->set_status(s, nw->cp, "alpha", 0.0513) == 0 &&
              sm->set_status(s, nw->cp, "lambda", 0.1) == 0,
            "stdp params");
      tg[nnz] = i;
      dl[nnz++] = (uint16_t)(MD + draw(r, 300 + j, 11));
      nin[i]++;
    }
  }
  rp[N] = nnz;
  nw->n_syn = nnz;
  CHECK(nestcl_block_history(nw->b[0], 20.0, 110.0, 4096) == 0, "history: %s", nestcl_last_error());
  for (uint32_t i = 0; i < NA; ++i) {
    nestcl_history_state st = {0.0, 0.0, -1.0, 2.0, nin[i], 0};
    CHECK(nestcl_block_history_set(nw->b[0], i, &st, NULL) == 0, "history_set: %s", nestcl_last_error());
  }
  CHECK(nestcl_block_add_plastic(nw->b[0], sm, nw->cp, 0, N, rp, tg, dl, nw->syn, &nw->set) == 0, "plastic: %s",
        nestcl_last_error());
  free(tg);
  free(dl);
}

static void make_net(nestcl_device *dev, net *nw, int plastic)
{
  memset(nw, 0, sizeof *nw);
  nw->set = -1;
  const nestcl_model *ma = find_model("iaf_psc_alpha"), *mb = find_model(model_b);
  CHECK(ma && mb, "models");
  nw->b[0] = make_block(dev, ma, NA, 1);
  nw->b[1] = make_block(dev, mb, NB, 1 + NA);
  add_static(nw, 0, NA, ma);
  add_static(nw, 1, NB, mb);
  if (plastic)
    add_plastic(nw);
}

static void free_net(net *nw)
{
  nestcl_block_destroy(nw->b[0]);
  nestcl_block_destroy(nw->b[1]);
  free(nw->syn);
  free(nw->cp);
}

/* The recorded run: every spike (block, neuron, step) in NEST's order, and the rows for the next slice. */
typedef struct run {
  nestcl_loop_spike *sp;
  size_t n, cap;
  uint32_t rows[MAX_N * MD], lags[MAX_N * MD], n_rows;
} run;

static void keep(run *r, uint32_t block, uint32_t index, int64_t step)
{
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 4096;
    r->sp = realloc(r->sp, r->cap * sizeof *r->sp);
    CHECK(r->sp, "memory");
  }
  r->sp[r->n++] = (nestcl_loop_spike){block, index, step};
}

static int cmp_pair(const void *x, const void *y)
{
  const nestcl_spike *a = x, *b = y;
  if (a->index != b->index)
    return a->index < b->index ? -1 : 1;
  return a->lag < b->lag ? -1 : (a->lag > b->lag);
}

/* After an update of [from, to): each block's spikes in NEST's order, kept and made rows (loop ids). */
static void take_spikes(net *nw, run *r, int64_t origin)
{
  for (uint32_t k = 0; k < 2; ++k) {
    const nestcl_spike *sp;
    uint32_t ns;
    nestcl_block_spikes(nw->b[k], &sp, &ns);
    nestcl_spike *s = malloc((ns + 1) * sizeof *s);
    CHECK(s, "memory");
    memcpy(s, sp, ns * sizeof *s);
    qsort(s, ns, sizeof *s, cmp_pair);
    for (uint32_t q = 0; q < ns; ++q) {
      keep(r, k, s[q].index, origin + s[q].lag);
      r->rows[r->n_rows] = s[q].index + (k ? NA : 0);
      r->lags[r->n_rows++] = s[q].lag;
    }
    free(s);
  }
}

/* A slice's rows (the last slice's spikes) into the blocks, as NEST delivers at a slice's start. */
static void deliver(net *nw, nestcl_block_set *set, run *r, int64_t origin)
{
  if (set) {
    CHECK(nestcl_block_set_deliver(set, origin - MD, r->rows, r->lags, r->n_rows) == 0, "set deliver: %s",
          nestcl_last_error());
  } else {
    for (int k = 0; k < 2; ++k)
      CHECK(nestcl_block_deliver(nw->b[k], origin - MD, r->rows, r->lags, r->n_rows) == 0, "deliver: %s",
            nestcl_last_error());
  }
  if (nw->set >= 0)
    CHECK(nestcl_block_deliver_plastic(nw->b[0], nw->set, origin - MD, r->rows, r->lags, r->n_rows) == 0,
          "deliver plastic: %s", nestcl_last_error());
  r->n_rows = 0;
}

/* Lags [from, to) of the slice at origin, slice by slice: each block alone (set NULL) or the set. */
static void slice_part(net *nw, nestcl_block_set *set, run *r, int64_t origin, int from, int to)
{
  if (from == 0)
    deliver(nw, set, r, origin);
  if (set) {
    CHECK(nestcl_block_set_update_enqueue(set, origin, from, to) == 0 && nestcl_block_set_finish(set) == 0 &&
            nestcl_block_set_collect(set) == 0,
          "set update: %s", nestcl_last_error());
  } else {
    for (int k = 0; k < 2; ++k)
      CHECK(nestcl_block_update(nw->b[k], origin, from, to) == 0, "update: %s", nestcl_last_error());
  }
  take_spikes(nw, r, origin);
}

/* The loop's spikes of its last drain, kept. */
static void take_loop(nestcl_block_set *set, run *r)
{
  const nestcl_loop_spike *sp;
  size_t n;
  nestcl_block_set_loop_spikes(set, &sp, &n);
  for (size_t k = 0; k < n; ++k)
    keep(r, sp[k].block, sp[k].index, sp[k].step);
}

/* Slices [s0, s1) in the device loop (rows of the slice before it, if any, delivered first). */
static void loop_run(net *nw, nestcl_block_set *set, run *r, int s0, int s1, uint32_t k)
{
  CHECK(nestcl_block_set_loop_begin(set, k) == 0, "loop begin: %s", nestcl_last_error());
  deliver(nw, set, r, (int64_t)s0 * MD);
  for (int sl = s0; sl < s1; ++sl) {
    int drained = 0;
    CHECK(nestcl_block_set_loop_slice(set, (int64_t)sl * MD, &drained) == 0, "loop slice %d: %s", sl,
          nestcl_last_error());
    if (drained)
      take_loop(set, r);
  }
  CHECK(nestcl_block_set_loop_drain(set) == 0, "loop drain: %s", nestcl_last_error());
  take_loop(set, r);
  /* The last slice's spikes are the next slice's to deliver (NEST's exchange), as slice by slice. */
  const int64_t last = (int64_t)(s1 - 1) * MD;
  for (size_t k = 0; k < r->n; ++k) {
    if (r->sp[k].step >= last) {
      r->rows[r->n_rows] = r->sp[k].index + (r->sp[k].block ? NA : 0);
      r->lags[r->n_rows++] = (uint32_t)(r->sp[k].step - last);
    }
  }
  CHECK(nestcl_block_set_loop_end(set) == 0, "loop end: %s", nestcl_last_error());
}

/* Mode 0: blocks alone; 1: the set slice by slice; 2: the set with the device loop between slice-by-slice runs. */
static void simulate(net *nw, nestcl_block_set *set, run *r, int mode)
{
  for (int sl = 0; sl < slices;) {
    const int64_t origin = (int64_t)sl * MD;
    if (mode == 2 && ((sl >= 20 && sl < slices / 3) || sl >= slices / 2)) {
      const int end = sl < slices / 3 ? slices / 3 : slices;
      loop_run(nw, set, r, sl, end, 37);
      sl = end;
      continue;
    }
    if (sl == 7 || sl == slices / 3 + 2) { /* a slice in two parts */
      slice_part(nw, mode ? set : NULL, r, origin, 0, 3);
      slice_part(nw, mode ? set : NULL, r, origin, 3, MD);
    } else {
      slice_part(nw, mode ? set : NULL, r, origin, 0, MD);
    }
    ++sl;
  }
}

/* Everything a run leaves: fields, synapses, histories; compared with run 0's. */
static int compare(net *a, net *b, const char *what)
{
  int bad = 0;
  for (int k = 0; k < 2; ++k) {
    CHECK(nestcl_block_download(a->b[k]) == 0 && nestcl_block_download(b->b[k]) == 0, "download");
    const nestcl_model *m = find_model(k ? model_b : "iaf_psc_alpha");
    void *const *fa = nestcl_block_fields(a->b[k]), *const *fb = nestcl_block_fields(b->b[k]);
    const uint32_t n = k ? NB : NA;
    for (int f = 0; f < m->n_fields; ++f) {
      const size_t bytes = nestcl_field_type_size(m->fields[f].type) * nestcl_field_len(&m->fields[f], 0) * n;
      if (memcmp(fa[f], fb[f], bytes) != 0) {
        printf("%s: block %d field %s differs\n", what, k, m->fields[f].member);
        bad = 1;
      }
    }
  }
  if (a->set >= 0) {
    unsigned char *sa = malloc(a->n_syn * a->sm->syn_size + 1), *sb = malloc(b->n_syn * b->sm->syn_size + 1);
    CHECK(sa && sb && nestcl_block_plastic_read(a->b[0], a->set, sa) == 0 &&
            nestcl_block_plastic_read(b->b[0], b->set, sb) == 0,
          "plastic read");
    if (memcmp(sa, sb, a->n_syn * a->sm->syn_size) != 0) {
      printf("%s: synapses differ\n", what);
      bad = 1;
    }
    free(sa);
    free(sb);
    CHECK(nestcl_block_history_read(a->b[0]) == 0 && nestcl_block_history_read(b->b[0]) == 0, "history read");
    for (uint32_t i = 0; i < NA; ++i) {
      nestcl_history_state x, y;
      nestcl_history_entry ex[4096], ey[4096];
      CHECK(nestcl_block_history_get(a->b[0], i, &x, ex) == 0 && nestcl_block_history_get(b->b[0], i, &y, ey) == 0,
            "history get");
      if (memcmp(&x, &y, sizeof x) != 0 || memcmp(ex, ey, x.n_entries * sizeof *ex) != 0) {
        printf("%s: neuron %u's history differs (%u/%u entries, Kminus %.17g/%.17g, last %g/%g, nin %u/%u)\n", what, i,
               x.n_entries, y.n_entries, x.Kminus, y.Kminus, x.last_spike, y.last_spike, x.n_incoming, y.n_incoming);
        for (uint32_t q = 0; q < x.n_entries && q < y.n_entries && getenv("NESTCL_TEST_VERBOSE"); ++q)
          printf("   %g %g %u | %g %g %u\n", ex[q].t, ex[q].kminus, ex[q].access, ey[q].t, ey[q].kminus, ey[q].access);
        bad = 1;
      }
    }
  }
  return bad;
}

static int same_spikes(const run *a, const run *b, const char *what)
{
  if (a->n != b->n) {
    printf("%s: %zu spikes against %zu\n", what, b->n, a->n);
    return 1;
  }
  for (size_t k = 0; k < a->n; ++k) {
    if (memcmp(&a->sp[k], &b->sp[k], sizeof a->sp[k]) != 0) {
      printf("%s: spike %zu is (%u, %u, %lld), not (%u, %u, %lld)\n", what, k, b->sp[k].block, b->sp[k].index,
             (long long)b->sp[k].step, a->sp[k].block, a->sp[k].index, (long long)a->sp[k].step);
      return 1;
    }
  }
  return 0;
}

/* Without plastic synapses the set costs two launches per slice whatever its models. */
static int launches_per_slice(nestcl_device *dev)
{
  net nw;
  make_net(dev, &nw, 0);
  nestcl_block_set *set;
  CHECK(nestcl_block_set_create(dev, nw.b, 2, &set) == 0, "set: %s", nestcl_last_error());
  run r = {0};
  for (int sl = 0; sl < 50; ++sl)
    slice_part(&nw, set, &r, (int64_t)sl * MD, 0, MD);
  uint64_t l = 0, w = 0, lb = 0, wb = 0, total = 0;
  nestcl_block_set_enqueued(set, &l, &w);
  for (int k = 0; k < 2; ++k) {
    nestcl_block_enqueued(nw.b[k], &lb, &wb);
    total += lb;
  }
  total += l;
  printf("set of 2 models: %llu launches and %llu waits in 50 slices\n", (unsigned long long)total,
         (unsigned long long)w);
  nestcl_block_set_destroy(set);
  free_net(&nw);
  free(r.sp);
  return total > 2 * 50 || w != 50;
}

int main(int argc, char **argv)
{
  for (int a = 1; a < argc; ++a) {
    if (strcmp(argv[a], "--slices") == 0 && a + 1 < argc)
      slices = atoi(argv[a + 1]);
    if (strcmp(argv[a], "--plastic-shape") == 0 && a + 1 < argc)
      plastic_shape = argv[a + 1];
    if (strcmp(argv[a], "--small") == 0) {
      small = 1;
      NA = 24u;
      NB = 16u;
      model_b = "iaf_psc_exp";
    }
  }
  nestcl_device *dev;
  if (nestcl_device_open(NULL, 1, &dev) != 0) {
    printf("SKIP: no OpenCL device: %s\n", nestcl_last_error());
    return 77;
  }
  net nw[3];
  run r[3];
  nestcl_block_set *set[3] = {NULL, NULL, NULL};
  memset(r, 0, sizeof r);
  /* --small (a device simulator): the set slice by slice against the loop; each block alone is PoCL's run. */
  const int first = small ? 1 : 0;
  for (int mode = first; mode < 3; ++mode) {
    if (plastic_shape && mode > 0)
      setenv("NESTCL_PLASTIC_SHAPE", plastic_shape, 1);
    make_net(dev, &nw[mode], 1);
    unsetenv("NESTCL_PLASTIC_SHAPE");
    if (mode)
      CHECK(nestcl_block_set_create(dev, nw[mode].b, 2, &set[mode]) == 0, "set: %s", nestcl_last_error());
    simulate(&nw[mode], set[mode], &r[mode], mode);
  }
  char why[256];
  int bad = same_spikes(&r[first], &r[2], "device loop") | compare(&nw[first], &nw[2], "device loop");
  if (!small)
    bad |= same_spikes(&r[0], &r[1], "set slice by slice") | compare(&nw[0], &nw[1], "set slice by slice");
  const uint64_t resumes = nestcl_block_set_loop_resumes(set[2]);
  printf("%zu spikes; the device loop grew a history %llu times\n", r[first].n, (unsigned long long)resumes);
  bad |= r[first].n < (small ? 30u : 1000u) || (slices >= 600 && !small && resumes == 0);
  CHECK(nestcl_block_set_loop_possible(set[2], why, sizeof why) == 1, "loop possible: %s", why);
  if (!small)
    bad |= launches_per_slice(dev);
  for (int mode = first; mode < 3; ++mode) {
    nestcl_block_set_destroy(set[mode]);
    free_net(&nw[mode]);
    free(r[mode].sp);
  }
  if (small) {
    nestcl_device_close(dev);
    printf("%s\n", bad ? "FAIL" : "ok");
    return bad;
  }
  /* Rows that are not loop ids: the loop is refused, saying why. */
  net odd;
  make_net(dev, &odd, 0);
  CHECK(nestcl_block_set_synapses(odd.b[1], 0, NULL, NULL, NULL, NULL) == 0, "drop rows");
  const uint64_t rp[3] = {0, 1, 1};
  const uint32_t tg[1] = {0};
  const double val[1] = {1.0};
  const uint16_t dl[1] = {MD};
  CHECK(nestcl_block_set_synapses(odd.b[1], 2, rp, tg, val, dl) == 0, "two rows: %s", nestcl_last_error());
  nestcl_block_set *os;
  CHECK(nestcl_block_set_create(dev, odd.b, 2, &os) == 0, "set: %s", nestcl_last_error());
  CHECK(nestcl_block_set_loop_possible(os, why, sizeof why) == 0 && strstr(why, "source ids"), "refusal: %s", why);
  CHECK(nestcl_block_set_loop_begin(os, 0) == NESTCL_EINVAL, "loop begin refused");
  nestcl_block_set_destroy(os);
  free_net(&odd);
  nestcl_device_close(dev);
  printf("%s\n", bad ? "FAIL" : "ok");
  return bad;
}
