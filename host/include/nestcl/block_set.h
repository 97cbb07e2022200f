/*
 * nestcl/block_set.h: the blocks of one queue (a NEST stream VP's neurons of
 * every model) run together, so that the VP's launches per slice do not grow
 * with its number of models, and, where nothing but the device takes part in
 * a slice, whole runs of slices on the device (the device loop) with the host
 * waiting once per sync interval.
 *
 * A set is made of device blocks (nestcl/block.h) on one queue, once each
 * block is complete (uploaded, with its synapses, plastic sets, history and
 * Poisson drives): it moves the blocks' rings, count words, spike lists,
 * records, staging and state into parts of a few buffers (the blocks keep
 * working as before through those parts), and builds
 *   - one merged update kernel for every block whose model can be merged
 *     (all but models with spike offsets or an event queue): each model's
 *     update becomes a function of one program, the constants of each model
 *     compiled in where they are equal over its blocks; the staged input of a
 *     slice is added by the same kernel, so a slice's staging is one transfer;
 *   - one merged kernel that delivers the received rows into every block and
 *     draws every block's device Poisson generators (one launch for up to as
 *     many blocks as the device's kernel-argument room allows).
 * Slice by slice (nestcl_block_set_update_enqueue) a set costs two launches
 * whatever its number of models (plus one per plastic set and history append
 * where there are plastic synapses, and one per block that could not merge),
 * and one wait (nestcl_block_set_finish). The blocks' own calls
 * (nestcl_block_stage, _spikes, _recorded, _failure, _download, plastic and
 * history reads) keep working; the per-block update and delivery calls must
 * not be mixed with the set's.
 *
 * The device loop (nestcl_block_set_loop_*) runs whole slices on the device
 * alone: update, gather of every block's spikes into one list of sources,
 * spike histories and plastic synapses (NEST's STDP order), static delivery
 * into every block and the Poisson drives, the synapse rows being the
 * sources' loop ids (block b's neuron i has id nestcl_block_set_first(s, b) +
 * i: the caller numbers the rows of nestcl_block_set_synapses and
 * nestcl_block_add_plastic so). Every spike is kept on the device and handed
 * back at each drain (every sync_interval slices, fewer when the buffer for
 * every neuron's spikes would exceed its budget), in NEST's order. Results
 * equal the slice-by-slice path's bit for bit.
 */
#ifndef NESTCL_BLOCK_SET_H
#define NESTCL_BLOCK_SET_H

#include <stddef.h>
#include <stdint.h>

#include "nestcl/block.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nestcl_block_set nestcl_block_set;

/*
 * A set of blocks[0..n), all device blocks (not on_host) on one queue with the
 * same min delay, ring size, resolution and seed, each uploaded; n may be 0.
 * The blocks must outlive the set's use and are destroyed by the caller
 * (before or after the set).
 */
int nestcl_block_set_create(nestcl_device *dev, nestcl_block *const *blocks, int n, nestcl_block_set **out);
void nestcl_block_set_destroy(nestcl_block_set *s);

/*
 * After blocks of the set were uploaded again (nestcl_block_upload, between
 * NEST's Simulate calls): the merged update rebuilt where a block's constants
 * changed (parameters equal over its neurons are compiled in). Not while the
 * device loop runs.
 */
int nestcl_block_set_refresh(nestcl_block_set *s);

/* Kernel launches and waits of the set's own calls so far (the blocks count theirs: nestcl_block_enqueued). */
void nestcl_block_set_enqueued(const nestcl_block_set *s, uint64_t *launches, uint64_t *waits);
/* Device bytes of the set's merged buffers and tables (the blocks' parts included), and of the device loop. */
size_t nestcl_block_set_device_bytes(const nestcl_block_set *s);

/* ---- slice by slice ---------------------------------------------------- */

/*
 * Spikes of rows[k] at lags[k] of the slice at emit_origin, delivered into
 * every block of the set at its next update (nestcl_block_deliver for all
 * blocks at once, one list).
 */
int nestcl_block_set_deliver(nestcl_block_set *s, int64_t emit_origin, const uint32_t *rows, const uint32_t *lags,
                             uint32_t n);
/*
 * Lags [from, to) of every block: the received rows and the Poisson drives
 * (one launch), each block's plastic spikes, the staged input and the update
 * (one launch), the read-back of counts, spikes and records; no wait.
 */
int nestcl_block_set_update_enqueue(nestcl_block_set *s, int64_t origin_steps, int from, int to);
/* Waits for the set's queue (once per slice). */
int nestcl_block_set_finish(nestcl_block_set *s);
/*
 * After the wait: each block's results, as nestcl_block_update_collect gives
 * them; the first block whose update failed returns its error (and
 * nestcl_block_failure tells its record).
 */
int nestcl_block_set_collect(nestcl_block_set *s);

/* ---- the device loop --------------------------------------------------- */

/* A spike that the device loop kept: block, neuron, and the step its neuron updated through (origin + lag). */
typedef struct nestcl_loop_spike {
  uint32_t block, index;
  int64_t step;
} nestcl_loop_spike;

/* The loop id of block b's neuron 0 (blocks in order, ids from 0); b == n gives the number of neurons. */
uint64_t nestcl_block_set_first(const nestcl_block_set *s, int b);
/*
 * Whether the set can run the device loop: 1; else 0 and why in why (cap
 * bytes): a block that could not merge, a model with spikes of multiplicity
 * beside plastic synapses, plastic rows not numbered by loop ids, a pending
 * event queue.
 */
int nestcl_block_set_loop_possible(const nestcl_block_set *s, char *why, size_t cap);
/* Sets up the loop (its buffers and kernels); sync_interval: slices between drains at most (0: 250). */
int nestcl_block_set_loop_begin(nestcl_block_set *s, uint32_t sync_interval);
/*
 * One whole slice (lags [0, min_delay)) at origin on the device, after any
 * rows given with nestcl_block_set_deliver; drains when the interval is full
 * (*drained 1: the kept spikes are there to read). No wait otherwise.
 */
int nestcl_block_set_loop_slice(nestcl_block_set *s, int64_t origin, int *drained);
/*
 * Waits for every slice enqueued, and keeps their spikes for
 * nestcl_block_set_loop_spikes; a history ring that filled is grown and the
 * slices after it run again. A failed update (the model threw, a list that
 * overflowed) returns NESTCL_ERUNTIME naming the neuron and the time; then
 * nestcl_block_set_failed tells which block (nestcl_block_failure its record)
 * and the slice's origin, and the loop runs no further slice.
 */
int nestcl_block_set_loop_drain(nestcl_block_set *s);
/*
 * The spikes of the slices the last drain waited for, sorted by slice, block,
 * neuron, step (NEST's order of sending them); a neuron's spike of
 * multiplicity m appears m times.
 */
void nestcl_block_set_loop_spikes(const nestcl_block_set *s, const nestcl_loop_spike **spikes, size_t *n);
/* After a failed drain: the failing block (-1 if none) and its slice's origin. */
int nestcl_block_set_failed(const nestcl_block_set *s, int64_t *origin);
/* Ends the loop (drains first): the blocks run slice by slice again; the loop's buffers freed. */
int nestcl_block_set_loop_end(nestcl_block_set *s);
/* Times a full history ring made the loop run slices again. */
uint64_t nestcl_block_set_loop_resumes(const nestcl_block_set *s);

#ifdef __cplusplus
}
#endif
#endif
