/*
 * The contract between nestcl-translate's output and the runtime. For every
 * translated model the translator emits (into the build tree):
 *
 *   <model>.cl       the OpenCL kernel nestcl_update_<model> (source text, also
 *                    embedded as a string in <model>_desc.c)
 *   <model>_cpu.c    the equivalent C loop <model>_update_cpu (same SoA, same order
 *                    of floating-point operations)
 *   <model>_desc.c   the nestcl_model descriptor below: fields, channels, host
 *                    helpers translated from the model's constructors,
 *                    pre_run_hook(), handle() and get/set_status
 *   <model>_glue.hpp the C++ glue that packs/unpacks one NEST node into SoA slot i
 *
 * and one nestcl_models.c that lists all models of the build
 * (nestcl_builtin_models). The runtime never needs to know a model by name: it
 * allocates one device array per field, in descriptor order, and passes them to
 * the kernel after the fixed leading arguments documented at
 * nestcl_update_args.
 *
 * SoA layout. A scalar field is an array [n]. A fixed array of length L, a
 * std::vector<double> whose length is the population's receptor count K, or
 * an ODE state vector y_ of a multi-receptor model, whose length is A + B * K
 * (aeif_cond_alpha_multisynapse: V_M, W, then DG, G per receptor: 2 + 2 K), is
 * an array [L][n] (L = nestcl_field_len): element k of neuron i is at k * n + i. bool fields are
 * stored as int32 (OpenCL buffers cannot hold bool), size_t as uint64, long as
 * int64, int as int32, double as double.
 *
 * Ring buffers. All input buffers of a model (each RingBuffer, each channel of a
 * MultiChannelInputBuffer, each element of a std::vector<RingBuffer>) are
 * channels of one ring of int64 fixed-point values laid out [slot][channel][n],
 * see nestcl_fixed.h. NEST's get_modulo(lag) is slot = (origin_steps + lag) mod
 * ring_slots. Reading a channel converts to double; get_value() and
 * reset_values_all_channels() zero what they read, as in NEST.
 *
 * Spikes. A spike emitted at lag by local neuron i is appended as (i, lag) to a
 * compact list with one atomic counter. The capacity is n * (to - from); the
 * counter still counts past the capacity, so overflow is detected on the host.
 *
 * Failures. update() cannot throw on the device. Where the model throws
 * (GSLSolverFailure when the ODE solver fails, NumericalInstability, ...), the
 * generated code records the failure beside the spike counter and stops
 * updating that neuron for the rest of the call: the counter is an array of
 * NESTCL_COUNT_WORDS words, [0] the spike count, [1] the failure code (0 none,
 * k names failures[k - 1] of the descriptor), [2] the neuron's index, [3] the
 * lag, [4] the status the model passed (GSL's error code), the first failure
 * of the call winning (nestcl_report_failure, nestcl_ring.h). The runtime
 * zeroes all words where it zeroes the count and, after the call, turns a
 * failure into an error that names the model, the neuron and the time.
 */
#ifndef NESTCL_MODEL_H
#define NESTCL_MODEL_H

/* Words of an update's spike counter: the count and the failure record (see Failures). */
#define NESTCL_COUNT_WORDS 5

#include <stddef.h>
#include <stdint.h>
#include "nestcl/update_args.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum nestcl_field_type {
  NESTCL_T_DOUBLE = 0, /* double */
  NESTCL_T_LONG, /* long -> int64 */
  NESTCL_T_INT, /* int -> int32 */
  NESTCL_T_BOOL, /* bool -> int32 */
  NESTCL_T_SIZE /* size_t / unsigned long -> uint64 */
} nestcl_field_type;

typedef enum nestcl_field_role {
  NESTCL_ROLE_STATE = 0, /* State_ */
  NESTCL_ROLE_PARAMETER, /* Parameters_ */
  NESTCL_ROLE_INTERNAL, /* Variables_ */
  NESTCL_ROLE_BUFFER /* Buffers_ members that are not ring buffers (rare) */
} nestcl_field_role;

typedef struct nestcl_field {
  const char *member; /* C++ member name, e.g. "y3_" */
  const char *struct_name; /* "State_", "Parameters_", "Variables_", "Buffers_" */
  const char *nest_name; /* NEST's name where get_status() exposes the member directly, e.g. "V_m"; NULL otherwise */
  nestcl_field_role role;
  nestcl_field_type type;
  int array_len; /* 0: scalar; > 0: fixed array of this length; < 0: a vector of length
                              array_base + (-array_len) * K (-1 with base 0: one entry per receptor) */
  int array_base; /* see array_len; 0 unless array_len < 0 */
} nestcl_field;

/*
 * An ODE model integrates its state vector in private memory sized at compile
 * time: an OpenCL kernel is built with -DNESTCL_K_MAX=<the population's K>, the
 * C loop (compiled once) has room for this many receptors, so the engine
 * refuses populations with more when the model's state vector grows with K.
 */
#define NESTCL_ODE_K_MAX 64

/* Elements per neuron of field f in a population of receptor count K (1 for a scalar). */
static inline size_t nestcl_field_len(const nestcl_field *f, uint32_t K)
{
  return f->array_len == 0 ? 1u
    : f->array_len > 0     ? (size_t)f->array_len
                           : (size_t)f->array_base + (size_t)(-(long)f->array_len) * (size_t)K;
}

typedef struct nestcl_channel_group {
  const char *buffer; /* Buffers_ member, e.g. "input_buffer_" or "spikes_ex_" */
  const char *name; /* channel name, e.g. "SYN_EX"; the buffer name for a plain RingBuffer */
  int count; /* channels in the group; -1: one per receptor (K) */
  int is_current; /* fed by CurrentEvent rather than SpikeEvent */
} nestcl_channel_group;

/* Bytes of one element in the SoA for each nestcl_field_type. */
static inline size_t nestcl_field_type_size(nestcl_field_type t)
{
  return (t == NESTCL_T_DOUBLE || t == NESTCL_T_LONG || t == NESTCL_T_SIZE) ? 8u : 4u;
}

/* One emitted spike: local neuron index and lag within the super step. */
typedef struct nestcl_spike {
  uint32_t index;
  uint32_t lag;
} nestcl_spike;

/*
 * The fixed leading arguments of every update (update_args.h declares them
 * once: names, types, order), for the C loop as this struct and for the
 * OpenCL kernel as separate arguments of the same names, followed by one
 * pointer per field, in descriptor order ([__global T *]), and, only for a
 * model with spike_offsets set, by
 *
 *   spike_offsets  [__global double *] the offset of each spike-list entry, at the
 *                            entry's position (capacity spike_capacity)
 *
 * and then, only for a model with event_queue set, by the events of this call
 * grouped by neuron: neuron i's are [evq_first[i], evq_first[i + 1]), in the
 * order its update() is to take them, each at lag evq_lag[k] (from <= lag < to)
 * with its offset and weight:
 *
 *   evq_first      [__global const uint *]   n + 1 entries
 *   evq_lag        [__global const uint *]
 *   evq_offset     [__global const double *]
 *   evq_weight     [__global const double *]
 */
#define NESTCL_UARG_MEMBER_V_(name, c, cl, p) c name;
#define NESTCL_UARG_MEMBER_P_(name, c, cl, p) c *name;
typedef struct nestcl_update_args {
  NESTCL_UPDATE_FIXED(NESTCL_UARG_MEMBER_V_, NESTCL_UARG_MEMBER_P_)
  double *spike_offsets; /* read only by models with spike_offsets set */
  /* read only by models with event_queue set (see above) */
  const uint32_t *evq_first;
  const uint32_t *evq_lag;
  const double *evq_offset;
  const double *evq_weight;
} nestcl_update_args;
#undef NESTCL_UARG_MEMBER_V_
#undef NESTCL_UARG_MEMBER_P_

typedef struct nestcl_model {
  const char *name; /* "iaf_psc_alpha" */
  const char *source_file; /* the .cpp (or .h) it was translated from, by its name in the input root */
  const char *source_hash; /* hash of the model's source text */
  const nestcl_field *fields;
  int n_fields;
  const nestcl_channel_group *channels;
  int n_channel_groups;
  const int *recordables; /* indices into fields: what rec stores, in this order */
  int n_recordables;
  int has_receptors; /* K is meaningful */

  const char *kernel_source; /* OpenCL C, without the runtime headers (nestcl_rt.cl prepends them) */
  const char *kernel_name; /* "nestcl_update_<model>" */

  /* The C loop: updates neurons [0, a->n) through lags [from, to). */
  void (*update_cpu)(const nestcl_update_args *a, void *const *fields);

  /* Host helpers (C, translated from the model), all for SoA slot i of n. */
  /* Parameters_() and State_(const Parameters_&) defaults. */
  void (*set_defaults)(void *const *fields, size_t n, size_t i, uint32_t K);
  /* pre_run_hook(): computes Variables_ from Parameters_. 0 or a NESTCL_E* code. */
  int (*pre_run)(void *const *fields, size_t n, size_t i, uint32_t K, double resolution_ms);
  /*
   * handle(SpikeEvent&) / handle(CurrentEvent&): where an event with this weight
   * (and rport) lands: the ring channel and the value added. 0, or NESTCL_EINVAL
   * for an rport the model rejects.
   */
  int (*route_spike)(double weight, long rport, uint32_t K, int *channel, double *value);
  int (*route_current)(double current, double weight, long rport, uint32_t K, int *channel, double *value);
  /* get_status()/set_status() for one NEST name; NESTCL_EINVAL for an unknown name or a rejected value. */
  int (*get_status)(void *const *fields, size_t n, size_t i, uint32_t K, const char *name, double *value);
  int (*set_status)(void *const *fields, size_t n, size_t i, uint32_t K, const char *name, double value);
  /*
   * init_buffers_(): the start values of the Buffers_ fields that update()
   * carries (an ODE model's step_ and IntegrationStep_, its I_stim_), for a
   * new neuron, before pre_run. NULL when the model has none. 0 or NESTCL_E*.
   */
  int (*init_buffers)(void *const *fields, size_t n, size_t i, uint32_t K, double resolution_ms);
  /* What update() throws, by failure code (see Failures above): "GSLSolverFailure", ... */
  const char *const *failures;
  int n_failures;
  /*
   * NEST's recordables (the model's RecordablesMap), by NEST name, derived
   * ones included (V_m of iaf_psc_alpha is y3_ + E_L_): recordable_value
   * computes recordable_names[which] of neuron i of n from rec_lag, one lag's
   * block of the update's record (rec + (lag - from) * n_rec * n, where n_rec
   * counts the recordable fields' values, arrays expanded), and the fields
   * (parameters update() never writes). NULL / 0 when the model has no
   * RecordablesMap the translator could read.
   */
  const char *const *recordable_names;
  int n_recordable_names;
  int (*recordable_value)(int which, const double *rec_lag, void *const *fields, size_t n, size_t i, uint32_t K,
                          double resolution_ms, double *value);
  /*
   * update() sends spikes of multiplicity m > 1 (SpikeEvent::set_multiplicity:
   * pp_psc_delta's Poisson count, a parrot's input count): such a spike is m
   * entries (i, lag) of the spike list, which deliver and record as NEST's one
   * event of multiplicity m does; NEST's glue sends the run of m as one event
   * of multiplicity m. A plastic synapse sees one event where NEST sees one,
   * so the engine refuses plastic connections from such a model.
   */
  int multiplicity;
  /*
   * Spike offsets (NEST's SpikeEvent::set_offset / get_offset). With
   * spike_offsets set, update() gives each spike an offset (iaf_chxk_2008: the
   * precise spike time within the step; iaf_tum_2000: its synaptic jump): the
   * update takes the array spike_offsets after the field pointers, and the
   * offset of spike-list entry k is spike_offsets[k]; NEST's glue sends it as
   * the event's offset. A model whose handle(SpikeEvent&) reads e.get_offset()
   * has route_spike_offset: route_spike with the spike's offset, setting
   * *offset_read when this weight and rport read it; its route_spike fails
   * (NESTCL_EINVAL, naming the offset) where the offset is read, so that a
   * path that does not carry offsets refuses such a connection. NULL
   * otherwise.
   */
  int spike_offsets;
  int (*route_spike_offset)(double weight, long rport, uint32_t K, double offset, int *offset_read, int *channel,
                            double *value);
  /*
   * Precise spike input (NEST's SliceRingBuffer: the *_ps models). With
   * event_queue set, handle(SpikeEvent&) queues each spike with its offset
   * and weight, and update() takes them one by one in time order
   * (get_next_spike), not as a sum per step: the update takes the events of
   * its lags as evq_* arguments (above), which NEST's glue fills from the
   * node's own queue in NEST's order, so the device sees what NEST's update()
   * would. No ring channel holds them: route_spike and route_spike_offset
   * refuse every spike (NESTCL_EINVAL), so the engine and the device CSR take
   * no spike connection to such a model.
   */
  int event_queue;
} nestcl_model;

/* Every model translated in this build (generated nestcl_models.c). */
extern const nestcl_model *const nestcl_builtin_models[];
extern const int nestcl_builtin_model_count;

/*
 * Synapse models (nestcl-translate's <model>_syn.c). A synapse's fields are
 * its own members (per synapse: state that send() writes, or parameters it
 * only reads; per source: state send() writes only from the presynaptic
 * spike train, the same in every synapse of one source) and its common
 * properties' members (one copy per model). The host helpers work on one
 * synapse and the common properties, as C structs of syn_size and cp_size
 * bytes whose members lie at the fields' offsets.
 */
typedef enum nestcl_syn_role {
  NESTCL_SYN_STATE = 0, /* per synapse, written by send() (weight_) */
  NESTCL_SYN_SOURCE, /* per source (Kplus_, t_lastspike_) */
  NESTCL_SYN_PARAMETER, /* per synapse, read only */
  NESTCL_SYN_COMMON /* the model's common properties */
} nestcl_syn_role;

typedef struct nestcl_syn_field {
  const char *member; /* "weight_" */
  const char *nest_name; /* "weight", or NULL where get_status() does not expose it */
  nestcl_syn_role role;
  nestcl_field_type type;
  size_t offset; /* in the synapse struct, or (NESTCL_SYN_COMMON) the common properties struct */
} nestcl_syn_field;

struct nestcl_syn_env; /* kernels_templates/nestcl_synapse.h */

typedef struct nestcl_synapse_model {
  const char *name; /* "stdp_pl_synapse_hom" */
  const char *source_file;
  const char *source_hash;
  const nestcl_syn_field *fields;
  int n_fields;
  int n_syn_fields; /* fields[0, n_syn_fields) are the synapse's, the rest common */
  size_t syn_size, cp_size;
  int uses_history; /* send() reads the target's spike history: targets must archive their spikes */
  const char *device_source; /* OpenCL C: the structs, helpers and the send function */
  const char *send_name; /* "nestcl_syn_<model>_send" */
  /* The constructors' values for one synapse and the common properties. */
  void (*set_defaults)(void *syn, void *cp);
  /* SetStatus / SetDefaults of one key (per synapse or common); NESTCL_EINVAL for an unknown key or a rejected value, which changes nothing. NULL when not translated. */
  int (*set_status)(void *syn, void *cp, const char *name, double value);
  int (*get_status)(const void *syn, const void *cp, const char *name, double *value);
  /* The C twin of the device's send: one spike through one synapse; *weight is what it delivers, 1 when sent. */
  int (*send_cpu)(void *syn, const void *cp, const struct nestcl_syn_env *env, double *weight);
} nestcl_synapse_model;

extern const nestcl_synapse_model *const nestcl_builtin_synapses[];
extern const int nestcl_builtin_synapse_count;

#ifdef __cplusplus
}
#endif
#endif
