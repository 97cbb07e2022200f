/*
 * Translated (STDP) synapses onto a stream thread's device neurons, exported
 * from NEST's connectors in prepare() with their targets' spike histories
 * (nestcl_block_add_plastic, nestcl_block_history), and imported back into
 * NEST's connections and nodes in cleanup(). The one file that includes the
 * generated synapse glue table (nestcl_syn_glue_table.hpp says so).
 */
#include "nestcl/nestcl_manager.h"
#include "nestcl/nestcl_manager_impl.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <type_traits>

#include "archiving_node.h"
#include "connector_base.h"
#include "connector_model.h"
#include "exceptions.h"
#include "kernel_manager.h"
#ifdef HAVE_NESTCL
#include "nestcl_syn_glue_table.hpp"
#endif

namespace nest
{
#ifdef HAVE_NESTCL
/*
 * ArchivingNode keeps the spike history private (set_spiketime is protected);
 * the device's copy is loaded from and written back into these members.
 */
struct an_history_tag
{
};
struct an_kminus_tag
{
};
struct an_kminus_triplet_tag
{
};
struct an_last_spike_tag
{
};
struct an_max_delay_tag
{
};
struct an_tau_minus_tag
{
};
struct an_tau_minus_triplet_tag
{
};
struct an_n_incoming_tag
{
};
auto member( an_history_tag );
auto member( an_kminus_tag );
auto member( an_kminus_triplet_tag );
auto member( an_last_spike_tag );
auto member( an_max_delay_tag );
auto member( an_tau_minus_tag );
auto member( an_tau_minus_triplet_tag );
auto member( an_n_incoming_tag );
template struct steal< an_history_tag, &ArchivingNode::history_ >;
template struct steal< an_kminus_tag, &ArchivingNode::Kminus_ >;
template struct steal< an_kminus_triplet_tag, &ArchivingNode::Kminus_triplet_ >;
template struct steal< an_last_spike_tag, &ArchivingNode::last_spike_ >;
template struct steal< an_max_delay_tag, &ArchivingNode::max_delay_ >;
template struct steal< an_tau_minus_tag, &ArchivingNode::tau_minus_ >;
template struct steal< an_tau_minus_triplet_tag, &ArchivingNode::tau_minus_triplet_ >;
template struct steal< an_n_incoming_tag, &ArchivingNode::n_incoming_ >;

/*
 * Whether the group's model's handle(SpikeEvent&) reads the spike's offset at
 * rport (model.h, route_spike_offset): the device's delivery carries no
 * offset, so such connections stay with NEST, whose handle() reads NEST's.
 * (nestcl_synapse_export.cpp's place() refuses them through route_spike,
 * which fails there.)
 */
static bool
reads_offset( const Group& gr, long rport )
{
  const nestcl_model* m = gr.model;
  int read = 0, ch = -1;
  double value = 0;
  return m->route_spike_offset
    and ( m->route_spike_offset( 1.0, rport, static_cast< uint32_t >( gr.K ), 0.0, &read, &ch, &value ) != 0 or read );
}

/* Every field of role `role` of two structs equal (bytes). */
static bool
same_role( const nestcl_synapse_model* sm, const unsigned char* a, const unsigned char* b, nestcl_syn_role role )
{
  for ( int f = 0; f < sm->n_syn_fields; ++f )
  {
    const nestcl_syn_field& sf = sm->fields[ f ];
    if ( sf.role == role and std::memcmp( a + sf.offset, b + sf.offset, nestcl_field_type_size( sf.type ) ) != 0 )
    {
      return false;
    }
  }
  return true;
}

/*
 * Whether the device delivers a translated synapse model: its set needs a
 * per-synapse double "weight" that send() updates (plastic_dev.c); one that
 * sends with a weight it does not keep per synapse (tsodyks_synapse) stays
 * with NEST's connectors.
 */
static bool
device_deliverable( const nestcl_synapse_model* sm )
{
  for ( int f = 0; f < sm->n_syn_fields; ++f )
  {
    const nestcl_syn_field& sf = sm->fields[ f ];
    if ( sf.role == NESTCL_SYN_STATE and sf.type == NESTCL_T_DOUBLE and sf.nest_name
      and std::strcmp( sf.nest_name, "weight" ) == 0 )
    {
      return true;
    }
  }
  return false;
}

/*
 * Whether the device's plastic delivery can reach a group's neurons at rport:
 * it adds the synapse's weight unchanged to one channel per sign of the weight
 * (as plastic_dev.c's eng_plastic_route checks). A port that the model's
 * handle() treats otherwise (parrot_neuron's rport 1, which repeats nothing)
 * keeps the synapses with NEST.
 */
static bool
plastic_routable( const Group& gr, long rport )
{
  return nestcl_block_plastic_routable( gr.block, rport ) != 0;
}

namespace
{
/* One group's CSR of one synapse model under construction: rows over the model's rows on the thread. */
struct PlasticCsr
{
  std::vector< uint64_t > row_ptr { 0 };
  std::vector< uint32_t > target;
  std::vector< uint16_t > delay;
  std::vector< unsigned char > syn;
};

/* A synapse model whose connectors qualify: its rows, a CSR per group, its common properties and rport. */
struct PlasticModel
{
  PlasticRows rows;
  std::vector< PlasticCsr > csr;  // per group
  std::vector< unsigned char > cp;
  long rport = 0;
};

/* What export_plastic gathers over the thread's connectors before anything goes to the device. */
struct PlasticExport
{
  size_t tid;
  std::vector< Group >& groups;
  const std::vector< std::pair< uint32_t, uint32_t > >& where;
  long max_delay;
  std::vector< PlasticModel > models;
  std::vector< std::vector< uint32_t > > readers;  // per group and neuron: history readers exported
};
}

namespace
{
/* What one chunk of a connector's runs makes: per group its CSR part and the lcids in CSR order. */
struct PlasticPart
{
  std::vector< PlasticCsr > csr;
  std::vector< std::vector< size_t > > lcid;
  bool ok = true;
};
}

/*
 * Runs [k0, k1) of starts of a connector (items, lcid order) into part, one
 * row per run; not ok when a connection does not qualify (another target, a
 * delay outside the ring, another rport than param0's, unequal per-source
 * state or parameters, or a target model that reads spike offsets).
 */
template< typename Items, typename Pack >
static void
plastic_chunk( PlasticExport& x, Items& items, const nestcl_synapse_model* sm, Pack pack,
  const std::vector< size_t >& starts, size_t k0, size_t k1, const std::vector< unsigned char >& param0, long rport,
  PlasticPart& part )
{
  std::vector< unsigned char > first( sm->syn_size ), one( sm->syn_size );
  for ( size_t k = k0; k < k1 and part.ok; ++k )
  {
    const size_t end = k + 1 < starts.size() ? starts[ k + 1 ] : items.size();
    for ( PlasticCsr& r : part.csr )
    {
      r.row_ptr.push_back( r.row_ptr.back() );
    }
    for ( size_t lcid = starts[ k ]; lcid < end and part.ok; ++lcid )
    {
      const auto& c = items[ lcid ];
      Node* t = c.get_target( x.tid );
      const size_t tl = t->get_thread_lid();
      const long d = c.get_delay_steps();
      if ( t->get_thread() != x.tid or tl >= x.where.size() or x.where[ tl ].first == 0 or d < 1 or d > x.max_delay
        or d > 65535 )
      {
        part.ok = false;
        break;
      }
      pack( c, sm, one.data() );
      if ( lcid == starts[ k ] )
      {
        first = one;
      }
      const size_t g = x.where[ tl ].first - 1;
      part.ok = static_cast< long >( c.get_rport() ) == rport
        and same_role( sm, one.data(), first.data(), NESTCL_SYN_SOURCE )
        and same_role( sm, one.data(), param0.data(), NESTCL_SYN_PARAMETER )
        and not reads_offset( x.groups[ g ], rport );
      PlasticCsr& r = part.csr[ g ];
      r.target.push_back( x.where[ tl ].second );
      r.delay.push_back( static_cast< uint16_t >( d ) );
      r.syn.insert( r.syn.end(), one.begin(), one.end() );
      r.row_ptr.back()++;
      part.lcid[ g ].push_back( lcid );
    }
  }
}

/* A chunk's part after what mdl holds, per group (rows, synapses and lcids in order). */
static void
append_part( PlasticModel& mdl, const PlasticPart& part )
{
  for ( size_t g = 0; g < mdl.csr.size(); ++g )
  {
    PlasticCsr& to = mdl.csr[ g ];
    const PlasticCsr& from = part.csr[ g ];
    const uint64_t off = to.target.size();
    for ( size_t k = 1; k < from.row_ptr.size(); ++k )
    {
      to.row_ptr.push_back( off + from.row_ptr[ k ] );
    }
    to.target.insert( to.target.end(), from.target.begin(), from.target.end() );
    to.delay.insert( to.delay.end(), from.delay.begin(), from.delay.end() );
    to.syn.insert( to.syn.end(), from.syn.begin(), from.syn.end() );
    mdl.rows.lcid[ g ].insert( mdl.rows.lcid[ g ].end(), part.lcid[ g ].begin(), part.lcid[ g ].end() );
  }
}

/*
 * The connections of one connector (items, lcid order) into mdl's rows, one
 * row per source's run, in chunks of runs on NEST's threads joined in order
 * (the rows are one thread's); false when one does not qualify.
 */
template< typename Items, typename Pack >
static bool
plastic_rows( PlasticExport& x, Items& items, const nestcl_synapse_model* sm, Pack pack, PlasticModel& mdl )
{
  const size_t n = items.size();
  if ( n == 0 )
  {
    return true;
  }
  std::vector< size_t >& starts = mdl.rows.starts;
  for ( size_t lcid = 0; lcid < n; ++lcid )
  {
    if ( lcid == 0 or not items[ lcid - 1 ].source_has_more_targets() )
    {
      starts.push_back( lcid );
    }
  }
  std::vector< unsigned char > param0( sm->syn_size );
  pack( items[ 0 ], sm, param0.data() );
  mdl.rport = static_cast< long >( items[ 0 ].get_rport() );
  const size_t n_chunks = std::min( starts.size(), 4 * kernel().vp_manager.get_num_threads() );
  std::vector< PlasticPart > parts( n_chunks );
#pragma omp parallel for schedule( dynamic, 1 )
  for ( size_t q = 0; q < n_chunks; ++q )
  {
    parts[ q ].csr.assign( x.groups.size(), PlasticCsr() );
    parts[ q ].lcid.assign( x.groups.size(), std::vector< size_t >() );
    plastic_chunk( x, items, sm, pack, starts, starts.size() * q / n_chunks, starts.size() * ( q + 1 ) / n_chunks,
      param0, mdl.rport, parts[ q ] );
  }
  for ( const PlasticPart& part : parts )
  {
    if ( not part.ok )
    {
      return false;
    }
    append_part( mdl, part );
  }
  return true;
}

/* One translated synapse model's connector (with_translated_synapses) into x.models, when it qualifies. */
template< typename Items, typename Pack, typename Unpack, typename PackCp >
static void
gather_plastic( PlasticExport& x, size_t syn_id, const ConnectorModel& cm, Items& items, const nestcl_synapse_model* sm,
  Pack pack, Unpack unpack, PackCp pack_cp )
{
  using C = std::decay_t< decltype( items[ 0 ] ) >;
  if ( not device_deliverable( sm ) )
  {
    return;  // stays with NEST, whose connectors deliver it
  }
  PlasticModel mdl;
  mdl.rows.syn_id = static_cast< synindex >( syn_id );
  mdl.rows.sm = sm;
  mdl.csr.assign( x.groups.size(), PlasticCsr() );
  mdl.cp.assign( sm->cp_size + 8, 0 );
  pack_cp( static_cast< const typename C::CommonPropertiesType& >( cm.get_common_properties() ), sm, mdl.cp.data() );
  mdl.rows.lcid.assign( x.groups.size(), std::vector< size_t >() );
  if ( not plastic_rows( x, items, sm, pack, mdl ) )
  {
    return;
  }
  for ( size_t g = 0; g < x.groups.size(); ++g )
  {
    if ( not mdl.csr[ g ].target.empty() and not plastic_routable( x.groups[ g ], mdl.rport ) )
    {
      return;  // stays with NEST, whose connectors call the target's own handle()
    }
  }
  for ( size_t g = 0; g < x.groups.size(); ++g )
  {
    for ( size_t k = 0; sm->uses_history and k < mdl.csr[ g ].target.size(); ++k )
    {
      x.readers[ g ][ mdl.csr[ g ].target[ k ] ]++;
    }
  }
  mdl.rows.unpack = [ &items, sm, unpack ]( size_t lcid, const void* syn ) { unpack( items[ lcid ], sm, syn ); };
  mdl.rows.pack = [ &items, sm, pack ]( size_t lcid, void* syn ) { pack( items[ lcid ], sm, syn ); };
  x.models.push_back( std::move( mdl ) );
}

/*
 * Whether every history that a gathered synapse reads is read only by
 * gathered synapses (readers equal the node's n_incoming), with one
 * tau_minus (and triplet tau) per group, which tau and tau_t receive.
 */
static bool
histories_on_device( const PlasticExport& x, std::vector< double >& tau, std::vector< double >& tau_t )
{
  for ( size_t g = 0; g < x.groups.size(); ++g )
  {
    for ( size_t i = 0; i < x.groups[ g ].nodes.size(); ++i )
    {
      ArchivingNode* a = dynamic_cast< ArchivingNode* >( x.groups[ g ].nodes[ i ] );
      const size_t n_in = a ? a->*member( an_n_incoming_tag {} ) : 0;
      if ( x.readers[ g ][ i ] != n_in )
      {
        return false;  // an STDP synapse that stays with NEST reads this neuron's history
      }
      if ( a and n_in )
      {
        const double tm = a->*member( an_tau_minus_tag {} ), tt = a->*member( an_tau_minus_triplet_tag {} );
        if ( ( tau[ g ] >= 0 and tau[ g ] != tm ) or ( tau_t[ g ] >= 0 and tau_t[ g ] != tt ) )
        {
          return false;
        }
        tau[ g ] = tm;
        tau_t[ g ] = tt;
      }
    }
  }
  return true;
}

/* The spike histories of the groups whose neurons STDP synapses read, from the nodes to the device. */
static void
upload_histories( std::vector< Group >& groups, const std::vector< double >& tau, const std::vector< double >& tau_t )
{
  for ( size_t g = 0; g < groups.size(); ++g )
  {
    Group& gr = groups[ g ];
    if ( tau[ g ] > 0 )
    {
      check( nestcl_block_history( gr.block, tau[ g ], tau_t[ g ], 1u << 20 ),
        "the spike history of " + std::string( gr.name ) );
      gr.history = true;
      std::vector< nestcl_history_entry > e;
      for ( size_t i = 0; i < gr.nodes.size(); ++i )
      {
        ArchivingNode* a = dynamic_cast< ArchivingNode* >( gr.nodes[ i ] );
        nestcl_history_state st { 0.0, 0.0, -1.0, 0.0, 0, 0 };
        e.clear();
        if ( a )
        {
          for ( const histentry& h : a->*member( an_history_tag {} ) )
          {
            e.push_back( { h.t_, h.Kminus_, h.Kminus_triplet_, static_cast< uint32_t >( h.access_counter_ ) } );
          }
          st = { a->*member( an_kminus_tag {} ), a->*member( an_kminus_triplet_tag {} ),
            a->*member( an_last_spike_tag {} ), a->*member( an_max_delay_tag {} ),
            static_cast< uint32_t >( a->*member( an_n_incoming_tag {} ) ), static_cast< uint32_t >( e.size() ) };
        }
        check( nestcl_block_history_set( gr.block, static_cast< uint32_t >( i ), &st, e.data() ),
          "the spike history of " + std::string( gr.name ) );
      }
    }
  }
}

/*
 * A model's rows as loop ids (ids not empty): each source has one run of the
 * model's connections on the thread, which becomes the row of its loop id;
 * the synapses, their structs and lcids follow. Otherwise row k is run k.
 */
static void
plastic_loop_rows( PlasticModel& mdl, const LoopIds& ids )
{
  const size_t runs = mdl.rows.starts.size();
  mdl.rows.row_of.resize( runs );
  for ( size_t k = 0; k < runs; ++k )
  {
    mdl.rows.row_of[ k ] = static_cast< uint32_t >( k );
    if ( not ids.of.empty() )
    {
      auto at = ids.of.find( std::make_pair( static_cast< size_t >( mdl.rows.syn_id ), mdl.rows.starts[ k ] ) );
      if ( at == ids.of.end() )
      {
        throw KernelException( "nestcl: the source of the " + std::string( mdl.rows.sm->name )
          + " connections from lcid " + std::to_string( mdl.rows.starts[ k ] ) + " is not a neuron of the stream VP" );
      }
      mdl.rows.row_of[ k ] = at->second;
    }
  }
  if ( ids.of.empty() )
  {
    return;
  }
  const size_t size = mdl.rows.sm->syn_size;
  for ( size_t g = 0; g < mdl.csr.size(); ++g )
  {
    PlasticCsr& c = mdl.csr[ g ];
    std::vector< uint64_t > ptr;
    std::vector< size_t > order;
    csr_by_row( c.row_ptr, mdl.rows.row_of, ids.n, ptr, order );
    PlasticCsr out;
    out.row_ptr = ptr;
    std::vector< size_t > lcid;
    for ( const size_t k : order )
    {
      out.target.push_back( c.target[ k ] );
      out.delay.push_back( c.delay[ k ] );
      out.syn.insert( out.syn.end(), c.syn.begin() + k * size, c.syn.begin() + ( k + 1 ) * size );
      lcid.push_back( mdl.rows.lcid[ g ][ k ] );
    }
    c = std::move( out );
    mdl.rows.lcid[ g ] = std::move( lcid );
  }
}

/* Every gathered model's CSR as a device set of each group's block; its rows go to out. Returns the synapses. */
static long
upload_sets( std::vector< Group >& groups, std::vector< PlasticModel >& models, const LoopIds& ids,
  std::vector< PlasticRows >& out )
{
  long count = 0;
  for ( PlasticModel& mdl : models )
  {
    plastic_loop_rows( mdl, ids );
    const uint32_t n_rows = ids.of.empty() ? static_cast< uint32_t >( mdl.rows.starts.size() ) : ids.n;
    mdl.rows.set.assign( groups.size(), -1 );
    for ( size_t g = 0; g < groups.size(); ++g )
    {
      PlasticCsr& r = mdl.csr[ g ];
      if ( r.target.empty() )
      {
        continue;
      }
      check( nestcl_block_add_plastic( groups[ g ].block, mdl.rows.sm, mdl.cp.data(), mdl.rport, n_rows,
               r.row_ptr.data(), r.target.data(), r.delay.data(), r.syn.data(), &mdl.rows.set[ g ] ),
        "placing the " + std::string( mdl.rows.sm->name ) + " synapses of " + std::string( groups[ g ].name )
          + " on the device" );
      count += static_cast< long >( r.target.size() );
    }
    out.push_back( std::move( mdl.rows ) );
  }
  return count;
}

/*
 * Thread tid's translated (STDP) synapses onto its device neurons become
 * device sets (nestcl_block_add_plastic), their targets' spike histories
 * device copies of the nodes' ArchivingNode histories. A connector qualifies
 * when all its connections target device neurons of the thread, with one
 * receptor port, no weight_recorder, per-source state equal within each
 * source's run and parameters equal over all. The thread's synapses go to the
 * device only all together: every device neuron that an STDP synapse reads
 * must have all of them there (its n_incoming), one tau_minus per block;
 * otherwise all stay with NEST.
 */
long
export_plastic( size_t tid, std::vector< Group >& groups, const std::vector< std::pair< uint32_t, uint32_t > >& where,
  const LoopIds& ids, std::vector< PlasticRows >& out )
{
  out.clear();
  std::vector< ConnectorBase* >& conns = thread_connectors( tid );
  const std::vector< ConnectorModel* >& cm = kernel().model_manager.get_connection_models( tid );
  PlasticExport x { tid, groups, where, kernel().connection_manager.get_max_delay(), {}, {} };
  x.readers.resize( groups.size() );
  for ( size_t g = 0; g < groups.size(); ++g )
  {
    x.readers[ g ].assign( groups[ g ].nodes.size(), 0 );
  }
  const double t0 = now_s();
  for ( size_t syn_id = 0; syn_id < conns.size(); ++syn_id )
  {
    ConnectorBase* c = conns[ syn_id ];
    if ( not c or c->size() == 0 or is_static_connector( c )
      or cm[ syn_id ]->get_common_properties().get_weight_recorder() )
    {
      continue;
    }
    nestcl_glue::with_translated_synapses( c,
      [ & ]( auto& items, const nestcl_synapse_model* sm, auto pack, auto unpack, auto pack_cp )
      { gather_plastic( x, syn_id, *cm[ syn_id ], items, sm, pack, unpack, pack_cp ); } );
  }
  prepare_parts()[ "plastic" ] += now_s() - t0;
  if ( x.models.empty() )
  {
    return 0;
  }
  // Every history that a device synapse reads must be read only there, and one tau_minus per block.
  std::vector< double > tau( groups.size(), -1.0 ), tau_t( groups.size(), -1.0 );
  if ( not histories_on_device( x, tau, tau_t ) )
  {
    return 0;
  }
  {
    Part p( "histories" );
    upload_histories( groups, tau, tau_t );
  }
  Part p( "upload" );
  return upload_sets( groups, x.models, ids, out );
}

void
import_plastic( std::vector< Group >& groups, PlasticRows& pr )
{
  std::vector< unsigned char > syn;
  for ( size_t g = 0; g < groups.size() and g < pr.set.size(); ++g )
  {
    if ( pr.set[ g ] < 0 or not groups[ g ].block )
    {
      continue;
    }
    syn.resize( pr.lcid[ g ].size() * pr.sm->syn_size );
    check( nestcl_block_plastic_read( groups[ g ].block, pr.set[ g ], syn.data() ),
      "reading back the " + std::string( pr.sm->name ) + " synapses" );
    for ( size_t k = 0; k < pr.lcid[ g ].size(); ++k )
    {
      pr.unpack( pr.lcid[ g ][ k ], syn.data() + k * pr.sm->syn_size );
    }
  }
}

bool
export_plastic_state( std::vector< Group >& groups, PlasticRows& pr )
{
  std::vector< unsigned char > syn;
  for ( size_t g = 0; g < groups.size() and g < pr.set.size(); ++g )
  {
    if ( pr.set[ g ] < 0 or not groups[ g ].block )
    {
      continue;
    }
    syn.assign( pr.lcid[ g ].size() * pr.sm->syn_size, 0 );
    for ( size_t k = 0; k < pr.lcid[ g ].size(); ++k )
    {
      pr.pack( pr.lcid[ g ][ k ], syn.data() + k * pr.sm->syn_size );
    }
    // NESTCL_EINVAL: a per-source field or a parameter no longer agrees; the thread is built again.
    const int rc = nestcl_block_plastic_write( groups[ g ].block, pr.set[ g ], syn.data() );
    if ( rc == NESTCL_EINVAL )
    {
      return false;
    }
    check( rc, "sending the " + std::string( pr.sm->name ) + " synapses to the device" );
  }
  return true;
}

bool
import_history( Group& gr )
{
  // A block whose creation a refusal stopped (prepare threw) is null: nothing to read back.
  if ( not gr.history or not gr.block or nestcl_block_history_read( gr.block ) != 0 )
  {
    return false;
  }
  std::vector< nestcl_history_entry > e;
  for ( size_t i = 0; i < gr.nodes.size(); ++i )
  {
    ArchivingNode* a = dynamic_cast< ArchivingNode* >( gr.nodes[ i ] );
    nestcl_history_state st;
    if ( not a or nestcl_block_history_get( gr.block, static_cast< uint32_t >( i ), &st, nullptr ) != 0 )
    {
      continue;
    }
    e.resize( st.n_entries + 1 );
    nestcl_block_history_get( gr.block, static_cast< uint32_t >( i ), &st, e.data() );
    // n_incoming and max_delay stay NEST's: the device never changes them, and a Connect since may have.
    std::deque< histentry >& h = a->*member( an_history_tag {} );
    h.clear();
    for ( uint32_t k = 0; k < st.n_entries; ++k )
    {
      h.push_back( histentry( e[ k ].t, e[ k ].kminus, e[ k ].kminus_triplet, e[ k ].access ) );
    }
    a->*member( an_kminus_tag {} ) = st.Kminus;
    a->*member( an_kminus_triplet_tag {} ) = st.Kminus_triplet;
    a->*member( an_last_spike_tag {} ) = st.last_spike;
  }
  return true;
}

#endif
}
