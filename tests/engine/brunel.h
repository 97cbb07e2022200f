/*
 * The Brunel network of the engine tests: 80 % E, 20 % I neurons of one model,
 * fixed in-degree (80 % from E, 20 % from I, no autapses), delay 1.5 ms, one
 * Poisson train per neuron, V_m drawn, E and I spike trains recorded. What
 * varies between models (the model table and name, the parameters set on
 * both populations, the weights and the drive) is a brunel_net; the two nets
 * the tests use are the hand-written test_lif (no translator needed) and the
 * translated iaf_psc_alpha (the product path, when nestcl_models is built).
 * Shared by the determinism tests (threads, streams, mixes, MPI ranks).
 */
#ifndef NESTCL_TEST_BRUNEL_H
#define NESTCL_TEST_BRUNEL_H
#include <stdint.h>
#include <stdlib.h>
#include "nestcl/engine.h"

#define BRUNEL_MAX_SETTINGS 12

typedef struct brunel_net {
  const char *label; /* for messages */
  const nestcl_model *const *models;
  int n_models;
  const char *model;
  /* Constants set on both populations, in this order, before V_m (NEST applies E_L first). */
  const char *names[BRUNEL_MAX_SETTINGS];
  double values[BRUNEL_MAX_SETTINGS];
  int n_settings;
  nestcl_value V_m;
  double J_E; /* weight of E synapses and of the Poisson input (model units, pA) */
  double g; /* I synapses weigh -g J_E */
  double poisson_rate_hz; /* of each neuron's train */
  double rate_min, rate_max; /* band of the mean rate (Hz) at seed 4242, 2,000 neurons, 200 ms */
  /* Optional: E->E through a translated synapse model (NULL: static), its parameters, tau_minus of E. */
  const nestcl_synapse_model *const *synapse_models;
  int n_synapse_models;
  const char *ee_synapse;
  nestcl_syn_param ee_params[8];
  int n_ee_params;
  double tau_minus;
} brunel_net;

/* test_lif: J_E 60 pA, g 5, 14 kHz drive (62 Hz). */
brunel_net brunel_test_lif(void);
#ifdef NESTCL_TEST_HAVE_BUILTIN_MODELS
/* The translated iaf_psc_alpha of nestcl_builtin_models (see brunel.c for the regime). */
brunel_net brunel_iaf_psc_alpha(void);
/* The same with E->E the translated stdp_pl_synapse_hom of hpc_benchmark (alpha 0.0513, lambda 0.1, mu 0.4,
   tau_plus 15 ms; tau_minus 30 ms), or stdp_synapse (lambda 0.05, Wmax 2 J_E). */
brunel_net brunel_iaf_psc_alpha_stdp(const char *synapse);
#endif

typedef struct brunel_result {
  uint64_t *gids;
  int64_t *steps;
  size_t n;
  nestcl_engine_stats st;
  nestcl_enqueue_counts enq_stream; /* what the first stream enqueued (st.vps is gone with the engine) */
  uint64_t plastic_tasks, plastic_tasks_other; /* the CPU VPs' plastic delivery tasks, summed over VPs */
  nestcl_weight_stats w; /* of the E->E synapses when they are translated ones */
} brunel_result;

/* A described (not yet built) Brunel engine: its spike recorders of E and I, the E->E projection (-1: static). */
typedef struct brunel_engine {
  nestcl_engine *e;
  int rec_e, rec_i, ee;
} brunel_engine;
/* Creates the engine and describes the network (the same description whatever the split in cfg). */
int brunel_build(const brunel_net *net, const nestcl_engine_config *cfg, uint32_t n_neurons, uint32_t indegree,
                 brunel_engine *out);
/* The recorded trains (E and I merged by step, then gid), the statistics, the E->E weights when plastic. */
int brunel_collect(const brunel_engine *be, brunel_result *out);
/*
 * Builds and runs; t_ms split into the given pieces (simulate() called per
 * piece). A negative piece -t simulates t with a stop request
 * (nestcl_engine_set_stop_flag) that must stop the engine at the end of the
 * next super step, then the rest of t: a stopped run continues as if never
 * stopped. Returns 0 or NESTCL_E*.
 */
int brunel_run(const brunel_net *net, const nestcl_engine_config *cfg, uint32_t n_neurons, uint32_t indegree,
               const double *pieces, int n_pieces, brunel_result *out);
void brunel_free(brunel_result *r);
/* One way of running the same network: the split, simulate() pieces, and overrides. */
typedef struct brunel_variant {
  const char *name;
  int threads, streams;
  double alpha;
  const double *pieces;
  int n_pieces;
  int weight_double;
  uint32_t history_capacity; /* 0: the default */
  const char *mode, *width; /* NESTCL_DELIVER_MODE / _WIDTH for this run, or NULL */
  int sync_interval; /* 0: the default */
  int host_clock;
  int want_resumes; /* the device loop must have halted for a full history and resumed */
  int one_wait; /* the stream (beside threads) waits once per super step, once more per piece at most */
} brunel_variant;

/*
 * Runs every variant (2,000 neurons, in-degree 200, seed of cfg) and compares
 * it with ref, printing a line each. Returns the failures, or -77 when there
 * is no OpenCL device.
 */
int brunel_check_variants(const brunel_net *net, const nestcl_engine_config *cfg, const brunel_result *ref,
                          const brunel_variant *v, int n);

/* 0 when equal (spike trains, and E->E weights when plastic); else prints the first difference to stderr. */
int brunel_compare(const char *what, const brunel_result *a, const brunel_result *b);
#endif
