/*
 * The private layout of a nestcl_block (nestcl/block.h), shared by block.c
 * (the block on a device queue) and block_host.c (the same block run by its
 * model's C loop on the calling thread, config.on_host).
 */
#ifndef NESTCL_BLOCK_INTERNAL_H
#define NESTCL_BLOCK_INTERNAL_H

#include "nestcl/block.h"
#include "enqueue.h"
#include "plastic_dev.h"
#include "update_fill.h"

/* Extra spike-list entries of a block, beyond one per neuron and step (64 Ki entries, 512 KiB). */
#define NESTCL_BLOCK_RUN_ROOM 65536u

/* One device poisson_generator's entries (nestcl_block_add_poisson). */
typedef struct block_poisson {
  uint32_t n, chunks, cdf_len, kstop;
  double *cdf;
  nestcl_buffer b_target, b_delay, b_value, b_id, b_cdf;
} block_poisson;

/* One set of translated synapses (nestcl_block_add_plastic) and its spikes pending for the next update. */
typedef struct block_plastic {
  const nestcl_synapse_model *sm;
  eng_syn_layout lay;
  cl_program prog;
  cl_kernel k;
  size_t width; /* work-items per work-group (per spiking source, or per chunk: flat), within k's limit */
  eng_plastic_shape shape; /* nestcl_plastic's (plastic_dev.h) */
  uint32_t n_rows, delay_hom, max_row;
  uint64_t nnz;
  uint64_t *row_host; /* the rows' pointers (n_rows + 1), for writes and reads by rows */
  uint32_t rows_filled; /* rows written so far (nestcl_block_plastic_fill) */
  uint16_t delay_min, delay_max;
  long rport;
  int ch[3]; /* the channels of positive, negative and zero weights */
  unsigned char *tmpl; /* synapse 0: the parameters of all */
  nestcl_buffer b_row, b_target, b_delay, b_state, b_src_state, b_tmpl, b_cp, b_srcs, b_lags;
  nestcl_buffer b_done; /* the flat shape's per-row counters */
  uint32_t *pend; /* (row, lag) pairs */
  uint32_t n_pend, pend_cap;
  int64_t pend_origin;
  uint32_t *srcs, *lags; /* the pending spikes by row: (row, first, end) into lags */
} block_plastic;

struct nestcl_block {
  nestcl_device *dev;
  nestcl_block_config c;
  uint32_t n_channels, n_rec, spike_cap;
  void **fields; /* host SoA, one array per field */
  size_t *field_bytes;
  int64_t *stage; /* [min_delay][n_channels][n] */
  size_t stage_elems;
  int stage_shared; /* stage is a part of a set's array (block_set.c), which frees it */
  nestcl_spike *spikes;
  double *spike_offsets; /* model->spike_offsets: the offset of each entry of spikes, else NULL */
  uint32_t n_spikes;
  uint32_t count[NESTCL_COUNT_WORDS]; /* the last update's spike count and failure record (model.h) */
  double *rec; /* [min_delay][n_rec][n] */
  size_t rec_elems;
  char *options; /* constants the kernel was built with */
  cl_program program;
  cl_kernel k_update, k_stage;
  nestcl_buffer *b_fields;
  nestcl_buffer b_ring, b_stage, b_count, b_spikes, b_rec, b_offsets;
  /* Device-resident synapses (nestcl_block_set_synapses) and the spikes pending for them. */
  cl_kernel k_deliver, k_poisson;
  int contiguous; /* CPU device: each work-item walks a contiguous chunk of a row */
  size_t deliver_width; /* work-items per spike at most (set with the kernels) */
  uint32_t n_rows, delay_hom;
  uint64_t nnz, max_row;
  uint64_t syn_filled; /* synapses written so far (nestcl_block_synapses_fill) */
  uint16_t syn_delay_min, syn_delay_max; /* their delays' range, as begun */
  nestcl_buffer b_row_ptr, b_syn_target, b_syn_value, b_syn_delay, b_pend;
  uint32_t *pend; /* (row, lag) pairs */
  uint32_t n_pend, pend_cap;
  int64_t pend_origin;
  block_poisson *poisson;
  int n_poisson;
  int64_t *ring_copy; /* host copy of the ring (nestcl_block_ring_save), or NULL; on_host: the ring itself */
  block_plastic *plastic;
  int n_plastic;
  eng_history hist; /* cap 0: none */
  int hist_on_device;
  /* Precise spike input (model->event_queue): the events staged for the next update, in staging order ... */
  uint32_t *ev_i, *ev_lag;
  double *ev_off, *ev_w;
  uint32_t n_ev, ev_cap;
  /* ... and grouped by neuron for the kernel (model.h, evq_*), on the device in b_evq with room for ev_dev_cap */
  uint32_t *evq_first, *evq_lag;
  double *evq_off, *evq_w;
  nestcl_buffer b_evq[4];
  uint32_t evq_cap, ev_dev_cap; /* room of evq_lag/_off/_w, and of b_evq */
  /* What the slices asked of the device (nestcl_block_enqueued), and the update in flight (enqueued, not collected). */
  nestcl_enqueue_counts enq;
  int in_flight;
  int64_t flight_origin;
  uint32_t guess; /* spike entries read back with the count */
  double spike_rate; /* entries per slice, as the last slices had them (the next guess) */
};

/* block_host.c: lags [from, to) of a host block's slice (nestcl_block_update_enqueue with on_host). */
int nestcl_block_host_update(nestcl_block *b, int64_t origin_steps, int from, int to);
/*
 * The values of the block's update arguments that stay the same from slice to
 * slice (nestcl_update_args_init), for its kernel (block.c) and its C loop
 * (block_host.c) alike; inline so that neither file depends on the other.
 */
static inline void nestcl_block_update_args(const nestcl_block *b, nestcl_update_args *a)
{
  nestcl_update_args_init(a, b->c.n, b->c.K, b->c.resolution_ms, b->c.ring_slots, b->n_channels, b->spike_cap,
                          b->c.record ? 1 : 0, b->c.rng_seed, b->c.id_first, b->c.id_stride ? b->c.id_stride : 1);
}
/* block.c: the kernels' arguments that name the block's buffers, set again (a set replaced the buffers). */
int nestcl_block_repoint(nestcl_block *b);
/* block.c: the pending spikes of every plastic set through its kernel (grouped by row, in time order). */
cl_int nestcl_block_enqueue_plastic(nestcl_block *b, cl_command_queue q);
/* The grid of set p's kernel over at most n_list sources (per source: at most max_groups work-groups). */
void block_plastic_grid(const nestcl_block *b, const block_plastic *p, uint64_t n_list, size_t max_groups,
                        size_t gsize[2], size_t lsize[2]);
/* block.c: spike-list entries to read back with the count (twice the recent rate). */
uint32_t nestcl_block_spike_guess(const nestcl_block *b);
/* block.c: the parts of nestcl_block_update_enqueue that a set (block_set.c) runs for a block it did not merge. */
int nestcl_block_update_check(nestcl_block *b, int from, int to, int *any);
int nestcl_block_enqueue_own_update(nestcl_block *b, cl_command_queue q, int64_t origin_steps, int from, int to);
int nestcl_block_enqueue_readback(nestcl_block *b, cl_command_queue q, int64_t origin_steps, int from, int to,
                                  int read_count);
/* block_events.c: the staged events grouped by neuron into b->evq_* (checked against [from, to)); no device work. */
int nestcl_block_group_events(nestcl_block *b, int from, int to);

#endif
