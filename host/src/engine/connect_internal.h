/*
 * What the host's draw of a block's synapses (connect.c) and the device's
 * (connect_device.c) share: a projection onto a block as the build plans it
 * (its rule, units, chunks, constant weight and delay), and the device's part.
 * connect.c calls connect_device.c, never the other way round.
 */
#ifndef NESTCL_CONNECT_INTERNAL_H
#define NESTCL_CONNECT_INTERNAL_H

#include "engine_internal.h"
#include "core/nestcl_connect.h"

/* A chunk of one projection's units: what it drew, and its failure. */
typedef struct cn_chunk {
  uint32_t u0, u1;
  uint64_t n; /* synapses onto the block */
  double max_abs; /* pass 1: largest |weight| routed into the ring */
  int rc;
  char *err; /* the failure's message (nestcl_last_error is per thread) */
} cn_chunk;

/* One projection onto the block. */
typedef struct cn_proj {
  int p;
  const eng_projection *pr;
  const eng_population *sp, *tp;
  nestcl_conn_rule r;
  int marks; /* multapses forbidden (fixed in- or out-degree): marks over the partners */
  uint32_t unit0, n_units;
  int n_chunks;
  cn_chunk *ch;
  uint32_t *cnt; /* [n_chunks][sp->n]: pass 0 counts per source row, then each chunk's cursor in the row */
  uint64_t *ftn; /* fixed_total_number: each chunk's share of N (the whole target population's chunks) */
  uint64_t row0; /* the CSR's row of source 0 */
  /*
   * A constant weight: its route, once per projection (static synapses); the
   * weights are written after pass 1, row by row (fill_constant_weights).
   */
  int route_const, ch_const;
  double value_const;
  int delay_const;
  uint16_t delay_steps;
} cn_proj;

/* Where a device's draw puts its synapses, and what it tells the host (connect_device.c). */
typedef struct cn_device_out {
  uint64_t *row_ptr; /* the host's row pointers, [n_rows + 1] */
  uint64_t n_rows;
  eng_plastic *pl; /* a set of translated synapses, or NULL: the block's static CSR */
  uint32_t *indegree, *nin; /* per target of the block, added to */
  double *maxd; /* the largest delay (ms) per target, of synapses that read the spike history */
  int history;
  double max_abs; /* the largest |weight| drawn (a plastic set's without the model's bound) */
} cn_device_out;

/*
 * The device's part of the build (connect_device.c): whether streams draw on
 * their device (nestcl_engine_config.build_on), and the program that does.
 */
int eng_conn_device_setup(nestcl_engine *e);
/*
 * Projections pj (the block's static ones, or one plastic set's) drawn on
 * the stream's device into the block's buffers (static: b_target, b_weight,
 * b_delay; plastic: the set's b_target, b_state, b_delay), with b->nnz,
 * max_row, delay_hom (or the set's) and o's row pointers and tallies set.
 * *drawn 0 (nothing changed): not there, the host draws them: a rule or
 * weight the device cannot draw, no room for its counts, or something the
 * host must report itself.
 */
int eng_conn_device_draw(nestcl_engine *e, eng_vp *vp, eng_block *b, cn_proj *pj, int n_pj, cn_device_out *o,
                         int *drawn);
void eng_conn_device_free(nestcl_engine *e);

#endif
