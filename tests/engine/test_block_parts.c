/*
 * A block's synapses written in parts and changed in place (nestcl/block.h),
 * what nest_patch does to keep NEST's network on the device between Simulate
 * calls without a host copy of all its synapses: 40 iaf_psc_alpha neurons
 * driven by bias currents and by 25 sources that spike at random steps,
 * through static synapses and through stdp_pl_synapse_hom, run twice:
 *   A. nestcl_block_set_synapses and nestcl_block_add_plastic, whole;
 *   B. the same synapses by _begin, _fill in chunks of rows, _end;
 * both as a block set; then, in both, the plastic weights changed in place by
 * rows (nestcl_block_plastic_write_rows) and the neurons' bias changed for all
 * of them (one constant of the merged update: nestcl_block_upload, then
 * nestcl_block_set_refresh), and the run goes on. Spikes, states and synapses
 * must be equal bit for bit (every field of every neuron), in A and B and in C, A's block on its own (whose
 * own kernel the upload rebuilds, without the set's refresh). Also: rows read by parts equal the
 * whole read; a write whose per-source state differs within a row, fills out
 * of order, an incomplete fill and a second plastic set in place of a
 * cancelled one are refused or handled as block.h says; a cleared block takes
 * a new history and set. Exit 77 without an OpenCL device.
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

#define N 40u
#define SRC 25u
#define FAN 8u
#define MD 10u
#define SLOTS 40u
#define H 0.1
#define SLICES 120
#define STATE_BYTES (64u * 8u * N) /* every field of the model, N neurons */

static uint32_t draw(uint64_t id, uint64_t k, uint32_t n)
{
  nestcl_rng_stream s = nestcl_stream_init(nestcl_rng_key(5, 9), nestcl_rng_counter(id, k));
  return nestcl_stream_u32(&s) % n;
}

/* One run's network: the synapses of both kinds, the same in A and B. */
typedef struct net {
  const nestcl_model *m;
  const nestcl_synapse_model *sm;
  uint64_t row_ptr[SRC + 1];
  uint32_t starget[SRC * FAN], ptarget[SRC * FAN];
  double value[SRC * FAN];
  uint16_t sdelay[SRC * FAN], pdelay[SRC * FAN];
  unsigned char *syn, *cp;
} net;

static void make_net(net *x)
{
  x->m = find_model("iaf_psc_alpha");
  x->sm = find_syn("stdp_pl_synapse_hom");
  CHECK(x->m && x->sm, "models");
  x->syn = calloc(SRC * FAN, x->sm->syn_size);
  x->cp = calloc(1, x->sm->cp_size + 8);
  CHECK(x->syn && x->cp, "memory");
  for (uint32_t r = 0; r < SRC; ++r) {
    x->row_ptr[r] = (uint64_t)r * FAN;
    for (uint32_t j = 0; j < FAN; ++j) {
      const uint32_t k = r * FAN + j;
      unsigned char *s = x->syn + (size_t)k * x->sm->syn_size;
      x->sm->set_defaults(s, x->cp);
      CHECK(x->sm->set_status(s, x->cp, "weight", 25.0 + j) == 0, "weight");
      x->ptarget[k] = draw(r, j, N);
      x->pdelay[k] = (uint16_t)(10 + draw(r, 50 + j, 20));
      x->starget[k] = (1u << 24) | draw(r, 100 + j, N); /* channel 1: excitatory */
      x->value[k] = 10.0 + draw(r, 150 + j, 20);
      x->sdelay[k] = (uint16_t)(10 + draw(r, 200 + j, 20));
    }
  }
  x->row_ptr[SRC] = SRC * FAN;
}

/* The block, uploaded with the bias current ie for all (a constant of its kernels), its history set up. */
static nestcl_block *make_block(nestcl_device *dev, const net *x, double ie)
{
  nestcl_block_config c = {x->m, N, 0, H, MD, SLOTS, 0, 0, 7, 1, 1, 0};
  nestcl_block *b;
  CHECK(nestcl_block_create(dev, &c, &b) == 0, "create: %s", nestcl_last_error());
  void *const *f = nestcl_block_fields(b);
  for (uint32_t i = 0; i < N; ++i) {
    x->m->set_defaults(f, N, i, 0);
    CHECK(x->m->set_status(f, N, i, 0, "I_e", ie) == 0, "I_e");
    CHECK(x->m->pre_run(f, N, i, 0, H) == 0, "pre_run");
  }
  CHECK(nestcl_block_upload(b) == 0, "upload: %s", nestcl_last_error());
  CHECK(nestcl_block_history(b, 30.0, 110.0, 4096) == 0, "history: %s", nestcl_last_error());
  for (uint32_t i = 0; i < N; ++i) {
    nestcl_history_state st = {0.0, 0.0, -1.0, 3.0, FAN, 0};
    CHECK(nestcl_block_history_set(b, i, &st, NULL) == 0, "history_set: %s", nestcl_last_error());
  }
  return b;
}

/* Rows [0, 7) with two targets past the last neuron: refused, naming the first of them (checked in parallel). */
static int bad_target_refused(nestcl_block *b, int s, const net *x)
{
  const uint64_t m = x->row_ptr[7];
  uint32_t *t = malloc(m * sizeof *t);
  char want[64];
  if (!t || m < 4) {
    free(t);
    return 0;
  }
  memcpy(t, x->ptarget, m * sizeof *t);
  t[m - 1] = t[m / 2] = N;
  snprintf(want, sizeof want, "plastic synapse %llu to %u", (unsigned long long)(m / 2), (unsigned)N);
  const int rc = nestcl_block_plastic_fill(b, s, 0, 7, t, x->pdelay, x->syn);
  free(t);
  return rc == NESTCL_EINVAL && strstr(nestcl_last_error(), want) != NULL;
}

/* B: the synapses in chunks of rows [0, 7), [7, 7), [7, 19), [19, 25). */
static int in_parts(nestcl_block *b, const net *x)
{
  static const uint32_t cut[] = {0, 7, 7, 19, SRC};
  CHECK(nestcl_block_synapses_begin(b, SRC, x->row_ptr, 10, 29) == 0, "synapses_begin: %s", nestcl_last_error());
  CHECK(nestcl_block_synapses_fill(b, 8, 1, x->starget, x->value, x->sdelay) == NESTCL_EINVAL, "out of order");
  CHECK(nestcl_block_synapses_end(b) == NESTCL_EINVAL, "end before the fills");
  for (int c = 0; c < 4; ++c) {
    const uint64_t a = x->row_ptr[cut[c]], e = x->row_ptr[cut[c + 1]];
    CHECK(nestcl_block_synapses_fill(b, a, e - a, x->starget + a, x->value + a, x->sdelay + a) == 0,
          "synapses_fill: %s", nestcl_last_error());
  }
  CHECK(nestcl_block_synapses_end(b) == 0, "synapses_end: %s", nestcl_last_error());
  int s = -1;
  /* A set begun and cancelled leaves no trace: the next one gets its handle. */
  CHECK(nestcl_block_plastic_begin(b, x->sm, x->cp, 0, SRC, x->row_ptr, 10, 29, NULL, &s) == 0 && s == 0,
        "plastic_begin: %s", nestcl_last_error());
  CHECK(nestcl_block_plastic_cancel(b, s) == 0, "cancel: %s", nestcl_last_error());
  CHECK(nestcl_block_plastic_begin(b, x->sm, x->cp, 0, SRC, x->row_ptr, 10, 29, x->syn, &s) == 0 && s == 0,
        "plastic_begin: %s", nestcl_last_error());
  CHECK(bad_target_refused(b, s, x), "a plastic synapse outside the block");
  for (int c = 0; c < 4; ++c) {
    const uint64_t a = x->row_ptr[cut[c]];
    CHECK(nestcl_block_plastic_fill(b, s, cut[c], cut[c + 1] - cut[c], x->ptarget + a, x->pdelay + a,
                                    x->syn + a * x->sm->syn_size) == 0,
          "plastic_fill: %s", nestcl_last_error());
    if (c == 1)
      CHECK(nestcl_block_plastic_end(b, s) == NESTCL_EINVAL, "end before the last rows");
  }
  CHECK(nestcl_block_plastic_end(b, s) == 0, "plastic_end: %s", nestcl_last_error());
  return s;
}

/* A: the same synapses whole. */
static int whole(nestcl_block *b, const net *x)
{
  CHECK(nestcl_block_set_synapses(b, SRC, x->row_ptr, x->starget, x->value, x->sdelay) == 0, "set_synapses: %s",
        nestcl_last_error());
  int s = -1;
  CHECK(nestcl_block_add_plastic(b, x->sm, x->cp, 0, SRC, x->row_ptr, x->ptarget, x->pdelay, x->syn, &s) == 0,
        "add_plastic: %s", nestcl_last_error());
  return s;
}

/* Slices [s0, s1): the sources' spikes of the previous slice through both kinds of synapse, then the update. */
static void run(nestcl_block *b, nestcl_block_set *set, int ps, int s0, int s1, uint32_t *spikes)
{
  uint32_t rows[SRC * MD], lags[SRC * MD];
  for (int sl = s0; sl < s1; ++sl) {
    const int64_t origin = (int64_t)sl * MD;
    uint32_t n = 0;
    for (uint32_t lag = 0; sl > 0 && lag < MD; ++lag) {
      for (uint32_t r = 0; r < SRC; ++r) {
        if (draw(1000 + r, (uint64_t)(origin - MD + lag), 60) == 0) {
          rows[n] = r;
          lags[n++] = lag;
        }
      }
    }
    CHECK((set ? nestcl_block_set_deliver(set, origin - MD, rows, lags, n)
               : nestcl_block_deliver(b, origin - MD, rows, lags, n)) == 0,
          "deliver: %s", nestcl_last_error());
    CHECK(nestcl_block_deliver_plastic(b, ps, origin - MD, rows, lags, n) == 0, "deliver_plastic: %s",
          nestcl_last_error());
    if (set) {
      CHECK(nestcl_block_set_update_enqueue(set, origin, 0, MD) == 0, "update: %s", nestcl_last_error());
      CHECK(nestcl_block_set_finish(set) == 0 && nestcl_block_set_collect(set) == 0, "collect: %s",
            nestcl_last_error());
    } else {
      CHECK(nestcl_block_update(b, origin, 0, MD) == 0, "update: %s", nestcl_last_error());
    }
    const nestcl_spike *sp;
    uint32_t ns;
    nestcl_block_spikes(b, &sp, &ns);
    for (uint32_t k = 0; k < ns; ++k)
      spikes[sp[k].index] += sp[k].lag + 1;
  }
}

/* The changes between two "Simulate calls": the weights of rows [5, 12) doubled in place, every I_e raised. */
static void change(nestcl_block *b, nestcl_block_set *set, const net *x, int ps)
{
  const size_t size = x->sm->syn_size, m = x->row_ptr[12] - x->row_ptr[5];
  unsigned char *part = malloc(m * size), *all = malloc((size_t)SRC * FAN * size);
  CHECK(part && all, "memory");
  CHECK(nestcl_block_plastic_read_rows(b, ps, 5, 7, part) == 0, "read_rows: %s", nestcl_last_error());
  CHECK(nestcl_block_plastic_read(b, ps, all) == 0, "read: %s", nestcl_last_error());
  CHECK(memcmp(part, all + x->row_ptr[5] * size, m * size) == 0, "rows read by parts differ from the whole read");
  /* Per-source state (Kplus) that differs within a row is refused, and nothing is written. */
  double kp;
  CHECK(x->sm->get_status(part + size, x->cp, "Kplus", &kp) == 0, "Kplus");
  CHECK(x->sm->set_status(part + size, x->cp, "Kplus", kp + 1.0) == 0, "Kplus");
  CHECK(nestcl_block_plastic_write_rows(b, ps, 5, 7, part) == NESTCL_EINVAL, "differing Kplus written");
  CHECK(x->sm->set_status(part + size, x->cp, "Kplus", kp) == 0, "Kplus");
  for (size_t k = 0; k < m; ++k) {
    double w;
    CHECK(x->sm->get_status(part + k * size, x->cp, "weight", &w) == 0, "weight");
    CHECK(x->sm->set_status(part + k * size, x->cp, "weight", 2.0 * w) == 0, "weight");
  }
  CHECK(nestcl_block_plastic_write_rows(b, ps, 5, 7, part) == 0, "write_rows: %s", nestcl_last_error());
  CHECK(nestcl_block_plastic_read_rows(b, ps, 5, 7, all) == 0 && memcmp(all, part, m * size) == 0,
        "rows written then read differ");
  CHECK(nestcl_block_download(b) == 0, "download: %s", nestcl_last_error());
  void *const *f = nestcl_block_fields(b);
  for (uint32_t i = 0; i < N; ++i)
    CHECK(x->m->set_status(f, N, i, 0, "I_e", 420.0) == 0, "I_e");
  CHECK(nestcl_block_upload(b) == 0, "upload: %s", nestcl_last_error());
  CHECK(!set || nestcl_block_set_refresh(set) == 0, "refresh: %s", nestcl_last_error());
  free(part);
  free(all);
}

/* One way (A, B or C): the run, the changes, the run again; the spikes' sums per neuron, the state and synapses. */
static void one_way(nestcl_device *dev, const net *x, int parts, int in_set, uint32_t *spikes, unsigned char *state,
                    unsigned char *syn)
{
  nestcl_block *b = make_block(dev, x, 330.0);
  const int ps = parts ? in_parts(b, x) : whole(b, x);
  nestcl_block_set *set = NULL;
  CHECK(!in_set || nestcl_block_set_create(dev, &b, 1, &set) == 0, "set: %s", nestcl_last_error());
  run(b, set, ps, 0, SLICES / 2, spikes);
  change(b, set, x, ps);
  run(b, set, ps, SLICES / 2, SLICES, spikes);
  CHECK(nestcl_block_download(b) == 0, "download: %s", nestcl_last_error());
  size_t at = 0;
  for (int f = 0; f < x->m->n_fields; ++f) {
    const size_t bytes = nestcl_field_type_size(x->m->fields[f].type) * N;
    CHECK(at + bytes <= STATE_BYTES, "state");
    memcpy(state + at, nestcl_block_fields(b)[f], bytes);
    at += bytes;
  }
  CHECK(nestcl_block_plastic_read(b, ps, syn) == 0, "read: %s", nestcl_last_error());
  nestcl_block_set_destroy(set);
  /* Cleared, the block takes a new history and set (nest_patch exports again without a refused model). */
  CHECK(nestcl_block_plastic_clear(b) == 0, "clear");
  CHECK(nestcl_block_deliver_plastic(b, ps, 0, NULL, NULL, 1) == NESTCL_EINVAL, "a cleared set still delivers");
  CHECK(nestcl_block_history(b, 30.0, 110.0, 4096) == 0, "history after clear: %s", nestcl_last_error());
  nestcl_block_destroy(b);
}

int main(void)
{
  nestcl_device *dev;
  if (nestcl_device_open(NULL, 1, &dev) != 0) {
    printf("SKIP: no OpenCL device: %s\n", nestcl_last_error());
    return 77;
  }
  net x;
  make_net(&x);
  const size_t bytes = (size_t)SRC * FAN * x.sm->syn_size;
  uint32_t spikes[3][N] = {{0}};
  static unsigned char state[3][STATE_BYTES];
  unsigned char *syn[3] = {malloc(bytes), malloc(bytes), malloc(bytes)};
  CHECK(syn[0] && syn[1] && syn[2], "memory");
  one_way(dev, &x, 0, 1, spikes[0], state[0], syn[0]);
  one_way(dev, &x, 1, 1, spikes[1], state[1], syn[1]);
  one_way(dev, &x, 0, 0, spikes[2], state[2], syn[2]);
  uint32_t total = 0;
  for (uint32_t i = 0; i < N; ++i)
    total += spikes[0][i] != 0;
  int same = 1;
  for (int w = 1; w < 3; ++w) {
    const int eq = memcmp(spikes[0], spikes[w], sizeof spikes[0]) == 0 &&
      memcmp(state[0], state[w], STATE_BYTES) == 0 && memcmp(syn[0], syn[w], bytes) == 0;
    printf("A (whole, set) against %s: spikes, state and synapses %s\n",
           w == 1 ? "B (in parts, set)" : "C (whole, alone)", eq ? "equal" : "DIFFER");
    same = same && eq;
  }
  printf("%u of %u neurons spiked\n", total, N);
  for (int w = 0; w < 3; ++w)
    free(syn[w]);
  free(x.syn);
  free(x.cp);
  nestcl_device_close(dev);
  return same && total > N / 2 ? 0 : 1;
}
