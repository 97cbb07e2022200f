/*
 * A whole Run on the device (docs/architecture.md, "Under NEST: nest_patch"):
 * when one stream VP holds every neuron of a one-process network and
 * everything its slices need is on the device (its synapses, its
 * poisson_generators drawn there, spike recorders that take the spikes
 * afterwards), NEST's slice loop would only wait for the device, exchange
 * nothing that the device does not already have, and deliver nothing but on
 * the device. Then SimulationManager::update_ hands the Run to
 * run_device_loop(), which runs its whole slices in the device loop of the
 * thread's block set (nestcl/block_set.h), the host waiting once per
 * nestcl_sync_interval slices, and hands NEST at each drain what the slice
 * path would have handed it slice by slice: every spike through the model's
 * glue with NEST's clock at its slice (the node's spike time and history,
 * NEST's spike counter, every spike recorder and recording backend, in NEST's
 * order), and at the end the last slice's spikes in NEST's spike register
 * and exchange, for the next slice to deliver as NEST would. A slice that
 * begins or ends inside min_delay (a Run that is not a multiple of it) runs
 * slice by slice, by the same code as NEST's loop runs it. Anything that does
 * not fit keeps NEST's own slice loop; nestcl_simulate_path and
 * nestcl_simulate_path_reason say which ran and why.
 */
#include "nestcl/nestcl_manager.h"
#include "nestcl/nestcl_manager_impl.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "connection_manager_impl.h"
#include "event_delivery_manager.h"
#include "exceptions.h"
#include "kernel_manager.h"
#include "simulation_manager.h"

namespace nest
{
#ifdef HAVE_NESTCL
/* EventDeliveryManager::reset_spike_register_ is private: an explicit instantiation may name it. */
struct reset_register_tag
{
};
auto member( reset_register_tag );
template struct steal< reset_register_tag, &EventDeliveryManager::reset_spike_register_ >;

/* The threads that hold neurons, all of them stream VPs, or why not (empty when they are). */
static std::string
holders( const std::vector< std::vector< Group > >& groups, size_t first_stream, std::vector< size_t >& threads )
{
  const size_t T = kernel().vp_manager.get_num_threads();
  threads.clear();
  for ( size_t t = 0; t < T; ++t )
  {
    const SparseNodeArray& local = kernel().node_manager.get_local_nodes( t );
    bool neurons = false;
    for ( auto it = local.begin(); it != local.end() and not neurons; ++it )
    {
      neurons = it->get_node()->has_proxies() and not it->get_node()->is_frozen();
    }
    if ( neurons and ( t < first_stream or t >= groups.size() or groups[ t ].empty() ) )
    {
      return "neurons are on CPU thread " + std::to_string( t ) + ", not a stream VP";
    }
    if ( neurons )
    {
      threads.push_back( t );
    }
  }
  return threads.empty() ? "there are no neurons" : "";
}

/* Why NEST's own loop must run this network's slices (empty: it need not), before the export. */
std::string
NestclManager::Impl::loop_problem_before( size_t first_stream, std::vector< size_t >& threads )
{
  Impl& m = *this;
  if ( not m.device_loop )
  {
    return "nestcl_device_loop is False";
  }
  if ( kernel().mpi_manager.get_num_processes() != 1 )
  {
    return "the network runs on " + std::to_string( kernel().mpi_manager.get_num_processes() ) + " MPI processes";
  }
  std::string why = holders( m.groups, first_stream, threads );
  for ( size_t k = 0; why.empty() and k < threads.size(); ++k )
  {
    for ( const Step& step : m.plan[ threads[ k ] ] )
    {
      if ( step.group < 0 )
      {
        return "a " + step.node->get_name() + " neuron runs on the host";
      }
    }
    if ( m.c_loop[ threads[ k ] ] )
    {
      return "a stream VP runs its neurons' C loops (nestcl_device_min_work)";
    }
  }
  if ( not why.empty() )
  {
    return why;
  }
  if ( kernel().event_delivery_manager.get_off_grid_communication() )
  {
    return "spikes are sent off the grid (precise spike times)";
  }
  if ( kernel().connection_manager.secondary_connections_exist() )
  {
    return "the network has gap junctions or other secondary connections";
  }
  if ( kernel().sp_manager.is_structural_plasticity_enabled() )
  {
    return "structural plasticity is on";
  }
  return "";
}

/*
 * One source's runs on the stream threads (NEST's target table of its node on
 * thread s): loop id lid in each thread's LoopIds by the (syn_id, first lcid)
 * of the run there; false where it has two runs of one synapse model on a
 * thread (connections not sorted by source), with why.
 */
static bool
source_runs( size_t s, size_t local, uint32_t lid, const std::vector< size_t >& threads, std::vector< LoopIds >& ids,
  std::string& why )
{
  const bool compressed = kernel().connection_manager.use_compressed_spikes();
  std::vector< std::pair< size_t, synindex > > seen;  // (thread, model) with a run of the source
  for ( const Target& target : kernel().connection_manager.get_remote_targets_of_local_node( s, local ) )
  {
    const synindex syn_id = target.get_syn_id();
    for ( const size_t t : threads )
    {
      size_t lcid = target.get_lcid();
      if ( compressed )
      {
        lcid = kernel().connection_manager.get_compressed_spike_data( syn_id, lcid )[ t ].get_lcid();
      }
      else if ( target.get_tid() != t )
      {
        continue;
      }
      if ( lcid == invalid_lcid )
      {
        continue;
      }
      if ( std::find( seen.begin(), seen.end(), std::make_pair( t, syn_id ) ) != seen.end() )
      {
        why = "has several runs of " + kernel().model_manager.get_connection_model( syn_id, t ).get_name()
          + " connections (NEST sorts connections by source only with use_compressed_spikes)";
        return false;
      }
      seen.emplace_back( t, syn_id );
      ids[ t ].of[ std::make_pair( static_cast< size_t >( syn_id ), lcid ) ] = lid;
    }
  }
  return true;
}

std::string
NestclManager::Impl::loop_ids_of( const std::vector< size_t >& threads )
{
  Impl& m = *this;
  for ( const size_t t : threads )
  {
    m.loop_ids[ t ] = LoopIds();
  }
  uint32_t lid = 0;
  std::string why;
  for ( const size_t s : threads )
  {
    for ( const Group& g : m.groups[ s ] )
    {
      for ( size_t i = 0; i < g.nodes.size(); ++i, ++lid )
      {
        const size_t local = kernel().vp_manager.node_id_to_lid( g.nodes[ i ]->get_node_id() );
        if ( not source_runs( s, local, lid, threads, m.loop_ids, why ) )
        {
          for ( const size_t t : threads )
          {
            m.loop_ids[ t ] = LoopIds();
          }
          return "neuron " + std::to_string( g.nodes[ i ]->get_node_id() ) + " " + why;
        }
      }
    }
  }
  for ( const size_t t : threads )
  {
    m.loop_ids[ t ].n = lid;
  }
  return "";
}

/* Whether thread tid's connector syn_id went to the device (static or translated synapses). */
template< typename M >
static bool
exported( const M& m, size_t tid, size_t syn_id )
{
  bool there = false;
  for ( const SynRows& r : m.syn_rows[ tid ] )
  {
    there = there or r.syn_id == syn_id;
  }
  for ( const PlasticRows& r : m.plastic[ tid ] )
  {
    there = there or r.syn_id == syn_id;
  }
  return there;
}

/* Why the exported network still needs NEST's slice loop (empty: it does not). */
std::string
NestclManager::Impl::loop_problem_after(
  const std::vector< size_t >& threads, const std::vector< std::vector< char > >& on_device )
{
  Impl& m = *this;
  for ( const size_t tid : threads )
  {
    const std::vector< ConnectorBase* >& conns = thread_connectors( tid );
    for ( size_t syn_id = 0; syn_id < conns.size(); ++syn_id )
    {
      if ( conns[ syn_id ] and conns[ syn_id ]->size() > 0 and not exported( m, tid, syn_id ) )
      {
        return "the connections of " + kernel().model_manager.get_connection_model( syn_id, tid ).get_name()
          + " stay with NEST";
      }
    }
  }
  const size_t T = kernel().vp_manager.get_num_threads();
  for ( size_t t = 0; t < T; ++t )
  {
    const SparseNodeArray& local = kernel().node_manager.get_local_nodes( t );
    for ( auto it = local.begin(); it != local.end(); ++it )
    {
      const Node* node = it->get_node();
      const std::string name = node->get_name();
      const bool ours = t < on_device.size() and node->get_thread_lid() < on_device[ t ].size()
        and on_device[ t ][ node->get_thread_lid() ];
      if ( node->has_proxies() or node->is_frozen() or name == "spike_recorder" or ours )
      {
        continue;
      }
      const bool drawing = std::find( threads.begin(), threads.end(), t ) != threads.end();
      if ( name == "poisson_generator" and not drawing )
      {
        continue;  // a replica without targets on its thread: it draws nothing
      }
      return name == "poisson_generator"
        ? "poisson_generator " + std::to_string( node->get_node_id() ) + " is drawn by NEST (nestcl_device_poisson "
          + ( m.device_poisson ? "is True, but it has a stimulation window or a target off the device)" : "is False)" )
        : name + " " + std::to_string( node->get_node_id() ) + " takes part in every slice";
    }
  }
  char why[ 256 ];
  if ( not nestcl_block_set_loop_possible( m.set_of( threads.front() ), why, sizeof why ) )
  {
    return why;
  }
  return "";
}

/*
 * What the device loop takes over of NEST's slice loop is private to the
 * SimulationManager (its clock and the step counters, advance_time_, the
 * flags an exception sets) and to the EventDeliveryManager (the spike
 * register's reset): explicit instantiations may name them (C++17
 * [temp.spec]), as elsewhere in nest_patch, so that NEST's headers stay as
 * they are and a change here rebuilds only nestcl's files.
 */
struct sm_clock_tag
{
};
struct sm_slice_tag
{
};
struct sm_to_do_tag
{
};
struct sm_from_step_tag
{
};
struct sm_to_step_tag
{
};
struct sm_simulating_tag
{
};
struct sm_inconsistent_tag
{
};
struct sm_advance_tag
{
};
auto member( sm_clock_tag );
auto member( sm_slice_tag );
auto member( sm_to_do_tag );
auto member( sm_from_step_tag );
auto member( sm_to_step_tag );
auto member( sm_simulating_tag );
auto member( sm_inconsistent_tag );
auto member( sm_advance_tag );
template struct steal< sm_clock_tag, &SimulationManager::clock_ >;
template struct steal< sm_slice_tag, &SimulationManager::slice_ >;
template struct steal< sm_to_do_tag, &SimulationManager::to_do_ >;
template struct steal< sm_from_step_tag, &SimulationManager::from_step_ >;
template struct steal< sm_to_step_tag, &SimulationManager::to_step_ >;
template struct steal< sm_simulating_tag, &SimulationManager::simulating_ >;
template struct steal< sm_inconsistent_tag, &SimulationManager::inconsistent_state_ >;
template struct steal< sm_advance_tag, &SimulationManager::advance_time_ >;

namespace
{
/* The SimulationManager's loop state, by reference. */
struct Clock
{
  SimulationManager& sm;
  Time& clock;
  long& slice;
  long& to_do;
  long& from_step;
  long& to_step;
  explicit Clock( SimulationManager& s )
    : sm( s )
    , clock( s.*member( sm_clock_tag {} ) )
    , slice( s.*member( sm_slice_tag {} ) )
    , to_do( s.*member( sm_to_do_tag {} ) )
    , from_step( s.*member( sm_from_step_tag {} ) )
    , to_step( s.*member( sm_to_step_tag {} ) )
  {
  }
  void
  advance()
  {
    ( sm.*member( sm_advance_tag {} ) )();
  }
};

/* The Run's state while its slices run: the loop on, the slices it enqueued since the last drain. */
struct LoopRun
{
  size_t tid;
  long min_delay;
  nestcl_block_set* set;
  bool on = false;
  std::vector< long > origins;  // since the last drain
};
}

/* NEST's start of a slice (SimulationManager::update_): the spikes of the last slice, delivered by every thread. */
static void
deliver_last_slice( const Clock& c )
{
  if ( c.slice > 0 and c.from_step == 0 )
  {
    for ( size_t t = 0; t < kernel().vp_manager.get_num_threads(); ++t )
    {
      kernel().event_delivery_manager.deliver_events( t );
    }
  }
}

/*
 * The spikes of the drained slices handed to NEST slice by slice
 * (nestcl_blocks.cpp's replay), each with NEST's clock at its slice. NEST's
 * spike register then holds the last slice's only: the device delivered every
 * earlier one, and the last one is delivered by the next slice, after NEST's
 * exchange, as NEST's loop would.
 */
template< typename M >
static void
replay_loop( M& m, Clock& c, LoopRun& r )
{
  const nestcl_loop_spike* sp = nullptr;
  size_t n = 0, at = 0;
  nestcl_block_set_loop_spikes( r.set, &sp, &n );
  const Time clock = c.clock;
  for ( const long origin : r.origins )
  {
    for ( const size_t t : m.loop_threads )
    {
      ( kernel().event_delivery_manager.*member( reset_register_tag {} ) )( t );
    }
    size_t end = at;
    while ( end < n and sp[ end ].step < origin + r.min_delay )
    {
      ++end;
    }
    c.clock = Time::step( origin );
    m.replay( r.tid, sp + at, end - at, origin );
    at = end;
  }
  c.clock = clock;
  for ( const size_t t : m.loop_threads )
  {
    m.next_step[ t ] = r.origins.empty() ? m.next_step[ t ] : r.origins.back() + r.min_delay;
  }
  r.origins.clear();
}

/* A failed slice or drain: the spikes before the failure handed to NEST, then NEST's exception for it. */
template< typename M >
[[noreturn]] static void
loop_failed( M& m, Clock& c, LoopRun& r )
{
  int64_t at = 0;
  const int block = nestcl_block_set_failed( r.set, &at );
  const std::string err = nestcl_last_error();
  if ( block < 0 )
  {
    throw KernelException( "nestcl: the device loop: " + err );
  }
  r.origins.erase(
    std::remove_if( r.origins.begin(), r.origins.end(), [ & ]( long o ) { return o >= at; } ), r.origins.end() );
  replay_loop( m, c, r );
  m.loop_failure( r.tid, static_cast< size_t >( block ), at );
}

/* One whole slice in the loop (begun at its first), handed to NEST at each drain. */
template< typename M >
static void
loop_slice( M& m, Clock& c, LoopRun& r )
{
  if ( not r.on )
  {
    deliver_last_slice( c );
    check(
      nestcl_block_set_loop_begin( r.set, static_cast< uint32_t >( m.sync_interval ) ), "starting the device loop" );
    r.on = true;
  }
  int drained = 0;
  r.origins.push_back( c.clock.get_steps() );
  const double t0 = now_s();
  const int rc = nestcl_block_set_loop_slice( r.set, c.clock.get_steps(), &drained );
  m.t_update[ r.tid ] += now_s() - t0;
  ++m.n_slices[ r.tid ];
  if ( rc )
  {
    loop_failed( m, c, r );
  }
  if ( drained )
  {
    const double t1 = now_s();
    replay_loop( m, c, r );
    m.t_emit[ r.tid ] += now_s() - t1;
  }
}

/* The loop's end: the last drain handed to NEST, whose exchange then takes the last slice's spikes. */
template< typename M >
static void
loop_end( M& m, Clock& c, LoopRun& r )
{
  if ( not r.on )
  {
    return;
  }
  const double t0 = now_s();
  if ( nestcl_block_set_loop_drain( r.set ) != 0 )
  {
    loop_failed( m, c, r );
  }
  const double t1 = now_s();
  replay_loop( m, c, r );
  check( nestcl_block_set_loop_end( r.set ), "ending the device loop" );
  r.on = false;
  m.t_update[ r.tid ] += t1 - t0;
  m.t_emit[ r.tid ] += now_s() - t1;
  kernel().event_delivery_manager.gather_spike_data();
}

/* The Run's slices: whole ones in the loop, those that begin or end inside min_delay as NEST's loop runs them. */
template< typename M >
static void
run_slices( NestclManager& nm, M& m, Clock& c, LoopRun& r )
{
  while ( c.to_do > 0 )
  {
    if ( c.from_step == 0 and c.to_step == r.min_delay )
    {
      loop_slice( m, c, r );
    }
    else
    {
      // Only the stream VPs have nodes: their owner's update() runs every one of them.
      loop_end( m, c, r );
      deliver_last_slice( c );
      nm.update( r.tid, c.clock, c.from_step, c.to_step );
      if ( c.to_step == r.min_delay )
      {
        kernel().event_delivery_manager.gather_spike_data();
      }
    }
    c.advance();
  }
  loop_end( m, c, r );
  // As NEST's update_ ends a Run: every node's calcium and synaptic elements brought to the Run's end.
  const double end_ms = Time( Time::step( c.clock.get_steps() + c.to_step ) ).get_ms();
  for ( size_t t = 0; t < kernel().vp_manager.get_num_threads(); ++t )
  {
    const SparseNodeArray& local = kernel().node_manager.get_local_nodes( t );
    for ( auto it = local.begin(); it != local.end(); ++it )
    {
      it->get_node()->update_synaptic_elements( end_ms );
    }
  }
}

/*
 * work on this thread while NEST's other OpenMP threads sleep. The device
 * loop runs on the master outside NEST's parallel region, and libgomp's idle
 * threads spin for a while after every region (GOMP_SPINCOUNT, 300,000 turns
 * by default): where the device is the host's cores (PoCL), they took one of
 * its cores through every short Run (35 % of a loop of 1 ms Simulate calls'
 * samples). In a region of their own they wait on a condition variable
 * instead. NEST's code that work runs (update, deliver_events,
 * gather_spike_data) has no OpenMP construct that would bind to this region.
 */
template< typename F >
static void
with_team_asleep( F&& work )
{
#ifdef _OPENMP
  const int T = static_cast< int >( kernel().vp_manager.get_num_threads() );
  if ( T > 1 and not omp_in_parallel() )
  {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    std::exception_ptr failed;
#pragma omp parallel num_threads( T )
    {
      if ( omp_get_thread_num() == 0 )
      {
        try
        {
          work();
        }
        catch ( ... )
        {
          failed = std::current_exception();
        }
        {
          std::lock_guard< std::mutex > lock( mu );
          done = true;
        }
        cv.notify_all();
      }
      else
      {
        std::unique_lock< std::mutex > lock( mu );
        cv.wait( lock, [ & ] { return done; } );
      }
    }
    if ( failed )
    {
      std::rethrow_exception( failed );
    }
    return;
  }
#endif
  work();
}
#endif

bool
NestclManager::run_device_loop( SimulationManager& sm )
{
#ifdef HAVE_NESTCL
  Impl& m = *impl_;
  m.push_changes();  // a SetStatus between Run calls
  m.mark_ahead();    // from here on the device moves on: a read after this Run brings its state back
  if ( m.loop_threads.empty() )
  {
    m.sim_path = m.streams ? "slice by slice" : "";
    m.sim_path_why = m.streams ? m.loop_why : "";
    return false;
  }
  m.sim_path = "device loop";
  m.sim_path_why = "";
  Clock c( sm );
  // The loop's threads' blocks are one set, updated through its owner, the first.
  LoopRun r { m.loop_threads.front(), kernel().connection_manager.get_min_delay(), m.set_of( m.loop_threads.front() ) };
  try
  {
    m.in_device_loop = true;
    with_team_asleep( [ & ] { run_slices( *this, m, c, r ); } );
    m.in_device_loop = false;
  }
  catch ( ... )
  {
    m.in_device_loop = false;
    if ( r.on )
    {
      nestcl_block_set_loop_end( r.set );
    }
    sm.*member( sm_simulating_tag {} ) = false;  // as update_ does for an exception of its threads
    sm.*member( sm_inconsistent_tag {} ) = true;
    throw;
  }
  return true;
#else
  (void) sm;
  return false;
#endif
}
}
