/*
 * The engine's object and the pieces its files share: the network description
 * (populations, projections, drives, recorders) as the user gave it, and what
 * the build makes of it (VPs, each with one block per population, each block
 * with its state, ring, spike list and the CSR of the synapses onto it).
 * struct nestcl_engine (below) holds its state in named parts, as NEST's
 * managers hold theirs, so that a member's path says what it is:
 *   desc      the network as described: config, models, populations,
 *             projections, drives, recorders (api.c writes it; the build
 *             and the checkpoint's hash read it)
 *   clock     steps done, the super step's origin and lag, the delays and
 *             ring size, the barrier with its stop and abort flags
 *   exchange  this rank among the ranks, the global spike list, the
 *             gather buffers, the spiking sources, the exchange's failure
 *   device    the OpenCL device, its programs, the delivery's shape, the
 *             device loop (eng_resident)
 *   stats     counters, timers and the VPs' statistics
 * and, as its own, the built flag and this rank's VPs.
 * Files:
 *   api.c         the public API: description and validation, statistics
 *   clock.c       wall time; ms, tics and steps as NEST rounds them
 *   value.c       draws of parameters, spike routing, a neuron's settings
 *   mpi.c         every MPI call (a serial twin without MPI)
 *   vp.c          a VP's failure, the VPs' status, spike order, a block's failure
 *   partition.c   the partition over ranks and VPs, the delays' range
 *   build.c       state, the build's steps in order
 *   connect.c     the synapses onto a block, drawn by every build thread
 *   stream_upload.c  a stream VP's blocks to its device, and its device budget
 *   estimate.c    the memory estimate and admission
 *   cycle.c       simulate: the host clock's loop, and the kinds of VP (eng_vp_ops)
 *   core_cpu.c    the C twins of the core kernels
 *   plastic.c     translated synapses: state, history, delivery, weights
 *   record.c      spike recorders and multimeters
 *   kernel_profile.c  the streams' kernels timed (kprof.h)
 *   psp.c         hpc_benchmark's PSP peak (weight conversion)
 *   checkpoint.c, checkpoint_write.c, checkpoint_read.c, checkpoint_restore.c
 *                 checkpoint and restore (checkpoint_internal.h: what they share)
 *   device_loop/  the device loop, and one stream beside threads or ranks:
 *                 resident.c, resident_run.c, resident_merge.c,
 *                 resident_update.c, resident_graph.c, resident_plastic.c,
 *                 resident_persist.c, resident_step.c
 * The shared helpers (clock.c, value.c, mpi.c, vp.c, partition.c) call no
 * engine file above them. The files' dependencies form no circle
 * (tests: style_circles): the build calls the estimate, the cycle's VP kinds
 * and the device loop's setup (device_loop/resident.c), then its recorded super step
 * (resident_graph.c), and frees them in the reverse order; the cycle calls
 * the device loop (resident_run.c, and resident_step.c and resident_plastic.c
 * through the VP's table); resident_step.c and resident_run.c drive
 * resident_graph.c and the parts, resident_graph.c takes its kernels from the
 * parts (resident.c, resident_merge.c, resident_update.c, resident_plastic.c),
 * and no part calls back up.
 */
#ifndef NESTCL_ENGINE_INTERNAL_H
#define NESTCL_ENGINE_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "nestcl/engine.h"
#include "plastic_dev.h"

#define NESTCL_NAME_MAX 64

typedef struct eng_setting {
  char name[NESTCL_NAME_MAX];
  nestcl_value v;
} eng_setting;

typedef struct eng_population {
  const nestcl_model *model;
  double tau_minus, tau_minus_triplet; /* ArchivingNode's, for the spike history */
  uint32_t n;
  uint32_t K;
  uint64_t first; /* global id of neuron 0 */
  uint32_t n_channels; /* ring channels with K expanded */
  eng_setting *settings;
  int n_settings;
  int rec_interval_steps; /* multimeter sampling of this population; 0: none */
} eng_population;

typedef struct eng_projection {
  int src, tgt;
  nestcl_conn_spec conn;
  nestcl_syn_spec syn;
  /* translated synapses; NULL: the static CSR */
  const nestcl_synapse_model *sm;
  void *tmpl; /* one synapse: defaults, then the params (per-synapse parameters, initial state) */
  void *cp; /* the common properties */
  eng_syn_layout lay;
  int ch_pos, ch_neg, ch_zero; /* the target's channel for a weight > 0, < 0, == 0 */
  double max_abs; /* largest |weight| it can deliver when the model bounds it (Wmax), else 0 */
} eng_projection;

/*
 * One array of a stream's synapses that the host fills at the build while the
 * arrays before it travel to the device (stream_upload.c): the device buffer
 * mapped (zero copy where the device's memory is the host's), or pinned host
 * memory whose transfer starts when the array is complete.
 */
typedef struct eng_stage {
  cl_mem staging; /* pinned host memory the host writes; NULL: the device buffer itself, mapped */
  cl_command_queue q; /* the stream's queue, which maps and sends it */
  void *host; /* where the host writes, while mapped */
  cl_event done; /* the transfer or the unmap, once started */
} eng_stage;

/* The synapses of one translated-synapse projection onto one block. */
typedef struct eng_plastic {
  int proj;
  uint64_t src_first; /* rows: the source population */
  uint32_t n_rows;
  uint64_t *row_ptr; /* [n_rows + 1] */
  uint32_t *target; /* local index of the target */
  uint16_t *delay; /* per synapse; NULL when homogeneous */
  uint32_t delay_hom;
  unsigned char *state; /* per synapse (eng_syn_layout) */
  unsigned char *src_state; /* per source row */
  unsigned char
    *src_prev; /* CPU VPs that share their delivery: src_state as at the super step's start (plastic_cpu.c) */
  int rows_sorted; /* CPU VPs: every row lists its targets in ascending order (plastic_cpu.c) */
  uint64_t nnz;
  uint32_t max_row;
  nestcl_buffer b_row, b_target, b_delay, b_state, b_src_state, b_tmpl, b_cp;
  eng_stage stage[4]; /* a stream's targets, state, delays and per-source state on their way (the build) */
  nestcl_buffer b_done; /* the flat kernel's per-row counters (plastic_dev.h), for resident rows and batches' */
  cl_kernel k;
  size_t width; /* work-items per work-group within k's limit: per spiking source, or per chunk (flat) */
  /*
   * Batched mode (GPU VPs whose plastic synapses do not fit the device memory
   * budget): the CSR and state stay in host memory; the rows that one time
   * stamp's spikes touch go to the device in batches of at most batch_cap
   * synapses, through two slots, so that one batch's transfers overlap the
   * other's kernel (transfers on the VP's second queue).
   */
  uint64_t batch_cap; /* 0: resident */
  uint64_t batches; /* batches run so far */
  uint64_t *row_batch; /* per row: 1 + the last batch that holds it */
  struct eng_slot {
    nestcl_buffer b_row, b_target, b_delay, b_state, b_src_state, b_srcs;
    uint64_t *row; /* [batch_cap + 1] */
    uint32_t *target, *srcs, *rows; /* rows: the CSR row of each packed row */
    uint16_t *delay;
    unsigned char *state, *src_state;
    uint32_t n_rows;
    uint64_t nnz, id;
    cl_event done; /* the last read-back; NULL when the slot is free */
  } slot[2];
} eng_plastic;

typedef struct eng_drive {
  int pop;
  int is_poisson;
  double rate_hz; /* poisson */
  double amplitude; /* dc */
  double weight;
  double delay_ms;
  long rport;
  uint32_t gen; /* index among the poisson generators (stream separation) */
  double start_ms, stop_ms; /* NEST's start and stop: active at steps s with start < s h <= stop */
  /* resolved at build */
  int64_t start_step, stop_step; /* active for start_step < s <= stop_step */
  int delay_steps;
  int channel;
  int64_t value_fixed;
  uint32_t chunks; /* Poisson(lambda) = sum of chunks Poisson(mu) draws */
  double *cdf; /* the inversion table of Poisson(mu) (nestcl_poisson_table) */
  uint32_t cdf_len, kstop;
  nestcl_buffer b_cdf; /* the same on the device */
} eng_drive;

typedef struct eng_recorder {
  int is_multimeter;
  int pop;
  uint32_t first, count;
  /* spike recorder: (gid, step) */
  uint64_t *gids;
  int64_t *steps;
  size_t n, cap_gids, cap_steps;
  /* multimeter */
  int n_rec; /* recordables sampled */
  int rec_index[16]; /* rec_named: index into the model's recordable_names; else the value's row in a lag's record */
  int rec_named[16]; /* 1: a NEST recordable computed by the model's recordable_value */
  int interval_steps;
  int64_t *s_steps;
  uint64_t *s_gids;
  double *s_values;
  size_t s_n, cap_s_steps, cap_s_gids, cap_s_values;
} eng_recorder;

/* The neurons of one population on one VP, and the synapses onto them. */
typedef struct eng_block {
  int pop;
  uint32_t n; /* may be 0 */
  uint64_t first_gid;
  uint32_t n_channels;
  /* host arrays (CPU VPs keep them; GPU VPs free them after upload) */
  void **fields;
  int64_t *ring;
  nestcl_spike *spikes;
  double *spike_offsets; /* the model sets spike offsets (model.h): the update's room for them (CPU VPs);
                            the engine delivers no offset (a target that reads one is refused at Connect) */
  uint32_t spike_count[NESTCL_COUNT_WORDS]; /* the spike count, then the update's failure record (model.h) */
  uint32_t spike_cap;
  double *rec; /* [min_delay][n_recordables][n] when the population is sampled */
  size_t rec_elems;
  /* CSR over global source ids */
  uint64_t *row_ptr; /* [n_global + 1] */
  uint32_t *target; /* channel << 24 | local index */
  void *weight; /* float or double */
  uint16_t *delay; /* per synapse; NULL when homogeneous */
  uint32_t delay_hom; /* steps, or NESTCL_DELAY_PER_SYNAPSE */
  uint64_t nnz;
  uint32_t max_row; /* longest row, sizes the delivery kernel */
  eng_stage stage[3]; /* a stream's targets, weights and delays on their way to b_target, b_weight, b_delay */
  size_t deliver_width; /* work-items per spike: e->device.deliver_width within k_deliver's limit on the device */
  /* device (GPU VPs) */
  nestcl_buffer *b_fields;
  nestcl_buffer b_ring, b_count, b_spikes, b_rec, b_row, b_target, b_weight, b_delay, b_offsets;
  cl_kernel k_update, k_deliver, k_drive;
  /* translated synapses onto the block, and the targets' spike history */
  eng_plastic *plastic;
  int n_plastic;
  eng_history hist;
} eng_block;

struct eng_vp_ops;
struct blk_view;

typedef struct eng_vp {
  int is_gpu;
  const struct eng_vp_ops *ops; /* what the build and the cycle do with this kind of VP (eng_vp_set_kind) */
  int queue; /* stream index on the device */
  eng_block *blocks; /* one per population */
  uint32_t neurons;
  uint64_t synapses;
  /* this super step's spikes as (gid, lag), sorted */
  uint32_t *out; /* pairs */
  size_t n_out, out_cap;
  nestcl_buffer b_global; /* the global spike list (GPU VPs) */
  nestcl_buffer b_srcs, b_lags; /* the spiking sources and their lags (GPU VPs with plastic synapses) */
  /* CPU VPs: the C path's working memory (plastic_cpu.c), whole cache lines: the words by which the VP's plastic
     delivery is shared between threads, then two synapse structs of syn_scratch_half bytes each */
  unsigned char *syn_scratch;
  size_t syn_scratch_half; /* the largest synapse struct, rounded up to 8 bytes */
  size_t global_cap;
  nestcl_vp_stats st;
  size_t host_bytes[NESTCL_MEM_CLASSES];
  int status; /* error of this VP's thread (build or cycle) */
  char err[512]; /* its message: error messages are per thread */
} eng_vp;

/*
 * A kind of VP: a CPU thread, an OpenCL stream on the host's clock, or the
 * resident stream beside threads or ranks (cycle.c's tables, chosen once per
 * VP by eng_vp_set_kind). The build, the cycle, the synapses' read-out and
 * the checkpoint call these instead of asking which kind a VP is; is_gpu is
 * set beside them for the statistics and the estimate.
 */
typedef struct eng_vp_ops {
  const char *kind;
  /* Build: host memory of the VP's arrays (counted where they stay for the run). */
  void (*account)(eng_vp *vp, nestcl_mem_class c, size_t bytes);
  /* Build: a translated-synapse set made on the VP (its host copy counted, the C path's working memory made). */
  int (*plastic_init)(nestcl_engine *e, eng_vp *vp, eng_plastic *pl);
  /* Build: the VP's blocks to its device (nothing for threads). */
  int (*upload)(nestcl_engine *e, eng_vp *vp);
  /*
   * Build: room for one array of a block's synapses, of bytes: *host where
   * the host writes it (threads: NULL, the build allocates host memory;
   * streams: their device buffer *buf, staged) ...
   */
  int (*stage)(nestcl_engine *e, eng_vp *vp, nestcl_buffer *buf, eng_stage *st, nestcl_mem_class c, cl_mem_flags access,
               const char *what, size_t bytes, void **host);
  /* ... and the array is complete: its upload starts while the build goes on (threads: NULL). */
  int (*staged)(nestcl_engine *e, eng_vp *vp, nestcl_buffer *buf, eng_stage *st, size_t bytes);
  /* Build: the host arrays of a block that only this kind keeps (threads: the spikes' offsets, written by the C loop). */
  int (*block_arrays)(nestcl_engine *e, eng_vp *vp, eng_block *b);
  /* Build: the bytes the VP needs on the device, with their plastic part and its number of sets (threads: none). */
  size_t (*device_need)(const nestcl_engine *e, const eng_vp *vp, size_t *plastic, int *units);
  /* Build: the device cannot hold every plastic set; each gets room bytes of batch slots (threads: nothing). */
  int (*batch)(nestcl_engine *e, eng_vp *vp, size_t room);
  /* Build: population pop's fields and count when the VP runs its kernel, for the specialisation; 0: it does not. */
  int (*kernel_block)(const eng_vp *vp, int pop, void *const **fields, uint32_t *n);
  /* Read-out: a plastic set's weights, targets and (dl non-NULL) delays, from where they live now. */
  int (*plastic_snapshot)(nestcl_engine *e, const eng_vp *vp, const eng_plastic *pl, double *w, uint32_t *tg,
                          uint16_t *dl);
  /* Checkpoint: block b's state as host arrays (threads: the block's own), and back to where it lives (NULL: there). */
  int (*ck_open)(nestcl_engine *e, eng_vp *vp, eng_block *b, int csr, struct blk_view *v);
  int (*ck_write_back)(nestcl_engine *e, eng_vp *vp, eng_block *b, struct blk_view *v);
  /* Cycle: update and drive of the slice [from, to) of the super step at origin. */
  int (*update)(nestcl_engine *e, eng_vp *vp, int64_t origin, int from, int to);
  /* Cycle: the run ends inside a super step at lag; the update's failures so far. NULL: nothing to do. */
  int (*partial)(nestcl_engine *e, eng_vp *vp, int64_t origin, int lag);
  /* Cycle: the super step's spikes into vp->out, sorted (gid, lag). */
  int (*collect)(nestcl_engine *e, eng_vp *vp, int64_t origin);
  /* Cycle: the global list into the VP's rings. */
  int (*deliver)(nestcl_engine *e, eng_vp *vp, int64_t origin);
  /* Cycle: the translated synapses' history and delivery; called on a failed VP too (threads wait for each other's
     part of the delivery, plastic_cpu.c), which then does nothing but tell the others. */
  int (*plastic)(nestcl_engine *e, eng_vp *vp, int64_t origin);
  /* Cycle: the multimeters' buffers into the blocks' host mirrors. */
  int (*drain)(nestcl_engine *e, eng_vp *vp);
} eng_vp_ops;

/* cycle.c: VP v's kind (is_gpu and ops), from the config and, once the device loop is set up, res. */
void eng_vp_set_kind(nestcl_engine *e, eng_vp *vp, int v);
/* stream_upload.c: a stream's upload and its device budget (eng_vp_ops.upload, device_need, batch, kernel_block). */
int eng_stream_upload(nestcl_engine *e, eng_vp *vp);
size_t eng_stream_device_need(const nestcl_engine *e, const eng_vp *vp, size_t *plastic, int *units);
int eng_stream_batch(nestcl_engine *e, eng_vp *vp, size_t room);
int eng_stream_kernel_block(const eng_vp *vp, int pop, void *const **fields, uint32_t *n);
int eng_stream_stage(nestcl_engine *e, eng_vp *vp, nestcl_buffer *buf, eng_stage *st, nestcl_mem_class c,
                     cl_mem_flags access, const char *what, size_t bytes, void **host);
int eng_stream_staged(nestcl_engine *e, eng_vp *vp, nestcl_buffer *buf, eng_stage *st, size_t bytes);
/* The staged array's upload done: waited for, its pinned memory released (also after a failed build). */
int eng_stream_stage_finish(nestcl_engine *e, eng_stage *st);

/* The device loop's sizes (resident.c): what it adds to the device memory, and how often it drains. */
typedef struct eng_res_plan {
  int k; /* super steps between drains, at most */
  uint64_t rec_per_ss; /* recording entries one super step can make, at most */
  uint64_t rec_cap; /* entries of the recording buffer: k x rec_per_ss */
  size_t other_bytes; /* out-degrees, recorded marks, status, tables */
  size_t rec_bytes; /* the recording buffer */
  size_t mm_slot; /* multimeter: elements of one slice's records of every sampled population */
  size_t mm_bytes; /* its buffer: k + 2 slots */
} eng_res_plan;

/*
 * The device loop's status words (ulong) and error words per block (uint), as
 * kernels_templates/core/nestcl_core.h numbers them (NESTCL_RES_*).
 */
enum {
  ENG_RES_GLOBAL_N = 0, /* [0], [1]: the global list's length, by the super step's parity */
  ENG_RES_SPIKES = 2,
  ENG_RES_EVENTS = 3,
  ENG_RES_FAILED = 4, /* 1 + the origin of the first super step with an error */
  ENG_RES_RECORDED = 5,
  ENG_RES_SRC_N = 9, /* [9], [10]: the super step's sources in the bucket list, by parity (resident_plastic.c) */
  ENG_RES_HALT = 11, /* 1 + the origin of the super step where the loop halted for a full history ring */
  ENG_RES_HALT_GID = 12, /* the smallest gid of such a neuron */
  ENG_RES_STATUS_WORDS = 16,
  ENG_RES_ERR_WORDS = 6 /* per block: the count words (model.h, Failures), then a bad-entry flag */
};

/* The gather's marks per gid (NESTCL_MARK_*): recorded by a spike recorder; bucketed for plastic synapses. */
enum { ENG_MARK_RECORDED = 1, ENG_MARK_BUCKET = 2 };

/* One launch of the device loop's plastic part (resident_plastic.c): a block's history append (j < 0) or its j-th plastic synapses. */
typedef struct eng_res_syn {
  cl_kernel k;
  int pop, j, dims;
  size_t gsize[2], lsize[2];
} eng_res_syn;

/* One launch of the device loop's end of a super step (resident_merge.c): a generated kernel over several blocks. */
typedef struct eng_launch {
  cl_kernel k;
  int *items; /* populations: [0, n_deliver) delivered into, the rest driven */
  int n_items, n_deliver;
  size_t width; /* work-items per spike (and per group of driven neurons) */
} eng_launch;

/* One merged update of the device loop (resident_update.c): every population of one model. */
typedef struct eng_update {
  cl_program prog;
  cl_kernel k;
  int *pops;
  int n;
  nestcl_buffer *parents; /* per field: the blocks' field buffers are parts of it */
  nestcl_buffer b_tab; /* per block: n, K, channels, capacity, ring/count/list offsets, first gid, field offsets */
  size_t width; /* the largest block, rounded up to a multiple of group */
  size_t group; /* work-items per work-group (64, or the kernel's limit) */
  char *opts; /* its program's build options (the model's constants), for the persistent loop's program */
  int stride; /* words per block in the table */
} eng_update;

/* The device loop (resident.c, resident_run.c, resident_merge.c, resident_update.c); on == 0: cycle.c's loop runs. */
typedef struct eng_resident {
  int on; /* the stream VP vp runs the resident kernels (one stream; eng_resident_mode) */
  int full; /* and the whole loop (no threads, one rank): the device loop; else one wait per super step */
  int vp;
  uint64_t n_upload; /* beside threads or ranks: the global list's length, written to the device */
  int queued; /* beside threads or ranks: the stream enqueued since its last wait (eng_resident_run_end) */
  eng_res_plan plan;
  nestcl_buffer b_counts, b_spikes; /* the blocks' count words and spike lists are parts of these */
  nestcl_buffer b_table, b_gids, b_degree, b_recorded, b_status, b_errs, b_rec;
  nestcl_buffer b_mm; /* multimeter samples: plan.k + 2 slots of plan.mm_slot doubles */
  double *mm_host; /* their host copy at a drain */
  size_t *mm_off; /* per population: its records' offset within a slot (elements) */
  int64_t *slices; /* per slot: the slice's origin, from and to */
  cl_kernel k_gather;
  size_t gather_width;
  size_t deliver_groups; /* work-groups of a plastic delivery: enough to fill the device */
  size_t step_groups; /* work-groups of the merged end of a super step: a few per compute unit (resident_merge.c) */
  cl_program merged; /* the generated merged kernels */
  eng_launch *launches; /* the end of a super step */
  int n_launches;
  nestcl_buffer b_ring_all; /* the blocks' rings are parts of it, at ring_off[p] elements */
  size_t *ring_off;
  eng_update *upd;
  int n_upd;
  int *merged_pop; /* per population: updated by a merged launch */
  struct eng_graph *graph; /* the recorded super step (resident_graph.c); NULL: launched one by one */
  struct eng_persist *persist; /* the persistent loop (resident_persist.c); NULL: launches */
  int clock_stale; /* the device's clock words need the host's before the next replay */
  uint32_t bucket_width; /* plastic synapses: spikes a neuron's bucket holds per super step (0: none) */
  nestcl_buffer b_bucket_word, b_bucket_src, b_bucket_lags;
  eng_res_syn *syn; /* history appends, then plastic deliveries */
  int n_syn;
  cl_ulong halt_clear[2]; /* what lifts a halt: status words [11], [12] (kept for the non-blocking write) */
  uint32_t **hist_len; /* beside threads or ranks: per population, its history lengths as the last collect read them */
  uint64_t status[ENG_RES_STATUS_WORDS]; /* the last drain's status words */
  cl_ulong status_img[ENG_RES_STATUS_WORDS]; /* what a run writes at its start (kept for the non-blocking write) */
  uint32_t *errs; /* [6 x n_pops] */
  uint32_t *table; /* [4 x n_pops]: per block its count words' offset (words), spike list's offset, capacity, n */
  uint32_t *counts; /* the count words' buffer: the live counts, read when a drain ends inside a super step */
  uint32_t *rec_host; /* [2 x rec_cap] */
  cl_event *markers; /* [k + 1]: the end of each super step since the last drain */
  double s_per_ss; /* wall seconds per super step, measured between drains */
  double rec_per_ss; /* recorded spikes per super step, as the drains saw them (the next drain's guess) */
  int sticky; /* an error the device loop found: the engine does not go on */
  char sticky_err[512];
} eng_resident;

/* The simulation cycle's barrier (cycle.c): spins at most spin iterations, then sleeps. */
typedef struct eng_barrier {
  atomic_uint count, gen;
  unsigned n;
  long spin;
} eng_barrier;

/*
 * The engine's state in named parts, as NEST's managers hold theirs (the
 * ModelManager and NodeManager the description, the SimulationManager the
 * clock, the EventDeliveryManager and MPIManager the exchange). A member's
 * path says what it is: e->desc.pops, e->clock.origin, e->exchange.global,
 * e->device.res, e->stats.spikes_total.
 */

/* The network as the user described it (api.c), and what follows from it alone. */
typedef struct eng_desc {
  nestcl_engine_config cfg;
  const nestcl_model *const *models;
  int n_models;
  const nestcl_synapse_model *const *synapse_models;
  int n_synapse_models;
  eng_population *pops;
  int n_pops;
  eng_projection *projs;
  int n_projs;
  eng_drive *drives;
  int n_drives;
  eng_recorder *recs;
  int n_recs;
  uint64_t n_global; /* neurons of every population: the global ids [1, n_global] */
  int any_plastic; /* a projection has translated synapses: the exchange lists the spiking sources */
  char device_spec[256]; /* the config's device string, owned (cfg.device points here) */
} eng_desc;

/*
 * The simulation's clock (cycle.c): where the run stands, the delays that
 * size a super step and the rings, and the barrier with its stop and abort
 * flags, which the master writes between two barriers only.
 */
typedef struct eng_clock {
  int min_delay, max_delay, ring_slots;
  int64_t steps_done;
  int64_t origin; /* first step of the current super step */
  int lag; /* steps of it already simulated (partial simulate() calls) */
  int abort; /* written by the master thread between two barriers only */
  const volatile sig_atomic_t *stop_flag; /* nestcl_engine_set_stop_flag */
  int stop; /* a stop at the end of this super step (same pattern as abort) */
  int64_t steps_left; /* steps of the run not simulated when it stopped (master, after a stop) */
  eng_barrier bar;
} eng_clock;

/* The spike exchange (cycle.c, mpi.c): this rank among the ranks, the global spike list and its buffers. */
typedef struct eng_exchange {
  int rank, n_ranks;
  /* global spike list of the current super step: (gid, lag) pairs */
  uint32_t *global;
  size_t n_global_spikes, global_cap;
  uint32_t *gather_tmp;
  size_t gather_cap;
  int *mpi_counts; /* [2 * n_ranks]: Allgatherv counts and displacements */
  uint32_t *out_degree; /* per global source, over all ranks */
  /* the super step's spiking sources as (gid, first, end) into src_lags, by gid, then lag (desc.any_plastic) */
  uint32_t *src_list, *src_lags;
  uint32_t *src_q; /* per spike of the global list: its index in src_lags */
  size_t n_src_list;
  int ex_status; /* failure of the master's exchange / recording */
  char ex_err[512];
} eng_exchange;

/* The OpenCL device: its programs, the delivery's shape, and the device loop (device_loop/). */
typedef struct eng_device {
  nestcl_device *dev;
  cl_program *model_programs; /* per population (NULL entries for CPU-only runs) */
  cl_program core_program;
  cl_program *plastic_programs; /* per projection (NULL: static, or no streams) */
  uint32_t deliver_width; /* work-items per spike (one work-group) in the delivery kernel */
  int deliver_contiguous; /* each work-item walks a contiguous chunk of the row (CPU devices), not a stride */
  eng_plastic_shape plastic_shape; /* nestcl_plastic's shape (plastic_dev.h): flat on GPUs */
  int libm_fused; /* the host glibc's exp/pow build (nestcl_libm.h), for C path and device alike */
  int draw_on_device; /* the build draws the streams' synapses on the device where it can (connect_device.c) */
  cl_program connect_program; /* its kernels */
  int host_unified; /* the device's memory is the host's (CL_DEVICE_HOST_UNIFIED_MEMORY) */
  int stage_map; /* the build maps the streams' synapse buffers and writes them in place (else: pinned copies) */
  int stage_plastic; /* ... their plastic synapses too (the estimate says they stay resident, not batched) */
  /* Device bytes the build allocated while drawing (the budget's check counts them apart); VPs build at once. */
  _Atomic size_t staged_bytes;
  eng_resident res;
} eng_device;

/* What nestcl_engine_stats reports: counters and timers, summed over the run. */
typedef struct eng_stats {
  double serial_s; /* duration of the master's last serial section (same pattern as clock.abort) */
  double sync_s; /* of which waiting for the other ranks (the first MPI collective) */
  double record_s; /* and of which feeding the spike recorders */
  uint64_t spikes_total, events_total, synapses_total, local_synapses;
  uint64_t plastic_synapses_total;
  double build_nodes_s, build_conn_s, build_upload_s, simulate_s;
  double build_draw_s, build_csr_s; /* of build_conn_s: drawing (both passes), and the CSR's rows and arrays */
  int build_threads; /* host threads that drew the synapses */
  int build_device_csrs, build_host_csrs; /* static CSRs and plastic sets drawn on the device, on the host */
  /* The build's progress (config.build_progress): synapse draws done (each synapse twice: two passes), expected. */
  atomic_uint_least64_t build_work;
  double build_work_expected, build_t0, build_reported;
  nestcl_vp_stats *vp_stats;
} eng_stats;

struct nestcl_engine {
  eng_desc desc;
  eng_clock clock;
  eng_exchange exchange;
  eng_device device;
  eng_stats stats;
  /* The engine's own: whether the build made the VPs, and the VPs of this rank. */
  int built;
  int n_vps; /* of this rank */
  eng_vp *vps;
};

double eng_now(void);
/* Tics (NEST's 1000 per ms) per step of resolution h ms. */
int64_t eng_tics_per_step(double h);
/* Rounds a time in ms to steps of h as NEST does (through tics of 1 us). */
int64_t eng_ms_to_steps(double ms, double h);
/* A connection's delay in steps, as NEST rounds it (Time::delay_ms_to_steps). */
int64_t eng_delay_ms_to_steps(double ms, double h);
/* The value for (purpose stream) drawn from a Philox stream. */
double eng_draw(const nestcl_value *v, uint32_t seed, uint32_t purpose, uint64_t id, uint64_t step);
/*
 * The values a distribution can draw: a normal's reach is bounded by the
 * generator (nestcl_stream_normal, Marsaglia's polar method on 53-bit
 * uniforms: |z| <= sqrt(-2 ln r) with r >= 2^-104, so |z| < 12.01); a clipped
 * normal's by that and its bounds. Used for the ring size when a redraw has no
 * upper bound (NEST's max = inf).
 */
#define NESTCL_NORMAL_BOUND 12.01
void eng_value_range(const nestcl_value *v, double *lo, double *hi);

/* SetStatus of one neuron: the model's set_status, or a direct write of a field NEST exposes by name. */
/*
 * Where target model tgt's handle(SpikeEvent&) puts a spike of weight w at
 * rport (model.h, route_spike) that comes from a neuron of model src (NULL:
 * a generator). The engine carries no spike offsets: a handler that reads the
 * offset gets 0, NEST's offset of a spike whose sender sets none, and a
 * sender that sets offsets is refused with an error naming both.
 */
int eng_route_spike(const nestcl_model *src, const nestcl_model *tgt, double w, long rport, uint32_t K, int *ch,
                    double *value);

int eng_set_value(const nestcl_model *m, void *const *fields, size_t n, size_t i, uint32_t K, const char *name,
                  double v);
int eng_build(nestcl_engine *e);
/* The build's time in the synapses' draw passes and in the CSR between them (connect.c). */
typedef struct eng_build_times {
  double draw_s, csr_s;
  int device_csrs, host_csrs; /* static CSRs and plastic sets drawn by the device, by the host */
} eng_build_times;
/* connect.c: the synapses onto block b of VP vp (static CSR, plastic sets, the ring's range), on `threads` threads. */
int eng_connect_block(nestcl_engine *e, eng_vp *vp, eng_block *b, int threads, eng_build_times *bt);
/*
 * connect.c: n more synapse draws done; the build's progress reported to the
 * config's build_progress, by the thread that runs the build (report: 1
 * there), at most twice a second and only after a second.
 */
void eng_build_progress(nestcl_engine *e, uint64_t n, int report);
/* estimate.c: the build's threads: the config's, else every core this process may run on (its affinity mask). */
int eng_build_thread_count(const nestcl_engine *e);
/* estimate.c: the synapses this rank's blocks get by the rules' expectations (exact where the rule is). */
double eng_expected_synapses(const nestcl_engine *e);
void eng_free_built(nestcl_engine *e);
/* kernel_profile.c: the stream VPs' kernel profiles (config.kernel_sample), made before their kernels, and freed. */
int eng_kernel_profile_open(nestcl_engine *e);
void eng_kernel_profile_close(nestcl_engine *e);
int eng_run(nestcl_engine *e, int64_t steps);
/* vp.c: records a worker thread's failure in its VP (message copied). */
void eng_vp_fail(eng_vp *vp, int rc);
/* vp.c: the first failure of any VP, re-raised in the calling thread; 0 if none. */
int eng_vps_status(nestcl_engine *e);

/* vp.c, shared by the cycle and the device loop: qsort order of (gid, lag) pairs, by lag, then gid. */
int eng_cmp_spike(const void *a, const void *b);
/* clock.c: the lags [*f, *t) of [from, to) at which drive d is active; 0 when none. */
int eng_drive_window(const eng_drive *d, int64_t origin, int from, int to, int *f, int *t);
/* vp.c: a failure in count words `words` of block b's update (model.h, Failures) as an error naming neuron and time; 0: none. */
int eng_block_failure(const nestcl_engine *e, const eng_block *b, const uint32_t *words, int64_t origin);
cl_int eng_gpu_enqueue_update(nestcl_engine *e, eng_vp *vp, int64_t origin, int from, int to, int host_counts);
cl_int eng_gpu_enqueue_drives(nestcl_engine *e, eng_vp *vp, int64_t origin, int from, int to);

/* The device loop (resident.c: eligibility, sizes, buffers; resident_run.c: the loop). */
/* 0: neither; 1: one stream beside threads or ranks (one wait per super step); 2: the device loop. */
int eng_resident_mode(const nestcl_engine *e, int n_ranks);
void eng_resident_plan(const nestcl_engine *e, int mode, int min_delay, size_t max_alloc, eng_res_plan *plan);
int eng_resident_error(nestcl_engine *e, const eng_vp *vp, int64_t fail_at, int64_t origin, int lag);
/* The gather of the super step at origin (recorded spikes' steps from window_origin), enqueued on q. */
cl_int eng_resident_enqueue_gather(nestcl_engine *e, eng_vp *vp, cl_command_queue q, int64_t origin,
                                   int64_t window_origin);
/* resident_update.c: CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes (sub-buffers start at multiples of it). */
size_t eng_resident_base_align(const nestcl_engine *e);
/* Beside threads or ranks (resident_step.c): the stream's part of cycle.c's loop. */
int eng_resident_update(nestcl_engine *e, eng_vp *vp, int64_t origin, int from, int to);
int eng_resident_collect(nestcl_engine *e, eng_vp *vp, int64_t origin);
int eng_resident_deliver(nestcl_engine *e, eng_vp *vp, int64_t origin);
int eng_resident_partial(nestcl_engine *e, eng_vp *vp, int64_t origin, int lag);
/*
 * After the VPs' threads, whatever the outcome: waits for what the stream
 * enqueued since its last wait (a run that ends with a whole super step: its
 * delivery, history append and plastic delivery), whose writes read host
 * arrays (the spike histories' pairs, the exchange's lists) that may change or
 * be freed once simulate() returns; a failure fails the stream's VP.
 */
void eng_resident_run_end(nestcl_engine *e);
int eng_resident_setup(nestcl_engine *e);
void eng_resident_free(nestcl_engine *e);
int eng_resident_run(nestcl_engine *e, int64_t steps);
int eng_resident_merge_setup(nestcl_engine *e, eng_vp *vp);
int eng_resident_rehome_rings(nestcl_engine *e, eng_vp *vp);
int eng_resident_update_setup(nestcl_engine *e, eng_vp *vp);
void eng_resident_update_free(nestcl_engine *e);
/* The model's kernel as a function of the neuron given (the persistent loop's update); NULL: it cannot be. */
char *eng_resident_update_at_source(const nestcl_model *m);
/* slot: the multimeter's slot of this slice (0 beside threads and ranks, where nothing is sampled). */
cl_int eng_resident_enqueue_update(nestcl_engine *e, eng_vp *vp, cl_command_queue q, int64_t origin, int from, int to,
                                   int slot);
void eng_resident_merge_free(nestcl_engine *e);
/* resident_persist.c: the persistent loop, where it can run (else persist stays NULL); its launch of n_ss super steps. */
int eng_resident_persist_setup(nestcl_engine *e, eng_vp *vp);
void eng_resident_persist_free(nestcl_engine *e);
size_t eng_resident_persist_groups(const nestcl_engine *e);
cl_int eng_resident_persist_enqueue(nestcl_engine *e, eng_vp *vp, cl_command_queue q, int64_t origin, int n_ss,
                                    int64_t window_origin);
/* Its barrier words into bar[4] (at a drain), and the error when bar[2] says a barrier failed. */
cl_int eng_resident_persist_read(nestcl_engine *e, eng_vp *vp, cl_command_queue q, cl_uint *bar);
int eng_resident_persist_failed(nestcl_engine *e);
/* Its launch was refused at the enqueue (nothing ran): this engine's loop launches per phase from now on. */
void eng_resident_persist_refused(nestcl_engine *e, cl_int err);
/* resident_merge.c for the persistent loop: the end of a super step's parameters (params) or body; its arguments. */
char *eng_resident_step_text(const nestcl_engine *e, const eng_vp *vp, int params);
cl_int eng_resident_step_args(nestcl_engine *e, eng_vp *vp, cl_kernel k, cl_uint *a);
/* Kernels with their fixed arguments (a command buffer records its own: PoCL 3.1 reads arguments at each replay). */
cl_kernel eng_resident_update_kernel(nestcl_engine *e, const eng_update *u, int clocked, cl_int *err);
cl_kernel eng_resident_gather_kernel(nestcl_engine *e, eng_vp *vp, int clocked, cl_int *err);
cl_kernel eng_resident_launch_kernel(nestcl_engine *e, eng_vp *vp, int index, int clocked, cl_int *err);
int eng_resident_graph_setup(nestcl_engine *e, eng_vp *vp);
void eng_resident_graph_free(nestcl_engine *e);
cl_int eng_resident_graph_enqueue(nestcl_engine *e, eng_vp *vp, cl_command_queue q, int64_t origin,
                                  int64_t window_origin);
int eng_resident_plastic_fits(const nestcl_engine *e, int min_delay, int loop);
size_t eng_resident_bucket_bytes(const nestcl_engine *e, int min_delay);
void eng_resident_bucket_marks(const nestcl_engine *e, unsigned char *marks);
int eng_resident_bucket_alloc(nestcl_engine *e);
int eng_resident_plastic_setup(nestcl_engine *e, eng_vp *vp);
void eng_resident_plastic_free(nestcl_engine *e);
cl_kernel eng_resident_plastic_kernel(nestcl_engine *e, eng_vp *vp, int idx, int clocked, cl_int *err);
cl_int eng_resident_enqueue_plastic(nestcl_engine *e, eng_vp *vp, cl_command_queue q, int64_t origin);
int eng_resident_plastic_repoint(nestcl_engine *e, eng_vp *vp, int p);
/* resident_graph.c: the plastic kernels follow block p's moved history, and the recorded super step again. */
int eng_resident_repoint(nestcl_engine *e, eng_vp *vp, int p);
/* resident_run.c: the loop halted for a full history ring: grow it, lift the halt, finish the super step. */
int eng_resident_plastic_resume(nestcl_engine *e, eng_vp *vp, cl_command_queue q, int64_t halt_at, uint64_t gid);
int eng_resident_plastic_step(nestcl_engine *e, eng_vp *vp, int64_t origin);
cl_int eng_resident_enqueue_hist_lengths(nestcl_engine *e, eng_vp *vp, cl_command_queue q);
cl_int eng_resident_enqueue_step_end(nestcl_engine *e, eng_vp *vp, cl_command_queue q, int64_t origin, cl_uint parity);

/* C twins of the core kernels (core_cpu.c). */
void eng_cpu_deliver(eng_block *b, int weight_double, uint32_t ring_slots, const uint32_t *spikes, size_t n_spikes,
                     int64_t origin);
void eng_cpu_drive(eng_block *b, const eng_drive *d, uint32_t seed, uint32_t ring_slots, int64_t origin, int from,
                   int to);

/* Translated synapses (plastic.c). */
/* Per-source and other per-synapse state of a built block's projections from the templates; the history. */
int eng_plastic_init_state(nestcl_engine *e, eng_vp *vp, eng_block *b, const uint32_t *hist_nin,
                           const double *hist_maxd);
int eng_plastic_build_programs(nestcl_engine *e);
int eng_plastic_upload(nestcl_engine *e, eng_vp *vp, eng_block *b);
/* The VP's spikes of block b as (local index, lag) pairs, by index then lag, into b->hist.append. */
void eng_plastic_hist_pairs(const eng_vp *vp, eng_block *b);
cl_int eng_plastic_kernel_args(nestcl_engine *e, eng_block *b, eng_plastic *pl, cl_kernel k, const nestcl_buffer *srcs,
                               const nestcl_buffer *lags);
/*
 * The grid of pl's kernel over a list of at most n_list sources whose rows
 * hold at most longest synapses: one work-group per source (at most
 * max_groups, which then take every max_groups-th source), or in the flat
 * shape as many as fill the device.
 */
void eng_plastic_grid(const nestcl_engine *e, const eng_plastic *pl, uint64_t n_list, uint32_t longest,
                      size_t max_groups, size_t gsize[2], size_t lsize[2]);
void eng_plastic_free(nestcl_engine *e, eng_block *b);
/* Device bytes of a block's plastic synapses when resident. */
size_t eng_plastic_resident_bytes(const nestcl_engine *e, const eng_block *b);
/* Device bytes of one batch slot pair for batch_cap synapses of projection pl. */
size_t eng_plastic_slot_bytes(const nestcl_engine *e, const eng_plastic *pl, uint64_t batch_cap);
/* Master, after the exchange: the spiking sources of the global list. */
void eng_plastic_sources(nestcl_engine *e);
/* The VP's part of the super step's plastic work: history of its own spikes, then delivery (eng_vp_ops.plastic). */
int eng_plastic_deliver_device(nestcl_engine *e, eng_vp *vp, int64_t origin);
/* plastic_cpu.c: a thread's part (shared with the other threads), and a thread's set (eng_vp_ops.plastic_init). */
int eng_plastic_deliver_host(nestcl_engine *e, eng_vp *vp, int64_t origin);
int eng_plastic_host_init(nestcl_engine *e, eng_vp *vp, eng_plastic *pl);

/* A set's weights, targets and delays from the host copy, or from the device unless batched (eng_vp_ops.plastic_snapshot). */
int eng_plastic_snapshot_host(nestcl_engine *e, const eng_vp *vp, const eng_plastic *pl, double *w, uint32_t *tg,
                              uint16_t *dl);
int eng_plastic_snapshot_device(nestcl_engine *e, const eng_vp *vp, const eng_plastic *pl, double *w, uint32_t *tg,
                                uint16_t *dl);
/* checkpoint.c: a block's view on a thread (its own arrays) or a stream (read back, written back) (eng_vp_ops.ck_*). */
int eng_ck_view_alias(nestcl_engine *e, eng_vp *vp, eng_block *b, int csr, struct blk_view *v);
int eng_ck_view_read(nestcl_engine *e, eng_vp *vp, eng_block *b, int csr, struct blk_view *v);
int eng_ck_view_write_device(nestcl_engine *e, eng_vp *vp, eng_block *b, struct blk_view *v);
/* clock.c: NEST's Time::step(s).get_ms() and delay_steps_to_ms with the engine's resolution. */
double eng_step_ms(const nestcl_engine *e, int64_t step);
double eng_delay_ms(const nestcl_engine *e, int64_t steps);

/* Recorders (record.c). */
int eng_record_spikes(nestcl_engine *e, const uint32_t *spikes, size_t n, int64_t origin);
/* Multimeter samples of the slice [from, to) of the super step at origin, from the blocks' rec mirrors. */
int eng_record_samples(nestcl_engine *e, int64_t origin, int from, int to);
/* Values one neuron records per lag: its recordable fields, arrays expanded (the kernel's NESTCL_N_REC). */
size_t eng_rec_width(const nestcl_model *m, uint32_t K);
/* An OpenCL call's status as an engine status (NESTCL_ECL naming the call), 0 on success. */
static inline int eng_cl_check(cl_int err, const char *what)
{
  return err == CL_SUCCESS ? 0 : nestcl_set_error(NESTCL_ECL, "%s failed: %s", what, nestcl_cl_error_name(err));
}

/*
 * mpi.c: every MPI call of the engine. Without NESTCL_WITH_MPI the same
 * functions serve one rank. The collectives do nothing when e->exchange.n_ranks is 1
 * (gathers copy this rank's part); every rank's master calls them in the same order.
 */
typedef enum { ENG_MPI_INT, ENG_MPI_U32, ENG_MPI_U64, ENG_MPI_DOUBLE } eng_mpi_type;
typedef enum { ENG_MPI_SUM, ENG_MPI_MIN, ENG_MPI_MAX } eng_mpi_op;
/* 1 when this build has MPI. */
int eng_mpi_built(void);
/* MPI_Initialized; 0 without MPI. */
int eng_mpi_initialised(void);
/* This process's rank and the rank count: MPI_COMM_WORLD's when use_mpi and MPI is initialised, else 0 of 1. */
void eng_world(const nestcl_engine *e, int *rank, int *ranks);
/*
 * Collective under MPI (every rank's master calls it): when any rank's rc is
 * non-zero, every rank returns an error, the first failing rank's own, the
 * others "rank <r>: " and its message; 0 when all succeeded.
 */
int eng_agree(const nestcl_engine *e, int rc);
/* count values of buf reduced in place over every rank. */
void eng_mpi_allreduce(const nestcl_engine *e, void *buf, int count, eng_mpi_type t, eng_mpi_op op);
/* bytes of buf from rank root to every rank. */
void eng_mpi_bcast(const nestcl_engine *e, void *buf, int bytes, int root);
/* count values of every rank's mine into all, by rank. */
void eng_mpi_allgather(const nestcl_engine *e, const void *mine, void *all, int count, eng_mpi_type t);
/* n words of every rank's mine into all at displs[rank] (counts[rank] words); an error names MPI's code. */
int eng_mpi_allgatherv_u32(const nestcl_engine *e, const uint32_t *mine, int n, uint32_t *all, const int *counts,
                           const int *displs);
/* Waits for every rank. */
void eng_mpi_barrier(const nestcl_engine *e);
/* checkpoint.c: CRC-32 (IEEE 802.3, as zlib's crc32): the table, then the running value from 0 over p[0..n). */
void eng_crc32_table(uint32_t t[256]);
uint32_t eng_crc32_update(const uint32_t t[256], uint32_t crc, const void *p, size_t n);
/* partition.c: VP vp's neurons of population p on rank `rank` of n_ranks: [*lo, *lo + *n) (local indices). */
void eng_block_range(const nestcl_engine *e, const eng_population *p, int vp, int rank, int n_ranks, uint32_t *lo,
                     uint32_t *n);
/* partition.c: the min and max delay in steps (the projections' and drives' delays, the config's overrides). */
void eng_delay_steps(const nestcl_engine *e, int64_t *lo, int64_t *hi);
/* estimate.c: NESTCL_DEVICE_MEMORY_LIMIT in bytes, or SIZE_MAX. */
size_t eng_memory_limit_env(void);
/* estimate.c: the admission estimate (nestcl_engine_estimate), and the refusal of what cannot fit. */
int eng_estimate(nestcl_engine *e, nestcl_memory_estimate *out);
int eng_admit(nestcl_engine *e);
/* estimate.c: 1 when the estimate says everything of the streams stays resident on the device (nothing batched). */
int eng_estimate_resident(nestcl_engine *e);
void eng_recorders_free(nestcl_engine *e);
/* checkpoint.c: the hash of the network's description (not of its split), checked by restore. */
uint64_t eng_network_hash(const nestcl_engine *e);

#endif
