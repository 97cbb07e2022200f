/*
 * Translated (STDP) synapses onto a stream thread's device neurons, exported
 * from NEST's connectors in prepare() with their targets' spike histories
 * (nestcl_block_add_plastic, nestcl_block_history), and imported back into
 * NEST's connections and nodes in cleanup(). The one file that includes the
 * generated synapse glue table (nestcl_syn_glue_table.hpp says so).
 */
#include "nestcl/nestcl_manager.h"
#include "nestcl/nestcl_manager_impl.h"
#include "nestcl/nestcl_rows.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <set>
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
/* A translated synapse model of the thread on its way to the device: its rows, per group its rows' counts. */
struct PlasticModel
{
  PlasticRows rows;
  Runs runs;
  std::vector< std::vector< uint64_t > > count;  // per group, per row
  std::vector< unsigned char > cp, param0;       // common properties; synapse 0, the parameters' template
  std::vector< char > offsets;                   // per group: its model reads spike offsets at rport
  long rport = 0;
  uint16_t delay_min = 65535, delay_max = 0;
};

/* What the export of one thread's translated synapses gathers before anything goes to the device. */
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

/*
 * Pass 1 over rows [a, b) of one model (items, lcid order): every connection
 * counted per group and row and per target (the histories' readers), checked
 * on what it costs nothing to read (its target a device neuron of the thread
 * whose model does not read spike offsets, its delay in the ring, its rport
 * the model's); false at the first that does not fit. The rest (per-source
 * state equal along a source's run, parameters synapse 0's) the device checks
 * as pass 2 writes them (fill_model).
 */
template< typename Items, typename Pack >
static bool
count_plastic( PlasticExport& x, PlasticModel& mdl, const Items& items, Pack, uint32_t a, uint32_t b,
  std::vector< std::vector< uint32_t > >& readers, uint16_t& lo, uint16_t& hi )
{
  const bool history = mdl.rows.sm->uses_history;
  bool ok = true;
  mdl.runs.in_rows( a, b,
    [ & ]( uint32_t k )
    {
      const uint32_t row = mdl.runs.row_of[ k ];
      for ( size_t lcid = mdl.runs.starts[ k ]; ok and lcid < mdl.runs.starts[ k + 1 ]; ++lcid )
      {
        const auto& c = items[ lcid ];
        size_t tl = 0;
        const long d = c.get_delay_steps();
        if ( not target_lid( c, x.tid, tl ) or tl >= x.where.size() or x.where[ tl ].first == 0 or d < 1
          or d > x.max_delay or d > 65535 or static_cast< long >( c.get_rport() ) != mdl.rport
          or mdl.offsets[ x.where[ tl ].first - 1 ] )
        {
          ok = false;
          return;
        }
        const size_t g = x.where[ tl ].first - 1;
        ++mdl.count[ g ][ row ];
        readers[ g ][ x.where[ tl ].second ] += history ? 1 : 0;
        lo = std::min( lo, static_cast< uint16_t >( d ) );
        hi = std::max( hi, static_cast< uint16_t >( d ) );
      }
    } );
  return ok;
}

/* Pass 1 of one model on every thread (each its rows); the readers of each history added to x's. */
template< typename Items, typename Pack >
static bool
count_model( PlasticExport& x, PlasticModel& mdl, const Items& items, Pack pack )
{
  mdl.count.assign( x.groups.size(), std::vector< uint64_t >( mdl.rows.n_rows, 0 ) );
  bool ok = true;
  for_row_parts( 0, mdl.rows.n_rows,
    [ & ]( uint32_t a, uint32_t b )
    {
      std::vector< std::vector< uint32_t > > readers( x.groups.size() );
      for ( size_t g = 0; g < x.groups.size(); ++g )
      {
        readers[ g ].assign( x.groups[ g ].nodes.size(), 0 );
      }
      uint16_t lo = 65535, hi = 0;
      const bool mine = count_plastic( x, mdl, items, pack, a, b, readers, lo, hi );
#pragma omp critical( nestcl_plastic_count )
      {
        ok = ok and mine;
        mdl.delay_min = std::min( mdl.delay_min, lo );
        mdl.delay_max = std::max( mdl.delay_max, hi );
        for ( size_t g = 0; g < x.groups.size(); ++g )
        {
          for ( size_t i = 0; i < readers[ g ].size(); ++i )
          {
            x.readers[ g ][ i ] += readers[ g ][ i ];
          }
        }
      }
    } );
  return ok;
}

/* One translated synapse model's connector (with_translated_synapses) into x.models, when it qualifies. */
template< typename Items, typename Pack, typename PackCp >
static void
gather_plastic( PlasticExport& x, size_t syn_id, const ConnectorModel& cm, ConnectorBase* c, const Items& items,
  const nestcl_synapse_model* sm, Pack pack, PackCp pack_cp, const LoopIds& ids )
{
  using C = std::decay_t< decltype( items[ 0 ] ) >;
  if ( not device_deliverable( sm ) )
  {
    return;  // stays with NEST, whose connectors deliver it
  }
  PlasticModel mdl;
  mdl.rows.syn_id = static_cast< synindex >( syn_id );
  mdl.rows.sm = sm;
  mdl.rows.c = c;
  mdl.cp.assign( sm->cp_size + 8, 0 );
  pack_cp( static_cast< const typename C::CommonPropertiesType& >( cm.get_common_properties() ), sm, mdl.cp.data() );
  mdl.param0.assign( sm->syn_size, 0 );
  pack( items[ 0 ], sm, mdl.param0.data() );
  mdl.rport = static_cast< long >( items[ 0 ].get_rport() );
  for ( const Group& gr : x.groups )
  {
    mdl.offsets.push_back( reads_offset( gr, mdl.rport ) );
  }
  mdl.runs = runs_of( syn_id, items, 0, ids );
  mdl.runs.order();
  mdl.rows.n_rows = ids.of.empty() ? static_cast< uint32_t >( mdl.runs.size() ) : ids.n;
  std::vector< std::vector< uint32_t > > before = x.readers;
  if ( not count_model( x, mdl, items, pack ) )
  {
    x.readers = before;
    return;
  }
  for ( size_t g = 0; g < x.groups.size(); ++g )
  {
    if ( std::any_of( mdl.count[ g ].begin(), mdl.count[ g ].end(), []( uint64_t n ) { return n > 0; } )
      and not plastic_routable( x.groups[ g ], mdl.rport ) )
    {
      x.readers = before;
      return;  // stays with NEST, whose connectors call the target's own handle()
    }
  }
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

/* What a chunk of one model's rows stages per group: targets, delays and the synapses' structs. */
namespace
{
struct PlasticStaging
{
  StagingArray< uint32_t > target;
  StagingArray< uint16_t > delay;
  StagingArray< unsigned char > syn;
};
}

/*
 * Rows [a, b) of one model, a part of the chunk from r0 whose synapses
 * start at first[ g ] in group g: each connection's position in its group's
 * rows (runs in row order, a run's connections in lcid order), as f( lcid,
 * group, index in the chunk ).
 */
template< typename Items, typename F >
static void
walk_plastic( const PlasticRows& pr, const Runs& runs, const Items& items, size_t tid,
  const std::vector< std::pair< uint32_t, uint32_t > >& where, uint32_t a, uint32_t b, F f )
{
  std::vector< std::vector< uint64_t > > cursor( pr.row_ptr.size() );
  for ( size_t g = 0; g < pr.row_ptr.size(); ++g )
  {
    cursor[ g ].assign( pr.row_ptr[ g ].begin() + a, pr.row_ptr[ g ].begin() + b );
  }
  runs.in_rows( a, b,
    [ & ]( uint32_t k )
    {
      const uint32_t row = runs.row_of[ k ];
      for ( size_t lcid = runs.starts[ k ]; lcid < runs.starts[ k + 1 ]; ++lcid )
      {
        size_t tl = 0;
        target_lid( items[ lcid ], tid, tl );
        const size_t g = where[ tl ].first - 1;
        f( lcid, g, where[ tl ].second, cursor[ g ][ row - a ]++ );
      }
    } );
}

/* Pass 2 of one model, chunk by chunk of rows: packed on every thread, then written to each group's set. */
template< typename Items, typename Pack >
static void
fill_model( PlasticExport& x, PlasticModel& mdl, const Items& items, Pack pack )
{
  const PlasticRows& pr = mdl.rows;
  const size_t G = x.groups.size(), size = pr.sm->syn_size;
  std::vector< PlasticStaging > st( G );  // one chunk's, reused: it grows to the largest chunk (CHUNK_BYTES) once
  for ( const auto& [ r0, r1 ] : row_chunks( pr.row_ptr, pr.n_rows, size + 6 ) )
  {
    {
      Part grow( "staging" );  // once per export: the chunk's staging grows to its largest, then is reused
      for ( size_t g = 0; g < G; ++g )
      {
        const uint64_t n = pr.row_ptr[ g ][ r1 ] - pr.row_ptr[ g ][ r0 ];
        st[ g ].target.grow( n );
        st[ g ].delay.grow( n );
        st[ g ].syn.grow( n * size );
      }
    }
    const uint32_t c0 = r0, c1 = r1;
    const double t0 = now_s();
    for_row_parts( c0, c1,
      [ & ]( uint32_t a, uint32_t b )
      {
        walk_plastic( pr, mdl.runs, items, x.tid, x.where, a, b,
          [ & ]( size_t lcid, size_t g, uint32_t i, uint64_t pos )
          {
            const uint64_t at = pos - pr.row_ptr[ g ][ c0 ];
            st[ g ].target[ at ] = i;
            st[ g ].delay[ at ] = static_cast< uint16_t >( items[ lcid ].get_delay_steps() );
            pack( items[ lcid ], pr.sm, st[ g ].syn.data() + at * size );
          } );
      } );
    prepare_parts()[ "plastic" ] += now_s() - t0;
    Part p( "upload" );
    for ( size_t g = 0; g < G; ++g )
    {
      if ( pr.set[ g ] >= 0 )
      {
        const int rc = nestcl_block_plastic_fill( x.groups[ g ].block, pr.set[ g ], r0, r1 - r0, st[ g ].target.data(),
          st[ g ].delay.data(), st[ g ].syn.data() );
        if ( rc == NESTCL_EINVAL )
        {
          throw Refused { pr.syn_id };  // a per-source field or a parameter the device keeps once differs
        }
        check( rc,
          "placing the " + std::string( pr.sm->name ) + " synapses of " + std::string( x.groups[ g ].name )
            + " on the device" );
      }
    }
  }
}

/* Every gathered model as a device set in each group's block that it reaches; its rows go to out. */
static long
upload_sets( PlasticExport& x, std::vector< PlasticRows >& out )
{
  long count = 0;
  for ( PlasticModel& mdl : x.models )
  {
    PlasticRows& pr = mdl.rows;
    pr.set.assign( x.groups.size(), -1 );
    pr.row_ptr.assign( x.groups.size(), std::vector< uint64_t >() );
    for ( size_t g = 0; g < x.groups.size(); ++g )
    {
      pr.row_ptr[ g ] = row_pointers( mdl.count[ g ] );
      if ( pr.row_ptr[ g ].back() == 0 )
      {
        pr.row_ptr[ g ].assign( pr.n_rows + 1, 0 );
        continue;
      }
      Part p( "upload_begin" );
      check( nestcl_block_plastic_begin( x.groups[ g ].block, pr.sm, mdl.cp.data(), mdl.rport, pr.n_rows,
               pr.row_ptr[ g ].data(), mdl.delay_min, mdl.delay_max, mdl.param0.data(), &pr.set[ g ] ),
        "placing the " + std::string( pr.sm->name ) + " synapses of " + std::string( x.groups[ g ].name )
          + " on the device" );
      count += static_cast< long >( pr.row_ptr[ g ].back() );
    }
    nestcl_glue::with_translated_synapses( pr.c,
      [ & ]( auto& items, const nestcl_synapse_model*, auto pack, auto, auto ) { fill_model( x, mdl, items, pack ); } );
    for ( size_t g = 0; g < x.groups.size(); ++g )
    {
      if ( pr.set[ g ] >= 0 )
      {
        Part p( "upload_end" );
        check( nestcl_block_plastic_end( x.groups[ g ].block, pr.set[ g ] ),
          "placing the " + std::string( pr.sm->name ) + " synapses on the device" );
      }
    }
    pr.starts.assign( mdl.runs.starts.begin(), mdl.runs.starts.end() - 1 );
    pr.row_of = mdl.runs.row_of;
    pr.runs = std::make_shared< Runs >( std::move( mdl.runs ) );
    out.push_back( std::move( pr ) );
  }
  return count;
}

/*
 * Thread tid's translated (STDP) synapses onto its device neurons become
 * device sets (nestcl_block_plastic_*), their targets' spike histories
 * device copies of the nodes' ArchivingNode histories. A connector qualifies
 * when all its connections target device neurons of the thread, with one
 * receptor port, no weight_recorder, per-source state equal within each
 * source's run and parameters equal over all. The thread's synapses go to the
 * device only all together: every device neuron that an STDP synapse reads
 * must have all of them there (its n_incoming), one tau_minus per block;
 * otherwise all stay with NEST. NEST's connectors are read twice on NEST's
 * threads, each its own rows (counted and checked, then written chunk by
 * chunk), without a host copy of all the synapses.
 */
static long
export_plastic_once( size_t tid, std::vector< Group >& groups,
  const std::vector< std::pair< uint32_t, uint32_t > >& where, const LoopIds& ids, const std::set< synindex >& refused,
  std::vector< PlasticRows >& out )
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
      or cm[ syn_id ]->get_common_properties().get_weight_recorder()
      or refused.count( static_cast< synindex >( syn_id ) ) )
    {
      continue;
    }
    nestcl_glue::with_translated_synapses( c,
      [ & ]( auto& items, const nestcl_synapse_model* sm, auto pack, auto, auto pack_cp )
      { gather_plastic( x, syn_id, *cm[ syn_id ], c, items, sm, pack, pack_cp, ids ); } );
  }
  prepare_parts()[ "count" ] += now_s() - t0;
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
  return upload_sets( x, out );
}

long
export_plastic( size_t tid, std::vector< Group >& groups, const std::vector< std::pair< uint32_t, uint32_t > >& where,
  const LoopIds& ids, std::vector< PlasticRows >& out )
{
  // Models whose second pass met a synapse the device cannot keep: they stay with NEST, and with them (their
  // targets' histories being read by them) the thread's other plastic synapses are exported again without them.
  std::set< synindex > refused;
  while ( true )
  {
    try
    {
      return export_plastic_once( tid, groups, where, ids, refused, out );
    }
    catch ( const Refused& r )
    {
      refused.insert( r.syn_id );
      for ( Group& gr : groups )
      {
        check( nestcl_block_plastic_clear( gr.block ), "removing the plastic synapses of " + std::string( gr.name ) );
        gr.history = false;
      }
    }
  }
}

/*
 * One model's state between the device and NEST's connections, chunk by
 * chunk of rows: read back and unpacked into each connection (to_device
 * false), or packed from them and written in place (true; false returned
 * where they no longer fit the set: a per-source field or a parameter
 * differs now).
 */
static bool
transfer_plastic( std::vector< Group >& groups, const std::vector< std::pair< uint32_t, uint32_t > >& where, size_t tid,
  PlasticRows& pr, bool to_device )
{
  const size_t size = pr.sm->syn_size;
  bool fits = true;
  nestcl_glue::with_translated_synapses( pr.c,
    [ & ]( auto& items, const nestcl_synapse_model* sm, auto pack, auto unpack, auto )
    {
      std::vector< std::vector< unsigned char > > syn( groups.size() );  // one chunk's, reused
      for ( const auto& [ r0, r1 ] : row_chunks( pr.row_ptr, pr.n_rows, size ) )
      {
        for ( size_t g = 0; g < groups.size(); ++g )
        {
          syn[ g ].resize(
            std::max< size_t >( ( pr.row_ptr[ g ][ r1 ] - pr.row_ptr[ g ][ r0 ] ) * size, syn[ g ].size() ) );
          if ( pr.set[ g ] >= 0 and not to_device )
          {
            check( nestcl_block_plastic_read_rows( groups[ g ].block, pr.set[ g ], r0, r1 - r0, syn[ g ].data() ),
              "reading back the " + std::string( sm->name ) + " synapses" );
          }
        }
        const uint32_t c0 = r0, c1 = r1;
        for_row_parts( c0, c1,
          [ & ]( uint32_t a, uint32_t b )
          {
            walk_plastic( pr, *pr.runs, items, tid, where, a, b,
              [ & ]( size_t lcid, size_t g, uint32_t, uint64_t pos )
              {
                unsigned char* at = syn[ g ].data() + ( pos - pr.row_ptr[ g ][ c0 ] ) * size;
                to_device ? pack( items[ lcid ], sm, at ) : unpack( items[ lcid ], sm, at );
              } );
          } );
        for ( size_t g = 0; to_device and g < groups.size(); ++g )
        {
          const int rc = pr.set[ g ] < 0
            ? 0
            : nestcl_block_plastic_write_rows( groups[ g ].block, pr.set[ g ], r0, r1 - r0, syn[ g ].data() );
          fits = fits and rc != NESTCL_EINVAL;
          check( rc == NESTCL_EINVAL ? 0 : rc, "sending the " + std::string( sm->name ) + " synapses to the device" );
        }
      }
    } );
  return fits;
}

void
import_plastic( std::vector< Group >& groups, const std::vector< std::pair< uint32_t, uint32_t > >& where, size_t tid,
  PlasticRows& pr )
{
  transfer_plastic( groups, where, tid, pr, false );
}

bool
export_plastic_state( std::vector< Group >& groups, const std::vector< std::pair< uint32_t, uint32_t > >& where,
  size_t tid, PlasticRows& pr )
{
  return transfer_plastic( groups, where, tid, pr, true );
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
