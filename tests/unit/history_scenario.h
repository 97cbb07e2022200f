/*
 * The spike trains of the history tests (test_history.c, C, and
 * tests/models/test_history_native.cpp, C++): per neuron, 1-12 STDP synapses
 * with delays of 0.1-5 ms and 3000 events, post spikes and pre spikes of a
 * synapse on the 0.1 ms grid, with bursts, simultaneous pre and post spikes
 * and post spikes exactly a dendritic delay after a pre spike.
 */
#ifndef NESTCL_TEST_HISTORY_SCENARIO_H
#define NESTCL_TEST_HISTORY_SCENARIO_H

#include "nestcl_philox.h"

#define NEURONS 64u
#define EVENTS 3000u
#define MAXSYN 12u
#define EPS 1e-6 /* NEST's stdp_eps */
#define MIN_DELAY 0.1 /* ms */
#define TAU_MINUS 20.0 /* ms */
#define TAU_TRIPLET 110.0
#define TAU_MINUS_INV (1.0 / TAU_MINUS) /* as NEST keeps them: multiplied, not divided */
#define TAU_TRIPLET_INV (1.0 / TAU_TRIPLET)

/* One event of a neuron's scenario: a post spike (syn < 0) or a pre spike of synapse syn, at t. */
typedef struct ev {
  double t;
  int syn, pad;
} ev;

typedef struct scenario {
  int n_syn, pad;
  double delay[MAXSYN];
  ev e[EVENTS];
} scenario;

/* A neuron's synapses and spike trains: Poisson-like with bursts, and coincidences on purpose. */
static inline void make_scenario(unsigned i, scenario *sc)
{
  nestcl_rng_stream st = nestcl_stream_init(nestcl_rng_key(77, 1), nestcl_rng_counter(i, 0));
  sc->n_syn = 1 + (int)(nestcl_stream_u32(&st) % MAXSYN);
  for (int j = 0; j < sc->n_syn; ++j)
    sc->delay[j] = 0.1 * (double)(1 + nestcl_stream_u32(&st) % 50);
  double t = 1.0;
  for (unsigned e = 0; e < EVENTS; ++e) {
    const unsigned kind = nestcl_stream_u32(&st) % 16;
    if (kind < 10)
      t += 0.1 * (double)(nestcl_stream_u32(&st) % 40); /* on the grid; 0: same time */
    else if (kind < 13)
      t += 0.1; /* a burst */
    sc->e[e].t = t;
    sc->e[e].syn = kind % 3 == 0 ? -1 : (int)(nestcl_stream_u32(&st) % (unsigned)sc->n_syn);
    if (kind == 15 && e > 0 && sc->e[e - 1].syn >= 0) {
      /* a post spike exactly the dendritic delay after the last pre spike */
      sc->e[e].t = sc->e[e - 1].t + sc->delay[sc->e[e - 1].syn];
      sc->e[e].syn = -1;
      t = sc->e[e].t;
    }
  }
}

#endif
