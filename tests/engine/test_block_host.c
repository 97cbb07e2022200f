/*
 * A host block (nestcl/block.h, config.on_host: the model's C loop on the
 * calling thread) against a device block of the same neurons: every built-in
 * model, 257 neurons with heterogeneous drive, the same staged input on every
 * channel, 60 slices of 15 lags with one split into two partial updates (as
 * NEST does when Simulate() ends inside a slice), recording every step. After
 * every slice the spikes must be the same set and the recordings equal; at the
 * end every field equal bit for bit. Then a pause on iaf_psc_alpha: a device
 * block's state and ring (in flight) go into a new host block through
 * nestcl_block_ring_save / _value / _add / _restore, as nest_patch does when
 * a stream VP changes side between two Simulate calls, and both go on equal.
 * Then a failure on the host reports as on the device, and what a host block
 * does not hold (synapses, Poisson drives, plastic sets, history) is refused.
 * Exit 77 without an OpenCL device.
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
#include "test_lif.h"

#define N 257u
#define MIN_DELAY 15u
#define SLOTS 40u
#define SLICES 60
#define SPLIT 41 /* this slice is updated as lags [0, 6) and [6, 15) */
#define H 0.1

static size_t field_bytes(const nestcl_model *m, int f, uint32_t K)
{
  return nestcl_field_type_size(m->fields[f].type) * nestcl_field_len(&m->fields[f], K) * N;
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
  if (nestcl_stream_u32(&s) % 5 != 0) {
    return 0.0;
  }
  int32_t k = (int32_t)(nestcl_stream_u32(&s) % (1u << 22)) - (1 << 21);
  return (double)k / 65536.0;
}

/* The same neurons into a block's host fields: defaults, usable receptor vectors, a drive that makes them fire. */
static void init_neurons(const nestcl_model *m, uint32_t K, void *const *f)
{
  const double drive = strncmp(m->name, "aeif", 4) == 0 ? 900.0 : 300.0;
  for (uint32_t i = 0; i < N; ++i) {
    if (m->set_defaults)
      m->set_defaults(f, N, i, K);
    for (int k = 0; k < m->n_fields; ++k) {
      if (m->fields[k].role == NESTCL_ROLE_PARAMETER && m->fields[k].array_len < 0 &&
          m->fields[k].type == NESTCL_T_DOUBLE) {
        for (size_t r = 0; r < nestcl_field_len(&m->fields[k], K); ++r) {
          double *v = &((double *)f[k])[r * N + i];
          if (*v == 0.0)
            *v = 2.0 + (double)r;
        }
      }
    }
    if (m->set_status)
      (void)m->set_status(f, N, i, K, "I_e", drive + 2.0 * (double)(i % 97));
    if (m->init_buffers)
      CHECK(m->init_buffers(f, N, i, K, H) == 0, "%s: init_buffers", m->name);
    if (m->pre_run)
      CHECK(m->pre_run(f, N, i, K, H) == 0, "%s: pre_run", m->name);
  }
}

/* Models whose spike route refuses negative weights (conductance-based multisynapse: BadProperty) get positive
   input (1); parrot_neuron, whose ring counts spikes, gets single spikes (2). */
static int positive_only(const nestcl_model *m)
{
  if (strcmp(m->name, "parrot_neuron") == 0)
    return 2;
  const uint32_t K = m->has_receptors ? 3u : 0u;
  int ch;
  double v;
  return m->route_spike && m->route_spike(-1.0, K ? 1 : 0, K, &ch, &v) != 0;
}

/* Stages one slice's input for lags [from, to) and updates; the spikes come back sorted into out. */
static uint32_t step(nestcl_block *b, int positive, uint32_t slice, int from, int to, nestcl_spike *out)
{
  const uint32_t nch = nestcl_block_channels(b);
  for (int lag = from; lag < to; ++lag) {
    for (uint32_t ch = 0; ch < nch; ++ch) {
      for (uint32_t i = 0; i < N; ++i) {
        double v = input_value(slice, (uint32_t)lag, ch, i);
        /* parrot_neuron's ring holds spike counts (its route adds 1 per spike): one spike then */
        if (v != 0.0)
          nestcl_block_stage(b, (uint32_t)lag, ch, i, positive > 1 ? 1.0 : positive && v < 0.0 ? -v : v);
      }
    }
  }
  CHECK(nestcl_block_update(b, (int64_t)slice * MIN_DELAY, from, to) == 0, "update: %s", nestcl_last_error());
  const nestcl_spike *sp;
  uint32_t ns;
  nestcl_block_spikes(b, &sp, &ns);
  memcpy(out, sp, ns * sizeof *sp);
  qsort(out, ns, sizeof *out, cmp_spike);
  return ns;
}

/* One slice (or part) on both blocks: the same spikes, the same recordings. Returns the spikes. */
static uint32_t step_both(nestcl_block *const b[2], const nestcl_model *m, uint32_t slice, int from, int to)
{
  static nestcl_spike sp[2][N * MIN_DELAY + 1];
  uint32_t ns[2];
  for (int k = 0; k < 2; ++k)
    ns[k] = step(b[k], positive_only(m), slice, from, to, sp[k]);
  CHECK(ns[0] == ns[1] && memcmp(sp[0], sp[1], ns[0] * sizeof sp[0][0]) == 0,
        "%s slice %u: %u spikes on the device, %u on the host", m->name, slice, ns[0], ns[1]);
  const size_t rec = (size_t)(to - from) * nestcl_block_recordables(b[0]) * N;
  const double *r0 = nestcl_block_recorded(b[0]), *r1 = nestcl_block_recorded(b[1]);
  CHECK(memcmp(r0, r1, rec * sizeof *r0) == 0, "%s slice %u: the recordings differ", m->name, slice);
  return ns[0];
}

static void same_fields(nestcl_block *const b[2], const nestcl_model *m, uint32_t K, const char *when)
{
  CHECK(nestcl_block_download(b[0]) == 0 && nestcl_block_download(b[1]) == 0, "%s: download", m->name);
  void *const *f0 = nestcl_block_fields(b[0]), *const *f1 = nestcl_block_fields(b[1]);
  for (int f = 0; f < m->n_fields; ++f) {
    CHECK(memcmp(f0[f], f1[f], field_bytes(m, f, K)) == 0, "%s: field %s differs %s", m->name, m->fields[f].member,
          when);
  }
}

/* Device block [0] and host block [1] of the same neurons, uploaded. */
static void make_pair(nestcl_device *dev, const nestcl_model *m, uint32_t K, nestcl_block *b[2])
{
  nestcl_block_config c = {m, N, K, H, MIN_DELAY, SLOTS, 0, 1, 7, 500, 2, 0};
  CHECK(nestcl_block_create(dev, &c, &b[0]) == 0, "%s: create on the device", m->name);
  c.on_host = 1;
  c.queue = 99; /* not used on the host */
  CHECK(nestcl_block_create(NULL, &c, &b[1]) == 0, "%s: create on the host: %s", m->name, nestcl_last_error());
  init_neurons(m, K, nestcl_block_fields(b[0]));
  for (int f = 0; f < m->n_fields; ++f) {
    memcpy(nestcl_block_fields(b[1])[f], nestcl_block_fields(b[0])[f], field_bytes(m, f, K));
  }
  CHECK(nestcl_block_upload(b[0]) == 0 && nestcl_block_upload(b[1]) == 0, "%s: upload", m->name);
}

static uint64_t run_model(nestcl_device *dev, const nestcl_model *m)
{
  const uint32_t K = m->has_receptors ? 3u : 0u;
  nestcl_block *b[2];
  make_pair(dev, m, K, b);
  uint64_t total = 0;
  for (uint32_t s = 0; s < SLICES; ++s) {
    if (s == SPLIT) {
      total += step_both(b, m, s, 0, 6);
      total += step_both(b, m, s, 6, (int)MIN_DELAY);
    } else {
      total += step_both(b, m, s, 0, (int)MIN_DELAY);
    }
  }
  same_fields(b, m, K, "at the end");
  uint64_t launches = 1, waits = 1;
  nestcl_block_enqueued(b[1], &launches, &waits);
  CHECK(launches == 0 && waits == 0 && nestcl_block_device_bytes(b[1]) == 0, "%s: the host block used the device",
        m->name);
  printf("%-30s host block == device block: %llu spikes, every recording and field\n", m->name,
         (unsigned long long)total);
  nestcl_block_destroy(b[0]);
  nestcl_block_destroy(b[1]);
  return total;
}

/* A device block's state and ring, mid-slice, into a host block: both go on alike. */
static void run_pause(nestcl_device *dev, const nestcl_model *m)
{
  nestcl_block *b[2], *fresh;
  make_pair(dev, m, 0, b);
  /* b[1] only lends its config: the host block that takes over is fresh (its fields and ring from b[0]). */
  nestcl_block_config c = {m, N, 0, H, MIN_DELAY, SLOTS, 0, 1, 7, 500, 2, 1};
  CHECK(nestcl_block_create(NULL, &c, &fresh) == 0, "create the host block");
  nestcl_block_destroy(b[1]);
  static nestcl_spike sp[N * MIN_DELAY + 1];
  for (uint32_t s = 0; s < 20; ++s)
    step(b[0], 0, s, 0, (int)MIN_DELAY, sp);
  step(b[0], 0, 20, 0, 7, sp);
  /* Input in flight, as synapses longer than min_delay leave it: added to the device's ring for later steps. */
  const int64_t next = 20 * MIN_DELAY + 7;
  CHECK(nestcl_block_ring_save(b[0]) == 0, "save the device ring");
  for (int64_t st = next + 1; st < next + SLOTS; st += 3) {
    for (uint32_t i = (uint32_t)st % 5; i < N; i += 5) {
      nestcl_block_ring_add(b[0], st, (uint32_t)(st + i) % nestcl_block_channels(b[0]), i,
                            nestcl_fixed_from_double(60.0));
    }
  }
  CHECK(nestcl_block_ring_restore(b[0]) == 0, "restore the device ring");
  CHECK(nestcl_block_download(b[0]) == 0 && nestcl_block_ring_save(b[0]) == 0, "save");
  for (int f = 0; f < m->n_fields; ++f) {
    memcpy(nestcl_block_fields(fresh)[f], nestcl_block_fields(b[0])[f], field_bytes(m, f, 0));
  }
  CHECK(nestcl_block_upload(fresh) == 0 && nestcl_block_ring_save(fresh) == 0, "upload the host block");
  uint64_t pending = 0;
  for (int64_t st = next; st < next + SLOTS; ++st) {
    for (uint32_t ch = 0; ch < nestcl_block_channels(b[0]); ++ch) {
      for (uint32_t i = 0; i < N; ++i) {
        int64_t v = nestcl_block_ring_value(b[0], st, ch, i);
        if (v) {
          nestcl_block_ring_add(fresh, st, ch, i, v);
          CHECK(nestcl_block_ring_value(fresh, st, ch, i) == v, "ring_add on the host block");
          pending++;
        }
      }
    }
  }
  CHECK(nestcl_block_ring_restore(fresh) == 0, "restore");
  CHECK(pending > 0, "nothing in flight at the pause, so the test proves little");
  b[1] = fresh;
  uint64_t total = step_both(b, m, 20, 7, (int)MIN_DELAY);
  for (uint32_t s = 21; s < 40; ++s)
    total += step_both(b, m, s, 0, (int)MIN_DELAY);
  same_fields(b, m, 0, "after the pause");
  CHECK(total > 0, "no spikes after the pause");
  printf("%-30s device -> host with %llu ring entries in flight: equal after (%llu spikes)\n", m->name,
         (unsigned long long)pending, (unsigned long long)total);
  nestcl_block_destroy(b[0]);
  nestcl_block_destroy(b[1]);
}

/* A failure in the C loop reads as the device's (test_block's run_failure, on the host). */
static void run_failure(void)
{
  const nestcl_model *m = &test_lif_model;
  const uint32_t n = 8, bad = 5;
  nestcl_block_config c = {m, n, 0, H, MIN_DELAY, SLOTS, 0, 0, 7, 100, 3, 1};
  nestcl_block *b;
  CHECK(nestcl_block_create(NULL, &c, &b) == 0, "test_lif: create");
  void *const *f = nestcl_block_fields(b);
  for (uint32_t i = 0; i < n; ++i) {
    m->set_defaults(f, n, i, 0);
    CHECK(m->set_status(f, n, i, 0, "I_e", 500.0) == 0 && m->pre_run(f, n, i, 0, H) == 0, "test_lif: init");
  }
  CHECK(m->set_status(f, n, bad, 0, "fail_step", 40.0) == 0 && m->set_status(f, n, bad, 0, "fail_code", 2.0) == 0,
        "fail_step");
  CHECK(nestcl_block_upload(b) == 0, "upload");
  for (int64_t origin = 0; origin < 30; origin += MIN_DELAY) {
    CHECK(nestcl_block_update(b, origin, 0, (int)MIN_DELAY) == 0, "update at %lld", (long long)origin);
  }
  int rc = nestcl_block_update(b, 30, 0, (int)MIN_DELAY);
  const char *want = "test_lif neuron 115 at t = 4 ms: NumericalInstability (status -14)";
  CHECK(rc == NESTCL_ERUNTIME && strcmp(nestcl_last_error(), want) == 0, "failure: rc %d, '%s'; want '%s'", rc,
        rc ? nestcl_last_error() : "", want);
  uint32_t code = 0, index = 0, lag = 0;
  int status = 0;
  CHECK(nestcl_block_failure(b, &code, &index, &lag, &status) == 1 && code == 2 && index == bad && lag == 10 &&
          status == -14,
        "failure record (%u, %u, %u, %d)", code, index, lag, status);
  CHECK(nestcl_block_update(b, 45, 0, (int)MIN_DELAY) == 0, "update after the failure");
  printf("%-30s failure on the host: %s\n", m->name, want);
  nestcl_block_destroy(b);
}

/* What only a device block holds is refused on the host, with the model's name. */
static void run_refusals(const nestcl_model *m)
{
  nestcl_block_config c = {m, 4, 0, H, MIN_DELAY, SLOTS, 0, 0, 7, 0, 1, 1};
  nestcl_block *b;
  CHECK(nestcl_block_create(NULL, &c, &b) == 0 && nestcl_block_upload(b) == 0, "create");
  uint64_t rp[2] = {0, 1};
  uint32_t t1 = 0, r0 = 0, l0 = 0;
  double v1 = 1.0;
  uint16_t d1 = MIN_DELAY;
  CHECK(nestcl_block_set_synapses(b, 1, rp, &t1, &v1, &d1) == NESTCL_EINVAL &&
          strstr(nestcl_last_error(), "runs on the host") != NULL,
        "synapses on a host block: %s", nestcl_last_error());
  CHECK(nestcl_block_deliver(b, 0, &r0, &l0, 1) == NESTCL_EINVAL, "delivery on a host block");
  CHECK(nestcl_block_add_poisson(b, 10.0, 1, &t1, &v1, &d1, &r0) == NESTCL_EINVAL, "Poisson on a host block");
  CHECK(nestcl_block_history(b, 20.0, 110.0, 16) == NESTCL_EINVAL, "history on a host block");
  CHECK(nestcl_block_update(b, 0, 0, (int)MIN_DELAY + 1) == NESTCL_EINVAL, "lags past min_delay must fail");
  /* what decides whether plastic synapses may go to a (device) block of this model */
  CHECK(nestcl_block_plastic_routable(b, 0) == 1, "%s: rport 0 must be routable", m->name);
  nestcl_block_destroy(b);
  c.ring_slots = MIN_DELAY - 1;
  CHECK(nestcl_block_create(NULL, &c, &b) == NESTCL_EINVAL, "a ring shorter than min_delay must be refused");
  printf("%-30s a host block refuses synapses, Poisson drives and the history\n", m->name);
}

int main(void)
{
  nestcl_device *dev;
  if (nestcl_device_open(NULL, 1, &dev) != 0) {
    printf("skipped: no OpenCL device (%s)\n", nestcl_last_error());
    return 77;
  }
  const nestcl_model *lif = NULL;
  int silent = 0;
  for (int k = 0; k < nestcl_builtin_model_count; ++k) {
    silent += run_model(dev, nestcl_builtin_models[k]) == 0;
    if (strcmp(nestcl_builtin_models[k]->name, "iaf_psc_alpha") == 0)
      lif = nestcl_builtin_models[k];
  }
  CHECK(lif != NULL, "no built-in iaf_psc_alpha");
  run_pause(dev, lif);
  run_failure();
  run_refusals(lif);
  /* parrot_neuron's handle() counts spikes at rport 0 and ignores rport 1: neither adds the weight */
  for (int k = 0; k < nestcl_builtin_model_count; ++k) {
    const nestcl_model *m = nestcl_builtin_models[k];
    if (strcmp(m->name, "parrot_neuron") != 0)
      continue;
    nestcl_block_config c = {m, 4, 0, H, MIN_DELAY, SLOTS, 0, 0, 7, 0, 1, 1};
    nestcl_block *b;
    CHECK(nestcl_block_create(NULL, &c, &b) == 0, "parrot: create");
    CHECK(nestcl_block_plastic_routable(b, 0) == 0 && nestcl_block_plastic_routable(b, 1) == 0,
          "parrot_neuron: a port where plastic synapses could deliver");
    nestcl_block_destroy(b);
  }
  nestcl_device_close(dev);
  if (silent) {
    fprintf(stderr, "FAIL: %d model(s) emitted no spike, so the comparison proved little\n", silent);
    return 1;
  }
  return 0;
}
