/*
 * nestcl/block.h: the neurons of one translated model, resident on one queue
 * ("stream") of a device and driven slice by slice from outside: this is what
 * nest_patch uses to run a NEST thread's neurons on the device while NEST keeps
 * its own loop, delivery and devices. The engine (engine.h) builds whole
 * networks itself; a block only updates.
 *
 * The caller owns the order: it fills the host copy of the SoA fields
 * (nestcl_block_fields, laid out as model.h says; NEST's generated glue packs
 * nodes into it), uploads them, then per slice stages the input that arrived
 * for the slice's lags (NEST's own ring buffers hold it), updates, and reads the
 * spikes and, when recording, every step's recordable fields. Parameters that
 * are equal over all neurons of the block are compiled into its kernel at the
 * first upload (docs/architecture.md, "Neuron state and parameters"); a later upload with other values rebuilds it.
 *
 * Input is added in the runtime's fixed point (nestcl_fixed.h), so a value that
 * is not a multiple of 2^-32 is rounded to the nearest such one.
 */
#ifndef NESTCL_BLOCK_H
#define NESTCL_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "nestcl/device.h"
#include "nestcl/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nestcl_block nestcl_block;

typedef struct nestcl_block_config {
  const nestcl_model *model;
  uint32_t n; /* neurons (may be 0: every call is then a no-op) */
  uint32_t K; /* receptor count for multi-receptor models, else 0 */
  double resolution_ms; /* NEST's resolution h */
  uint32_t min_delay_steps; /* lags per slice at most (NEST's min_delay) */
  uint32_t ring_slots; /* slots of the device ring, at least min_delay + max_delay */
  int queue; /* index of the device queue the block runs on */
  int record; /* nonzero: keep every step's recordable fields */
  /*
   * Random draws of stochastic models are Philox streams keyed by (rng_seed,
   * call site) with counter (neuron id, step): neuron i of the block has id
   * id_first + i * id_stride (id_stride 0 counts as 1), e.g. NEST's node ids,
   * so that no two neurons anywhere share a stream.
   */
  uint32_t rng_seed;
  uint64_t id_first, id_stride;
  /*
   * Nonzero: the block runs on the calling thread, not on the device: each
   * update runs the model's translated C loop (model->update_cpu, which the
   * tests hold bit for bit equal to its kernel) over the host fields, with the
   * ring in host memory; the device may be NULL and queue is not used. For
   * neurons too few to pay for a launch and a wait per slice (nest_patch's
   * nestcl_device_min_work). Such a block has no device-resident synapses,
   * Poisson drives, plastic sets or history: those calls fail with
   * NESTCL_EINVAL and the caller keeps them (NEST delivers through handle()).
   */
  int on_host;
} nestcl_block_config;

int nestcl_block_create(nestcl_device *dev, const nestcl_block_config *c, nestcl_block **out);
void nestcl_block_destroy(nestcl_block *b);

/* Ring channels (the model's channel groups with per-receptor groups expanded by K). */
uint32_t nestcl_block_channels(const nestcl_block *b);
/* The host copy of the fields, one array per field in descriptor order. */
void *const *nestcl_block_fields(nestcl_block *b);
/* Host fields -> device (first call: builds the kernel); device -> host fields. */
int nestcl_block_upload(nestcl_block *b);
int nestcl_block_download(nestcl_block *b);

/* Adds value to channel ch of neuron i at lag (0 <= lag < min_delay) of the next update. */
void nestcl_block_stage(nestcl_block *b, uint32_t lag, uint32_t ch, uint32_t i, double value);

/*
 * For a model with event_queue set (model.h: the *_ps models' precise spike
 * input): queues an event with its offset and weight for neuron i at lag of
 * the next update. Each neuron's events must be staged in the order its
 * update() is to take them (NEST's: by lag, then as NEST's own queue hands
 * them out); the next update takes them all and checks that they lie in its
 * lags, in time order. NESTCL_EINVAL for another model or a bad lag or index.
 */
int nestcl_block_stage_event(nestcl_block *b, uint32_t lag, uint32_t i, double offset, double weight);

/*
 * Advances lags [from, to) of the slice whose origin is origin_steps: adds the
 * staged input to the ring, runs the update kernel, reads back the spikes and
 * the recordings, and clears the staging.
 */
int nestcl_block_update(nestcl_block *b, int64_t origin_steps, int from, int to);
/*
 * The same in three parts, so that the blocks of one queue (a stream VP) wait
 * for it once per slice: _enqueue queues the staging, delivery, update and
 * the read-back of the count, a guess of the spikes (twice the recent rate)
 * and the recordings; nestcl_block_finish waits for the block's queue (once,
 * for all its blocks); _collect takes the results (a second round trip only
 * when there were more spikes than the guess) and reports a failure as
 * nestcl_block_update does. The host's staging must not change in between.
 */
int nestcl_block_update_enqueue(nestcl_block *b, int64_t origin_steps, int from, int to);
int nestcl_block_finish(nestcl_block *b);
int nestcl_block_update_collect(nestcl_block *b);
/* Kernel launches and waits for the device (clFinish, blocking transfers) that the block's slices made so far. */
void nestcl_block_enqueued(const nestcl_block *b, uint64_t *launches, uint64_t *waits);
/*
 * Times the block's kernels from profiling events from now on (issue 41,
 * nestcl_kernel_profile in device.h): launches i of each kernel with
 * i mod sample_every < 2 (1: every launch; 0: stop timing, the table so far
 * dropped). nestcl_block_kernel_profile adds the block's table to out (by
 * kernel name; out zeroed by the caller, freed with nestcl_kernel_profile_free),
 * waiting for the timed launches still on the device. Its idle gaps are
 * between this block's own consecutive commands: other blocks' commands on
 * the same queue in between lengthen them.
 */
int nestcl_block_profile_kernels(nestcl_block *b, int sample_every);
int nestcl_block_kernel_profile(const nestcl_block *b, nestcl_kernel_profile *out);
/*
 * Whether the last update recorded a failure (model.h, Failures: the model's
 * update() threw, e.g. GSLSolverFailure): 1 with the failure code (k names
 * model->failures[k - 1]), the neuron's local index, the lag of the failing
 * step and the status the model passed; 0 when none (outputs untouched; NULL
 * outputs are skipped). nestcl_block_update then returned NESTCL_ERUNTIME,
 * "<model> neuron <id> at t = <ms> ms: <failure> (status <status>)", with id
 * the neuron's id (id_first + index * id_stride) and the start of its step.
 */
int nestcl_block_failure(const nestcl_block *b, uint32_t *code, uint32_t *index, uint32_t *lag, int *status);
/* The spikes of the last update, (local index, lag), in the order the device wrote them. */
void nestcl_block_spikes(const nestcl_block *b, const nestcl_spike **spikes, uint32_t *n);
/*
 * For a model with spike_offsets set (model.h): the offset of each of those
 * spikes, at the same positions (NEST's SpikeEvent::get_offset); NULL for
 * other models.
 */
const double *nestcl_block_spike_offsets(const nestcl_block *b);
/*
 * With record set: the recordable fields after each step of the last update,
 * values[((lag - from) * n_rec + r) * n + i], r over model->recordables
 * (n_rec = nestcl_block_recordables()).
 */
const double *nestcl_block_recorded(const nestcl_block *b);
uint32_t nestcl_block_recordables(const nestcl_block *b);
/*
 * Static synapses resident on the device, in CSR: row r (a presynaptic source,
 * as the caller numbers them) holds synapses [row_ptr[r], row_ptr[r + 1]), each
 * with target = channel << 24 | local index, the value its spike adds (the
 * model's route_spike of the weight) and its delay in steps (>= min_delay).
 * Replaces any earlier set; n_rows 0 removes them.
 */
int nestcl_block_set_synapses(nestcl_block *b, uint32_t n_rows, const uint64_t *row_ptr, const uint32_t *target,
                              const double *value, const uint16_t *delay);
/*
 * The same in parts, so that no host copy of all the synapses is needed
 * (nest_patch writes NEST's connections chunk by chunk): _begin takes the
 * rows (row_ptr: n_rows + 1 entries) and the range of the delays (one delay
 * kept when they are all equal), _fill writes synapses [first, first + n) in
 * order (first: those written so far), _end checks that all were written.
 * The synapses are delivered only after _end; a failed part leaves the block
 * to be begun again.
 */
int nestcl_block_synapses_begin(nestcl_block *b, uint32_t n_rows, const uint64_t *row_ptr, uint16_t delay_min,
                                uint16_t delay_max);
int nestcl_block_synapses_fill(nestcl_block *b, uint64_t first, uint64_t n, const uint32_t *target, const double *value,
                               const uint16_t *delay);
int nestcl_block_synapses_end(nestcl_block *b);
/*
 * Spikes of rows[k], each emitted at step emit_origin + lags[k] (the step the
 * source updated through; its synapses add at that step + delay): added to the
 * ring on the device, by 64-bit integer atomics, at the start of the next
 * update. All spikes given between two updates share one emit_origin.
 */
int nestcl_block_deliver(nestcl_block *b, int64_t emit_origin, const uint32_t *rows, const uint32_t *lags, uint32_t n);
/*
 * A poisson_generator on the device: for every step of every update, each of
 * the n entries draws k ~ Poisson(rate_hz * h) and adds k * value[e] to
 * channel target[e] >> 24 of neuron target[e] & 0xffffff at that step +
 * delay[e]. Draws are Philox streams keyed by (rng_seed, Poisson purpose) with
 * counter (neuron id | salt[e] << 40, step): partition-independent, equal in
 * distribution to NEST's generator but not draw for draw.
 */
int nestcl_block_add_poisson(nestcl_block *b, double rate_hz, uint32_t n, const uint32_t *target, const double *value,
                             const uint16_t *delay, const uint32_t *salt);
/*
 * The ring's pending input across a pause in which the block is rebuilt (NEST:
 * between Simulate calls, whose network may change): save reads the device
 * ring into a host copy; ring_value reads the copy's entry for an absolute
 * step (slot = step mod ring_slots; each slot holds the input of the one step
 * in [next step to update, that + ring_slots) that maps to it, since updating
 * a step clears its slot); ring_add adds to the copy (zeroed at the first
 * call on a block that saved nothing); restore writes the copy to the device.
 * Values are the runtime's fixed point (nestcl_fixed.h).
 */
int nestcl_block_ring_save(nestcl_block *b);
int64_t nestcl_block_ring_value(const nestcl_block *b, int64_t step, uint32_t ch, uint32_t i);
void nestcl_block_ring_add(nestcl_block *b, int64_t step, uint32_t ch, uint32_t i, int64_t value);
int nestcl_block_ring_restore(nestcl_block *b);
uint32_t nestcl_block_ring_slots(const nestcl_block *b);
/*
 * Translated synapses resident on the device (nest_patch exports NEST's
 * plastic connections onto a stream VP's neurons this way), after the first
 * upload: rows as for nestcl_block_set_synapses (the caller numbers the
 * presynaptic sources), each synapse's target (local index) and delay (steps),
 * and every synapse's whole struct of the model (sm->syn_size bytes each, in
 * row order; the translator's <model>_syn_glue.hpp packs NEST's connections
 * into it), the common properties and the receptor port of all. Per-source
 * fields must be equal within a row and parameters over all synapses, and the
 * block's model must add a spike's weight unchanged; otherwise NESTCL_EINVAL,
 * and the caller keeps the synapses. *set receives the set's handle. Synapses
 * that read the spike history need nestcl_block_history first.
 */
int nestcl_block_add_plastic(nestcl_block *b, const nestcl_synapse_model *sm, const void *cp, long rport,
                             uint32_t n_rows, const uint64_t *row_ptr, const uint32_t *target, const uint16_t *delay,
                             const void *syn, int *set);
/*
 * Whether the block's model adds a spike's weight unchanged at rport, on one
 * channel per sign of the weight (what nestcl_block_add_plastic needs): 1, or
 * 0 with the reason in nestcl_last_error(). A caller asks it before exporting
 * synapses that it would otherwise keep.
 */
int nestcl_block_plastic_routable(const nestcl_block *b, long rport);
/* Spikes through set s, as nestcl_block_deliver: each synapse gets its source's spikes in time order. */
int nestcl_block_deliver_plastic(nestcl_block *b, int s, int64_t emit_origin, const uint32_t *rows,
                                 const uint32_t *lags, uint32_t n);
/*
 * The same in parts (nest_patch writes NEST's connections chunk by chunk, with
 * no host copy of them all): _begin adds the set with its rows (row_ptr:
 * n_rows + 1 entries), the range of its delays, the template of its
 * parameters (NULL: the model's defaults) and hands out its handle; _fill
 * writes rows [first_row, first_row + n_rows) in order (their synapses'
 * targets, delays and structs, checked as above); _end makes the set ready.
 * _cancel removes the last set, e.g. after a fill was refused (the caller then
 * keeps those synapses).
 */
int nestcl_block_plastic_begin(nestcl_block *b, const nestcl_synapse_model *sm, const void *cp, long rport,
                               uint32_t n_rows, const uint64_t *row_ptr, uint16_t delay_min, uint16_t delay_max,
                               const void *tmpl, int *set);
int nestcl_block_plastic_fill(nestcl_block *b, int s, uint32_t first_row, uint32_t n_rows, const uint32_t *target,
                              const uint16_t *delay, const void *syn);
int nestcl_block_plastic_end(nestcl_block *b, int s);
int nestcl_block_plastic_cancel(nestcl_block *b, int s);
/* Every plastic set and the spike history removed (a caller that found synapses it must keep after all). */
int nestcl_block_plastic_clear(nestcl_block *b);
/* Every synapse of set s back into syn (the structs as given, with their current state). */
int nestcl_block_plastic_read(nestcl_block *b, int s, void *syn);
/* The synapses of rows [first_row, first_row + n_rows) of set s back into syn (from the rows' first synapse). */
int nestcl_block_plastic_read_rows(nestcl_block *b, int s, uint32_t first_row, uint32_t n_rows, void *syn);
/* The same rows written from syn, in place, with nestcl_block_plastic_write's checks. */
int nestcl_block_plastic_write_rows(nestcl_block *b, int s, uint32_t first_row, uint32_t n_rows, const void *syn);
/*
 * Every synapse of set s from syn, in place (the rows, targets and delays
 * stay): NEST's connections after a SetStatus between Simulate calls. The
 * per-source fields must still agree within each row and the parameters with
 * the set's: otherwise NESTCL_EINVAL and nothing is written (the caller
 * builds the set again).
 */
int nestcl_block_plastic_write(nestcl_block *b, int s, const void *syn);

/*
 * The postsynaptic spike history of the block's neurons (NEST's ArchivingNode,
 * nestcl_history.h), which synapses that read it need: after the first
 * upload, nestcl_block_history creates it with the neurons' time constants
 * and room for max_entries entries per neuron at most (it grows up to that),
 * nestcl_block_history_set gives neuron i its state (what NEST's node holds),
 * then every update appends the block's spikes, and nestcl_block_history_read
 * brings it back for nestcl_block_history_get.
 */
typedef struct nestcl_history_entry {
  double t, kminus, kminus_triplet;
  uint32_t access;
} nestcl_history_entry;
typedef struct nestcl_history_state {
  double Kminus, Kminus_triplet, last_spike, max_delay_ms;
  uint32_t n_incoming, n_entries;
} nestcl_history_state;
int nestcl_block_history(nestcl_block *b, double tau_minus, double tau_minus_triplet, uint32_t max_entries);
int nestcl_block_history_set(nestcl_block *b, uint32_t i, const nestcl_history_state *st,
                             const nestcl_history_entry *entries);
int nestcl_block_history_read(nestcl_block *b);
/* Neuron i's state, and its entries into entries (room for st->n_entries: call with NULL first). */
int nestcl_block_history_get(const nestcl_block *b, uint32_t i, nestcl_history_state *st,
                             nestcl_history_entry *entries);

/* Device bytes of the block (state, ring, staging, spikes, recording, synapses, Poisson drives). */
size_t nestcl_block_device_bytes(const nestcl_block *b);

#ifdef __cplusplus
}
#endif
#endif
