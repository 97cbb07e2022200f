/*
 * Translated (plastic) synapses on a device, the pieces that the engine
 * (engine/plastic.c) and nest_patch's blocks (block.c) share: where a synapse
 * model's fields live (per-synapse and per-source SoA arrays), the program that
 * runs its send() (kernels_templates/core/plastic_kernels.cl behind a prelude
 * naming the model), the kernel's arguments, and the postsynaptic spike
 * history of a set of neurons (nestcl_history.h) on the host or the device,
 * with its growth on demand. Internal to libnestcl.
 */
#ifndef NESTCL_PLASTIC_DEV_H
#define NESTCL_PLASTIC_DEV_H

#include <stddef.h>
#include <stdint.h>

#include "nestcl/device.h"
#include "nestcl/engine.h" /* nestcl_enqueue_counts */
#include "nestcl/model.h"
#include "nestcl_history.h"

#define ENG_SYN_FIELDS_MAX 32
/* NEST's kernel key stdp_eps (ConnectionManager), the tolerance of STDP's spike-time comparisons. */
#define ENG_STDP_EPS 1.0e-6

/*
 * Where a translated synapse model's fields live: per-synapse state (role
 * STATE) as SoA over a set of synapses in one buffer, field f's array at byte
 * state_off[f] * count; per-source state (role SOURCE) the same over the
 * source rows; parameters and common properties stay in a template (one
 * synapse struct) and the common-properties struct. Fields are ordered by
 * size, largest first, so every array is aligned.
 */
typedef struct eng_syn_layout {
  int n_state, n_src;
  int state_f[ENG_SYN_FIELDS_MAX], src_f[ENG_SYN_FIELDS_MAX]; /* indices into the model's fields */
  size_t state_off[ENG_SYN_FIELDS_MAX], src_off[ENG_SYN_FIELDS_MAX];
  size_t state_bytes, src_bytes; /* per synapse, per source */
  int weight_f; /* the field NEST calls "weight" (index into fields) */
  size_t weight_off; /* its state_off */
} eng_syn_layout;

int eng_syn_layout_init(const nestcl_synapse_model *sm, eng_syn_layout *lay);
size_t eng_syn_field_size(const nestcl_syn_field *f);
/* Fields fi[0, n) of a synapse struct from (into) SoA arrays over count entries, entry k. */
void eng_syn_load(const nestcl_synapse_model *sm, unsigned char *self, const unsigned char *arrays, int n,
                  const int *fi, const size_t *off, uint64_t count, uint64_t k);
void eng_syn_store(const nestcl_synapse_model *sm, const unsigned char *self, unsigned char *arrays, int n,
                   const int *fi, const size_t *off, uint64_t count, uint64_t k);

/*
 * Whether a target model adds a spike's weight unchanged to a channel chosen
 * by its sign (what the plastic delivery assumes), and those channels.
 */
int eng_plastic_route(const nestcl_model *m, uint32_t K, uint32_t n_channels, long rport, int *ch_pos, int *ch_neg,
                      int *ch_zero);

/*
 * The shape of nestcl_plastic on a device (plastic_kernels.cl): flat (work
 * follows synapses, a chunk of a list of the spiking sources' rows per
 * work-group) on GPUs and accelerators, one work-group per spiking source on
 * CPU devices (PoCL runs a work-group's items one after another, so a row is
 * one walk). NESTCL_PLASTIC_SHAPE forces one, for tests and tuning: "source",
 * "flat", or "flat:W" (W work-items per work-group, 1 to ENG_PLASTIC_TILE);
 * anything else is an error.
 */
#define ENG_PLASTIC_TILE 256 /* NESTCL_PLASTIC_TILE of plastic_kernels.cl */
typedef struct eng_plastic_shape {
  int flat;
  size_t want; /* flat: work-items per work-group to ask the kernel for */
} eng_plastic_shape;
int eng_plastic_shape_get(const nestcl_device *dev, eng_plastic_shape *out);
/* Work-items per work-group of a kernel built for shape sh (k's limit; source: per_source_want). */
int eng_plastic_width(nestcl_device *dev, cl_kernel k, const eng_plastic_shape *sh, size_t per_source_want,
                      size_t *width);
/*
 * Work-groups of a flat launch of width work-items over a list of at most
 * `sources` sources whose rows hold at most `longest` synapses: enough to fill
 * the device (2,048 work-items per compute unit), never more than the list
 * has chunks of width synapses (sources times ceil(longest / width)). The
 * kernel lengthens its chunks up to 8 times while every work-group still
 * gets one.
 */
size_t eng_plastic_flat_groups(const nestcl_device *dev, size_t width, uint64_t sources, uint32_t longest);

/* The program of a synapse model's delivery kernel "nestcl_plastic" (contiguous: CPU devices' row split). */
int eng_plastic_program(nestcl_device *dev, const nestcl_synapse_model *sm, const eng_syn_layout *lay, int contiguous,
                        const eng_plastic_shape *sh, cl_program *out);

/* Arguments of nestcl_plastic (plastic_kernels.cl), by position. */
enum {
  PK_SRCS = 0,
  PK_N_SRCS,
  PK_LAGS,
  PK_ORIGIN,
  PK_SRC_FIRST,
  PK_N_ROWS,
  PK_ROW,
  PK_TARGET,
  PK_DELAY,
  PK_DELAY_HOM,
  PK_STATE,
  PK_NNZ,
  PK_SRC_STATE,
  PK_TMPL,
  PK_CP,
  PK_RING,
  PK_RING_SLOTS,
  PK_N,
  PK_N_CHANNELS,
  PK_CH_POS,
  PK_CH_NEG,
  PK_CH_ZERO,
  PK_RPORT,
  PK_TICS_PER_STEP,
  PK_MS_PER_TIC,
  PK_MS_PER_STEP,
  PK_EPS,
  PK_TAU_MINUS_INV,
  PK_FUSED,
  PK_HIST,
  /* after the history's arrays and cap: where the sources come from (plastic_kernels.cl) */
  PK_STATUS = PK_HIST + 12,
  PK_BUCKET_WORD,
  PK_BUCKET_WIDTH,
  PK_MIN_DELAY,
  PK_LOOP,
  PK_ROW_DONE /* the flat shape's per-row counters (uint, one per row, zero between launches) */
};

/* What stays fixed for one set of synapses on one block of neurons. */
typedef struct eng_plastic_fixed {
  const nestcl_buffer *tmpl, *cp, *ring, *lags;
  uint32_t delay_hom, ring_slots, n, n_channels, ch_pos, ch_neg, ch_zero;
  int64_t rport, tics_per_step;
  double ms_per_step, tau_minus_inv;
  int fused;
} eng_plastic_fixed;
/* Also sets the arguments from PK_STATUS on for the host's list of sources (loop 0). */
cl_int eng_plastic_fixed_args(cl_kernel k, const eng_plastic_fixed *a);
/* The arguments that name the rows it walks: a resident CSR or a batch (row_done: a counter per row, zeros). */
cl_int eng_plastic_rows_args(cl_kernel k, const nestcl_buffer *srcs, cl_ulong src_first, cl_uint n_rows,
                             const nestcl_buffer *row, const nestcl_buffer *target, const nestcl_buffer *delay,
                             const nestcl_buffer *state, cl_ulong nnz, const nestcl_buffer *src_state,
                             const nestcl_buffer *row_done);
/* The per-row counters of a set of n_rows rows (zeros), which the kernel leaves as zeros after each launch. */
int eng_plastic_row_done_alloc(nestcl_device *dev, uint32_t n_rows, nestcl_buffer *out);

/* ---- the spike history of n neurons (ArchivingNode) ---------------------- */

enum {
  ENG_H_T = 0,
  ENG_H_KMINUS,
  ENG_H_KMINUS_TRIPLET,
  ENG_H_ACCESS, /* per entry: [n * cap] */
  ENG_H_HEAD,
  ENG_H_LEN,
  ENG_H_KM,
  ENG_H_KMT,
  ENG_H_LAST,
  ENG_H_NIN,
  ENG_H_MAXD, /* per neuron: [n] */
  ENG_H_ARRAYS
};
typedef struct eng_history {
  uint32_t cap; /* entries per neuron; 0: no history */
  uint32_t n;
  void *a[ENG_H_ARRAYS]; /* host arrays (NULL while the device has them) */
  nestcl_buffer b[ENG_H_ARRAYS];
  double tau_minus_inv, tau_minus_triplet_inv;
  /* fixed for the run */
  int64_t tics_per_step;
  double min_delay_ms;
  int fused;
  uint32_t max_cap; /* the bound of growth */
  uint64_t first_gid; /* for messages */
  const char *model;
  /* a super step's (or slice's) own spikes as (local index, lag) pairs, by index then lag */
  uint32_t *append;
  size_t n_append, max_pairs;
  nestcl_buffer b_append, b_flag;
  cl_kernel k_append;
  nestcl_enqueue_counts *counts; /* the owning VP's (enqueue.h); NULL: not counted */
  /*
   * The kernels that read the history at PK_HIST (eng_hist_add_user): every
   * one of them follows the device copy when it moves (grown, replaced), so
   * that none is left reading a freed ring, however many projections a
   * population receives (not retained: their owners release them).
   */
  cl_kernel *users;
  int n_users, cap_users;
} eng_history;

/*
 * n neurons with cap entries each to start with (grown up to max_cap), their
 * time constants, STDP in-degrees and largest delays (ms), room for max_pairs
 * spikes per append. Host arrays, empty histories.
 */
int eng_hist_init(eng_history *h, uint32_t n, uint32_t cap, uint32_t max_cap, double tau_minus,
                  double tau_minus_triplet, const uint32_t *nin, const double *maxd, size_t max_pairs,
                  int64_t tics_per_step, double min_delay_ms, int fused, uint64_t first_gid, const char *model);
size_t eng_hist_bytes(const eng_history *h);
nestcl_history eng_hist_view(eng_history *h);
/* Room for cap entries per neuron in the host arrays (grows them; never shrinks). */
int eng_hist_reserve(eng_history *h, uint32_t cap);
/* Sorts the pairs in h->append by neuron, then lag. */
void eng_hist_sort(eng_history *h);
/* set_spiketime for the pairs (spike of pair (i, lag) at step origin + lag + 1), on the host arrays. */
int eng_hist_append_host(eng_history *h, int64_t origin);
/* The device copy (from the host arrays, which are freed) and the append kernel from the core program. */
int eng_hist_upload(eng_history *h, nestcl_device *dev, cl_program core);
/* Kernel k reads the history at PK_HIST: its arguments follow the device copy from now on. */
int eng_hist_add_user(eng_history *h, cl_kernel k);
/*
 * The device copy's ring twice as long (at most max_cap; beyond it the error
 * that names neuron `full`, a local index), the kernels' history arguments
 * re-pointed: h->k_append's and every user's at PK_HIST.
 */
int eng_hist_grow(eng_history *h, nestcl_device *dev, int queue, uint32_t full);
/*
 * The append on the device without waiting for it: for a caller that knows
 * there is room (every ring holds its length plus its spikes to append);
 * h->append must stay as it is until the queue has run it.
 */
cl_int eng_hist_append_enqueue(eng_history *h, nestcl_device *dev, int queue, int64_t origin);
/* The same on the device; the users' history arguments (at PK_HIST) follow a growth. */
int eng_hist_append_device(eng_history *h, nestcl_device *dev, int queue, int64_t origin);
/* The device copy back into host arrays (for reading; the device copy stays). */
int eng_hist_download(eng_history *h, nestcl_device *dev, int queue);
/*
 * The host arrays (any cap, e.g. after eng_hist_reserve) replace the device
 * copy: new buffers, the append kernel's and the users' arguments re-pointed,
 * the host arrays freed (a checkpoint's restore).
 */
int eng_hist_replace_device(eng_history *h, nestcl_device *dev);
cl_int eng_hist_args(cl_kernel k, cl_uint first, const eng_history *h);
void eng_hist_free(eng_history *h, nestcl_device *dev);

#endif
