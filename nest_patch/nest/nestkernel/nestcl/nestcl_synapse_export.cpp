/*
 * Static synapses and poisson_generators onto a stream thread's device
 * neurons, exported from NEST's connectors in prepare(): each source's run of
 * connections becomes one device CSR row (delivered by nestcl_delivery.cpp),
 * and a generator whose connections all reach device neurons is drawn on the
 * device. Whatever does not fit stays with NEST's connectors.
 */
#include "nestcl/nestcl_manager.h"
#include "nestcl/nestcl_manager_impl.h"
#include "nestcl/nestcl_rows.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>

#include "connection_manager_impl.h"
#include "connector_base.h"
#include "connector_model.h"
#include "dictionary.h"
#include "exceptions.h"
#include "event_delivery_manager_impl.h"
#include "kernel_manager.h"
#include "static_synapse.h"
#include "static_synapse_hom_w.h"
#include "target_identifier.h"

namespace nest
{
#ifdef HAVE_NESTCL
/*
 * A spike event that records where a connector would send it instead of
 * calling the receiver's handle(): calling a connector's send() with it walks
 * a source's run of connections exactly as NEST's delivery does and hands out
 * each connection's target, weight, delay and receptor port.
 */
class ExportEvent : public SpikeEvent
{
public:
  struct Hit
  {
    Node* target;
    double weight;
    long delay;
    long rport;
  };
  std::vector< Hit > hits;
  void
  operator()() override
  {
    hits.push_back( { &get_receiver(), get_weight(), get_delay_steps(), static_cast< long >( get_rport() ) } );
  }
};

/* ConnectionManager::connections_ is private; an explicit instantiation may name it (C++17 [temp.spec]). */
struct connections_tag
{
};
auto member( connections_tag );
template struct steal< connections_tag, &ConnectionManager::connections_ >;

std::vector< ConnectorBase* >&
thread_connectors( size_t tid )
{
  return ( kernel().connection_manager.*member( connections_tag {} ) )[ tid ];
}

/* NEST's static synapse types (under any name CopyModel gave them): they only add their weight to the target. */
bool
is_static_connector( const ConnectorBase* c )
{
  return dynamic_cast< const Connector< static_synapse< TargetIdentifierPtrRport > >* >( c )
    or dynamic_cast< const Connector< static_synapse< TargetIdentifierIndex > >* >( c )
    or dynamic_cast< const Connector< static_synapse_hom_w< TargetIdentifierPtrRport > >* >( c )
    or dynamic_cast< const Connector< static_synapse_hom_w< TargetIdentifierIndex > >* >( c );
}

/*
 * Where a connection that the export walked lands on the device: its group,
 * the target code (channel << 24 | index) and the value its spike adds (the
 * model's route_spike of the weight); false when its target is not a device
 * neuron of thread tid, its delay lies outside [min_delay, max_delay] steps
 * (or a 16-bit count), or the model refuses its receptor port.
 */
static bool
place( const ExportEvent::Hit& h, size_t tid, const std::vector< Group >& groups,
  const std::vector< std::pair< uint32_t, uint32_t > >& where, long min_delay, long max_delay, size_t& g,
  uint32_t& code, double& value )
{
  const size_t tl = h.target->get_thread_lid();
  if ( h.target->get_thread() != tid or tl >= where.size() or where[ tl ].first == 0 or h.delay < min_delay
    or h.delay > max_delay or h.delay > 65535 )
  {
    return false;
  }
  g = where[ tl ].first - 1;
  int ch = -1;
  const Group& gr = groups[ g ];
  if ( gr.model->route_spike( h.weight, h.rport, static_cast< uint32_t >( gr.K ), &ch, &value ) != 0 or ch < 0
    or static_cast< uint32_t >( ch ) >= nestcl_block_channels( gr.block ) )
  {
    return false;
  }
  code = ( static_cast< uint32_t >( ch ) << 24 ) | where[ tl ].second;
  return true;
}

/*
 * NEST's static connectors by type (Connector< T >::C_ is private; an
 * explicit instantiation may name it, C++17 [temp.spec]): f( items, weight )
 * with the connections and how to read one's weight (static_synapse_hom_w
 * keeps one in its common properties). False for any other connector.
 */
struct ss_ptr_tag
{
};
struct ss_index_tag
{
};
struct sshw_ptr_tag
{
};
struct sshw_index_tag
{
};
auto member( ss_ptr_tag );
auto member( ss_index_tag );
auto member( sshw_ptr_tag );
auto member( sshw_index_tag );
template struct steal< ss_ptr_tag, &Connector< static_synapse< TargetIdentifierPtrRport > >::C_ >;
template struct steal< ss_index_tag, &Connector< static_synapse< TargetIdentifierIndex > >::C_ >;
template struct steal< sshw_ptr_tag, &Connector< static_synapse_hom_w< TargetIdentifierPtrRport > >::C_ >;
template struct steal< sshw_index_tag, &Connector< static_synapse_hom_w< TargetIdentifierIndex > >::C_ >;

struct ssw_ptr_tag
{
};
struct ssw_index_tag
{
};
auto member( ssw_ptr_tag );
auto member( ssw_index_tag );
template struct steal< ssw_ptr_tag, &static_synapse< TargetIdentifierPtrRport >::weight_ >;
template struct steal< ssw_index_tag, &static_synapse< TargetIdentifierIndex >::weight_ >;

template< typename F >
static bool
with_static_items( ConnectorBase* c, const ConnectorModel& cm, F&& f )
{
  if ( auto* k = dynamic_cast< Connector< static_synapse< TargetIdentifierPtrRport > >* >( c ) )
  {
    f( k->*member( ss_ptr_tag {} ), []( const auto& x ) { return x.*member( ssw_ptr_tag {} ); } );
    return true;
  }
  if ( auto* k = dynamic_cast< Connector< static_synapse< TargetIdentifierIndex > >* >( c ) )
  {
    f( k->*member( ss_index_tag {} ), []( const auto& x ) { return x.*member( ssw_index_tag {} ); } );
    return true;
  }
  const double w = static_cast< const CommonPropertiesHomW& >( cm.get_common_properties() ).get_weight();
  const auto common = [ w ]( const auto& ) { return w; };
  if ( auto* k = dynamic_cast< Connector< static_synapse_hom_w< TargetIdentifierPtrRport > >* >( c ) )
  {
    f( k->*member( sshw_ptr_tag {} ), common );
    return true;
  }
  if ( auto* k = dynamic_cast< Connector< static_synapse_hom_w< TargetIdentifierIndex > >* >( c ) )
  {
    f( k->*member( sshw_index_tag {} ), common );
    return true;
  }
  return false;
}

namespace
{
/* One static synapse model of the thread on its way to the device: its runs, and per group its rows' counts. */
struct StaticModel
{
  ConnectorBase* c;
  const ConnectorModel* cm;
  SynRows rows;
  Runs runs;
  std::vector< std::vector< uint64_t > > count;  // per group, per device row
  uint16_t delay_min = 65535, delay_max = 0;
  bool ok = true;
};

/* What the export of one thread's static synapses shares among its passes. */
struct StaticExport
{
  size_t tid;
  const std::vector< Group >& groups;
  const std::vector< std::pair< uint32_t, uint32_t > >& where;
  long min_delay, max_delay;
  uint32_t n_rows;
  std::vector< StaticModel > models;
  std::vector< std::vector< uint64_t > > row_ptr;  // per group
};

}

/*
 * Whether weights of this sign reach group g at rport: the model's
 * route_spike, asked once per group, port and sign (the second pass asks it
 * for every synapse, for the value it adds). The last answer is kept in front
 * of the map: a source's synapses nearly all share group, port and sign, and
 * pass 1 asks for each of them (a map lookup per synapse cost a third of it).
 */
namespace
{
struct RouteCache
{
  std::map< std::tuple< size_t, long, int >, char > known;
  size_t g = SIZE_MAX;
  long rport = 0;
  int sign = 0;
  bool ok = false;
};
}

static bool
routes( const StaticExport& x, RouteCache& c, size_t g, long rport, double w )
{
  const int sign = ( w > 0 ) - ( w < 0 );
  if ( g == c.g and rport == c.rport and sign == c.sign )
  {
    return c.ok;
  }
  auto at = c.known.find( std::make_tuple( g, rport, sign ) );
  if ( at == c.known.end() )
  {
    const Group& gr = x.groups[ g ];
    int ch = -1;
    double value = 0;
    const bool ok = gr.model->route_spike( w, rport, static_cast< uint32_t >( gr.K ), &ch, &value ) == 0 and ch >= 0
      and static_cast< uint32_t >( ch ) < nestcl_block_channels( gr.block );
    at = c.known.emplace( std::make_tuple( g, rport, sign ), ok ).first;
  }
  c.g = g;
  c.rport = rport;
  c.sign = sign;
  c.ok = at->second;
  return c.ok;
}

/*
 * Pass 1 over rows [a, b): each model's synapses counted per group and row,
 * their delays' range; a model with one that does not fit (its target not a
 * device neuron of the thread, a delay outside the ring, a receptor the
 * target's model refuses) is marked and stays with NEST.
 */
static void
count_part( StaticExport& x, uint32_t a, uint32_t b, std::vector< char >& bad, std::vector< uint16_t >& lo,
  std::vector< uint16_t >& hi )
{
  RouteCache known;
  for ( size_t mi = 0; mi < x.models.size(); ++mi )
  {
    StaticModel& m = x.models[ mi ];
    with_static_items( m.c, *m.cm,
      [ & ]( const auto& items, auto weight )
      {
        m.runs.in_rows( a, b,
          [ & ]( uint32_t k )
          {
            for ( size_t lcid = m.runs.starts[ k ]; lcid < m.runs.starts[ k + 1 ] and not bad[ mi ]; ++lcid )
            {
              const auto& conn = items[ lcid ];
              size_t tl = 0;
              const long d = conn.get_delay_steps();
              if ( not target_lid( conn, x.tid, tl ) or tl >= x.where.size() or x.where[ tl ].first == 0
                or d < x.min_delay or d > x.max_delay or d > 65535
                or not routes(
                  x, known, x.where[ tl ].first - 1, static_cast< long >( conn.get_rport() ), weight( conn ) ) )
              {
                bad[ mi ] = 1;
                return;
              }
              ++m.count[ x.where[ tl ].first - 1 ][ m.runs.row_of[ k ] ];
              lo[ mi ] = std::min( lo[ mi ], static_cast< uint16_t >( d ) );
              hi[ mi ] = std::max( hi[ mi ], static_cast< uint16_t >( d ) );
            }
          } );
      } );
  }
}

/* One chunk's staging per group: its synapses from position row_ptr[ r0 ] on. */
namespace
{
struct Staging
{
  StagingArray< uint32_t > target;
  StagingArray< double > value;
  StagingArray< uint16_t > delay;
};
}

/*
 * Pass 2 over rows [a, b) of the chunk from r0: every synapse of the models
 * that fit, at its place in its group's rows (models in order within a row,
 * each run's synapses in lcid order), into the staging.
 */
static void
fill_part( const StaticExport& x, uint32_t r0, uint32_t a, uint32_t b, std::vector< Staging >& st )
{
  const size_t G = x.groups.size();
  std::vector< std::vector< uint64_t > > cursor( G );
  for ( size_t g = 0; g < G; ++g )
  {
    cursor[ g ].assign( x.row_ptr[ g ].begin() + a, x.row_ptr[ g ].begin() + b );
  }
  for ( const StaticModel& m : x.models )
  {
    if ( not m.ok )
    {
      continue;
    }
    with_static_items( m.c, *m.cm,
      [ & ]( const auto& items, auto weight )
      {
        m.runs.in_rows( a, b,
          [ & ]( uint32_t k )
          {
            const uint32_t row = m.runs.row_of[ k ];
            for ( size_t lcid = m.runs.starts[ k ]; lcid < m.runs.starts[ k + 1 ]; ++lcid )
            {
              const auto& conn = items[ lcid ];
              size_t tl = 0;
              target_lid( conn, x.tid, tl );
              const size_t g = x.where[ tl ].first - 1;
              const Group& gr = x.groups[ g ];
              int ch = -1;
              double value = 0;
              if ( gr.model->route_spike( weight( conn ), static_cast< long >( conn.get_rport() ),
                     static_cast< uint32_t >( gr.K ), &ch, &value )
                  != 0
                or ch < 0 or static_cast< uint32_t >( ch ) >= nestcl_block_channels( gr.block ) )
              {
                throw Refused { m.rows.syn_id };  // a weight that pass 1's check by sign did not see
              }
              const uint32_t code = ( static_cast< uint32_t >( ch ) << 24 ) | x.where[ tl ].second;
              const long d = conn.get_delay_steps();
              const uint64_t at = cursor[ g ][ row - a ]++ - x.row_ptr[ g ][ r0 ];
              st[ g ].target[ at ] = code;
              st[ g ].value[ at ] = value;
              st[ g ].delay[ at ] = static_cast< uint16_t >( d );
            }
          } );
      } );
  }
}

/* Each run's lead flag (SynRows): the first run, over the models in order, of each of the n rows. */
static void
mark_leads( std::vector< SynRows >& models, uint32_t n )
{
  std::vector< char > taken( n, 0 );
  for ( SynRows& sr : models )
  {
    sr.lead.assign( sr.row_of.size(), 0 );
    for ( size_t k = 0; k < sr.row_of.size(); ++k )
    {
      sr.lead[ k ] = not taken[ sr.row_of[ k ] ];
      taken[ sr.row_of[ k ] ] = 1;
    }
  }
}

/* The thread's static connectors that may go to the device, with their runs, into x.models; the rows they need. */
static uint32_t
static_models( StaticExport& x, const LoopIds& ids, const std::set< synindex >& refused )
{
  std::vector< ConnectorBase* >& conns = thread_connectors( x.tid );
  const std::vector< ConnectorModel* >& cm = kernel().model_manager.get_connection_models( x.tid );
  uint32_t rows = 0;
  for ( size_t syn_id = 0; syn_id < conns.size(); ++syn_id )
  {
    ConnectorBase* c = conns[ syn_id ];
    if ( not c or c->size() == 0 or cm[ syn_id ]->get_common_properties().get_weight_recorder()
      or refused.count( static_cast< synindex >( syn_id ) ) )
    {
      continue;
    }
    StaticModel m { c, cm[ syn_id ], SynRows(), Runs(), {} };
    if ( not with_static_items(
           c, *cm[ syn_id ], [ & ]( const auto& items, auto ) { m.runs = runs_of( syn_id, items, rows, ids ); } ) )
    {
      continue;
    }
    m.rows.syn_id = static_cast< synindex >( syn_id );
    m.rows.base = rows;
    m.rows.starts.assign( m.runs.starts.begin(), m.runs.starts.end() - 1 );
    m.rows.row_of = m.runs.row_of;
    rows += static_cast< uint32_t >( m.runs.size() );
    x.models.push_back( std::move( m ) );
  }
  return ids.of.empty() ? rows : ids.n;
}

/* Pass 1 on every thread: counts per group and row, delays, the models that fit. */
static void
count_all( StaticExport& x )
{
  const size_t M = x.models.size();
  for ( StaticModel& m : x.models )
  {
    m.runs.order();
    m.count.assign( x.groups.size(), std::vector< uint64_t >( x.n_rows, 0 ) );
  }
  std::vector< char > bad( M, 0 );
  std::vector< uint16_t > lo( M, 65535 ), hi( M, 0 );
  for_row_parts( 0, x.n_rows,
    [ & ]( uint32_t a, uint32_t b )
    {
      std::vector< char > my_bad( M, 0 );
      std::vector< uint16_t > my_lo( M, 65535 ), my_hi( M, 0 );
      count_part( x, a, b, my_bad, my_lo, my_hi );
#pragma omp critical( nestcl_static_count )
      for ( size_t mi = 0; mi < M; ++mi )
      {
        bad[ mi ] = bad[ mi ] or my_bad[ mi ];
        lo[ mi ] = std::min( lo[ mi ], my_lo[ mi ] );
        hi[ mi ] = std::max( hi[ mi ], my_hi[ mi ] );
      }
    } );
  for ( size_t mi = 0; mi < M; ++mi )
  {
    x.models[ mi ].ok = not bad[ mi ];
    x.models[ mi ].delay_min = lo[ mi ];
    x.models[ mi ].delay_max = hi[ mi ];
  }
}

/* The rows' pointers per group over the models that fit; each group's delays' range. */
static void
point_rows( StaticExport& x, std::vector< uint16_t >& lo, std::vector< uint16_t >& hi )
{
  const size_t G = x.groups.size();
  x.row_ptr.assign( G, std::vector< uint64_t >() );
  lo.assign( G, 65535 );
  hi.assign( G, 0 );
  for ( size_t g = 0; g < G; ++g )
  {
    std::vector< uint64_t > count( x.n_rows, 0 );
    for ( const StaticModel& m : x.models )
    {
      for ( uint32_t r = 0; m.ok and r < x.n_rows; ++r )
      {
        count[ r ] += m.count[ g ][ r ];
      }
      if ( m.ok )
      {
        lo[ g ] = std::min( lo[ g ], m.delay_min );
        hi[ g ] = std::max( hi[ g ], m.delay_max );
      }
    }
    x.row_ptr[ g ] = row_pointers( count );
    if ( lo[ g ] > hi[ g ] )
    {
      lo[ g ] = hi[ g ] = static_cast< uint16_t >( x.min_delay );  // no synapses
    }
  }
}

/* Pass 2, chunk by chunk of rows: staged on every thread, then written to each group's block. */
static void
write_chunks( StaticExport& x )
{
  const size_t G = x.groups.size();
  std::vector< Staging > st( G );  // one chunk's, reused: it grows to the largest chunk (CHUNK_BYTES) once
  for ( const auto& [ r0, r1 ] : row_chunks( x.row_ptr, x.n_rows, 14 ) )
  {
    {
      Part grow( "staging" );  // once per export: the chunk's staging grows to its largest, then is reused
      for ( size_t g = 0; g < G; ++g )
      {
        const uint64_t n = x.row_ptr[ g ][ r1 ] - x.row_ptr[ g ][ r0 ];
        st[ g ].target.grow( n );
        st[ g ].value.grow( n );
        st[ g ].delay.grow( n );
      }
    }
    {
      Part p( "walk" );
      const uint32_t c0 = r0, c1 = r1;
      for_row_parts( c0, c1, [ & ]( uint32_t a, uint32_t b ) { fill_part( x, c0, a, b, st ); } );
    }
    Part p( "upload" );
    for ( size_t g = 0; g < G; ++g )
    {
      check( nestcl_block_synapses_fill( x.groups[ g ].block, x.row_ptr[ g ][ r0 ],
               x.row_ptr[ g ][ r1 ] - x.row_ptr[ g ][ r0 ], st[ g ].target.data(), st[ g ].value.data(),
               st[ g ].delay.data() ),
        "placing the synapses of " + std::string( x.groups[ g ].name ) + " on the device" );
    }
  }
}

/*
 * Thread tid's static synapses onto its device neurons become device CSR
 * rows: for every static synapse model whose connections on the thread all
 * target device neurons (with a receptor the model takes, a delay in the ring
 * and no weight_recorder), each source's run of connections (one row, or its
 * loop id's row shared with its other static models) is read from NEST's
 * connector on NEST's threads, each thread its own rows: counted first, then
 * written chunk by chunk into the blocks, without a host copy of all of them.
 */
static void
export_static( size_t tid, std::vector< Group >& groups, const std::vector< std::pair< uint32_t, uint32_t > >& where,
  const LoopIds& ids, const std::set< synindex >& refused, std::vector< SynRows >& out, long& n_syn )
{
  out.clear();
  n_syn = 0;
  StaticExport x { tid, groups, where, kernel().connection_manager.get_min_delay(),
    kernel().connection_manager.get_max_delay(), 0, {}, {} };
  std::vector< uint16_t > lo, hi;
  {
    Part p( "rows" );
    x.n_rows = static_models( x, ids, refused );
    if ( x.models.empty() or x.n_rows == 0 )
    {
      return;
    }
  }
  {
    Part p( "count" );
    count_all( x );
    point_rows( x, lo, hi );
  }
  for ( StaticModel& m : x.models )
  {
    if ( m.ok )
    {
      out.push_back( m.rows );
    }
  }
  mark_leads( out, ids.of.empty() ? x.n_rows : ids.n );
  for ( size_t g = 0; g < groups.size(); ++g )
  {
    check( nestcl_block_synapses_begin( groups[ g ].block, x.n_rows, x.row_ptr[ g ].data(), lo[ g ], hi[ g ] ),
      "placing the synapses of " + std::string( groups[ g ].name ) + " on the device" );
    n_syn += static_cast< long >( x.row_ptr[ g ].back() );
  }
  write_chunks( x );
  for ( size_t g = 0; g < groups.size(); ++g )
  {
    check( nestcl_block_synapses_end( groups[ g ].block ),
      "placing the synapses of " + std::string( groups[ g ].name ) + " on the device" );
  }
}

void
export_synapses( size_t tid, std::vector< Group >& groups, const std::vector< std::pair< uint32_t, uint32_t > >& where,
  const LoopIds& ids, std::vector< SynRows >& out, long& n_syn )
{
  std::set< synindex > refused;  // models whose second pass found a synapse that does not fit: they stay with NEST
  while ( true )
  {
    try
    {
      export_static( tid, groups, where, ids, refused, out, n_syn );
      return;
    }
    catch ( const Refused& r )
    {
      refused.insert( r.syn_id );
    }
  }
}

/*
 * nestcl_device_poisson: each poisson_generator replica of thread tid that
 * runs unchanged for the whole simulation (origin 0, start 0, stop infinite)
 * and whose connections on the thread all reach device neurons is drawn on the
 * device instead; NEST's loop then skips the replica. Returns how many moved.
 */
long
export_generators( size_t tid, std::vector< Group >& groups,
  const std::vector< std::pair< uint32_t, uint32_t > >& where, std::vector< char >& skip )
{
  long moved = 0;
  const long max_delay = kernel().connection_manager.get_max_delay();
  const SparseNodeArray& local = kernel().node_manager.get_local_nodes( tid );
  ExportEvent ev;
  for ( auto it = local.begin(); it != local.end(); ++it )
  {
    Node* node = it->get_node();
    if ( node->has_proxies() or node->get_name() != "poisson_generator" or node->is_frozen() )
    {
      continue;
    }
    Dictionary st;
    node->get_status( st );
    const double rate = st.get< double >( "rate" );
    if ( st.get< double >( "origin" ) != 0.0 or st.get< double >( "start" ) != 0.0
      or st.get< double >( "stop" ) < Time::pos_inf().get_ms()
      or ( st.known( "stimulus_source" ) and not st.get< std::string >( "stimulus_source" ).empty() ) )
    {
      continue;  // a stimulation window: NEST's own generator keeps it exact
    }
    ev.hits.clear();
    kernel().connection_manager.send_from_device( tid, node->get_local_device_id(), ev );
    std::vector< std::vector< uint32_t > > target( groups.size() ), salt( groups.size() );
    std::vector< std::vector< double > > value( groups.size() );
    std::vector< std::vector< uint16_t > > delay( groups.size() );
    std::map< size_t, uint32_t > seen;  // target lid -> connections so far (multapses draw apart)
    bool fits = true;
    for ( const ExportEvent::Hit& h : ev.hits )
    {
      size_t g = 0;
      uint32_t code = 0;
      double v = 0;
      // A generator's delay may be any step count the ring holds (from 1 on; NEST's min_delay counts it too).
      if ( not place( h, tid, groups, where, 1, max_delay, g, code, v ) )
      {
        fits = false;
        break;
      }
      const uint32_t dup = seen[ h.target->get_thread_lid() ]++;
      target[ g ].push_back( code );
      value[ g ].push_back( v );
      delay[ g ].push_back( static_cast< uint16_t >( h.delay ) );
      salt[ g ].push_back( static_cast< uint32_t >( node->get_node_id() + 7919u * dup ) & 0xffffffu );
    }
    if ( not fits or ev.hits.empty() )
    {
      continue;
    }
    for ( size_t g = 0; g < groups.size(); ++g )
    {
      check( nestcl_block_add_poisson( groups[ g ].block, rate, static_cast< uint32_t >( target[ g ].size() ),
               target[ g ].data(), value[ g ].data(), delay[ g ].data(), salt[ g ].data() ),
        "placing poisson_generator " + std::to_string( node->get_node_id() ) + " on the device" );
    }
    if ( node->get_thread_lid() < skip.size() )
    {
      skip[ node->get_thread_lid() ] = 1;
    }
    ++moved;
  }
  return moved;
}
#endif
}
