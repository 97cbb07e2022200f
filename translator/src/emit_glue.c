/*
 * C++ glue emitter: <model>_glue.hpp packs one NEST node's P_, S_, V_ (and
 * scalar B_) fields into SoA slot i and back. The structs are private members
 * of the model; an explicit template instantiation may name private members,
 * so a friend function defined by that instantiation hands out the member
 * pointers, and NEST's headers need no change. The element loops cover the
 * node's own vector lengths (the population's K).
 *
 * For a node whose update runs on the device (nest_patch's stream VPs) the glue
 * also has: drain_<model>, which reads and clears the input NEST delivered into
 * the node's own buffers for one lag, channel by channel in the runtime's ring
 * order; record_<model>, which puts one recorded sample of the State_ fields
 * back into the node and lets its own logger record it (so NEST's recordables
 * map derives V_m and the rest); and emit_<model>, which does what the model's
 * update() does for a spike: set_spiketime() and event_delivery_manager.send()
 * (for a spike of multiplicity m, m history entries and one event; the
 * offset update() gave it). A model whose update() reads the last spike time
 * has it packed from, and unpacked into, the node's ArchivingNode::last_spike_.
 */
#include "emit.h"

#include <stdlib.h>
#include <string.h>

static const char *const tags[4] = {"State_", "Parameters_", "Variables_", "Buffers_"};
static const char *const members[4] = {"S_", "P_", "V_", "B_"};

static const char *cxx_type(ir_type t)
{
  static const char *const n[] = {"double",       "std::int64_t",  "std::int32_t",
                                  "std::int32_t", "std::uint64_t", "std::uint32_t"};
  return n[t];
}

static void copy_fields(strbuf *b, const ir_model *m, int pack)
{
  int j, s;
  for (s = 0; s < 4; s++) {
    int any = 0;
    for (j = 0; j < m->n_fields; j++)
      if (!strcmp(m->fields[j].struct_name, tags[s]))
        any = 1;
    if (!any)
      continue;
    sb_printf(b, "  auto& %s = node.*%s_detail::member(%s_detail::%s_tag{});\n", members[s], m->name, m->name,
              members[s]);
    for (j = 0; j < m->n_fields; j++) {
      const ir_field *f = &m->fields[j];
      const char *ct = cxx_type(f->type);
      if (strcmp(f->struct_name, tags[s]))
        continue;
      if (f->array_len == 0) {
        if (pack)
          sb_printf(b, "  static_cast< %s* >( fields[ %d ] )[ i ] = static_cast< %s >( %s.%s );\n", ct, j, ct,
                    members[s], f->member);
        else
          sb_printf(b, "  %s.%s = static_cast< decltype( %s.%s ) >( static_cast< %s* >( fields[ %d ] )[ i ] );\n",
                    members[s], f->member, members[s], f->member, ct, j);
      } else {
        char *len = f->array_len > 0 ? xasprintf("%d", f->array_len) : xasprintf("%s.%s.size()", members[s], f->member);
        if (pack)
          sb_printf(
            b,
            "  for ( std::size_t k = 0; k < %s; ++k )\n    static_cast< %s* >( fields[ %d ] )[ k * n + i ] = static_cast< %s >( %s.%s[ k ] );\n",
            len, ct, j, ct, members[s], f->member);
        else
          sb_printf(
            b,
            "  for ( std::size_t k = 0; k < %s; ++k )\n    %s.%s[ k ] = static_cast< std::decay_t< decltype( %s.%s[ k ] ) > >( static_cast< %s* >( fields[ %d ] )[ k * n + i ] );\n",
            len, members[s], f->member, members[s], f->member, ct, j);
        free(len);
      }
    }
  }
}

/* The first channel of group g in the ring, as a C++ expression of K. */
static char *channel_expr(const ir_channel_group *g)
{
  return g->base_k ? xasprintf("%d + %d * K", g->base_fixed, g->base_k) : xasprintf("%d", g->base_fixed);
}

/* drain_<model>(node, lag, out, K): out[channel] = what the node's buffers hold for lag, cleared as update() would. */
static void emit_drain(strbuf *b, const ir_model *m, int has_buffers)
{
  int g, k;
  sb_printf(
    b,
    "inline void\ndrain_%s( nest::%s& node, long lag, double* out, std::size_t K )\n{\n  (void)node;\n  (void)lag;\n  (void)out;\n  (void)K;\n",
    m->name, m->name);
  if (has_buffers && m->n_channels)
    sb_printf(b, "  auto& B_ = node.*%s_detail::member(%s_detail::B__tag{});\n", m->name, m->name);
  for (g = 0; g < m->n_channels; g++) {
    const ir_channel_group *c = &m->channels[g];
    char *ch = channel_expr(c);
    if (c->kind == IR_BUF_RING) {
      sb_printf(b, "  out[ %s ] = B_.%s.get_value( lag );\n", ch, c->buffer);
    } else if (c->kind == IR_BUF_VECTOR) {
      sb_printf(
        b, "  for ( std::size_t k = 0; k < B_.%s.size(); ++k )\n    out[ %s + k ] = B_.%s[ k ].get_value( lag );\n",
        c->buffer, ch, c->buffer);
    } else {
      /* A MultiChannelInputBuffer: all its channels at its first group, then the slot is reset. */
      int first = 1;
      for (k = 0; k < g; k++)
        if (!strcmp(m->channels[k].buffer, c->buffer))
          first = 0;
      if (first) {
        int idx = 0;
        sb_printf(b,
                  "  {\n    const std::size_t slot = nest::kernel().event_delivery_manager.get_modulo( lag );\n"
                  "    const auto& v = B_.%s.get_values_all_channels( slot );\n",
                  c->buffer);
        for (k = g; k < m->n_channels; k++) {
          if (strcmp(m->channels[k].buffer, c->buffer))
            continue;
          {
            char *chk = channel_expr(&m->channels[k]);
            sb_printf(b, "    out[ %s ] = v[ %d ];\n", chk, idx++);
            free(chk);
          }
        }
        sb_printf(b, "    B_.%s.reset_values_all_channels( slot );\n  }\n", c->buffer);
      }
    }
    free(ch);
  }
  sb_puts(b, "}\n\n");
}

/*
 * events_<model>(node, origin_steps, lag, block, i): a model with a
 * SliceRingBuffer (model.h, event_queue) has NEST's own handle() queue its
 * spikes in the node; the events of step origin_steps + lag go to slot i of
 * the block, one by one in the order the queue hands them out (sorted by
 * prepare_delivery() at the slice's first lag, as NEST's update() does), so
 * the device's get_next_spike() sees NEST's. 0 or a NESTCL_E* code.
 */
static void emit_events(strbuf *b, const ir_model *m)
{
  sb_printf(
    b,
    "inline int\nevents_%s( nest::%s& node, long origin_steps, long lag, nestcl_block* block, std::uint32_t i )\n{\n",
    m->name, m->name);
  if (!m->event_queue) {
    sb_puts(b, "  (void)node;\n  (void)origin_steps;\n  (void)lag;\n  (void)block;\n  (void)i;\n  return 0;\n}\n\n");
    return;
  }
  sb_printf(
    b,
    "  auto& B_ = node.*%s_detail::member(%s_detail::B__tag{});\n"
    "  if ( lag == 0 )\n  {\n    B_.%s.prepare_delivery();\n  }\n"
    "  double offset = 0.0, weight = 0.0;\n  bool end_of_refract = false;\n"
    "  while ( B_.%s.get_next_spike( origin_steps + lag, false, offset, weight, end_of_refract ) )\n  {\n"
    "    const int rc = nestcl_block_stage_event( block, static_cast< std::uint32_t >( lag ), i, offset, weight );\n"
    "    if ( rc != 0 )\n    {\n      return rc;\n    }\n  }\n  return 0;\n}\n\n",
    m->name, m->name, m->evq_member, m->evq_member);
}

/*
 * record_<model>(node, values, step): the recorded fields from values (descriptor's
 * recordables order: the State_ fields, then what NEST's recordable getters read
 * that update() changes), then the node's own logger, so NEST's recordables map
 * reads the values of that step.
 */
static void emit_record(strbuf *b, const ir_model *m, int has_buffers)
{
  int r, s, any[4] = {0, 0, 0, 0};
  sb_printf(b, "inline void\nrecord_%s( nest::%s& node, const double* values, long step )\n{\n  (void)values;\n",
            m->name, m->name);
  for (r = 0; r < m->n_recordables; r++)
    for (s = 0; s < 4; s++)
      if (!strcmp(m->fields[m->recordables[r]].struct_name, tags[s]))
        any[s] = 1;
  if (m->n_recordables)
    sb_puts(b, "  std::size_t at = 0;\n");
  for (s = 0; s < 4; s++)
    if (any[s])
      sb_printf(b, "  auto& %s = node.*%s_detail::member(%s_detail::%s_tag{});\n", members[s], m->name, m->name,
                members[s]);
  for (r = 0; r < m->n_recordables; r++) {
    const ir_field *f = &m->fields[m->recordables[r]];
    const char *o = members[0];
    for (s = 0; s < 4; s++)
      if (!strcmp(f->struct_name, tags[s]))
        o = members[s];
    if (f->array_len == 0)
      sb_printf(b, "  %s.%s = static_cast< decltype( %s.%s ) >( values[ at++ ] );\n", o, f->member, o, f->member);
    else if (f->array_len > 0)
      sb_printf(
        b,
        "  for ( std::size_t k = 0; k < %d; ++k )\n    %s.%s[ k ] = static_cast< std::decay_t< decltype( %s.%s[ k ] ) > >( values[ at++ ] );\n",
        f->array_len, o, f->member, o, f->member);
    else
      sb_printf(
        b,
        "  for ( std::size_t k = 0; k < %s.%s.size(); ++k )\n    %s.%s[ k ] = static_cast< std::decay_t< decltype( %s.%s[ k ] ) > >( values[ at++ ] );\n",
        o, f->member, o, f->member, o, f->member);
  }
  if (has_buffers)
    sb_printf(b, "  detail::record( node.*%s_detail::member(%s_detail::B__tag{}), step, 0 );\n", m->name, m->name);
  else
    sb_puts(b, "  (void)step;\n");
  sb_puts(b, "}\n\n");
}

/* The file's guard, includes and the detail namespace every glue file shares (guarded once). */
static void emit_glue_prologue(strbuf *b, const ir_model *m)
{
  const char *nm = m->name;
  const char *hdr = m->header_file ? m->header_file : m->source_file;
  const char *base = strrchr(hdr, '/');
  base = base ? base + 1 : hdr;
  emit_file_header(b, m, "C++ glue between a NEST node and SoA slot i.", "/*", "*/");
  sb_printf(b, "#ifndef NESTCL_GLUE_%s_HPP\n#define NESTCL_GLUE_%s_HPP\n\n", nm, nm);
  sb_printf(
    b,
    "#include <cstddef>\n#include <cstdint>\n%s#include <string>\n#include <type_traits>\n\n#include \"%s\"\n#include \"archiving_node.h\"\n#include \"nestcl/block.h\"\n#include \"exceptions.h\"\n#include \"kernel_manager.h\"\n\n",
    m->drops_flush_events ? "#include <limits>\n" : "", base);
  sb_puts(
    b,
    "namespace nestcl_glue\n{\n#ifndef NESTCL_GLUE_DETAIL\n#define NESTCL_GLUE_DETAIL\nnamespace detail\n{\n"
    "/* ArchivingNode::set_spiketime is protected (only update() records a spike), so its\n"
    "   pointer is handed out like the structs' (an explicit instantiation may name it). */\n"
    "struct set_spiketime_tag\n{\n};\nauto member( set_spiketime_tag );\n"
    "template < typename Tag, auto Member >\nstruct steal_fn\n{\n  friend auto\n  member( Tag )\n  {\n    return Member;\n  }\n};\n"
    "template struct steal_fn< set_spiketime_tag, &nest::ArchivingNode::set_spiketime >;\n"
    "/* ArchivingNode::n_incoming_: the plastic connections that registered to read the node's history. */\n"
    "struct n_incoming_tag\n{\n};\nauto member( n_incoming_tag );\n"
    "template struct steal_fn< n_incoming_tag, &nest::ArchivingNode::n_incoming_ >;\n"
    "/* ArchivingNode::last_spike_ (ms): the last spike time that update() reads through get_spiketime_ms(). */\n"
    "struct last_spike_tag\n{\n};\nauto member( last_spike_tag );\n"
    "template struct steal_fn< last_spike_tag, &nest::ArchivingNode::last_spike_ >;\n"
    "/* Only an ArchivingNode keeps a spike history (STDP reads it); only a node with a logger records. */\n"
    "template < typename N >\nvoid\nset_spiketime( N& node, const nest::Time& t, double offset = 0.0 )\n{\n"
    "  if constexpr ( std::is_base_of_v< nest::ArchivingNode, N > )\n"
    "  {\n    ( static_cast< nest::ArchivingNode& >( node ).*member( set_spiketime_tag {} ) )( t, offset );\n  }\n}\n"
    "/* record( buffers, step, 0 ): the logger's when Buffers_ has one (int beats long), else nothing */\n"
    "template < typename B >\nauto\nrecord( B& buffers, long step, int ) -> decltype( buffers.logger_.record_data( step ), void() )\n{\n  buffers.logger_.record_data( step );\n}\n"
    "template < typename B >\nvoid\nrecord( B&, long, long )\n{\n}\n"
    "} // namespace detail\n#endif\n\n");
}

/* <model>_detail: the accessors of the node's private structs (any[s]: the struct tags[s] has fields). */
static void emit_glue_detail(strbuf *b, const ir_model *m, int any[4])
{
  const char *nm = m->name;
  int s, j;
  sb_printf(b, "namespace %s_detail\n{\n", nm);
  /* Only the structs the model has fields in get a tag and an accessor; Buffers_ always (drain, logger). */
  for (s = 0; s < 4; s++)
    for (j = 0; j < m->n_fields; j++)
      if (!strcmp(m->fields[j].struct_name, tags[s]))
        any[s] = 1;
  if (!clang_Cursor_isNull(m->structs[3]))
    any[3] = 1;
  for (s = 0; s < 4; s++)
    if (any[s])
      sb_printf(b, "struct %s_tag\n{\n};\nauto member( %s_tag );\n", members[s], members[s]);
  if (m->drops_flush_events)
    sb_puts(b,
            "struct flush_steps_tag\n{\n};\nauto member( flush_steps_tag );\n"
            "struct flush_interval_tag\n{\n};\nauto member( flush_interval_tag );\n");
  sb_puts(
    b,
    "template < typename Tag, auto Member >\nstruct steal\n{\n  friend auto\n  member( Tag )\n  {\n    return Member;\n  }\n};\n");
  for (s = 0; s < 4; s++)
    if (any[s])
      sb_printf(b, "template struct steal< %s_tag, &nest::%s::%s >;\n", members[s], nm, members[s]);
  if (m->drops_flush_events)
    sb_puts(b,
            "/* FlushEventMechanism's interval (protected): what flush_event_is_due() compares with */\n"
            "template struct steal< flush_steps_tag, &nest::FlushEventMechanism::flush_event_send_interval_steps_ >;\n"
            "template struct steal< flush_interval_tag, &nest::FlushEventMechanism::flush_event_send_interval_ >;\n");
  sb_printf(b, "} // namespace %s_detail\n\n", nm);
}

/* pack_<model> and unpack_<model>: the node's fields into SoA slot i and back. */
static void emit_glue_pack(strbuf *b, const ir_model *m)
{
  const char *nm = m->name;
  /* (void) all: a model without fields (parrot_neuron) copies nothing */
  sb_printf(b,
            "inline void\npack_%s( const nest::%s& node, void* const* fields, std::size_t n, std::size_t i )\n{\n"
            "  (void)node;\n  (void)fields;\n  (void)n;\n  (void)i;\n",
            nm, nm);
  copy_fields(b, m, 1);
  if (m->last_spike_field >= 0)
    sb_printf(b,
              "  static_cast< double* >( fields[ %d ] )[ i ] =\n"
              "    static_cast< const nest::ArchivingNode& >( node ).*detail::member( detail::last_spike_tag {} );\n",
              m->last_spike_field);
  sb_puts(b, "}\n\n");
  sb_printf(b,
            "inline void\nunpack_%s( nest::%s& node, void* const* fields, std::size_t n, std::size_t i )\n{\n"
            "  (void)node;\n  (void)fields;\n  (void)n;\n  (void)i;\n",
            nm, nm);
  copy_fields(b, m, 0);
  /* emit_ has kept it with set_spiketime() spike by spike; the device's value is the same */
  if (m->last_spike_field >= 0)
    sb_printf(b,
              "  static_cast< nest::ArchivingNode& >( node ).*detail::member( detail::last_spike_tag {} ) =\n"
              "    static_cast< double* >( fields[ %d ] )[ i ];\n",
              m->last_spike_field);
  sb_puts(b, "}\n\n");
}

/* What the device does not do, refused at run time when a node would need it. */
static void emit_receptor_guards(strbuf *b, const ir_model *m)
{
  const char *nm = m->name;
  if (m->drops_clopath_history)
    sb_printf(
      b,
      "  /* the device keeps no Clopath history: a node that clopath_synapse (or another plastic\n"
      "     connection) reads cannot be on a stream VP */\n"
      "  if ( static_cast< const nest::ArchivingNode& >( node ).*detail::member( detail::n_incoming_tag {} ) > 0 )\n"
      "    throw nest::KernelException( \"nestcl: %s node \" + std::to_string( node.get_node_id() )\n"
      "      + \" has plastic connections that read its spike and Clopath history; the device keeps no \"\n"
      "        \"Clopath history, so this node cannot be on a stream VP: use fewer nestcl_streams\" );\n",
      nm);
  if (m->drops_flush_events)
    sb_printf(
      b,
      "  /* the device sends no flush events: flush_event_is_due() is false there, as it is in NEST for the\n"
      "     default infinite interval, whose steps are LONG_MAX */\n"
      "  if ( node.*%s_detail::member( %s_detail::flush_steps_tag {} ) != std::numeric_limits< long >::max() )\n"
      "    throw nest::KernelException( \"nestcl: %s node \" + std::to_string( node.get_node_id() )\n"
      "      + \" sends flush events (flush_event_send_interval \"\n"
      "      + std::to_string( node.*%s_detail::member( %s_detail::flush_interval_tag {} ) )\n"
      "      + \" ms); the device sends none, so this node cannot be on a stream VP: leave \"\n"
      "        \"flush_event_send_interval infinite or use fewer nestcl_streams\" );\n",
      nm, nm, nm, nm, nm);
  if (m->gap_junctions)
    sb_printf(
      b,
      "  /* the device has no gap junctions: no gap-junction event reaches the node, its own reach no one, and\n"
      "     NEST runs no waveform relaxation, exactly when the network has no secondary connection */\n"
      "  if ( nest::kernel().connection_manager.secondary_connections_exist() )\n"
      "    throw nest::KernelException( \"nestcl: %s node \" + std::to_string( node.get_node_id() )\n"
      "      + \": the network has gap-junction (secondary) connections; the device runs neither gap junctions \"\n"
      "        \"nor waveform relaxation, so this node cannot be on a stream VP: use fewer nestcl_streams\" );\n",
      nm);
  if (m->wfr_order_assumed)
    sb_printf(b,
              "  /* the device computes the gap current with NEST's default wfr_interpolation_order */\n"
              "  if ( nest::kernel().simulation_manager.get_wfr_interpolation_order() != 3 )\n"
              "    throw nest::KernelException( \"nestcl: %s node \" + std::to_string( node.get_node_id() )\n"
              "      + \": wfr_interpolation_order is \"\n"
              "      + std::to_string( nest::kernel().simulation_manager.get_wfr_interpolation_order() )\n"
              "      + \"; the device assumes 3 (NEST's default), so this node cannot be on a stream VP: use \"\n"
              "        \"wfr_interpolation_order 3 or fewer nestcl_streams\" );\n",
              nm);
}

/* Every vector member of State_ and Parameters_ must hold K entries (or A + B K): refused otherwise. */
static void emit_receptor_checks(strbuf *b, const ir_model *m, int kf)
{
  const char *nm = m->name;
  int j;
  for (j = 0; j < m->n_fields; j++) {
    const ir_field *f = &m->fields[j];
    int t;
    /* State_ and Parameters_: Variables_ are derived from them in pre_run_hook() */
    if (f->array_len >= 0 || j == kf || (strcmp(f->struct_name, "State_") && strcmp(f->struct_name, "Parameters_")))
      continue;
    for (t = 0; t < 4; t++)
      if (!strcmp(f->struct_name, tags[t]))
        break;
    if (!ir_per_receptor(f)) {
      /* an ODE state vector: A + B K elements (pre_run_hook() resizes it, so NEST's own check is the size) */
      sb_printf(
        b,
        "  if ( ( node.*%s_detail::member(%s_detail::%s_tag{}) ).%s.size() != %d + %d * K )\n"
        "    throw nest::KernelException( \"nestcl: %s node \" + std::to_string( node.get_node_id() ) + \": %s::%s has \"\n"
        "      + std::to_string( ( node.*%s_detail::member(%s_detail::%s_tag{}) ).%s.size() ) + \" entries, not %d + %d x \"\n"
        "      + std::to_string( K ) + \" receptors; it cannot be on a stream VP\" );\n",
        nm, nm, members[t], f->member, f->array_base, -f->array_len, nm, f->struct_name, f->member, nm, nm, members[t],
        f->member, f->array_base, -f->array_len);
      continue;
    }
    sb_printf(
      b,
      "  if ( ( node.*%s_detail::member(%s_detail::%s_tag{}) ).%s.size() != K )\n"
      "    throw nest::KernelException( \"nestcl: %s node \" + std::to_string( node.get_node_id() ) + \": %s::%s has \"\n"
      "      + std::to_string( ( node.*%s_detail::member(%s_detail::%s_tag{}) ).%s.size() ) + \" entries, %s::%s \"\n"
      "      + std::to_string( K ) + \"; the device holds every vector member with one length (the receptor count), \"\n"
      "      \"so this node cannot be on a stream VP: give them equal lengths or use fewer nestcl_streams\" );\n",
      nm, nm, members[t], f->member, nm, f->struct_name, f->member, nm, nm, members[t], f->member,
      m->fields[kf].struct_name, m->fields[kf].member);
  }
}

/* receptors_<model>: the node's receptor count K, after the guards and the vector lengths' checks. */
static void emit_glue_receptors(strbuf *b, const ir_model *m)
{
  const char *nm = m->name;
  int s, j;
  /* receptors_<model>: the node's receptor count K (the length of its first per-receptor vector), or 0. */
  int kf = -1;
  for (j = 0; j < m->n_fields && kf < 0; j++)
    if (m->fields[j].array_len < 0 && strcmp(m->fields[j].struct_name, "Buffers_"))
      kf = j;
  /* a per-receptor vector if there is one, else an ODE state vector of A + B K elements */
  for (j = kf + 1; j < m->n_fields && kf >= 0 && !ir_per_receptor(&m->fields[kf]); j++)
    if (ir_per_receptor(&m->fields[j]) && strcmp(m->fields[j].struct_name, "Buffers_"))
      kf = j;
  sb_printf(b, "inline std::size_t\nreceptors_%s( const nest::%s& node )\n{\n", nm, nm);
  emit_receptor_guards(b, m);
  if (kf < 0) {
    sb_puts(b, "  (void)node;\n  return 0;\n}\n\n");
  } else {
    for (s = 0; s < 4; s++)
      if (!strcmp(m->fields[kf].struct_name, tags[s]))
        break;
    if (ir_per_receptor(&m->fields[kf]))
      sb_printf(b, "  const std::size_t K = ( node.*%s_detail::member(%s_detail::%s_tag{}) ).%s.size();\n", nm, nm,
                members[s], m->fields[kf].member);
    else
      sb_printf(b,
                "  const std::size_t K = ( ( node.*%s_detail::member(%s_detail::%s_tag{}) ).%s.size() - %d ) / %d;\n",
                nm, nm, members[s], m->fields[kf].member, m->fields[kf].array_base, -m->fields[kf].array_len);
    /* The device lays every std::vector field out with K entries: a node whose vectors differ in
     * length (gif models' tau_sfa and tau_syn) does not fit it, and is refused rather than packed
     * out of bounds. The receptor count comes from the first vector outside Buffers_. */
    emit_receptor_checks(b, m, kf);
    sb_puts(b, "  return K;\n}\n\n");
  }
}

/* emit_<model>: a spike of the device's spike list sent as update() sends it. */
static void emit_glue_emit(strbuf *b, const ir_model *m)
{
  const char *nm = m->name;
  /* a spike of multiplicity m (the device's run of m entries): one event, m history entries, as update();
   * the offset that update() gave the event (0, NEST's default, for a model that sets none) */
  sb_printf(b,
            "inline void\nemit_%s( nest::%s& node, long origin_steps, long lag, unsigned long m, double offset )\n{\n"
            "  for ( unsigned long k = 0; k < m; ++k )\n"
            "  {\n"
            "    detail::set_spiketime( node, nest::Time::step( origin_steps + lag + 1 )%s );\n"
            "  }\n"
            "  nest::SpikeEvent se;\n"
            "  if ( m != 1 )\n"
            "  {\n"
            "    se.set_multiplicity( m );\n"
            "  }\n",
            nm, nm, m->spiketime_offset ? ", offset" : "");
  if (m->spike_offsets)
    sb_puts(b, "  se.set_offset( offset );\n");
  else
    sb_puts(b, "  (void)offset;\n");
  sb_puts(b, "  nest::kernel().event_delivery_manager.send( node, se, lag );\n}\n");
}

void emit_glue(strbuf *b, const ir_model *m)
{
  int any[4] = {0, 0, 0, 0};
  emit_glue_prologue(b, m);
  emit_glue_detail(b, m, any);
  emit_glue_pack(b, m);
  emit_glue_receptors(b, m);
  emit_drain(b, m, any[3]);
  emit_events(b, m);
  emit_record(b, m, any[3]);
  emit_glue_emit(b, m);
  sb_puts(b, "} // namespace nestcl_glue\n\n#endif\n");
}

void emit_glue_table(strbuf *b, ir_model *const *models, int n)
{
  enum { NFN = 7 };
  static const char *const fns[NFN][3] = {
    {"pack", "const nest::Node& node, void* const* f, std::size_t n, std::size_t i", "const"},
    {"unpack", "nest::Node& node, void* const* f, std::size_t n, std::size_t i", ""},
    {"drain", "nest::Node& node, long lag, double* out, std::size_t K", ""},
    {"record", "nest::Node& node, const double* values, long step", ""},
    {"emit", "nest::Node& node, long origin_steps, long lag, unsigned long m, double offset", ""},
    {"receptors", "const nest::Node& node", "const"},
    {"events", "nest::Node& node, long origin_steps, long lag, nestcl_block* block, std::uint32_t i", ""}};
  static const char *const rets[NFN] = {"void", "void", "void", "void", "void", "std::size_t", "int"};
  static const char *const args[NFN] = {"f, n, i",
                                        "f, n, i",
                                        "lag, out, K",
                                        "values, step",
                                        "origin_steps, lag, m, offset",
                                        "",
                                        "origin_steps, lag, block, i"};
  int j, k;
  sb_puts(
    b,
    "/* Generated by nestcl-translate. Do not edit.\n"
    "   nestcl_glue_table.hpp: the glue of every model translated in this run, by NEST model name, for\n"
    "   nest_patch (one translation unit includes it). */\n"
    "#ifndef NESTCL_GLUE_TABLE_HPP\n#define NESTCL_GLUE_TABLE_HPP\n\n#include <cstddef>\n\n#include \"nestcl/block.h\"\n#include \"nestcl/model.h\"\n#include \"node.h\"\n");
  for (j = 0; j < n; j++)
    sb_printf(b, "#include \"%s_glue.hpp\"\n", models[j]->name);
  sb_puts(b, "\nextern \"C\"\n{\n");
  for (j = 0; j < n; j++)
    sb_printf(b, "  extern const nestcl_model nestcl_model_%s;\n", models[j]->name);
  sb_puts(b, "}\n\nnamespace nestcl_glue\n{\nstruct entry\n{\n  const char* name;\n  const nestcl_model* model;\n");
  for (k = 0; k < NFN; k++)
    sb_printf(b, "  %s ( *%s )( %s );\n", rets[k], fns[k][0], fns[k][1]);
  sb_puts(
    b,
    "};\n\n/* The entries, sorted by name; *count receives their number. */\ninline const entry*\ntable( std::size_t* count )\n{\n  static const entry t[] = {\n");
  for (j = 0; j < n; j++) {
    const char *nm = models[j]->name;
    sb_printf(b, "    { \"%s\",\n      &nestcl_model_%s,\n", nm, nm);
    for (k = 0; k < NFN; k++)
      sb_printf(b, "      []( %s ) { %s%s_%s( static_cast< %snest::%s& >( node )%s%s ); }%s\n", fns[k][1],
                strcmp(rets[k], "void") ? "return " : "", fns[k][0], nm, fns[k][2][0] ? "const " : "", nm,
                args[k][0] ? ", " : "", args[k], k < NFN - 1 ? "," : "");
    sb_puts(b, "    },\n");
  }
  if (!n)
    sb_puts(b, "    { nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr },\n");
  sb_printf(b, "  };\n  *count = %d;\n  return t;\n}\n} // namespace nestcl_glue\n\n#endif\n", n);
}

/*
 * <model>_syn_glue.hpp: a NEST connection of the synapse model (under either
 * of NEST's target identifiers) into the translated synapse's struct and
 * back, and its common properties into theirs, through the descriptor's field
 * offsets and types. The members are private; the same explicit-instantiation
 * route as the neuron glue names them. unpack writes back what send() may
 * change (per-synapse and per-source state); parameters stay NEST's.
 */
void emit_syn_glue(strbuf *b, const ir_model *m)
{
  static const char *const tids[2] = {"TargetIdentifierPtrRport", "TargetIdentifierIndex"};
  const char *nm = m->name;
  const char *hdr = m->header_file ? m->header_file : m->source_file;
  const char *base = strrchr(hdr, '/');
  int j, t, n_cp = m->n_fields - m->n_syn_fields;
  base = base ? base + 1 : hdr;
  emit_file_header(b, m, "C++ glue between NEST's connections of this synapse model and the translated struct.", "/*",
                   "*/");
  sb_printf(b, "#ifndef NESTCL_SYN_GLUE_%s_HPP\n#define NESTCL_SYN_GLUE_%s_HPP\n\n", nm, nm);
  sb_printf(b,
            "#include <cstddef>\n#include <cstdint>\n#include <cstring>\n\n#include \"%s\"\n"
            "#include \"nestcl/model.h\"\n#include \"target_identifier.h\"\n\n",
            base);
  sb_puts(
    b,
    "namespace nestcl_glue\n{\n#ifndef NESTCL_SYN_GLUE_DETAIL\n#define NESTCL_SYN_GLUE_DETAIL\n"
    "namespace syn_detail\n{\n"
    "/* A member's value into (out of) a struct at the field's offset, as the field's type. */\n"
    "template < typename V >\ninline void\nput( void* s, const nestcl_syn_field& f, const V& v )\n{\n"
    "  char* p = static_cast< char* >( s ) + f.offset;\n"
    "  switch ( f.type )\n  {\n"
    "  case NESTCL_T_DOUBLE: { const double x = static_cast< double >( v ); std::memcpy( p, &x, 8 ); break; }\n"
    "  case NESTCL_T_LONG: { const std::int64_t x = static_cast< std::int64_t >( v ); std::memcpy( p, &x, 8 ); break; }\n"
    "  case NESTCL_T_SIZE: { const std::uint64_t x = static_cast< std::uint64_t >( v ); std::memcpy( p, &x, 8 ); break; }\n"
    "  default: { const std::int32_t x = static_cast< std::int32_t >( v ); std::memcpy( p, &x, 4 ); break; }\n"
    "  }\n}\n"
    "template < typename V >\ninline void\nget( const void* s, const nestcl_syn_field& f, V& v )\n{\n"
    "  const char* p = static_cast< const char* >( s ) + f.offset;\n"
    "  switch ( f.type )\n  {\n"
    "  case NESTCL_T_DOUBLE: { double x; std::memcpy( &x, p, 8 ); v = static_cast< V >( x ); break; }\n"
    "  case NESTCL_T_LONG: { std::int64_t x; std::memcpy( &x, p, 8 ); v = static_cast< V >( x ); break; }\n"
    "  case NESTCL_T_SIZE: { std::uint64_t x; std::memcpy( &x, p, 8 ); v = static_cast< V >( x ); break; }\n"
    "  default: { std::int32_t x; std::memcpy( &x, p, 4 ); v = static_cast< V >( x ); break; }\n"
    "  }\n}\n"
    "} // namespace syn_detail\n#endif\n\n");
  /* The friend that steal defines belongs to this namespace, where member( tag ) is declared. */
  sb_printf(
    b,
    "namespace %s_syn_detail\n{\n"
    "template < typename Tag, auto Member >\nstruct steal\n{\n  friend auto\n  member( Tag )\n  {\n    return Member;\n  }\n};\n",
    nm);
  for (j = 0; j < m->n_fields; j++) {
    const ir_field *f = &m->fields[j];
    if (j < m->n_syn_fields) {
      sb_printf(b, "template < typename T >\nstruct f%d_tag\n{\n};\n", j);
      for (t = 0; t < 2; t++) {
        sb_printf(b, "auto member( f%d_tag< nest::%s > );\n", j, tids[t]);
        sb_printf(b, "template struct steal< f%d_tag< nest::%s >, &nest::%s< nest::%s >::%s >;\n", j, tids[t], nm,
                  tids[t], f->member);
      }
    } else {
      sb_printf(b, "struct f%d_tag\n{\n};\nauto member( f%d_tag );\n", j, j);
      sb_printf(b, "template struct steal< f%d_tag, &nest::%s::%s >;\n", j, m->cp_name, f->member);
    }
  }
  sb_printf(b, "} // namespace %s_syn_detail\n\n", nm);
  sb_printf(
    b,
    "/* Every field of connection c into the struct syn (d: the model's descriptor, nestcl_synapse_%s). */\n"
    "template < typename T >\ninline void\npack_syn_%s( const nest::%s< T >& c, const nestcl_synapse_model* d, void* syn )\n{\n",
    nm, nm, nm);
  for (j = 0; j < m->n_syn_fields; j++)
    sb_printf(b, "  syn_detail::put( syn, d->fields[ %d ], c.*member( %s_syn_detail::f%d_tag< T > {} ) );\n", j, nm, j);
  if (!m->n_syn_fields)
    sb_puts(b, "  (void)c;\n  (void)d;\n  (void)syn;\n");
  sb_puts(b, "}\n\n");
  sb_printf(
    b,
    "/* What send() changes (per-synapse and per-source state) from the struct back into connection c. */\n"
    "template < typename T >\ninline void\nunpack_syn_%s( nest::%s< T >& c, const nestcl_synapse_model* d, const void* syn )\n{\n",
    nm, nm);
  {
    int any = 0;
    for (j = 0; j < m->n_syn_fields; j++) {
      if (m->fields[j].syn_role != IR_SYN_STATE && m->fields[j].syn_role != IR_SYN_SOURCE)
        continue;
      sb_printf(b, "  syn_detail::get( syn, d->fields[ %d ], c.*member( %s_syn_detail::f%d_tag< T > {} ) );\n", j, nm,
                j);
      any = 1;
    }
    if (!any)
      sb_puts(b, "  (void)c;\n  (void)d;\n  (void)syn;\n");
  }
  sb_puts(b, "}\n\n");
  sb_printf(
    b,
    "/* The common properties into their struct. */\ninline void\npack_cp_%s( const nest::%s& cp, const nestcl_synapse_model* d, void* out )\n{\n",
    nm, m->cp_name);
  for (j = m->n_syn_fields; j < m->n_fields; j++)
    sb_printf(b, "  syn_detail::put( out, d->fields[ %d ], cp.*member( %s_syn_detail::f%d_tag {} ) );\n", j, nm, j);
  if (!n_cp)
    sb_puts(b, "  (void)cp;\n  (void)d;\n  (void)out;\n");
  sb_puts(b, "}\n} // namespace nestcl_glue\n\n#endif\n");
}

/*
 * nestcl_syn_glue_table.hpp: for nest_patch, which connectors hold
 * connections of a translated synapse model. with_translated_synapses(c, f)
 * calls f( connections, descriptor, pack, unpack, pack_cp ) with the
 * connector's own BlockVector of connections (a private member, named as the
 * glue names members) and the model's glue, and returns whether it did.
 */
void emit_syn_glue_table(strbuf *b, ir_model *const *models, int n)
{
  static const char *const tids[2] = {"TargetIdentifierPtrRport", "TargetIdentifierIndex"};
  int j, t;
  sb_puts(b,
          "/* Generated by nestcl-translate. Do not edit.\n"
          "   nestcl_syn_glue_table.hpp: the translated synapse models' connectors and glue, for nest_patch\n"
          "   (one translation unit includes it). */\n"
          "#ifndef NESTCL_SYN_GLUE_TABLE_HPP\n#define NESTCL_SYN_GLUE_TABLE_HPP\n\n"
          "#include \"connector_base.h\"\n#include \"nestcl/model.h\"\n");
  for (j = 0; j < n; j++)
    sb_printf(b, "#include \"%s_syn_glue.hpp\"\n", models[j]->name);
  sb_puts(b, "\nextern \"C\"\n{\n");
  for (j = 0; j < n; j++)
    sb_printf(b, "  extern const nestcl_synapse_model nestcl_synapse_%s;\n", models[j]->name);
  sb_puts(
    b,
    "}\n\nnamespace nestcl_glue\n{\nnamespace syn_table_detail\n{\n"
    "template < typename Tag, auto Member >\nstruct steal\n{\n  friend auto\n  member( Tag )\n  {\n    return Member;\n  }\n};\n");
  for (j = 0; j < n; j++)
    for (t = 0; t < 2; t++) {
      sb_printf(b, "struct c%d_%d_tag\n{\n};\nauto member( c%d_%d_tag );\n", j, t, j, t);
      sb_printf(b, "template struct steal< c%d_%d_tag, &nest::Connector< nest::%s< nest::%s > >::C_ >;\n", j, t,
                models[j]->name, tids[t]);
    }
  sb_puts(b,
          "} // namespace syn_table_detail\n\n"
          "template < typename F >\ninline bool\nwith_translated_synapses( nest::ConnectorBase* c, F&& f )\n{\n");
  for (j = 0; j < n; j++) {
    const char *nm = models[j]->name;
    for (t = 0; t < 2; t++) {
      sb_printf(b, "  if ( auto* k = dynamic_cast< nest::Connector< nest::%s< nest::%s > >* >( c ) )\n  {\n", nm,
                tids[t]);
      sb_printf(b, "    using C = nest::%s< nest::%s >;\n", nm, tids[t]);
      sb_printf(b, "    f( k->*member( syn_table_detail::c%d_%d_tag {} ), &nestcl_synapse_%s,\n", j, t, nm);
      sb_printf(b, "      []( const C& x, const nestcl_synapse_model* d, void* s ) { pack_syn_%s( x, d, s ); },\n", nm);
      sb_printf(b, "      []( C& x, const nestcl_synapse_model* d, const void* s ) { unpack_syn_%s( x, d, s ); },\n",
                nm);
      sb_printf(
        b,
        "      []( const typename C::CommonPropertiesType& p, const nestcl_synapse_model* d, void* o ) { pack_cp_%s( p, d, o ); } );\n",
        nm);
      sb_puts(b, "    return true;\n  }\n");
    }
  }
  sb_puts(b, "  (void)c;\n  (void)f;\n  return false;\n}\n} // namespace nestcl_glue\n\n#endif\n");
}
