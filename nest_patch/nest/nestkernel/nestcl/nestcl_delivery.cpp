/*
 * The spikes a stream VP receives (EventDeliveryManager::deliver_events),
 * delivered through the synapses that prepare() exported to the device
 * (nestcl_synapse_export.cpp, nestcl_plastic_export.cpp): each spike that
 * starts a source's run of device connections becomes one row for the
 * device; a spike of a synapse model that stayed on the CPU goes through
 * NEST's connectors, as NEST's own deliver_events_ would send it.
 */
#include "nestcl/nestcl_manager.h"
#include "nestcl/nestcl_manager_impl.h"

#include <algorithm>

#include "connection_manager_impl.h"
#include "connector_model.h"
#include "event_delivery_manager_impl.h"
#include "exceptions.h"
#include "kernel_manager.h"

namespace nest
{
#ifdef HAVE_NESTCL
/* One received spike for thread tid (lcid resolved): a device row, static or STDP, or NEST's connectors. */
template< typename M >
static void
route_spike( M& m, size_t tid, const SpikeData& sd, size_t lcid, const Time& clock, long min_delay,
  const std::vector< ConnectorModel* >& cm, SpikeEvent& se )
{
  const synindex syn_id = sd.get_syn_id();
  const SynRows* sr = nullptr;
  for ( const SynRows& x : m.syn_rows[ tid ] )
  {
    sr = x.syn_id == syn_id ? &x : sr;
  }
  size_t pi = m.plastic[ tid ].size();
  for ( size_t q = 0; q < m.plastic[ tid ].size(); ++q )
  {
    pi = m.plastic[ tid ][ q ].syn_id == syn_id ? q : pi;
  }
  if ( pi < m.plastic[ tid ].size() )
  {
    if ( not sd.is_flush_event() )
    {
      const std::vector< size_t >& starts = m.plastic[ tid ][ pi ].starts;
      auto at = std::lower_bound( starts.begin(), starts.end(), lcid );
      if ( at == starts.end() or *at != lcid )
      {
        throw KernelException( "nestcl: a spike for lcid " + std::to_string( lcid )
          + ", which does not start a source's STDP connections on the device" );
      }
      m.prows[ tid ][ pi ].push_back( m.plastic[ tid ][ pi ].row_of[ at - starts.begin() ] );
      m.plags[ tid ][ pi ].push_back( sd.get_lag() );
    }
  }
  else if ( sr )
  {
    if ( not sd.is_flush_event() )  // static synapses ignore flush events, as their connectors do
    {
      auto at = std::lower_bound( sr->starts.begin(), sr->starts.end(), lcid );
      if ( at == sr->starts.end() or *at != lcid )
      {
        throw KernelException( "nestcl: a spike for lcid " + std::to_string( lcid )
          + ", which does not start a source's connections on the device" );
      }
      if ( sr->lead[ at - sr->starts.begin() ] )  // the row's other runs are in it: it goes once
      {
        m.rows[ tid ].push_back( sr->row_of[ at - sr->starts.begin() ] );
        m.lags[ tid ].push_back( sd.get_lag() );
      }
    }
  }
  else
  {
    // As NEST's deliver_events_: the synapse model stays on the CPU.
    se.set_stamp( clock + Time::step( sd.get_lag() + 1 - min_delay ) );
    se.set_offset( sd.get_offset() );
    se.set_flush_event_flag( sd.is_flush_event() );
    se.set_sender_node_id_info( tid, syn_id, lcid );
    kernel().connection_manager.send( tid, syn_id, lcid, cm, se );
  }
}

/* Every spike of the receive buffer that is for thread tid, rank by rank, as NEST reads the buffer. */
template< typename M >
static void
receive( M& m, size_t tid, const std::vector< SpikeData >& recv_buffer, const Time& clock, long min_delay )
{
  const size_t per_rank = kernel().mpi_manager.get_send_recv_count_spike_data_per_rank();
  const std::vector< ConnectorModel* >& cm = kernel().model_manager.get_connection_models( tid );
  const bool compressed = kernel().connection_manager.use_compressed_spikes();
  SpikeEvent se;
  for ( size_t rank = 0; rank < kernel().mpi_manager.get_num_processes(); ++rank )
  {
    if ( recv_buffer[ rank * per_rank ].is_invalid_marker() )
    {
      continue;
    }
    size_t received = 0;  // as NEST counts them: through the entry that carries the end marker
    for ( size_t k = 0; k < per_rank and received == 0; ++k )
    {
      received = recv_buffer[ rank * per_rank + k ].is_end_marker() ? k + 1 : 0;
    }
    for ( size_t k = 0; k < received; ++k )
    {
      const SpikeData& sd = recv_buffer[ rank * per_rank + k ];
      const synindex syn_id = sd.get_syn_id();
      size_t lcid = sd.get_lcid();
      if ( compressed )
      {
        lcid = kernel().connection_manager.get_compressed_spike_data( syn_id, lcid )[ tid ].get_lcid();
      }
      if ( ( compressed and lcid != invalid_lcid ) or ( not compressed and sd.get_tid() == tid ) )
      {
        route_spike( m, tid, sd, lcid, clock, min_delay, cm, se );
      }
    }
  }
}

/*
 * The static rows collected for the threads of one shared set (the device
 * loop's, whose rows are loop ids): a source's row holds its synapses on every
 * one of them, so each (row, lag) goes once, into the first thread's list.
 */
template< typename M >
static void
merge_rows( M& m, const std::vector< size_t >& threads )
{
  std::vector< std::pair< uint32_t, uint32_t > > all;
  for ( const size_t t : threads )
  {
    for ( size_t k = 0; k < m.rows[ t ].size(); ++k )
    {
      all.emplace_back( m.lags[ t ][ k ], m.rows[ t ][ k ] );
    }
    m.rows[ t ].clear();
    m.lags[ t ].clear();
  }
  std::sort( all.begin(), all.end() );
  all.erase( std::unique( all.begin(), all.end() ), all.end() );
  for ( const auto& [ lag, row ] : all )
  {
    m.rows[ threads.front() ].push_back( row );
    m.lags[ threads.front() ].push_back( lag );
  }
}

/* The rows collected for thread tid, to every block: static ones, then each STDP model's. */
template< typename M >
static void
deliver_rows( M& m, size_t tid, long from_step )
{
  std::vector< uint32_t >& rows = m.rows[ tid ];
  std::vector< uint32_t >& lags = m.lags[ tid ];
  if ( m.set_of( tid ) )
  {
    // The thread's set delivers the rows into every block at once (one list, one launch).
    check( nestcl_block_set_deliver(
             m.set_of( tid ), from_step, rows.data(), lags.data(), static_cast< uint32_t >( rows.size() ) ),
      "delivering spikes to the stream VP's blocks" );
  }
  else
  {
    for ( Group& g : m.groups[ tid ] )
    {
      check(
        nestcl_block_deliver( g.block, from_step, rows.data(), lags.data(), static_cast< uint32_t >( rows.size() ) ),
        "delivering spikes to " + std::string( g.name ) );
    }
  }
  for ( size_t q = 0; q < m.plastic[ tid ].size(); ++q )
  {
    std::vector< uint32_t >& pr = m.prows[ tid ][ q ];
    std::vector< uint32_t >& pl = m.plags[ tid ][ q ];
    for ( size_t g = 0; g < m.groups[ tid ].size(); ++g )
    {
      const int set = m.plastic[ tid ][ q ].set[ g ];
      if ( set >= 0 )
      {
        check( nestcl_block_deliver_plastic( m.groups[ tid ][ g ].block, set, from_step, pr.data(), pl.data(),
                 static_cast< uint32_t >( pr.size() ) ),
          "delivering spikes through STDP synapses to " + std::string( m.groups[ tid ][ g ].name ) );
      }
    }
    pr.clear();
    pl.clear();
  }
}
#endif

bool
NestclManager::deliver( size_t tid, const std::vector< SpikeData >& recv_buffer )
{
#ifdef HAVE_NESTCL
  Impl& m = *impl_;
  // A shared set's threads (the device loop's, called one after another) are delivered by its owner, at once.
  const bool shared = std::find( m.set_threads.begin(), m.set_threads.end(), tid ) != m.set_threads.end();
  if ( shared and tid != m.set_threads.front() )
  {
    return true;
  }
  const std::vector< size_t > threads = shared ? m.set_threads : std::vector< size_t > { tid };
  if ( not shared and ( tid >= m.syn_rows.size() or ( m.syn_rows[ tid ].empty() and m.plastic[ tid ].empty() ) ) )
  {
    return false;
  }
  if ( kernel().simulation_manager.get_from_step() > 0 )
  {
    return true;  // NEST delivers only at the beginning of a slice
  }
  const double t0 = now_s();
  const long min_delay = kernel().connection_manager.get_min_delay();
  const Time clock = kernel().simulation_manager.get_clock();
  for ( const size_t t : threads )
  {
    m.rows[ t ].clear();
    m.lags[ t ].clear();
    receive( m, t, recv_buffer, clock, min_delay );
  }
  if ( shared )
  {
    merge_rows( m, threads );
  }
  for ( const size_t t : threads )
  {
    deliver_rows( m, t, clock.get_steps() - min_delay );
  }
  m.t_deliver[ tid ] += now_s() - t0;
  return true;
#else
  (void) tid;
  (void) recv_buffer;
  return false;
#endif
}
}
