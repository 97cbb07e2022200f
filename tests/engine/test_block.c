/*
 * nestcl_block (nestcl/block.h) against the translated C loop of the same
 * model: every built-in model, 257 neurons with heterogeneous drive, staged
 * input on every channel (multiples of 2^-16, so fixed point is exact), 120
 * slices of 15 lags, one of them split into two partial updates as NEST does
 * when Simulate() is not a multiple of min_delay. After every slice the spikes
 * must be the same set, the recordings (every step) equal, and at the end every
 * field equal bit for bit. The C twin keeps its own ring, filled the way the
 * block's staging is. On top, each slice's spikes come back through recurrent
 * device-resident synapses (nestcl_block_set_synapses / _deliver, per-synapse
 * channels, values and delays) and every neuron gets a device poisson_generator
 * (nestcl_block_add_poisson); the twin adds the same synapses and the same
 * Philox draws (nestcl_stream_poisson, the uncached form) to its ring by hand.
 * Exit 77 without an OpenCL device. --models a,b and --slices S (at least 42,
 * past the split slice) narrow the run for a device simulator (tests/oclgrind).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NESTCL_CHECK_FATAL
#include "nestcl/block.h"
#include "nestcl_check.h"
#include "nestcl_fixed.h"
#include "nestcl_philox.h"
#include "nestcl_ring.h"
#include "test_lif.h"

#define N 257u
#define MIN_DELAY 15u
#define SLOTS 40u
#define SLICES slices
/* 120 slices of every model; fewer, and some models only, with --slices S and --models a,b (the oclgrind run). */
static uint32_t slices = 120;
static const char *only_models;
#define H 0.1
#define FANOUT 9u

static size_t field_len(const nestcl_field *f, uint32_t K)
{
  return nestcl_field_len(f, K);
}

static int cmp_spike(const void *a, const void *b)
{
  const nestcl_spike *x = a, *y = b;
  if (x->lag != y->lag)
    return x->lag < y->lag ? -1 : 1;
  return x->index < y->index ? -1 : (x->index > y->index);
}

/* A sparse input value for (slice, lag, channel, neuron): 0 or k / 2^16 pA with |k| < 2^22. */
static double input_value(uint32_t slice, uint32_t lag, uint32_t ch, uint32_t i)
{
  nestcl_rng_stream s =
    nestcl_stream_init(nestcl_rng_key(99, 7), nestcl_rng_counter(i, ((uint64_t)slice << 16) | (lag << 8) | ch));
  uint32_t w = nestcl_stream_u32(&s);
  if (w % 5 != 0) {
    return 0.0;
  }
  int32_t k = (int32_t)(nestcl_stream_u32(&s) % (1u << 22)) - (1 << 21);
  return (double)k / 65536.0;
}


/* A drive that makes every model fire: the adaptive exponential models need more than the others (rheobase ~600 pA). */
static double drive_pA(const nestcl_model *m)
{
  return strncmp(m->name, "aeif", 4) == 0 ? 900.0 : 300.0;
}

static int run_model(nestcl_device *dev, const nestcl_model *m)
{
  const uint32_t K = m->has_receptors ? 3u : 0u;
  nestcl_block_config c = {m, N, K, H, MIN_DELAY, SLOTS, 0, 1, 7, 0, 1, 0};
  nestcl_block *b;
  CHECK(nestcl_block_create(dev, &c, &b) == 0, "%s: create", m->name);
  void *const *bf = nestcl_block_fields(b);
  const uint32_t nch = nestcl_block_channels(b), nrec = nestcl_block_recordables(b);
  /* The C twin: its own fields, ring, spike list and recording. */
  void **cf = calloc((size_t)m->n_fields, sizeof *cf);
  int64_t *ring = calloc((size_t)SLOTS * nch * N + 1, sizeof *ring);
  nestcl_spike *cs = calloc((size_t)N * MIN_DELAY, sizeof *cs);
  /* a model that sets spike offsets (model.h): the lists' offsets, and each slice's by (lag, neuron) */
  double *co = calloc((size_t)N * MIN_DELAY, sizeof *co), *bo = calloc((size_t)N * MIN_DELAY, sizeof *bo);
  double *co_at = calloc((size_t)N * MIN_DELAY, sizeof *co_at), *bo_at = calloc((size_t)N * MIN_DELAY, sizeof *bo_at);
  uint64_t nonzero_offsets = 0;
  double *crec = calloc((size_t)MIN_DELAY * nrec * N + 1, sizeof *crec);
  CHECK(cf && ring && cs && crec, "out of memory");
  for (int f = 0; f < m->n_fields; ++f) {
    cf[f] = calloc(nestcl_field_type_size(m->fields[f].type) * field_len(&m->fields[f], K) * N + 8, 1);
    CHECK(cf[f], "out of memory");
  }
  for (uint32_t i = 0; i < N; ++i) {
    if (m->set_defaults)
      m->set_defaults(bf, N, i, K);
    /* A per-receptor parameter vector that NEST leaves empty by default (the multisynapse models'
       tau_syn, pp_psc_delta's tau_sfa) has zeros in its K entries here: give them usable values. */
    for (int f = 0; f < m->n_fields; ++f) {
      if (m->fields[f].role == NESTCL_ROLE_PARAMETER && m->fields[f].array_len < 0 &&
          m->fields[f].type == NESTCL_T_DOUBLE) {
        for (size_t k = 0; k < field_len(&m->fields[f], K); ++k) {
          double *v = &((double *)bf[f])[k * N + i];
          if (*v == 0.0)
            *v = 2.0 + (double)k;
        }
      }
    }
    /* Heterogeneous drive where the model has a bias current. */
    if (m->set_status)
      (void)m->set_status(bf, N, i, K, "I_e", drive_pA(m) + 2.0 * (double)(i % 97));
    if (m->init_buffers)
      CHECK(m->init_buffers(bf, N, i, K, H) == 0, "%s: init_buffers", m->name);
    if (m->pre_run)
      CHECK(m->pre_run(bf, N, i, K, H) == 0, "%s: pre_run", m->name);
  }
  for (int f = 0; f < m->n_fields; ++f) {
    memcpy(cf[f], bf[f], nestcl_field_type_size(m->fields[f].type) * field_len(&m->fields[f], K) * N);
  }
  CHECK(nestcl_block_upload(b) == 0, "%s: upload", m->name);
  /* Every kernel launch timed (issue 41), checked against the block's launch count at the end. */
  CHECK(nestcl_block_profile_kernels(b, 1) == 0, "%s: kernel profile: %s", m->name, nestcl_last_error());
  /*
   * Device-resident recurrent synapses (row = the spiking neuron) and a device
   * poisson_generator on every neuron; the C twin adds the same to its ring.
   */
  int positive_only = 0;
  /* parrot_neuron: its route adds 1 per spike whatever the weight, so its ring holds spike counts */
  const int counts = strcmp(m->name, "parrot_neuron") == 0;
  uint64_t *row_ptr = calloc(N + 1, sizeof *row_ptr);
  uint32_t *tgt = calloc((size_t)N * FANOUT, sizeof *tgt), *ptgt = calloc(N, sizeof *ptgt),
           *salt = calloc(N, sizeof *salt);
  double *val = calloc((size_t)N * FANOUT, sizeof *val), *pval = calloc(N, sizeof *pval);
  uint16_t *dly = calloc((size_t)N * FANOUT, sizeof *dly), *pdly = calloc(N, sizeof *pdly);
  uint32_t *rows = calloc((size_t)N * MIN_DELAY, sizeof *rows), *lags = calloc((size_t)N * MIN_DELAY, sizeof *lags);
  CHECK(row_ptr && tgt && ptgt && salt && val && pval && dly && pdly && rows && lags, "out of memory");
  for (uint32_t r = 0; r < N; ++r) {
    /* some sources have no synapse here; parrots none at all: each repeats every input, so recurrent
       parrots are a chain reaction (they get the Poisson drive alone) */
    const uint32_t len = r % 4 == 3 || counts ? 0u : 1u + r % FANOUT;
    if (r == 0) {
      /* a model that refuses negative weights (conductance-based multisynapse: BadProperty) gets positive values */
      int ch0;
      double v0;
      positive_only = m->route_spike && m->route_spike(-1.0, K ? 1 : 0, K, &ch0, &v0) != 0;
    }
    row_ptr[r + 1] = row_ptr[r] + len;
    for (uint64_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k) {
      nestcl_rng_stream st = nestcl_stream_init(nestcl_rng_key(5, 9), nestcl_rng_counter(r, k));
      tgt[k] = ((nestcl_stream_u32(&st) % nch) << 24) | (nestcl_stream_u32(&st) % N);
      val[k] = (double)((int32_t)(nestcl_stream_u32(&st) % 4096u) - 2048) / 64.0;
      if (positive_only)
        val[k] = fabs(val[k]) / 16.0; /* conductances in nS, not currents in pA */
      dly[k] = (uint16_t)(MIN_DELAY + nestcl_stream_u32(&st) % (SLOTS - 2 * MIN_DELAY + 1));
    }
    ptgt[r] = r; /* channel 0 */
    pval[r] = counts ? 1.0 : 1.0 + (double)(r % 5) / 16.0;
    pdly[r] = (uint16_t)(1 + r % (SLOTS - 1));
    salt[r] = 3;
  }
  CHECK(nestcl_block_set_synapses(b, N, row_ptr, tgt, val, dly) == 0, "%s: synapses", m->name);
  /* a parrot's spikes are its input's: kept below one per step, the spike list's room (n per step) */
  const double rate_hz = counts ? 2000.0 : 8000.0;
  CHECK(nestcl_block_add_poisson(b, rate_hz, N, ptgt, pval, pdly, salt) == 0, "%s: poisson", m->name);
  nestcl_poisson_param pp;
  CHECK(nestcl_poisson_setup(rate_hz * H * 1e-3, &pp) == 0, "poisson setup");
  nestcl_spike prev[N * MIN_DELAY];
  uint32_t n_prev = 0;
  uint64_t total = 0;
  for (uint32_t s = 0; s < SLICES; ++s) {
    const int64_t origin = (int64_t)s * MIN_DELAY;
    /* Slice 40 is simulated as [0, 7) then [7, 15). */
    int cuts[3] = {0, s == 40 ? 7 : (int)MIN_DELAY, (int)MIN_DELAY};
    int pieces = s == 40 ? 2 : 1;
    uint32_t cn = 0;
    nestcl_spike bs[N * MIN_DELAY];
    uint32_t bn = 0;
    /* The last slice's spikes through the device synapses (block) and by hand (twin). */
    for (uint32_t k = 0; k < n_prev; ++k) {
      rows[k] = prev[k].index;
      lags[k] = prev[k].lag;
      for (uint64_t q = row_ptr[prev[k].index]; q < row_ptr[prev[k].index + 1]; ++q) {
        nestcl_ring_add(ring, nch, N, nestcl_ring_slot(origin - MIN_DELAY + prev[k].lag, dly[q], SLOTS), tgt[q] >> 24,
                        tgt[q] & 0xffffffu, val[q]);
      }
    }
    CHECK(nestcl_block_deliver(b, origin - MIN_DELAY, rows, lags, n_prev) == 0, "%s: deliver", m->name);
    for (int p = 0; p < pieces; ++p) {
      const int from = cuts[p], to = cuts[p + 1];
      for (int lag = from; lag < to; ++lag) {
        for (uint32_t ch = 0; ch < nch; ++ch) {
          for (uint32_t i = 0; i < N; ++i) {
            double v = input_value(s, (uint32_t)lag, ch, i);
            if (positive_only)
              v = fabs(v) / 16.0; /* as the synapses: conductances a model accepts */
            if (counts && v != 0.0)
              v = 1.0; /* a parrot's ring holds spike counts */
            if (v != 0.0) {
              nestcl_block_stage(b, (uint32_t)lag, ch, i, v);
              nestcl_ring_add(ring, nch, N, nestcl_ring_slot(origin, lag, SLOTS), ch, i, v);
            }
          }
        }
      }
      CHECK(nestcl_block_update(b, origin, from, to) == 0, "%s: update slice %u", m->name, s);
      uint32_t count[NESTCL_COUNT_WORDS] = {0};
      nestcl_update_args a = {N,
                              K,
                              origin,
                              from,
                              to,
                              H,
                              SLOTS,
                              nch,
                              ring,
                              count,
                              cs + cn,
                              N * MIN_DELAY - cn,
                              1,
                              crec,
                              c.rng_seed,
                              c.id_first,
                              c.id_stride ? c.id_stride : 1,
                              co + cn,
                              NULL,
                              NULL,
                              NULL,
                              NULL};
      m->update_cpu(&a, cf);
      CHECK(count[1] == 0, "%s: the C loop reported failure %u of neuron %u at lag %u (status %d)", m->name, count[1],
            count[2], count[3], (int)count[4]);
      cn += count[0];
      for (int lag = from; lag < to; ++lag) {
        const int64_t step = origin + lag;
        for (uint32_t i = 0; i < N; ++i) {
          nestcl_rng_stream st =
            nestcl_stream_init(nestcl_rng_key(7, NESTCL_RNG_PURPOSE_POISSON),
                               nestcl_rng_counter((uint64_t)i | ((uint64_t)salt[i] << 40), (uint64_t)step));
          uint32_t k = nestcl_stream_poisson(&st, pp.mu, pp.exp_neg_mu, pp.chunks);
          if (k) {
            nestcl_ring_add_fixed(ring, nch, N, nestcl_ring_slot(step, pdly[i], SLOTS), 0, i,
                                  (int64_t)((uint64_t)k * (uint64_t)nestcl_fixed_from_double(pval[i])));
          }
        }
      }
      const nestcl_spike *sp;
      uint32_t ns;
      nestcl_block_spikes(b, &sp, &ns);
      memcpy(bs + bn, sp, ns * sizeof *sp);
      const double *so = nestcl_block_spike_offsets(b);
      CHECK(!so == !m->spike_offsets, "%s: the block has %s spike offsets", m->name, so ? "" : "no");
      if (so && ns) {
        memcpy(bo + bn, so, ns * sizeof *so);
      }
      bn += ns;
      const double *rec = nestcl_block_recorded(b);
      size_t rbytes = (size_t)(to - from) * nrec * N * sizeof(double);
      CHECK(memcmp(rec, crec, rbytes) == 0, "%s: recordings of slice %u, lags [%d, %d) differ", m->name, s, from, to);
    }
    if (m->spike_offsets && cn == bn) {
      /* one event per neuron and step: the offsets by (lag, neuron), bit for bit */
      memset(co_at, 0, (size_t)N * MIN_DELAY * sizeof *co_at);
      memset(bo_at, 0, (size_t)N * MIN_DELAY * sizeof *bo_at);
      for (uint32_t k = 0; k < cn; ++k) {
        co_at[cs[k].lag * N + cs[k].index] = co[k];
        bo_at[bs[k].lag * N + bs[k].index] = bo[k];
        nonzero_offsets += co[k] != 0.0;
      }
      CHECK(memcmp(co_at, bo_at, (size_t)N * MIN_DELAY * sizeof *co_at) == 0,
            "%s: slice %u: spike offsets of the C loop and the block differ", m->name, s);
    }
    qsort(cs, cn, sizeof *cs, cmp_spike);
    qsort(bs, bn, sizeof *bs, cmp_spike);
    CHECK(cn == bn && memcmp(cs, bs, cn * sizeof *cs) == 0, "%s: slice %u: C loop %u spikes, block %u", m->name, s, cn,
          bn);
    memcpy(prev, bs, bn * sizeof *bs);
    n_prev = bn;
    total += cn;
  }
  CHECK(nestcl_block_download(b) == 0, "%s: download", m->name);
  for (int f = 0; f < m->n_fields; ++f) {
    size_t bytes = nestcl_field_type_size(m->fields[f].type) * field_len(&m->fields[f], K) * N;
    CHECK(memcmp(bf[f], cf[f], bytes) == 0, "%s: field %s differs after %d slices", m->name, m->fields[f].member,
          SLICES);
  }
  CHECK(!m->spike_offsets || nonzero_offsets > 0, "%s: every spike offset was 0, the comparison is too weak", m->name);
  {
    nestcl_kernel_profile kp;
    memset(&kp, 0, sizeof kp);
    uint64_t launches = 0, timed = 0;
    CHECK(nestcl_block_kernel_profile(b, &kp) == 0, "%s: kernel profile: %s", m->name, nestcl_last_error());
    nestcl_block_enqueued(b, &launches, NULL);
    for (int k = 0; k < kp.n_kernels; ++k) {
      const nestcl_kernel_time *t = &kp.kernels[k];
      CHECK(t->profiled == t->launches && t->device_s > 0.0, "%s: kernel %s: %llu of %llu launches timed, %g s",
            m->name, t->name, (unsigned long long)t->profiled, (unsigned long long)t->launches, t->device_s);
      timed += t->launches;
    }
    CHECK(kp.sample_every == 1 && timed == launches && launches > 0 && kp.gaps > 0,
          "%s: kernel profile counts %llu launches (%llu gaps), the block %llu", m->name, (unsigned long long)timed,
          (unsigned long long)kp.gaps, (unsigned long long)launches);
    nestcl_kernel_profile_free(&kp);
  }
  printf("%-26s %6llu spikes, %u channels, %u recordables, %zu device bytes: block == C loop\n", m->name,
         (unsigned long long)total, nch, nrec, nestcl_block_device_bytes(b));
  for (int f = 0; f < m->n_fields; ++f)
    free(cf[f]);
  free(row_ptr);
  free(tgt);
  free(ptgt);
  free(salt);
  free(val);
  free(pval);
  free(dly);
  free(pdly);
  free(rows);
  free(lags);
  free(cf);
  free(ring);
  free(cs);
  free(co);
  free(bo);
  free(co_at);
  free(bo_at);
  free(crec);
  nestcl_block_destroy(b);
  return total > 0 ? 0 : -1;
}

/* One slice (or part of one) of block b with its own spikes of the last slice fed back through its synapses. */
static void step_block(nestcl_block *b, int64_t origin, int from, int to, nestcl_spike *prev, uint32_t *n_prev,
                       uint32_t *rows, uint32_t *lags, const char *what)
{
  if (from == 0) {
    for (uint32_t k = 0; k < *n_prev; ++k) {
      rows[k] = prev[k].index;
      lags[k] = prev[k].lag;
    }
    CHECK(nestcl_block_deliver(b, origin - MIN_DELAY, rows, lags, *n_prev) == 0, "%s: deliver", what);
    *n_prev = 0;
  }
  for (int lag = from; lag < to; ++lag) {
    for (uint32_t i = 0; i < N; i += 3) {
      nestcl_block_stage(b, (uint32_t)lag, 0, i, input_value((uint32_t)(origin / MIN_DELAY), (uint32_t)lag, 0, i));
    }
  }
  CHECK(nestcl_block_update(b, origin, from, to) == 0, "%s: update", what);
  const nestcl_spike *sp;
  uint32_t ns;
  nestcl_block_spikes(b, &sp, &ns);
  memcpy(prev + *n_prev, sp, ns * sizeof *sp);
  *n_prev += ns;
  qsort(prev, *n_prev, sizeof *prev, cmp_spike);
}

/*
 * A pause in the middle of a slice, as between two NEST Simulate calls: the
 * first block goes on, a second one is built from its state and its saved
 * ring (nestcl_block_ring_save / _value / _add / _restore) and must go on
 * exactly as the first, spikes and fields, although spikes in flight through
 * synapses longer than min_delay sit in the ring at the pause.
 */
static void run_pause(nestcl_device *dev, const nestcl_model *m)
{
  const uint32_t K = m->has_receptors ? 3u : 0u;
  nestcl_block_config c = {m, N, K, H, MIN_DELAY, SLOTS, 0, 0, 7, 0, 1, 0};
  nestcl_block *b[2];
  CHECK(nestcl_block_create(dev, &c, &b[0]) == 0 && nestcl_block_create(dev, &c, &b[1]) == 0, "%s: create", m->name);
  const uint32_t nch = nestcl_block_channels(b[0]);
  void *const *f0 = nestcl_block_fields(b[0]);
  for (uint32_t i = 0; i < N; ++i) {
    if (m->set_defaults)
      m->set_defaults(f0, N, i, K);
    if (m->set_status)
      (void)m->set_status(f0, N, i, K, "I_e", drive_pA(m) + 2.0 * (double)(i % 97));
    if (m->init_buffers)
      CHECK(m->init_buffers(f0, N, i, K, H) == 0, "%s: init_buffers", m->name);
    if (m->pre_run)
      CHECK(m->pre_run(f0, N, i, K, H) == 0, "%s: pre_run", m->name);
  }
  CHECK(nestcl_block_upload(b[0]) == 0, "%s: upload", m->name);
  uint64_t row_ptr[N + 1];
  uint32_t tgt[N * 4], rows[N * MIN_DELAY], lags[N * MIN_DELAY], n_prev[2] = {0, 0};
  double val[N * 4];
  uint16_t dly[N * 4];
  row_ptr[0] = 0;
  for (uint32_t r = 0; r < N; ++r) {
    row_ptr[r + 1] = row_ptr[r] + 4;
    for (uint64_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k) {
      tgt[k] = ((uint32_t)(k % nch) << 24) | (uint32_t)((r * 7 + k * 13) % N);
      val[k] = (k % 3 == 0 ? -40.0 : 25.0) + (double)(k % 5) / 8.0;
      dly[k] = (uint16_t)(MIN_DELAY + k % (SLOTS - 2 * MIN_DELAY + 1)); /* up to SLOTS - MIN_DELAY */
    }
  }
  CHECK(nestcl_block_set_synapses(b[0], N, row_ptr, tgt, val, dly) == 0, "%s: synapses", m->name);
  static nestcl_spike prev[2][N * MIN_DELAY];
  for (int64_t s = 0; s < 20; ++s) {
    step_block(b[0], s * MIN_DELAY, 0, (int)MIN_DELAY, prev[0], &n_prev[0], rows, lags, m->name);
  }
  step_block(b[0], 20 * MIN_DELAY, 0, 7, prev[0], &n_prev[0], rows, lags, m->name);
  /* The pause: state and ring of block 0 into block 1. */
  CHECK(nestcl_block_download(b[0]) == 0 && nestcl_block_ring_save(b[0]) == 0, "%s: save", m->name);
  void *const *f1 = nestcl_block_fields(b[1]);
  for (int f = 0; f < m->n_fields; ++f) {
    memcpy(f1[f], f0[f], nestcl_field_type_size(m->fields[f].type) * field_len(&m->fields[f], K) * N);
  }
  CHECK(nestcl_block_upload(b[1]) == 0, "%s: upload 2", m->name);
  CHECK(nestcl_block_set_synapses(b[1], N, row_ptr, tgt, val, dly) == 0, "%s: synapses 2", m->name);
  const int64_t next = 20 * MIN_DELAY + 7;
  uint64_t pending = 0;
  for (int64_t step = next; step < next + SLOTS; ++step) {
    for (uint32_t ch = 0; ch < nch; ++ch) {
      for (uint32_t i = 0; i < N; ++i) {
        int64_t v = nestcl_block_ring_value(b[0], step, ch, i);
        if (v) {
          nestcl_block_ring_add(b[1], step, ch, i, v);
          pending++;
        }
      }
    }
  }
  CHECK(nestcl_block_ring_restore(b[1]) == 0, "%s: restore", m->name);
  CHECK(pending > 0, "%s: nothing in flight at the pause, so the test proves little", m->name);
  memcpy(prev[1], prev[0], n_prev[0] * sizeof prev[0][0]);
  n_prev[1] = n_prev[0];
  uint64_t total = 0;
  for (int64_t s = 20; s < 60; ++s) {
    for (int k = 0; k < 2; ++k) {
      step_block(b[k], s * MIN_DELAY, s == 20 ? 7 : 0, (int)MIN_DELAY, prev[k], &n_prev[k], rows, lags, m->name);
    }
    CHECK(n_prev[0] == n_prev[1] && memcmp(prev[0], prev[1], n_prev[0] * sizeof prev[0][0]) == 0,
          "%s: slice %lld after the pause: %u spikes on, %u rebuilt", m->name, (long long)s, n_prev[0], n_prev[1]);
    total += n_prev[0];
  }
  CHECK(nestcl_block_download(b[0]) == 0 && nestcl_block_download(b[1]) == 0, "%s: download", m->name);
  for (int f = 0; f < m->n_fields; ++f) {
    CHECK(memcmp(f0[f], f1[f], nestcl_field_type_size(m->fields[f].type) * field_len(&m->fields[f], K) * N) == 0,
          "%s: field %s differs after the pause", m->name, m->fields[f].member);
  }
  CHECK(total > 0, "%s: no spikes after the pause", m->name);
  printf("%-26s pause with %llu ring entries in flight: rebuilt block == block that went on (%llu spikes)\n", m->name,
         (unsigned long long)pending, (unsigned long long)total);
  nestcl_block_destroy(b[0]);
  nestcl_block_destroy(b[1]);
}

/*
 * A failure recorded by the update (model.h, Failures; test_lif's fail_step):
 * nestcl_block_update returns NESTCL_ERUNTIME naming the model, the neuron by
 * its id (id_first + index * id_stride, or the index without ids) and the
 * start of the failing step; nestcl_block_failure gives the record, and only
 * for the update that made it.
 */
static void run_failure(nestcl_device *dev, uint64_t id_first, uint64_t id_stride)
{
  const nestcl_model *m = &test_lif_model;
  const uint32_t n = 8, bad = 5;
  nestcl_block_config c = {m, n, 0, H, MIN_DELAY, SLOTS, 0, 0, 7, id_first, id_stride, 0};
  nestcl_block *b;
  CHECK(nestcl_block_create(dev, &c, &b) == 0, "test_lif: create");
  void *const *f = nestcl_block_fields(b);
  for (uint32_t i = 0; i < n; ++i) {
    m->set_defaults(f, n, i, 0);
    CHECK(m->set_status(f, n, i, 0, "I_e", 500.0) == 0, "I_e");
    CHECK(m->pre_run(f, n, i, 0, H) == 0, "pre_run");
  }
  /* Neuron 5 throws NumericalInstability at the start of step 40 (slice 30, lag 10). */
  CHECK(m->set_status(f, n, bad, 0, "fail_step", 40.0) == 0 && m->set_status(f, n, bad, 0, "fail_code", 2.0) == 0,
        "fail_step");
  CHECK(nestcl_block_upload(b) == 0, "test_lif: upload");
  uint32_t code = 99, index = 99, lag = 99;
  int status = 99;
  for (int64_t origin = 0; origin < 30; origin += MIN_DELAY) {
    CHECK(nestcl_block_update(b, origin, 0, (int)MIN_DELAY) == 0, "test_lif: update at %lld", (long long)origin);
    CHECK(nestcl_block_failure(b, &code, &index, &lag, &status) == 0 && code == 99,
          "test_lif: a failure before the failing step");
  }
  int rc = nestcl_block_update(b, 30, 0, (int)MIN_DELAY);
  char want[160];
  snprintf(want, sizeof want, "test_lif neuron %llu at t = 4 ms: NumericalInstability (status -14)",
           (unsigned long long)(id_first + bad * (id_stride ? id_stride : 1)));
  CHECK(rc == NESTCL_ERUNTIME && strcmp(nestcl_last_error(), want) == 0,
        "update with the failure: rc %d, '%s'; want '%s'", rc, rc ? nestcl_last_error() : "", want);
  CHECK(nestcl_block_failure(b, &code, &index, &lag, &status) == 1, "no failure recorded");
  CHECK(code == 2 && index == bad && lag == 10 && status == -14, "failure record (%u, %u, %u, %d)", code, index, lag,
        status);
  CHECK(nestcl_block_failure(b, NULL, NULL, NULL, NULL) == 1, "failure with NULL outputs");
  /* The failing neuron stopped at its failure; the others went on through the slice (same drive, still rising). */
  double v_bad = 0.0, v_ok = 0.0;
  CHECK(nestcl_block_download(b) == 0, "download");
  CHECK(m->get_status(f, n, bad, 0, "V_m", &v_bad) == 0 && m->get_status(f, n, bad - 1, 0, "V_m", &v_ok) == 0, "V_m");
  CHECK(v_bad > 0.0 && v_bad < v_ok, "V_m of the failing neuron %g, of its neighbour %g", v_bad, v_ok);
  /* The next update is clean again (the neuron's fail_step is behind it). */
  CHECK(nestcl_block_update(b, 45, 0, (int)MIN_DELAY) == 0, "update after the failure: %s", nestcl_last_error());
  code = 0;
  CHECK(nestcl_block_failure(b, &code, &index, &lag, &status) == 0 && code == 0, "a failure left from the last update");
  printf("%-26s failure: %s\n", m->name, want);
  nestcl_block_destroy(b);
}

/* Whether --models names model m (every model without the flag). */
static int selected(const nestcl_model *m)
{
  if (!only_models)
    return 1;
  size_t len = strlen(m->name);
  for (const char *p = only_models; (p = strstr(p, m->name)) != NULL; p += len)
    if ((p == only_models || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
      return 1;
  return 0;
}

int main(int argc, char **argv)
{
  for (int a = 1; a < argc; ++a) {
    if (strcmp(argv[a], "--models") == 0 && a + 1 < argc) {
      only_models = argv[++a];
    } else if (strcmp(argv[a], "--slices") == 0 && a + 1 < argc && atoi(argv[a + 1]) >= 42) {
      slices = (uint32_t)atoi(argv[++a]);
    } else {
      fprintf(stderr, "usage: %s [--models a,b] [--slices S (>= 42)]\n", argv[0]);
      return 2;
    }
  }
  nestcl_device *dev;
  if (nestcl_device_open(NULL, 1, &dev) != 0) {
    printf("skipped: no OpenCL device (%s)\n", nestcl_last_error());
    return 77;
  }
  int silent = 0;
  for (int k = 0; k < nestcl_builtin_model_count; ++k) {
    if (selected(nestcl_builtin_models[k]))
      silent += run_model(dev, nestcl_builtin_models[k]) != 0;
  }
  /* The pause on iaf_psc_alpha (its synapses' values are currents; models sort by name, so it need not be first). */
  const nestcl_model *pause_model = nestcl_builtin_models[0];
  for (int k = 0; k < nestcl_builtin_model_count; ++k) {
    if (strcmp(nestcl_builtin_models[k]->name, "iaf_psc_alpha") == 0) {
      pause_model = nestcl_builtin_models[k];
    }
  }
  run_pause(dev, pause_model);
  run_failure(dev, 100, 3);
  run_failure(dev, 0, 0);
  /* Bad use: lags outside the slice, an update before any upload. */
  nestcl_block_config c = {nestcl_builtin_models[0], 4, 0, H, MIN_DELAY, SLOTS, 0, 0, 7, 0, 1, 0};
  nestcl_block *b;
  CHECK(nestcl_block_create(dev, &c, &b) == 0, "create");
  CHECK(nestcl_block_update(b, 0, 0, 5) == NESTCL_EINVAL, "update before upload must fail");
  CHECK(nestcl_block_upload(b) == 0, "upload");
  CHECK(nestcl_block_update(b, 0, 0, (int)MIN_DELAY + 1) == NESTCL_EINVAL, "lags past min_delay must fail");
  {
    uint64_t rp[2] = {0, 1};
    uint32_t t1 = 0, r0 = 0, l0 = 0, far = 4, big = 1u << 24;
    double v1 = 1.0;
    uint16_t short_delay = MIN_DELAY - 1, d1 = MIN_DELAY;
    CHECK(nestcl_block_set_synapses(b, 1, rp, &t1, &v1, &short_delay) == NESTCL_EINVAL,
          "a delay under min_delay must fail");
    CHECK(nestcl_block_set_synapses(b, 1, rp, &far, &v1, &d1) == NESTCL_EINVAL, "a target past the block must fail");
    CHECK(nestcl_block_deliver(b, 0, &r0, &l0, 1) == NESTCL_EINVAL, "a spike of a row that does not exist must fail");
    CHECK(nestcl_block_set_synapses(b, 1, rp, &t1, &v1, &d1) == 0, "synapses");
    CHECK(nestcl_block_deliver(b, 0, &r0, &l0, 1) == 0, "deliver");
    CHECK(nestcl_block_deliver(b, 15, &r0, &l0, 1) == NESTCL_EINVAL, "spikes of two slices must fail");
    CHECK(nestcl_block_add_poisson(b, -1.0, 1, &t1, &v1, &d1, &r0) == NESTCL_EINVAL, "a negative rate must fail");
    CHECK(nestcl_block_add_poisson(b, 10.0, 1, &t1, &v1, &d1, &big) == NESTCL_EINVAL, "a salt of 25 bits must fail");
    /* precise spike events only for a model with a SliceRingBuffer (model.h, event_queue) */
    CHECK(c.model->event_queue || nestcl_block_stage_event(b, 0, 0, 0.05, 1.0) == NESTCL_EINVAL,
          "an event for a model without an event queue must fail");
  }
  nestcl_block_destroy(b);
  c.ring_slots = MIN_DELAY - 1;
  CHECK(nestcl_block_create(dev, &c, &b) == NESTCL_EINVAL, "a ring shorter than min_delay must be refused");
  nestcl_device_close(dev);
  if (silent) {
    fprintf(stderr, "FAIL: %d model(s) emitted no spike, so the comparison proved little\n", silent);
    return 1;
  }
  return 0;
}
