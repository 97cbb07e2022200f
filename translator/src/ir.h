/*
 * The model IR of nestcl-translate: what parse.c finds in a NEST model class
 * (its structs, fields, input buffers and the methods the runtime needs) and
 * what the emitters read. It holds libclang cursors, so it lives only as long
 * as the translation unit it came from.
 *
 * The IR is deliberately not neuron-specific: a model has a kind and a list of
 * entry points (update() for neurons today; the GSL dynamics callback of ODE
 * models and a synapse's send() are further entry kinds with their own
 * rewrite modes), and fields carry their struct and role, so a synapse's
 * per-connection state or an ODE state vector y_[] fit the same tables.
 */
#ifndef NESTCL_TR_IR_H
#define NESTCL_TR_IR_H

#include <clang-c/Index.h>
#include <stddef.h>

/*
 * Same numbering as nestcl_field_type / nestcl_field_role in nestcl/model.h.
 * IR_T_UINT (unsigned int, e.g. NEST's refractory counters) is stored in the
 * descriptor as NESTCL_T_INT: same 4 bytes, same bits; the generated code
 * accesses it as unsigned, so its arithmetic is the original's.
 */
typedef enum ir_type { IR_T_DOUBLE = 0, IR_T_LONG, IR_T_INT, IR_T_BOOL, IR_T_SIZE, IR_T_UINT } ir_type;
typedef enum ir_role { IR_ROLE_STATE = 0, IR_ROLE_PARAMETER, IR_ROLE_INTERNAL, IR_ROLE_BUFFER } ir_role;

typedef enum ir_model_kind {
  IR_KIND_NEURON = 0, /* update(Time const&, long, long) */
  IR_KIND_SYNAPSE /* send( Event&, size_t, const CommonProperties& ) of a Connection< T > template */
} ir_model_kind;

/*
 * A synapse model's fields: its own members are per synapse, either state
 * (send() writes them), per-source state (send() writes them only from the
 * spike time, common properties, parameters and other per-source state, so
 * every synapse of one source holds the same value: Kplus_, t_lastspike_) or
 * parameters (send() only reads them); the common properties class's members
 * are shared by all synapses of the model.
 */
typedef enum ir_syn_role { IR_SYN_STATE = 0, IR_SYN_SOURCE, IR_SYN_PARAMETER, IR_SYN_COMMON } ir_syn_role;

/* What each of a synapse model's methods is. */
typedef enum ir_syn_method_id {
  IR_SM_SEND = 0,
  IR_SM_CTOR,
  IR_SM_GET,
  IR_SM_SET,
  IR_SM_CP_CTOR,
  IR_SM_CP_GET,
  IR_SM_CP_SET,
  IR_SM_COUNT
} ir_syn_method_id;

typedef struct ir_field {
  char *member; /* "y3_" */
  char *struct_name; /* "State_" */
  char *nest_name; /* "V_m" or NULL */
  ir_role role;
  ir_type type;
  int array_len; /* 0 scalar, > 0 fixed array, < 0: array_base + (-array_len) * K (-1, base 0: per receptor) */
  int array_base; /* an ODE state vector's fixed part (aeif_cond_alpha_multisynapse's y_: 2 + 2 K) */
  char *c_name; /* "S__y3_": the SoA array's identifier in generated code */
  int written_in_update; /* parameters written in update() are not specialisable; synapses: written by send() */
  ir_syn_role syn_role; /* synapse models only */
  CXCursor decl;
} ir_field;

/* A field's elements per neuron as fixed + per_k * K (a scalar: 1 + 0 K). */
static inline void ir_field_len(const ir_field *f, int *fixed, int *per_k)
{
  *fixed = f->array_len == 0 ? 1 : f->array_len > 0 ? f->array_len : f->array_base;
  *per_k = f->array_len < 0 ? -f->array_len : 0;
}

/* Whether f is a vector of exactly one element per receptor. */
static inline int ir_per_receptor(const ir_field *f)
{
  return f->array_len == -1 && f->array_base == 0;
}

typedef enum ir_buffer_kind {
  IR_BUF_RING = 0, /* RingBuffer: one channel */
  IR_BUF_MULTI, /* MultiChannelInputBuffer<N>: N channels */
  IR_BUF_VECTOR /* std::vector<RingBuffer>: K channels */
} ir_buffer_kind;

typedef struct ir_channel_group {
  char *buffer; /* Buffers_ member */
  char *name; /* channel name: the buffer name, or the Buffers_ enum name */
  int count; /* -1: K */
  int is_current;
  ir_buffer_kind kind;
  int base_fixed; /* first channel = base_fixed + base_k * K */
  int base_k;
  int resized_k; /* IR_BUF_VECTOR: resized to one channel per receptor somewhere (then never to a constant) */
  CXCursor decl;
} ir_channel_group;

/* What each of a model's methods is, for the emitters. */
typedef enum ir_method_id {
  IR_M_UPDATE = 0,
  IR_M_HANDLE_SPIKE,
  IR_M_HANDLE_CURRENT,
  IR_M_PRE_RUN,
  IR_M_PARAMS_CTOR,
  IR_M_STATE_CTOR,
  IR_M_PARAMS_GET,
  IR_M_STATE_GET,
  IR_M_PARAMS_SET,
  IR_M_STATE_SET,
  IR_M_INIT_BUFFERS, /* init_buffers_(): the Buffers_ fields' start values; an ODE model's GSL set-up */
  IR_M_COUNT
} ir_method_id;

/* A macro expansion in the model's own files (assert, INFINITY, ...). */
typedef struct ir_macro {
  CXFile file;
  unsigned begin, end; /* byte offsets */
  char *name;
} ir_macro;

/* One parsed translation unit; several models may share it. */
typedef struct ir_tu {
  CXTranslationUnit tu;
  ir_macro *macros;
  int n_macros;
} ir_tu;

typedef struct ir_diag {
  char *text; /* "file:line:col: error: ..." */
  int is_error;
} ir_diag;

/* One entry of the model's RecordablesMap: insert_( names::X, &model::getter[< arg >] ). */
typedef struct ir_recordable {
  char *name; /* "V_m" */
  CXCursor getter; /* the getter method (a template's pattern for get_y_elem_< elem >) */
  CXCursor targ; /* the template argument's expression, or a null cursor */
  CXCursor at; /* the insert_ call */
} ir_recordable;

typedef struct ir_model {
  char *name; /* class name, e.g. "iaf_psc_alpha" */
  ir_model_kind kind;
  char *source_file; /* the .cpp (or .h) as given on the command line */
  char *header_file; /* the .h, or NULL */
  char source_hash[17]; /* FNV-1a 64 of header + source text, hex */
  ir_tu *tu;
  CXCursor cls;
  CXCursor structs[4]; /* State_, Parameters_, Variables_, Buffers_ (null cursor if absent) */
  CXCursor methods[IR_M_COUNT];
  int has_method[IR_M_COUNT];
  ir_field *fields;
  int n_fields;
  ir_channel_group *channels;
  int n_channels;
  int *recordables; /* field indices */
  int n_recordables;
  int has_receptors;
  int failed; /* an error diagnostic was issued: CPU-only */
  ir_diag *diags;
  int n_diags;
  char **helper_notes; /* host helpers left out (NULL pointer) and why */
  int n_helper_notes;
  /* IR_KIND_SYNAPSE: fields[0, n_syn_fields) are the synapse's, the rest its common properties' */
  CXCursor cp_cls; /* CommonPropertiesType's class */
  char *cp_name;
  CXCursor syn_methods[IR_SM_COUNT];
  int has_syn_method[IR_SM_COUNT];
  int n_syn_fields;
  CXCursor *helpers; /* the model's own methods that send() calls: rendered as functions */
  int n_helpers;
  int uses_history; /* send() reads the target's spike history (STDP) */
  int transmits_spikes; /* its ConnTestDummyNode takes SpikeEvents */
  /*
   * ODE models (NEST's GSL idiom, see nestcl_rkf45.h): init_buffers_() sets
   * B_.sys_.function to the dynamics callback and creates the stepper and
   * the control; update() calls gsl_odeiv_evolve_apply. The dynamics is a
   * second entry point, rendered over the same fields (RW_DYN).
   */
  int has_ode;
  int multiplicity; /* update() sends spikes of multiplicity > 1 (set_multiplicity) */
  int spike_offsets; /* update() sets the offset of the spikes it sends (SpikeEvent::set_offset) */
  int reads_offset; /* handle( SpikeEvent& ) reads the spike's offset (e.get_offset()) */
  /* update() reads ArchivingNode::get_spiketime_ms(): the field (struct "ArchivingNode", member
   * "last_spike_", NEST's last_spike_ in ms) that set_spiketime() writes; -1 when none */
  int last_spike_field;
  /* dist.param( p ) of a RandomDistribution member outside update() (pp_psc_delta's gamma_dist_ in
   * pre_run_hook()): the member and p's constructor arguments, which a draw in update() reads */
  struct ir_dist {
    CXCursor member;
    CXCursor args[2];
    int nargs;
  } * dists;
  int n_dists;
  int drops_clopath_history; /* update() writes a Clopath history the device does not keep (rewrite_spikes.c) */
  /*
   * update() that only forwards to a method of the model with constant extra
   * arguments (hh_psc_alpha_gap's update_( origin, from, to, false )): then
   * methods[IR_M_UPDATE] is that method, and its parameters from the fourth on
   * stand for the constants (parse.c); branches they decide are folded (rewrite_control.c).
   */
  CXCursor update_forward; /* update()'s own definition, or a null cursor */
  int n_bound;
  CXCursor bound_parm[4];
  long long bound_value[4];
  /* conditions the device takes as constants, each kept true by the NEST glue (emit_glue.c) */
  int drops_flush_events; /* flush_event_is_due() is false: a node with a finite flush_event_send_interval is refused */
  int wfr_order_assumed; /* get_wfr_interpolation_order() is 3, NEST's default: another order is refused */
  /* handle( GapJunctionEvent& ): no gap-junction event reaches a device node, and its own go nowhere (the
   * glue refuses the node when the network has secondary connections, so NEST runs no waveform relaxation) */
  int gap_junctions;
  CXCursor gap_handler;
  CXCursor ode_dyn; /* the dynamics function's definition (null cursor if none was found) */
  CXCursor ode_control; /* gsl_odeiv_control_{y,yp,standard}_new( ... ) */
  CXCursor ode_step; /* gsl_odeiv_step_alloc( type, dimension ) */
  CXCursor ode_assign; /* B_.sys_.function = f: where the diagnostics point */
  /* NEST's recordables: RecordablesMap< model >::create() and what it inserts */
  CXCursor rec_create;
  ir_recordable *named;
  int n_named;
  /* A SliceRingBuffer in Buffers_ (the *_ps models' precise spike input): handle( SpikeEvent& ) queues
   * spikes there, update() takes them with get_next_spike(); see nestcl/model.h, event_queue */
  int event_queue;
  char *evq_member;
  CXCursor evq_decl;
  /* update() calls regula_falsi( *this, dt ): the model's threshold_distance() (a helper), else a null cursor */
  CXCursor regula_falsi;
  /* set_spiketime( t, offset ) with the offset the spike's event carries (the glue passes it on) */
  int spiketime_offset;
  /* What update() throws (GSLSolverFailure, ...): failure code k + 1 is failures[k]. */
  char **failures;
  int n_failures;
} ir_model;

extern const char *const ir_struct_names[4];
extern const char *const ir_struct_prefix[4]; /* "S_", "P_", "V_", "B_" */

ir_model *ir_model_new(const char *name);
void ir_model_free(ir_model *m);
ir_field *ir_add_field(ir_model *m);
ir_channel_group *ir_add_channel_group(ir_model *m);
/* Field index by its declaration cursor, or -1. */
int ir_find_field(const ir_model *m, CXCursor decl);
/* An ODE model's state vector: the first double array of State_ of fixed size, else one of A + B K elements; or -1. */
int ir_ode_field(const ir_model *m);
int ir_find_field_by_name(const ir_model *m, const char *struct_name, const char *member);
int ir_find_channel_group(const ir_model *m, CXCursor decl);
/* The expression for the group's first channel, e.g. "2" or "(1 + K)". */
char *ir_channel_base_expr(const ir_channel_group *g);
void ir_diag_add(ir_model *m, int is_error, const char *text);
void ir_note_add(ir_model *m, const char *text);
/* The failure code (1-based) of an exception update() throws, added if new. */
int ir_add_failure(ir_model *m, const char *name);
/* "nestcl_field_type" spelling of t, and the C/OpenCL element types. */
/* How generated files name an input: its name relative to the input root,
 * which is the file's directory (directories are read flat), so the basename.
 * An absolute path would make the output depend on where the tree was
 * checked out; diagnostics keep the path as given, for the user to open. */
const char *ir_input_name(const char *path);
const char *ir_type_enum(ir_type t);
const char *ir_type_c(ir_type t); /* double, int64_t, int32_t, int32_t, uint64_t */
const char *ir_type_cl(ir_type t); /* double, long, int, int, ulong */

#endif
