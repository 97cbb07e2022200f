/*
 * The network stays on the device between Simulate calls (docs/architecture.md,
 * "Under NEST: nest_patch"). NEST's doors for reads and changes are hooked
 * (nest_patch/apply: Node::get_status_base and set_status_base,
 * ConnectionManager::get_synapse_status and set_synapse_status, and
 * SimulationManager::prepare before NEST re-sorts its connections), and each
 * marks what it touches:
 *   - after a run the device is ahead: a read of a node brings its block's
 *     state and spike histories back, once; a read of a connection, its
 *     synapse model's state on that thread, once;
 *   - a write does the same first, then marks the block or the synapse model,
 *     whose nodes or connections the next Prepare or Run packs and sends in
 *     place;
 *   - new nodes or connections make NEST re-sort every thread's connectors,
 *     which moves a source's connections among themselves: the device's
 *     plastic state goes back into NEST's connections before that, and a
 *     thread with plastic synapses is built again, as is one whose connectors
 *     grew or shrank, that got new neurons or multimeters, whose static
 *     synapses or histories were changed, or whose blocks a write no longer
 *     fits (another receptor count or model condition).
 * Everything else stays: a loop of Simulate calls sends nothing between them
 * and reads nothing back.
 */
#include "nestcl/nestcl_manager.h"
#include "nestcl/nestcl_manager_impl.h"

#include <sstream>

#include "connection_manager_impl.h"
#include "connector_base.h"
#include "exceptions.h"
#include "kernel_manager.h"

namespace nest
{
#ifdef HAVE_NESTCL
std::string
NestclManager::Impl::settings_of( const BlockSetup& setup ) const
{
  const ConnectionManager& cm = kernel().connection_manager;
  std::ostringstream s;
  s << device_spec << '|' << streams << '|' << setup.min_delay << '|' << setup.max_delay << '|' << setup.resolution_ms
    << '|' << setup.rng_seed << '|' << device_poisson << '|' << min_work << '|' << device_loop << '|'
    << kernel().event_delivery_manager.get_off_grid_communication() << '|' << cm.use_compressed_spikes() << '|'
    << cm.get_keep_source_table();
  return s.str();
}

void
NestclManager::Impl::mark_built( size_t tid )
{
  Resident& r = res[ tid ];
  r = Resident();
  r.built = true;
  r.local = kernel().node_manager.get_local_nodes( tid ).size();
  for ( const ConnectorBase* c : thread_connectors( tid ) )
  {
    r.conn_size.push_back( c ? c->size() : 0 );
  }
  r.group_ahead.assign( groups[ tid ].size(), 0 );
  r.group_dirty.assign( groups[ tid ].size(), 0 );
  r.plastic_ahead.assign( plastic[ tid ].size(), 0 );
  r.plastic_dirty.assign( plastic[ tid ].size(), 0 );
  ++traffic.built;
}

/* Why new local nodes of thread tid change its blocks: neurons, multimeters, device-drawn generators. */
template< typename M >
static std::string
new_nodes_reason( const M& m, size_t tid, Resident& r )
{
  const SparseNodeArray& local = kernel().node_manager.get_local_nodes( tid );
  for ( auto it = local.begin(); it != local.end(); ++it )
  {
    const Node* node = it->get_node();
    if ( node->get_thread_lid() < r.local )
    {
      continue;
    }
    const std::string name = node->get_name();
    if ( node->has_proxies() or name == "multimeter" or name == "voltmeter"
      or ( m.device_poisson and name == "poisson_generator" ) )
    {
      return "new " + name + " " + std::to_string( node->get_node_id() );
    }
  }
  r.local = local.size();  // only devices that change nothing here (spike recorders, NEST's own generators)
  return "";
}

std::string
NestclManager::Impl::rebuild_reason( size_t tid )
{
  Resident& r = res[ tid ];
  if ( not r.rebuild.empty() )
  {
    return r.rebuild;
  }
  if ( kernel().node_manager.get_local_nodes( tid ).size() != r.local )
  {
    const std::string why = new_nodes_reason( *this, tid, r );
    if ( not why.empty() )
    {
      return why;
    }
  }
  const std::vector< ConnectorBase* >& conns = thread_connectors( tid );
  for ( size_t syn_id = 0; syn_id < conns.size() or syn_id < r.conn_size.size(); ++syn_id )
  {
    const size_t now = syn_id < conns.size() and conns[ syn_id ] ? conns[ syn_id ]->size() : 0;
    if ( now != ( syn_id < r.conn_size.size() ? r.conn_size[ syn_id ] : 0 ) )
    {
      return "the connections of " + kernel().model_manager.get_connection_model( syn_id, tid ).get_name() + " changed";
    }
  }
  if ( network_changed and not plastic[ tid ].empty() )
  {
    return "new nodes or connections: NEST re-sorted the connections, the plastic ones among them";
  }
  if ( network_changed and n_gen[ tid ] > 0 )
  {
    return "new nodes or connections may reach its device poisson_generators";
  }
  return "";
}

std::string
NestclManager::Impl::push_thread( size_t tid )
{
  Resident& r = res[ tid ];
  bool pushed = false;
  long& synapses_sent = traffic.synapses_sent;
  for ( size_t g = 0; g < r.group_dirty.size(); ++g )
  {
    std::string why;
    if ( r.group_dirty[ g ] and not push_group( tid, g, why ) )
    {
      return why;
    }
    pushed = pushed or r.group_dirty[ g ];
    r.group_dirty[ g ] = 0;
  }
  for ( size_t q = 0; q < r.plastic_dirty.size(); ++q )
  {
    if ( r.plastic_dirty[ q ] and not export_plastic_state( groups[ tid ], where[ tid ], tid, plastic[ tid ][ q ] ) )
    {
      return "the status of " + std::string( plastic[ tid ][ q ].sm->name )
        + " connections no longer fits the device (per-source state or parameters differ)";
    }
    synapses_sent += r.plastic_dirty[ q ];
    r.plastic_dirty[ q ] = 0;
  }
  if ( pushed and set_of( tid ) )
  {
    // A block's constants (parameters equal over its neurons) are compiled into the set's kernels.
    check( nestcl_block_set_refresh( set_of( tid ) ), "updating the stream VP's kernels" );
  }
  return "";
}

void
NestclManager::Impl::push_changes()
{
  for ( size_t tid = 0; tid < res.size(); ++tid )
  {
    if ( res[ tid ].built )
    {
      const std::string why = push_thread( tid );
      if ( not why.empty() )
      {
        throw KernelException(
          "nestcl: " + why + " between Run calls: the device takes it at the next Prepare (Cleanup, then Prepare)" );
      }
    }
  }
}

void
NestclManager::Impl::mark_ahead()
{
  for ( Resident& r : res )
  {
    r.group_ahead.assign( r.group_ahead.size(), r.built ? 1 : 0 );
    r.plastic_ahead.assign( r.plastic_ahead.size(), r.built ? 1 : 0 );
  }
}

/* Where node lies in the device groups of its thread: (thread, group); false where it does not (a prototype, ...). */
template< typename M >
static bool
locate( const M& m, const Node& node, size_t& tid, size_t& g )
{
  tid = node.get_thread();
  if ( tid >= m.res.size() or not m.res[ tid ].built )
  {
    return false;
  }
  const size_t lid = node.get_thread_lid();
  if ( lid >= m.where[ tid ].size() or m.where[ tid ][ lid ].first == 0 )
  {
    return false;
  }
  g = m.where[ tid ][ lid ].first - 1;
  const size_t i = m.where[ tid ][ lid ].second;
  return g < m.groups[ tid ].size() and i < m.groups[ tid ][ g ].nodes.size()
    and m.groups[ tid ][ g ].nodes[ i ] == &node;
}
#endif

void
NestclManager::sync_node( const Node& node, const Dictionary* d )
{
#ifdef HAVE_NESTCL
  Impl& m = *impl_;
  size_t tid = 0, g = 0;
#pragma omp critical( nestcl_resident )
  if ( locate( m, node, tid, g ) )
  {
    m.pull_group( tid, g );
    if ( d )
    {
      m.res[ tid ].group_dirty[ g ] = 1;
      // The device's spike histories are written once, when the thread is built.
      if ( m.groups[ tid ][ g ].history
        and ( d->known( "tau_minus" ) or d->known( "tau_minus_triplet" ) or d->known( "clear" ) ) )
      {
        m.res[ tid ].rebuild =
          "the spike history of " + node.get_name() + " " + std::to_string( node.get_node_id() ) + " changed";
      }
    }
  }
#else
  (void) node;
  (void) d;
#endif
}

void
NestclManager::sync_synapses( size_t tid, synindex syn_id, const Dictionary* d )
{
#ifdef HAVE_NESTCL
  Impl& m = *impl_;
  if ( tid >= m.res.size() or not m.res[ tid ].built )
  {
    return;
  }
#pragma omp critical( nestcl_resident )
  {
    Resident& r = m.res[ tid ];
    for ( size_t q = 0; q < m.plastic[ tid ].size(); ++q )
    {
      if ( m.plastic[ tid ][ q ].syn_id != syn_id )
      {
        continue;
      }
      if ( r.plastic_ahead[ q ] )
      {
        import_plastic( m.groups[ tid ], m.where[ tid ], tid, m.plastic[ tid ][ q ] );
        r.plastic_ahead[ q ] = 0;
        ++m.traffic.synapses_read;
      }
      r.plastic_dirty[ q ] = r.plastic_dirty[ q ] or d;
      if ( d and d->known( "delay" ) )
      {
        r.rebuild = "the delays of " + std::string( m.plastic[ tid ][ q ].sm->name ) + " connections changed";
      }
    }
    for ( const SynRows& sr : m.syn_rows[ tid ] )
    {
      if ( d and sr.syn_id == syn_id )
      {
        r.rebuild = "the status of " + kernel().model_manager.get_connection_model( syn_id, tid ).get_name()
          + " connections changed (static synapses are exported again)";
      }
    }
  }
#else
  (void) tid;
  (void) syn_id;
  (void) d;
#endif
}

void
NestclManager::before_network_update()
{
#ifdef HAVE_NESTCL
  Impl& m = *impl_;
  if ( not resident_
    or not( kernel().node_manager.have_nodes_changed() or kernel().connection_manager.connections_have_changed() ) )
  {
    return;
  }
  m.network_changed = true;
  // NEST is about to re-sort each thread's connectors: the plastic ones must hold the device's state.
  for ( size_t tid = 0; tid < m.res.size(); ++tid )
  {
    for ( size_t q = 0; m.res[ tid ].built and q < m.plastic[ tid ].size(); ++q )
    {
      if ( m.res[ tid ].plastic_ahead[ q ] )
      {
        import_plastic( m.groups[ tid ], m.where[ tid ], tid, m.plastic[ tid ][ q ] );
        m.res[ tid ].plastic_ahead[ q ] = 0;
        ++m.traffic.synapses_read;
      }
    }
  }
#endif
}
}
