/*
 * Translated synapses on a nestcl_block (nestcl_block_add_plastic and the
 * block's spike history), what nest_patch drives for NEST's STDP connections
 * onto stream VPs: 40 iaf_psc_alpha neurons with heterogeneous bias currents
 * fire; 25 external sources spike at random steps and reach 8 of them each
 * through stdp_pl_synapse_hom (hpc_benchmark's parameters) or stdp_synapse,
 * with per-synapse delays; NEST's order per slice (deliver the previous
 * slice's spikes, update, the neurons' spikes into their history). A host
 * reference replays
 * the same pre and post spikes through the model's C send() on nestcl_history
 * rings: every synapse's final struct (weight, Kplus, t_lastspike) and every
 * neuron's history (length, last spike, Kminus) must be equal bit for bit.
 * Bad input (per-source state that differs within a row, a history-reading
 * model without history) is refused. Exit 77 without an OpenCL device.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NESTCL_CHECK_FATAL
#include "nestcl/block.h"
#include "nestcl_check.h"
#include "nestcl_history.h"
#include "nestcl_philox.h"
#include "nestcl_synapse.h"
#include "builtin_models.h"

#define N 40u
#define SRC 25u
#define FAN 8u
#define MIN_DELAY 10u
#define SLOTS 40u
#define SLICES 300
#define H 0.1
#define TAU_MINUS 30.0

static uint32_t draw(uint64_t id, uint64_t step, uint32_t n)
{
  nestcl_rng_stream s = nestcl_stream_init(nestcl_rng_key(5, 9), nestcl_rng_counter(id, step));
  return nestcl_stream_u32(&s) % n;
}

static int run(nestcl_device *dev, const char *syn_name, const char *const *pn, const double *pv, int np)
{
  const nestcl_synapse_model *sm = find_syn(syn_name);
  const nestcl_model *m = find_model("iaf_psc_alpha");
  CHECK(sm && m, "models");
  nestcl_block_config c = {m, N, 0, H, MIN_DELAY, SLOTS, 0, 0, 7, 1, 1, 0};
  nestcl_block *b;
  CHECK(nestcl_block_create(dev, &c, &b) == 0, "create: %s", nestcl_last_error());
  void *const *f = nestcl_block_fields(b);
  for (uint32_t i = 0; i < N; ++i) {
    m->set_defaults(f, N, i, 0);
    CHECK(m->set_status(f, N, i, 0, "I_e", 360.0 + 4.0 * i) == 0, "I_e");
    CHECK(!m->init_buffers || m->init_buffers(f, N, i, 0, H) == 0, "init_buffers");
    CHECK(m->pre_run(f, N, i, 0, H) == 0, "pre_run");
  }
  CHECK(nestcl_block_upload(b) == 0, "upload: %s", nestcl_last_error());
  /* Synapses: row r (source r) reaches FAN targets, delays 1.0 .. 3.5 ms. */
  uint64_t row_ptr[SRC + 1];
  uint32_t target[SRC * FAN];
  uint16_t delay[SRC * FAN];
  unsigned char *syn = calloc(SRC * FAN, sm->syn_size), *cp = calloc(1, sm->cp_size + 8);
  unsigned char *ref = calloc(SRC * FAN, sm->syn_size);
  CHECK(syn && cp && ref, "memory");
  uint32_t nin[N] = {0};
  double maxd[N] = {0};
  for (uint32_t r = 0; r < SRC; ++r) {
    row_ptr[r] = (uint64_t)r * FAN;
    for (uint32_t j = 0; j < FAN; ++j) {
      uint32_t k = r * FAN + j;
      unsigned char *s = syn + (size_t)k * sm->syn_size;
      sm->set_defaults(s, cp);
      for (int p = 0; p < np; ++p)
        CHECK(sm->set_status(s, cp, pn[p], pv[p]) == 0, "set %s", pn[p]);
      CHECK(sm->set_status(s, cp, "weight", 30.0) == 0, "weight");
      target[k] = draw(r, j, N);
      delay[k] = (uint16_t)(10 + draw(r, 100 + j, 26));
      nin[target[k]]++;
      double dms = delay[k] * H;
      maxd[target[k]] = dms > maxd[target[k]] ? dms : maxd[target[k]];
    }
  }
  row_ptr[SRC] = SRC * FAN;
  memcpy(ref, syn, (size_t)SRC * FAN * sm->syn_size);
  int set = -1;
  /* Refused: a history-reading model before the history, and per-source state that differs in a row. */
  CHECK(nestcl_block_add_plastic(b, sm, cp, 0, SRC, row_ptr, target, delay, syn, &set) == NESTCL_EINVAL &&
          strstr(nestcl_last_error(), "history"),
        "add_plastic without history: %s", nestcl_last_error());
  CHECK(nestcl_block_history(b, TAU_MINUS, 110.0, 4096) == 0, "history: %s", nestcl_last_error());
  for (uint32_t i = 0; i < N; ++i) {
    nestcl_history_state st = {0.0, 0.0, -1.0, maxd[i], nin[i], 0};
    CHECK(nestcl_block_history_set(b, i, &st, NULL) == 0, "history_set: %s", nestcl_last_error());
  }
  unsigned char *odd = malloc((size_t)SRC * FAN * sm->syn_size);
  CHECK(odd, "memory");
  memcpy(odd, syn, (size_t)SRC * FAN * sm->syn_size);
  CHECK(sm->set_status(odd + (size_t)1 * sm->syn_size, cp, "Kplus", 0.5) == 0, "Kplus");
  CHECK(nestcl_block_add_plastic(b, sm, cp, 0, SRC, row_ptr, target, delay, odd, &set) == NESTCL_EINVAL &&
          strstr(nestcl_last_error(), "once per source"),
        "differing Kplus: %s", nestcl_last_error());
  free(odd);
  /* (A refused set leaves nothing behind.) The real one: */
  CHECK(nestcl_block_add_plastic(b, sm, cp, 0, SRC, row_ptr, target, delay, syn, &set) == 0, "add_plastic: %s",
        nestcl_last_error());
  /* The run, and the spikes both ways for the reference. */
  uint32_t *pre = malloc(sizeof(uint32_t) * 2 * SRC * MIN_DELAY * SLICES),
           *post = malloc(sizeof(uint32_t) * 2 * N * MIN_DELAY * SLICES);
  size_t npre = 0, npost = 0;
  size_t *pre_at = calloc(SLICES + 2, sizeof *pre_at), *post_at = calloc(SLICES + 2, sizeof *post_at);
  CHECK(pre && post && pre_at && post_at, "memory");
  uint32_t rows[SRC * MIN_DELAY], lags[SRC * MIN_DELAY];
  for (int sl = 0; sl < SLICES; ++sl) {
    int64_t origin = (int64_t)sl * MIN_DELAY;
    /* The sources' spikes of the previous slice, at ~40 Hz. */
    uint32_t n = 0;
    pre_at[sl] = npre;
    if (sl > 0) {
      for (uint32_t lag = 0; lag < MIN_DELAY; ++lag) {
        for (uint32_t r = 0; r < SRC; ++r) {
          if (draw(1000 + r, (uint64_t)(origin - MIN_DELAY + lag), 250) == 0) {
            rows[n] = r;
            lags[n++] = lag;
            pre[2 * npre] = r;
            pre[2 * npre++ + 1] = lag;
          }
        }
      }
    }
    CHECK(nestcl_block_deliver_plastic(b, set, origin - MIN_DELAY, rows, lags, n) == 0, "deliver: %s",
          nestcl_last_error());
    CHECK(nestcl_block_update(b, origin, 0, MIN_DELAY) == 0, "update: %s", nestcl_last_error());
    const nestcl_spike *sp;
    uint32_t ns;
    nestcl_block_spikes(b, &sp, &ns);
    post_at[sl] = npost;
    for (uint32_t k = 0; k < ns; ++k) {
      post[2 * npost] = sp[k].index;
      post[2 * npost++ + 1] = sp[k].lag;
    }
  }
  pre_at[SLICES] = npre;
  post_at[SLICES] = npost;
  unsigned char *got = malloc((size_t)SRC * FAN * sm->syn_size);
  CHECK(got && nestcl_block_plastic_read(b, set, got) == 0, "read: %s", nestcl_last_error());
  CHECK(nestcl_block_history_read(b) == 0, "history_read: %s", nestcl_last_error());
  /* The reference: host rings, the same order. */
  const int fused = nestcl_libm_exp_fused() != 0;
  const unsigned cap = 4096;
  double *ht = calloc((size_t)N * cap, 8), *hk = calloc((size_t)N * cap, 8), *hkt = calloc((size_t)N * cap, 8);
  nestcl_u32 *hacc = calloc((size_t)N * cap, 4), head[N] = {0}, len[N] = {0};
  double Km[N] = {0}, Kmt[N] = {0}, last[N], hmaxd[N];
  nestcl_u32 hnin[N];
  for (uint32_t i = 0; i < N; ++i) {
    last[i] = -1.0;
    hmaxd[i] = maxd[i];
    hnin[i] = nin[i];
  }
  nestcl_history h = {ht, hk, hkt, hacc, head, len, Km, Kmt, last, hnin, hmaxd, cap};
  for (int sl = 0; sl < SLICES; ++sl) {
    int64_t origin = (int64_t)sl * MIN_DELAY;
    for (size_t q = pre_at[sl]; q < pre_at[sl + 1]; ++q) {
      uint32_t r = pre[2 * q];
      int64_t step = origin - MIN_DELAY + pre[2 * q + 1];
      for (uint64_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k) {
        /* NEST's Time: ms = 1e-3 * tics, 100 tics per step; delay ms = steps * (100 / 1000). */
        nestcl_syn_env env = {&h,
                              target[k],
                              1e-3 * (double)((step + 1) * 100),
                              (double)delay[k] * (100.0 / 1000.0),
                              delay[k],
                              0,
                              1,
                              1.0 / TAU_MINUS,
                              1e-6,
                              fused};
        double w;
        sm->send_cpu(ref + k * sm->syn_size, cp, &env, &w);
      }
    }
    /* Post spikes of this slice, each neuron's in lag order. */
    for (uint32_t i = 0; i < N; ++i) {
      for (uint32_t lag = 0; lag < MIN_DELAY; ++lag) {
        for (size_t q = post_at[sl]; q < post_at[sl + 1]; ++q) {
          if (post[2 * q] == i && post[2 * q + 1] == lag) {
            double t = 1e-3 * (double)((origin + lag + 1) * 100);
            CHECK(nestcl_hist_set_spiketime(&h, i, t, 1.0 / TAU_MINUS, 1.0 / 110.0, MIN_DELAY * (100.0 / 1000.0), 1e-6,
                                            fused) == 0,
                  "reference history full");
          }
        }
      }
    }
  }
  size_t differ = 0, moved = 0;
  for (uint32_t k = 0; k < SRC * FAN; ++k) {
    differ += memcmp(got + (size_t)k * sm->syn_size, ref + (size_t)k * sm->syn_size, sm->syn_size) != 0;
    double w0, w1;
    sm->get_status(syn + (size_t)k * sm->syn_size, cp, "weight", &w0);
    sm->get_status(got + (size_t)k * sm->syn_size, cp, "weight", &w1);
    moved += w0 != w1;
  }
  size_t hdiff = 0;
  for (uint32_t i = 0; i < N; ++i) {
    nestcl_history_state st;
    CHECK(nestcl_block_history_get(b, i, &st, NULL) == 0, "history_get");
    hdiff += st.n_entries != len[i] || st.last_spike != last[i] || st.Kminus != Km[i] || st.n_incoming != nin[i];
  }
  printf("%s: %zu pre, %zu post spikes; %u synapses, %zu moved, %zu differ from the host reference; %zu neurons' "
         "histories differ\n",
         syn_name, npre, npost, SRC * FAN, moved, differ, hdiff);
  int bad = differ || hdiff || moved < SRC * FAN / 2 || npost < 100 || npre < 100;
  free(ht);
  free(hk);
  free(hkt);
  free(hacc);
  free(pre);
  free(post);
  free(pre_at);
  free(post_at);
  free(got);
  free(syn);
  free(ref);
  free(cp);
  nestcl_block_destroy(b);
  return bad;
}

int main(void)
{
  nestcl_device *dev;
  if (nestcl_device_open(NULL, 1, &dev) != 0) {
    printf("SKIP: no OpenCL device: %s\n", nestcl_last_error());
    return 77;
  }
  const char *pl_n[] = {"alpha", "lambda", "mu", "tau_plus"};
  const double pl_v[] = {0.0513, 0.1, 0.4, 15.0};
  const char *st_n[] = {"lambda", "Wmax", "tau_plus"};
  const double st_v[] = {0.05, 60.0, 15.0};
  int bad = run(dev, "stdp_pl_synapse_hom", pl_n, pl_v, 4);
  bad |= run(dev, "stdp_synapse", st_n, st_v, 3);
  nestcl_device_close(dev);
  return bad;
}
