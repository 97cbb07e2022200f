/*
 * The private layout of a nestcl_block_set (nestcl/block_set.h), shared by
 * its files: block_set.c (the set: its blocks' buffers as parts of a few,
 * the slice-by-slice path), block_set_source.c (the generated kernels that
 * serve every block at once) and block_loop.c (the device loop). Internal to
 * libnestcl; the blocks' own layout is block_internal.h.
 */
#ifndef NESTCL_BLOCK_SET_INTERNAL_H
#define NESTCL_BLOCK_SET_INTERNAL_H

#include "block_internal.h"
#include "nestcl/block_set.h"

/* Per block, the merged update's table row: these words, then one byte offset per field into the state. */
enum {
  SET_TAB_MODEL = 0, /* the model's index among the set's models (the kernel's switch) */
  SET_TAB_N,
  SET_TAB_K,
  SET_TAB_CHANNELS,
  SET_TAB_CAP, /* spike list capacity */
  SET_TAB_RING, /* offsets, in elements of the merged buffers: ring, count words, spike entries, records, staging */
  SET_TAB_COUNT,
  SET_TAB_SPIKES,
  SET_TAB_REC,
  SET_TAB_STAGE,
  SET_TAB_ID_FIRST,
  SET_TAB_ID_STRIDE,
  SET_TAB_REC_INTERVAL,
  SET_TAB_FIXED /* the first field's offset */
};

/* One launch of the merged delivery and drive: items [0, n_items) of the set's deliver_items, one per index in dim 2. */
typedef struct set_launch {
  cl_kernel k;
  int first, n_items;
} set_launch;

/* An item of the merged delivery and drive: block b's synapse rows (poisson < 0) or its poisson-th generator. */
typedef struct set_item {
  int b, poisson;
} set_item;

/* The device loop's state (block_loop.c); zero while the set runs slice by slice. */
typedef struct set_loop {
  int on;
  int kept; /* off, with its buffers and kernels kept for the next run (nestcl_block_set_loop_end) */
  uint32_t kept_sync; /* the sync interval they were made for */
  uint32_t k; /* slices between drains, at most */
  uint32_t lids; /* neurons of all blocks: block b's neuron i is lid first[b] + i */
  uint64_t *first; /* [n + 1] */
  uint64_t rec_cap; /* entries of the recording buffer */
  uint32_t bucket_width; /* plastic synapses: each neuron's spikes per slice (0: none) */
  nestcl_buffer b_table, b_gids, b_degree, b_marks, b_status, b_errs, b_rec, b_global;
  nestcl_buffer b_bucket_word, b_bucket_src, b_bucket_lags;
  cl_kernel k_gather;
  cl_kernel *k_hist; /* per block with a history: nestcl_hist_append_loop, else NULL */
  size_t gather_width, groups;
  int64_t window_origin; /* the origin of the first slice since the last drain */
  int64_t *origins; /* [k]: the slices enqueued since the last drain */
  uint32_t n_slices;
  uint64_t status[16];
  cl_ulong status_img[16];
  uint32_t *errs;
  uint32_t *rec_host;
  uint64_t rec_guess;
  nestcl_loop_spike *spikes; /* the last drain's, in NEST's order */
  size_t n_spikes, spikes_cap;
  int64_t last; /* the origin of the last slice enqueued, or -1 before the first */
  int failed_block; /* the block whose failure the last drain found, or -1 */
  int64_t failed_origin;
  uint64_t resumes;
} set_loop;

struct nestcl_block_set {
  nestcl_device *dev;
  int queue;
  nestcl_block **blocks;
  int n;
  uint32_t min_delay, ring_slots;
  double resolution_ms;
  uint32_t rng_seed;
  int merged_all; /* every block's update is in the merged kernel (else those that are not launch on their own) */
  int *merged; /* per block */
  /* The merged buffers: each block's ring, count words, spike list, records, staging and fields are parts. */
  nestcl_buffer b_ring, b_counts, b_spikes, b_rec, b_stage, b_state;
  size_t *ring_off, *count_off, *spike_off, *rec_off, *stage_off; /* per block, in elements */
  int64_t *stage_host; /* the blocks' host staging, one array: each block's b->stage points into it */
  size_t stage_elems;
  uint32_t *counts_host; /* the count words of all blocks, read back in one transfer */
  uint32_t *counts_zero; /* as many zeros, written before each update */
  size_t count_words;
  /* The merged update (block_set_source.c). */
  cl_program prog_update;
  cl_kernel k_update;
  uint8_t update_key[32]; /* SHA-256 of the merged update's source and options (nestcl_block_set_refresh) */
  nestcl_buffer b_tab;
  size_t upd_width, upd_group;
  /* The merged delivery and drive. */
  cl_program prog_deliver;
  set_item *items;
  int n_items;
  set_launch *launches;
  int n_launches;
  size_t width; /* work-items per spike */
  int contiguous;
  uint32_t *list; /* the received rows for every block: (row, lag) pairs */
  uint32_t n_list, list_cap;
  int64_t list_origin;
  nestcl_buffer b_list;
  nestcl_enqueue_counts enq;
  int in_flight;
  set_loop loop;
};

/* block_set_source.c: the index of block j's model among the set's merged models (first seen first), or -1. */
int set_model_index(const nestcl_block_set *s, int j);
/* block_set_source.c: the merged update's program and kernel (every mergeable block), with its fixed arguments. */
int set_update_build(nestcl_block_set *s);
/* block_set_source.c: the merged delivery and drive's program and launches. */
int set_deliver_build(nestcl_block_set *s);
/*
 * block_set_source.c: one launch of the merged delivery and drive, mode 0 the
 * host's list (n known), 1 the device's global list of the loop (its length in
 * the status words, by the origin's parity); the drives for lags [from, to).
 */
cl_int set_deliver_enqueue(nestcl_block_set *s, int mode, cl_mem list, uint32_t n_list, int64_t list_origin,
                           int64_t origin, int from, int to, cl_mem status, int halt);
/* block_set_source.c: the merged update of lags [from, to) (staged input first when staged). */
cl_int set_update_enqueue(nestcl_block_set *s, int64_t origin, int from, int to, int staged, cl_mem status, int halt);

/* block_loop.c: frees the loop's buffers and kernels. */
void set_loop_free(nestcl_block_set *s);

#endif
