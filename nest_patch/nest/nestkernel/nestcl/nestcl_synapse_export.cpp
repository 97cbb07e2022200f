/*
 * Static synapses and poisson_generators onto a stream thread's device
 * neurons, exported from NEST's connectors in prepare(): each source's run of
 * connections becomes one device CSR row (delivered by nestcl_delivery.cpp),
 * and a generator whose connections all reach device neurons is drawn on the
 * device. Whatever does not fit stays with NEST's connectors.
 */
#include "nestcl/nestcl_manager.h"
#include "nestcl/nestcl_manager_impl.h"

#include <algorithm>
#include <map>

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

namespace
{
/* The CSR of one group under construction: rows over all of the thread's device rows. */
struct Csr
{
  std::vector< uint64_t > row_ptr { 0 };
  std::vector< uint32_t > target;
  std::vector< double > value;
  std::vector< uint16_t > delay;
};
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

void
csr_by_row( const std::vector< uint64_t >& row_ptr, const std::vector< uint32_t >& row_of, uint32_t n_out,
  std::vector< uint64_t >& out_ptr, std::vector< size_t >& order )
{
  out_ptr.assign( static_cast< size_t >( n_out ) + 1, 0 );
  for ( size_t r = 0; r + 1 < row_ptr.size(); ++r )
  {
    out_ptr[ row_of[ r ] + 1 ] += row_ptr[ r + 1 ] - row_ptr[ r ];
  }
  for ( size_t r = 0; r < n_out; ++r )
  {
    out_ptr[ r + 1 ] += out_ptr[ r ];
  }
  std::vector< uint64_t > at( out_ptr.begin(), out_ptr.end() - 1 );
  order.assign( row_ptr.back(), 0 );
  for ( size_t r = 0; r + 1 < row_ptr.size(); ++r )
  {
    for ( uint64_t k = row_ptr[ r ]; k < row_ptr[ r + 1 ]; ++k )
    {
      order[ at[ row_of[ r ] ]++ ] = k;
    }
  }
}

/* Each run's device row: base + k, or its source's loop id (ids not empty). */
static std::vector< uint32_t >
rows_of_runs( size_t syn_id, const std::vector< size_t >& starts, uint32_t base, const LoopIds& ids )
{
  std::vector< uint32_t > row_of( starts.size() );
  for ( size_t k = 0; k < starts.size(); ++k )
  {
    if ( ids.of.empty() )
    {
      row_of[ k ] = base + static_cast< uint32_t >( k );
      continue;
    }
    auto at = ids.of.find( std::make_pair( syn_id, starts[ k ] ) );
    if ( at == ids.of.end() )
    {
      throw KernelException( "nestcl: the source of the connections of synapse model " + std::to_string( syn_id )
        + " from lcid " + std::to_string( starts[ k ] ) + " is not a neuron of the stream VP" );
    }
    row_of[ k ] = at->second;
  }
  return row_of;
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

/* A group's CSR whose rows are runs (run r in row_of[r]) as one over ids.n loop ids. */
static void
to_loop_rows( Csr& c, const std::vector< uint32_t >& row_of, uint32_t n )
{
  std::vector< uint64_t > ptr;
  std::vector< size_t > order;
  csr_by_row( c.row_ptr, row_of, n, ptr, order );
  Csr out;
  out.row_ptr = ptr;
  for ( const size_t k : order )
  {
    out.target.push_back( c.target[ k ] );
    out.value.push_back( c.value[ k ] );
    out.delay.push_back( c.delay[ k ] );
  }
  c = std::move( out );
}

/* The rows of from after those of to. */
static void
append_rows( Csr& to, const Csr& from )
{
  const uint64_t off = to.target.size();
  for ( size_t k = 1; k < from.row_ptr.size(); ++k )
  {
    to.row_ptr.push_back( off + from.row_ptr[ k ] );
  }
  to.target.insert( to.target.end(), from.target.begin(), from.target.end() );
  to.value.insert( to.value.end(), from.value.begin(), from.value.end() );
  to.delay.insert( to.delay.end(), from.delay.begin(), from.delay.end() );
}

/*
 * The first lcid of each source's run of connections in connector syn_id of
 * thread tid (size connections): from the loop ids where the device loop may
 * run, else from NEST's source table (its sources are sorted, one run per
 * source), else empty (walk_runs then finds them one by one).
 */
static std::vector< size_t >
run_starts( size_t tid, size_t syn_id, size_t size, const LoopIds& ids )
{
  std::vector< size_t > starts;
  if ( not ids.of.empty() )
  {
    for ( auto at = ids.of.lower_bound( std::make_pair( syn_id, size_t( 0 ) ) );
          at != ids.of.end() and at->first.first == syn_id; ++at )
    {
      starts.push_back( at->first.second );
    }
  }
  else if ( kernel().connection_manager.get_keep_source_table() )
  {
    size_t last = 0;
    for ( size_t lcid = 0; lcid < size; ++lcid )
    {
      const size_t src = kernel().connection_manager.get_source_node_id( tid, static_cast< synindex >( syn_id ), lcid );
      if ( lcid == 0 or src != last )
      {
        starts.push_back( lcid );
      }
      last = src;
    }
  }
  return starts;
}

/*
 * Runs [k0, k1) of starts walked by the connector's own send() with an
 * ExportEvent into part (per group, one row per run); false when a
 * connection does not fit the device or a run does not end where the next
 * begins.
 */
static bool
walk_chunk( ConnectorBase* c, size_t tid, const std::vector< ConnectorModel* >& cm, const std::vector< size_t >& starts,
  size_t k0, size_t k1, const std::vector< Group >& groups, const std::vector< std::pair< uint32_t, uint32_t > >& where,
  long min_delay, long max_delay, std::vector< Csr >& part, long& count )
{
  ExportEvent ev;
  for ( size_t k = k0; k < k1; ++k )
  {
    ev.hits.clear();
    ev.set_port( starts[ k ] );
    c->send( tid, starts[ k ], cm, ev );
    const size_t next = ev.get_port() + 1;  // send() sets the port of every connection of the run
    if ( next != ( k + 1 < starts.size() ? starts[ k + 1 ] : c->size() ) )
    {
      return false;
    }
    for ( const ExportEvent::Hit& h : ev.hits )
    {
      size_t g = 0;
      uint32_t code = 0;
      double value = 0;
      if ( not place( h, tid, groups, where, min_delay, max_delay, g, code, value ) )
      {
        return false;
      }
      Csr& r = part[ g ];
      r.target.push_back( code );
      r.value.push_back( value );
      r.delay.push_back( static_cast< uint16_t >( h.delay ) );
    }
    for ( Csr& r : part )
    {
      r.row_ptr.push_back( r.target.size() );
    }
    count += static_cast< long >( ev.hits.size() );
  }
  return true;
}

/*
 * Every run of connector c as out's rows (per group), in the connector's
 * order; starts found one by one when not given. With the runs known, chunks
 * of them are walked on NEST's threads (each builds its own part) and joined
 * in order, so the rows are the same as one thread's. False: the synapse
 * model stays with NEST.
 */
static bool
walk_runs( ConnectorBase* c, size_t tid, const std::vector< ConnectorModel* >& cm, std::vector< size_t >& starts,
  const std::vector< Group >& groups, const std::vector< std::pair< uint32_t, uint32_t > >& where, long min_delay,
  long max_delay, std::vector< Csr >& out, long& count )
{
  out.assign( groups.size(), Csr() );
  if ( starts.empty() )
  {
    ExportEvent ev;
    for ( size_t lcid = 0; lcid < c->size(); lcid = ev.get_port() + 1 )
    {
      starts.push_back( lcid );
      ev.set_port( lcid );
      c->send( tid, lcid, cm, ev );
    }
  }
  const size_t n_chunks = std::min( starts.size(), 4 * kernel().vp_manager.get_num_threads() );
  std::vector< std::vector< Csr > > parts( n_chunks, std::vector< Csr >( groups.size() ) );
  std::vector< long > counts( n_chunks, 0 );
  std::vector< char > ok( n_chunks, 1 );
#pragma omp parallel for schedule( dynamic, 1 )
  for ( size_t q = 0; q < n_chunks; ++q )
  {
    const size_t k0 = starts.size() * q / n_chunks, k1 = starts.size() * ( q + 1 ) / n_chunks;
    ok[ q ] = walk_chunk( c, tid, cm, starts, k0, k1, groups, where, min_delay, max_delay, parts[ q ], counts[ q ] );
  }
  for ( size_t q = 0; q < n_chunks; ++q )
  {
    if ( not ok[ q ] )
    {
      return false;
    }
    for ( size_t g = 0; g < groups.size(); ++g )
    {
      append_rows( out[ g ], parts[ q ][ g ] );
    }
    count += counts[ q ];
  }
  return true;
}

/*
 * Thread tid's static synapses onto its device neurons become device CSR rows:
 * for every synapse model whose connections on the thread all target device
 * neurons, each source's run of lcids (one row) is walked by the connector's
 * own send() with an ExportEvent. A model with another target, a receptor the
 * model refuses, a delay outside the ring or a weight_recorder stays with NEST.
 */
void
export_synapses( size_t tid, std::vector< Group >& groups, const std::vector< std::pair< uint32_t, uint32_t > >& where,
  const LoopIds& ids, std::vector< SynRows >& out, long& n_syn )
{
  std::vector< uint32_t > row_of;  // per run over every exported model
  out.clear();
  n_syn = 0;
  std::vector< ConnectorBase* >& conns = thread_connectors( tid );
  const std::vector< ConnectorModel* >& cm = kernel().model_manager.get_connection_models( tid );
  const long min_delay = kernel().connection_manager.get_min_delay();
  const long max_delay = kernel().connection_manager.get_max_delay();
  std::vector< Csr > csr( groups.size() );
  uint32_t rows = 0;
  for ( size_t syn_id = 0; syn_id < conns.size(); ++syn_id )
  {
    ConnectorBase* c = conns[ syn_id ];
    if ( not c or c->size() == 0 or not is_static_connector( c )
      or cm[ syn_id ]->get_common_properties().get_weight_recorder() )
    {
      continue;
    }
    SynRows sr;
    sr.syn_id = static_cast< synindex >( syn_id );
    sr.base = rows;
    long count = 0;
    // The runs of lcids, then their synapses: chunks of runs on NEST's threads where the runs are known
    // before the walk, each source's run as one row, in the connector's order.
    std::vector< Csr > mine;
    {
      Part p( "walk" );
      sr.starts = run_starts( tid, syn_id, c->size(), ids );
      if ( not walk_runs( c, tid, cm, sr.starts, groups, where, min_delay, max_delay, mine, count ) )
      {
        continue;
      }
    }
    Part p( "rows" );
    for ( size_t g = 0; g < groups.size(); ++g )
    {
      append_rows( csr[ g ], mine[ g ] );
    }
    sr.row_of = rows_of_runs( syn_id, sr.starts, rows, ids );
    row_of.insert( row_of.end(), sr.row_of.begin(), sr.row_of.end() );
    rows += static_cast< uint32_t >( sr.starts.size() );
    n_syn += count;
    out.push_back( std::move( sr ) );
  }
  {
    Part p( "rows" );
    mark_leads( out, ids.of.empty() ? rows : ids.n );
    if ( rows and not ids.of.empty() )
    {
      for ( Csr& c : csr )
      {
        to_loop_rows( c, row_of, ids.n );  // several models' runs of one source in its one row
      }
      rows = ids.n;
    }
  }
  Part p( "upload" );
  for ( size_t g = 0; g < groups.size(); ++g )
  {
    if ( rows )
    {
      check( nestcl_block_set_synapses( groups[ g ].block, rows, csr[ g ].row_ptr.data(), csr[ g ].target.data(),
               csr[ g ].value.data(), csr[ g ].delay.data() ),
        "placing the synapses of " + std::string( groups[ g ].name ) + " on the device" );
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
