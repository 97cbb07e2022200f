/*
 * The small Brunel network of the engine tests (test_lif neurons): 80 % E,
 * 20 % I, fixed in-degree from each, delay 1.5 ms, Poisson drive, V_m drawn.
 * Shared by the determinism tests (threads, streams, mixes, MPI ranks).
 */
#ifndef NESTCL_TEST_BRUNEL_H
#define NESTCL_TEST_BRUNEL_H
#include <stdint.h>
#include <stdlib.h>
#include "nestcl/engine.h"

typedef struct brunel_result {
  uint64_t *gids;
  int64_t *steps;
  size_t n;
  nestcl_engine_stats st;
} brunel_result;

/* Builds and runs; t_ms split into the given pieces (simulate() called per piece). Returns 0 or NESTCL_E*. */
int brunel_run(const nestcl_engine_config *cfg, uint32_t n_neurons, uint32_t indegree, const double *pieces,
               int n_pieces, brunel_result *out);
void brunel_free(brunel_result *r);
/* 0 when equal; else prints the first difference to stderr. */
int brunel_compare(const char *what, const brunel_result *a, const brunel_result *b);
#endif
