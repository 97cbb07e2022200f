/*
 * A stream thread's neurons in device blocks (nestcl/block.h), through the
 * glue that nestcl-translate generated for each translated model: prepare()
 * groups the thread's neurons by model and packs each group into a block,
 * update() runs the blocks every slice (input drained from the nodes' own
 * buffers, spikes and samples handed back to NEST in NEST's order), and
 * cleanup() writes the blocks' state back into the nodes. A neuron that cannot
 * run on the device stays on the host, in its place among the groups.
 *
 * This is the one translation unit that includes the generated glue table
 * (nestcl_glue_table.hpp says so): the manager's other files see a group's
 * model name and device model (Group::name, Group::model), not its glue.
 */
#include "nestcl/nestcl_manager.h"
#include "nestcl/nestcl_manager_impl.h"

#include <algorithm>
#include <regex>
#include <sstream>
#include <tuple>

#include "exceptions.h"
#include "kernel_manager.h"

#ifdef HAVE_NESTCL
#include "archiving_node.h"
#include "connection_manager_impl.h"
#include "event_delivery_manager_impl.h"  // before the glue, whose emit() sends through it
#include "nestcl_cpu_only.hpp"
#include "nestcl_glue_table.hpp"
#include "universal_data_logger_impl.h"
#endif

namespace nest
{
#ifdef HAVE_NESTCL
/* Whether a node's forced spikes (ignore_and_spike) are on: the device path has the dynamic condition only. */
struct ias_on_tag
{
};
auto member( ias_on_tag );
template struct steal< ias_on_tag, &IgnoreAndSpikeMechanism::ignore_and_spike_ >;

static const nestcl_glue::entry*
find_glue( const std::string& model )
{
  size_t count = 0;
  const nestcl_glue::entry* t = nestcl_glue::table( &count );
  for ( size_t k = 0; k < count; ++k )
  {
    if ( model == t[ k ].name )
    {
      return &t[ k ];
    }
  }
  return nullptr;
}

std::vector< std::string >
translated_models()
{
  std::vector< std::string > models;
  size_t count = 0;
  const nestcl_glue::entry* t = nestcl_glue::table( &count );
  for ( size_t k = 0; k < count; ++k )
  {
    models.push_back( t[ k ].name );
  }
  return models;
}

/*
 * Why a neuron of a stream VP stays on the host, as the translator or the
 * glue said it, without the node id (nestcl_nodes counts nodes per reason):
 * the glue's receptors_<model>() throws, naming the node, for a node that a
 * condition keeps off the device (nestcl_translate's emit_glue.c).
 */
static std::string
condition_reason( const std::string& what )
{
  static const std::regex node_prefix( "^nestcl: ([A-Za-z0-9_]+) node [0-9]+:? ?" );  // built once, not per node
  std::string r = std::regex_replace( what, node_prefix, "" );
  for ( const char* tail : { ", so this node cannot be on a stream VP", "; it cannot be on a stream VP" } )
  {
    const size_t at = r.find( tail );
    if ( at != std::string::npos )
    {
      r.erase( at );
    }
  }
  return r;
}

/* The translator's reason for a model that did not translate (NEST's own models), else a general one. */
static std::string
untranslated_reason( const std::string& model )
{
  for ( const nestcl_cpu_only::entry& e : nestcl_cpu_only::table )
  {
    if ( model == e.name )
    {
      return std::string( "did not translate: " ) + e.reason;
    }
  }
  return "did not translate (not among nestcl_translated_models)";
}

/*
 * The glue that runs this neuron on the device, with its receptor count K; or
 * null, and why not: its model did not translate, or a condition of the node
 * or the network keeps it off the device (the glue's receptors() throws).
 */
static const nestcl_glue::entry*
device_glue( const Node& node, size_t& K, std::string& why )
{
  const nestcl_glue::entry* glue = find_glue( node.get_name() );
  if ( not glue )
  {
    why = untranslated_reason( node.get_name() );
    return nullptr;
  }
  // The translator renders spike_event_is_due( v ) as v: with forced spikes on, update() spikes otherwise.
  const IgnoreAndSpikeMechanism* ias = dynamic_cast< const IgnoreAndSpikeMechanism* >( &node );
  if ( ias and ias->*member( ias_on_tag {} ) )
  {
    why = "ignore_and_spike is on; the device has the model's dynamic spike condition only";
    return nullptr;
  }
  try
  {
    K = glue->receptors( node );
  }
  catch ( const std::exception& e )
  {
    why = condition_reason( e.what() );
    return nullptr;
  }
  return glue;
}

void
NestclManager::Impl::open_device()
{
  Impl& m = *this;
  if ( not m.dev or m.dev_opened_spec != m.device_spec or m.dev_queues != static_cast< int >( m.streams ) )
  {
    if ( m.dev )
    {
      nestcl_device_close( m.dev );
      m.dev = nullptr;
    }
    check( nestcl_device_open(
             m.device_spec.empty() ? nullptr : m.device_spec.c_str(), static_cast< int >( m.streams ), &m.dev ),
      "opening the device" );
    m.dev_opened_spec = m.device_spec;
    m.dev_queues = static_cast< int >( m.streams );
    m.device_name = nestcl_device_get_info( m.dev )->device_name;
  }
}

/*
 * Thread tid's neurons, in the order of its local nodes, into groups of one
 * model and receptor count whose node ids form an arithmetic sequence, and
 * the thread's plan (Impl::Step); on_device marks every node that NEST's own
 * loop must skip.
 */
void
NestclManager::Impl::group_neurons( size_t tid, const SparseNodeArray& local, std::vector< char >& on_device )
{
  Impl& m = *this;
  // The open group of each (model, K); a node whose id does not continue its
  // arithmetic sequence of ids starts a new one.
  std::map< std::pair< std::string, size_t >, size_t > index;
  for ( auto it = local.begin(); it != local.end(); ++it )
  {
    Node* node = it->get_node();
    if ( not node->has_proxies() )
    {
      // A device's replica (generator, recorder) stays in NEST's loop.
      const std::string model = node->get_name();
      if ( model == "multimeter" or model == "voltmeter" )
      {
        m.record[ tid ] = 1;
      }
      continue;
    }
    if ( node->is_frozen() )
    {
      continue;  // NEST's loop skips it too
    }
    size_t K = 0;
    std::string why;
    const nestcl_glue::entry* glue = device_glue( *node, K, why );
    Impl::Placed& placed = m.placed[ tid ][ node->get_name() ];
    if ( not glue )
    {
      // A hybrid stream VP: NEST's own update() runs this neuron, from update(), between the groups
      // around it (so NEST's loop skips it); the groups open so far end here.
      ++placed.host;
      ++placed.why[ why ];
      index.clear();
      m.plan[ tid ].push_back( { -1, node } );
      if ( node->get_thread_lid() < on_device.size() )
      {
        on_device[ node->get_thread_lid() ] = 1;
      }
      continue;
    }
    ++placed.device;
    auto key = std::make_pair( std::string( glue->name ), K );
    auto at = index.find( key );
    bool fits = false;
    if ( at != index.end() )
    {
      Group& g = m.groups[ tid ][ at->second ];
      const size_t last = g.nodes.back()->get_node_id();
      const size_t id = node->get_node_id();
      fits = id > last and ( g.nodes.size() == 1 or id - last == g.stride );
      if ( fits and g.nodes.size() == 1 )
      {
        g.stride = id - last;
      }
    }
    if ( not fits )
    {
      if ( at == index.end() )
      {
        at = index.emplace( key, m.groups[ tid ].size() ).first;
      }
      else
      {
        at->second = m.groups[ tid ].size();
      }
      m.plan[ tid ].push_back( { static_cast< long >( m.groups[ tid ].size() ), nullptr } );
      m.groups[ tid ].emplace_back();
      m.groups[ tid ].back().glue = glue;
      m.groups[ tid ].back().name = glue->name;
      m.groups[ tid ].back().model = glue->model;
      m.groups[ tid ].back().K = K;
    }
    m.groups[ tid ][ at->second ].nodes.push_back( node );
    if ( node->get_thread_lid() < on_device.size() )
    {
      on_device[ node->get_thread_lid() ] = 1;
    }
  }
}

/*
 * Whether thread tid has too little work per slice to pay for a launch and a
 * wait (nestcl_device_min_work): then it runs the blocks' C loops itself, and
 * nestcl_nodes counts their neurons as c_loop.
 */
bool
NestclManager::Impl::runs_on_host( size_t tid, long min_delay )
{
  Impl& m = *this;
  size_t work = 0;
  for ( const Group& g : m.groups[ tid ] )
  {
    work += g.nodes.size() * static_cast< size_t >( min_delay );
  }
  const bool on_host = m.min_work > 0 and work < static_cast< size_t >( m.min_work );
  if ( on_host )
  {
    for ( const Group& g : m.groups[ tid ] )
    {
      Impl::Placed& placed = m.placed[ tid ][ g.nodes.front()->get_name() ];
      placed.device -= static_cast< long >( g.nodes.size() );
      placed.c_loop += static_cast< long >( g.nodes.size() );
    }
  }
  return on_host;
}

/* Every group of thread tid becomes a block with its nodes' state; returns the scratch that update() needs. */
size_t
NestclManager::Impl::create_blocks( size_t tid, const BlockSetup& setup, bool on_host, int queue )
{
  Impl& m = *this;
  size_t scratch = 0;
  for ( Group& g : m.groups[ tid ] )
  {
    nestcl_block_config c {};
    c.on_host = on_host ? 1 : 0;
    c.model = g.model;
    c.n = static_cast< uint32_t >( g.nodes.size() );
    c.K = static_cast< uint32_t >( g.K );
    c.resolution_ms = setup.resolution_ms;
    c.min_delay_steps = static_cast< uint32_t >( setup.min_delay );
    c.ring_slots = static_cast< uint32_t >( setup.min_delay + setup.max_delay );
    c.queue = queue;
    c.record = m.record[ tid ];
    c.rng_seed = setup.rng_seed;
    c.id_first = g.nodes.front()->get_node_id();
    c.id_stride = g.stride ? g.stride : 1;
    check( nestcl_block_create( m.dev, &c, &g.block ), "creating the block of " + std::string( g.name ) );
    void* const* f = nestcl_block_fields( g.block );
    for ( size_t i = 0; i < g.nodes.size(); ++i )
    {
      g.glue->pack( *g.nodes[ i ], f, g.nodes.size(), i );
    }
    check( nestcl_block_upload( g.block ), "uploading " + std::string( g.name ) );
    scratch = std::max( { scratch, static_cast< size_t >( nestcl_block_channels( g.block ) ),
      static_cast< size_t >( nestcl_block_recordables( g.block ) ) } );
  }
  return scratch;
}

/* Where each device neuron of thread tid is, by thread lid: (its group + 1, its index there); (0, 0) elsewhere. */
void
NestclManager::Impl::index_groups( size_t tid, size_t n_local )
{
  Impl& m = *this;
  m.where[ tid ].assign( n_local, std::make_pair( 0u, 0u ) );
  for ( size_t g = 0; g < m.groups[ tid ].size(); ++g )
  {
    const Group& gr = m.groups[ tid ][ g ];
    for ( size_t i = 0; i < gr.nodes.size(); ++i )
    {
      const size_t tl = gr.nodes[ i ]->get_thread_lid();
      if ( tl < m.where[ tid ].size() )
      {
        m.where[ tid ][ tl ] = std::make_pair( static_cast< uint32_t >( g + 1 ), static_cast< uint32_t >( i ) );
      }
    }
  }
}

/* The input that the last Simulate left in flight for these nodes (save_pending), into the new blocks' rings. */
void
NestclManager::Impl::restore_pending( size_t tid )
{
  Impl& m = *this;
  for ( Group& g : m.groups[ tid ] )
  {
    bool any = false;
    for ( size_t i = 0; i < g.nodes.size(); ++i )
    {
      auto at = m.pending.find( g.nodes[ i ]->get_node_id() );
      if ( at != m.pending.end() )
      {
        for ( const Impl::Pending& p : at->second )
        {
          nestcl_block_ring_add( g.block, p.step, p.ch, static_cast< uint32_t >( i ), p.value );
        }
        any = true;
      }
    }
    if ( any )
    {
      check( nestcl_block_ring_restore( g.block ), "restoring the input in flight of " + std::string( g.name ) );
    }
  }
}

void
NestclManager::Impl::prepare_neurons( size_t tid, const BlockSetup& setup, std::vector< char >& on_device )
{
  Impl& m = *this;
  const SparseNodeArray& local = kernel().node_manager.get_local_nodes( tid );
  on_device.assign( local.size(), 0 );
  group_neurons( tid, local, on_device );
  m.c_loop[ tid ] = runs_on_host( tid, setup.min_delay );
  index_groups( tid, local.size() );
}

void
NestclManager::Impl::make_blocks( size_t tid, const BlockSetup& setup, int queue )
{
  Impl& m = *this;
  const size_t scratch = create_blocks( tid, setup, m.c_loop[ tid ], queue );
  m.scratch[ tid ].assign( scratch + 1, 0.0 );
  size_t most = 0;
  for ( const Group& g : m.groups[ tid ] )
  {
    most = std::max( most, g.nodes.size() );
  }
  m.sorted[ tid ].reserve( most * static_cast< size_t >( setup.min_delay ) );  // a block's spikes of one slice at most
}

void
NestclManager::Impl::prepare_synapses( size_t tid, std::vector< char >& on_device )
{
  Impl& m = *this;
  const bool on_host = m.c_loop[ tid ];
  // With precise spikes (off-grid communication) NEST delivers from another buffer, which the delivery
  // hook does not see: the synapses stay with NEST's connectors, which deliver into the nodes' buffers
  // that update() drains (device copies of plastic synapses would miss every spike).
  // A host block holds no synapses either: NEST's connectors deliver to its nodes.
  if ( not on_host and not kernel().event_delivery_manager.get_off_grid_communication() )
  {
    export_synapses( tid, m.groups[ tid ], m.where[ tid ], m.loop_ids[ tid ], m.syn_rows[ tid ], m.n_syn[ tid ] );
    m.n_plastic[ tid ] = export_plastic( tid, m.groups[ tid ], m.where[ tid ], m.loop_ids[ tid ], m.plastic[ tid ] );
  }
  m.prows[ tid ].assign( m.plastic[ tid ].size(), std::vector< uint32_t >() );
  m.plags[ tid ].assign( m.plastic[ tid ].size(), std::vector< uint32_t >() );
  if ( m.device_poisson and not on_host and not m.groups[ tid ].empty() )
  {
    Part p( "generators" );
    m.n_gen[ tid ] = export_generators( tid, m.groups[ tid ], m.where[ tid ], on_device );
  }
  restore_pending( tid );
}

/*
 * The blocks of threads (in order) as one set (nestcl/block_set.h), owned by
 * the first: one merged update and one merged delivery per slice whatever the
 * number of models, the staging one transfer; the device loop runs on it too.
 * One thread's blocks, or, where the device loop runs several stream VPs of
 * the device, all of theirs (one queue, set_blocks says whose each block is).
 */
void
NestclManager::Impl::make_set( const std::vector< size_t >& threads )
{
  Impl& m = *this;
  std::vector< nestcl_block* > blocks;
  std::vector< std::pair< size_t, size_t > > whose;
  for ( const size_t tid : threads )
  {
    for ( size_t g = 0; not m.c_loop[ tid ] and g < m.groups[ tid ].size(); ++g )
    {
      blocks.push_back( m.groups[ tid ][ g ].block );
      whose.emplace_back( tid, g );
    }
  }
  if ( not blocks.empty() )
  {
    check(
      nestcl_block_set_create( m.dev, blocks.data(), static_cast< int >( blocks.size() ), &m.sets[ threads.front() ] ),
      "merging the stream VPs' blocks" );
  }
  if ( threads.size() > 1 )
  {
    m.set_blocks = whose;
    m.set_threads = threads;
  }
}

nestcl_block_set*
NestclManager::Impl::set_of( size_t tid ) const
{
  if ( std::find( set_threads.begin(), set_threads.end(), tid ) != set_threads.end() )
  {
    return sets[ set_threads.front() ];
  }
  return tid < sets.size() ? sets[ tid ] : nullptr;
}

/* Every group of thread tid: the input NEST delivered into its nodes' buffers for lags [from, to), staged. */
template< typename M >
static void
stage_groups( M& m, size_t tid, long origin_steps, long from, long to )
{
  double* scratch = m.scratch[ tid ].data();
  const double t0 = now_s();
  for ( Group& g : m.groups[ tid ] )
  {
    const uint32_t nch = nestcl_block_channels( g.block );
    const size_t n = g.nodes.size();
    const bool events = g.model->event_queue != 0;
    for ( size_t i = 0; i < n; ++i )
    {
      for ( long lag = from; lag < to; ++lag )
      {
        g.glue->drain( *g.nodes[ i ], lag, scratch, g.K );
        for ( uint32_t ch = 0; ch < nch; ++ch )
        {
          if ( scratch[ ch ] != 0.0 )
          {
            nestcl_block_stage(
              g.block, static_cast< uint32_t >( lag ), ch, static_cast< uint32_t >( i ), scratch[ ch ] );
          }
        }
        // precise spikes (a SliceRingBuffer): the node's own queue, in the order NEST's update() would take them
        if ( events )
        {
          check( g.glue->events( *g.nodes[ i ], origin_steps, lag, g.block, static_cast< uint32_t >( i ) ),
            "staging the precise spikes of " + std::string( g.name ) );
        }
      }
    }
  }
  m.t_stage[ tid ] += now_s() - t0;
}

/*
 * Update, first part: every group's staged input, and the update of all
 * groups of the threads (one, or those whose blocks are one set) to their
 * queue, without a wait (the spike lists come back in the one round trip
 * that the caller waits for). Through the set when there is one: one staging
 * transfer and two launches whatever the models.
 */
template< typename M >
static void
enqueue_groups( M& m, const std::vector< size_t >& threads, long origin_steps, long from, long to )
{
  nestcl_block_set* set = m.set_of( threads.front() );
  for ( const size_t tid : threads )
  {
    if ( not m.in_device_loop )
    {
      stage_groups( m, tid, origin_steps, from, to );
    }
    const double t1 = now_s();
    m.enq_rc[ tid ].assign( m.groups[ tid ].size(), 0 );
    for ( size_t gi = 0; not set and gi < m.groups[ tid ].size(); ++gi )
    {
      m.enq_rc[ tid ][ gi ] = nestcl_block_update_enqueue(
        m.groups[ tid ][ gi ].block, origin_steps, static_cast< int >( from ), static_cast< int >( to ) );
    }
    m.t_update[ tid ] += now_s() - t1;
  }
  if ( set )
  {
    const double t1 = now_s();
    const int rc =
      nestcl_block_set_update_enqueue( set, origin_steps, static_cast< int >( from ), static_cast< int >( to ) );
    for ( const size_t tid : threads )
    {
      m.enq_rc[ tid ].assign( m.groups[ tid ].size(), rc );
    }
    m.t_update[ threads.front() ] += now_s() - t1;
  }
}

/*
 * The model's update() threw on the device (GSLSolverFailure, NumericalInstability, ...), where NEST's own
 * loop would have stopped with that exception: stop the same way, with NEST's exception where it is one of
 * NEST's (a script catches it by its class), naming the node and the step.
 */
[[noreturn]] static void
throw_failure( const Group& g, long origin_steps, uint32_t f_code, uint32_t f_index, uint32_t f_lag, int f_status )
{
  const nestcl_model* model = g.model;
  const bool named = model->failures and f_code >= 1 and f_code <= static_cast< uint32_t >( model->n_failures );
  const std::string name = named ? model->failures[ f_code - 1 ] : "failure";
  std::ostringstream at;
  at << "nestcl: " << g.name << " node ";
  if ( f_index < g.nodes.size() )
  {
    at << g.nodes[ f_index ]->get_node_id();
  }
  else
  {
    at << "(local index " << f_index << ")";
  }
  at << " at t = " << Time( Time::step( origin_steps + static_cast< long >( f_lag ) ) ).get_ms() << " ms";
  if ( name == "NumericalInstability" )
  {
    throw NumericalInstability( at.str() );
  }
  if ( name == "GSLSolverFailure" )
  {
    throw GSLSolverFailure( at.str(), f_status );
  }
  throw KernelException( at.str() + ": " + name + " (status " + std::to_string( f_status ) + ")" );
}

/*
 * Update, last part, for one group (after the wait): its failure, if the
 * model's update() threw on the device; its spikes, sent in NEST's order;
 * its recorded samples into the nodes' loggers.
 */
template< typename M >
static void
send_group( M& m, size_t tid, size_t gi, long origin_steps, long from, long to )
{
  double* scratch = m.scratch[ tid ].data();
  std::vector< int >& enq_rc = m.enq_rc[ tid ];
  Group& g = m.groups[ tid ][ gi ];
  const size_t n = g.nodes.size();
  const double t1 = now_s();
  // Through the set, every block was collected at the wait (set_collect's result is enq_rc's).
  const bool in_set = m.set_of( tid ) != nullptr;
  const int update_rc = enq_rc[ gi ] ? enq_rc[ gi ] : in_set ? 0 : nestcl_block_update_collect( g.block );
  uint32_t f_code = 0, f_index = 0, f_lag = 0;
  int f_status = 0;
  if ( nestcl_block_failure( g.block, &f_code, &f_index, &f_lag, &f_status ) )
  {
    throw_failure( g, origin_steps, f_code, f_index, f_lag, f_status );
  }
  check( update_rc, "updating " + std::string( g.name ) );
  const double t2 = now_s();
  const nestcl_spike* spikes;
  uint32_t n_spikes;
  nestcl_block_spikes( g.block, &spikes, &n_spikes );
  // In the order NEST's own loop would send them (node by node, each through its lags), since the
  // device writes its list in whatever order the work-items finish.
  // A model that sets spike offsets (nestcl/model.h, spike_offsets) lists each entry's offset at the
  // entry's position; one neuron's entries keep the device's order (its work-item's sends, in order).
  const double* offsets = nestcl_block_spike_offsets( g.block );
  std::vector< SortedSpike >& sorted = m.sorted[ tid ];
  sorted.resize( n_spikes );
  for ( uint32_t k = 0; k < n_spikes; ++k )
  {
    sorted[ k ] = SortedSpike { spikes[ k ].index, spikes[ k ].lag, k };
  }
  std::sort( sorted.begin(), sorted.end(),
    []( const SortedSpike& a, const SortedSpike& b )
    { return std::tie( a.index, a.lag, a.at ) < std::tie( b.index, b.lag, b.at ); } );
  // A model that sets the multiplicity of its spikes (nestcl/model.h) lists a spike of multiplicity m
  // as m equal entries: NEST sends it as one event, as the model's update() would.
  const bool runs = g.model->multiplicity != 0;
  for ( size_t k = 0; k < sorted.size(); )
  {
    size_t e = k + 1;
    const double offset = offsets ? offsets[ sorted[ k ].at ] : 0.0;
    while ( runs and e < sorted.size() and sorted[ e ].index == sorted[ k ].index and sorted[ e ].lag == sorted[ k ].lag
      and ( not offsets or offsets[ sorted[ e ].at ] == offset ) )
    {
      ++e;
    }
    g.glue->emit( *g.nodes[ sorted[ k ].index ], origin_steps, static_cast< long >( sorted[ k ].lag ), e - k, offset );
    k = e;
  }
  if ( m.record[ tid ] )
  {
    const double* rec = nestcl_block_recorded( g.block );
    const uint32_t nrec = nestcl_block_recordables( g.block );
    for ( long lag = from; lag < to; ++lag )
    {
      for ( size_t i = 0; i < n; ++i )
      {
        for ( uint32_t r = 0; r < nrec; ++r )
        {
          scratch[ r ] = rec[ ( static_cast< size_t >( lag - from ) * nrec + r ) * n + i ];
        }
        g.glue->record( *g.nodes[ i ], scratch, origin_steps + lag );
      }
    }
  }
  const double t3 = now_s();
  m.next_step[ tid ] = origin_steps + to;
  m.t_update[ tid ] += t2 - t1;
  m.t_emit[ tid ] += t3 - t2;
}
#endif

std::pair< size_t, size_t >
NestclManager::Impl::group_of_block( size_t tid, uint32_t block ) const
{
  const bool shared = std::find( set_threads.begin(), set_threads.end(), tid ) != set_threads.end();
  return shared ? set_blocks.at( block ) : std::make_pair( tid, static_cast< size_t >( block ) );
}

void
NestclManager::Impl::replay( size_t tid, const nestcl_loop_spike* sp, size_t n, long origin )
{
  Impl& m = *this;
  // A spike of multiplicity m is m equal entries (nestcl/block_set.h): one event, as send_group sends it.
  for ( size_t k = 0; k < n; )
  {
    size_t e = k + 1;
    while (
      e < n and sp[ e ].block == sp[ k ].block and sp[ e ].index == sp[ k ].index and sp[ e ].step == sp[ k ].step )
    {
      ++e;
    }
    const auto [ t, gi ] = m.group_of_block( tid, sp[ k ].block );  // the set's block: its thread and group
    Group& g = m.groups[ t ][ gi ];
    g.glue->emit( *g.nodes[ sp[ k ].index ], origin, static_cast< long >( sp[ k ].step - origin ), e - k, 0.0 );
    k = e;
  }
}

void
NestclManager::Impl::loop_failure( size_t tid, size_t group, long origin )
{
  Impl& m = *this;
  const std::string err = nestcl_last_error();
  const auto [ t, gi ] = m.group_of_block( tid, static_cast< uint32_t >( group ) );
  const Group& g = m.groups[ t ][ gi ];
  uint32_t f_code = 0, f_index = 0, f_lag = 0;
  int f_status = 0;
  if ( nestcl_block_failure( g.block, &f_code, &f_index, &f_lag, &f_status ) )
  {
    throw_failure( g, origin, f_code, f_index, f_lag, f_status );
  }
  throw KernelException( "nestcl: updating " + std::string( g.name ) + ": " + err );
}

#ifdef HAVE_NESTCL
/*
 * After the update was enqueued: one wait, then every block's results; a
 * failed update is its group's (the groups before it send their spikes first,
 * as NEST's loop would), any other error every group's.
 */
template< typename M >
static void
wait_groups( M& m, const std::vector< size_t >& threads )
{
  const double t1 = now_s();
  nestcl_block_set* set = m.set_of( threads.front() );
  if ( set )
  {
    check( nestcl_block_set_finish( set ), "waiting for the device" );
    const int rc = nestcl_block_set_collect( set );
    bool failed = false;
    for ( const size_t tid : threads )
    {
      for ( const Group& g : m.groups[ tid ] )
      {
        failed = failed or nestcl_block_failure( g.block, nullptr, nullptr, nullptr, nullptr );
      }
    }
    for ( const size_t tid : threads )
    {
      for ( size_t gi = 0; gi < m.groups[ tid ].size(); ++gi )
      {
        const bool own = nestcl_block_failure( m.groups[ tid ][ gi ].block, nullptr, nullptr, nullptr, nullptr );
        m.enq_rc[ tid ][ gi ] = m.enq_rc[ tid ][ gi ] ? m.enq_rc[ tid ][ gi ] : ( own or not failed ? rc : 0 );
      }
    }
  }
  else
  {
    check( nestcl_block_finish( m.groups[ threads.front() ].front().block ), "waiting for the device" );
  }
  m.t_update[ threads.front() ] += now_s() - t1;
  ++m.n_slices[ threads.front() ];
}
#endif

void
NestclManager::update( size_t tid, const Time& origin, long from, long to )
{
#ifdef HAVE_NESTCL
  Impl& m = *impl_;
  if ( tid >= m.plan.size() or m.plan[ tid ].empty() )
  {
    return;
  }
  // Where several stream VPs' blocks are one set (the device loop's), its owner updates all of them.
  std::vector< size_t > threads { tid };
  if ( std::find( m.set_threads.begin(), m.set_threads.end(), tid ) != m.set_threads.end() )
  {
    if ( tid != m.set_threads.front() )
    {
      return;
    }
    threads = m.set_threads;
  }
  const long origin_steps = origin.get_steps();
  // One wait per slice however many models the threads run (nestcl_waits / nestcl_slices): every group
  // goes to the queue first; the wait comes at the first group whose spikes must be sent. The neurons
  // that stay on the host run their own update() in their place among the groups, those before the first
  // group while the device works, so that every spike leaves in the order of NEST's own loop.
  enqueue_groups( m, threads, origin_steps, from, to );
  bool waited = false;
  for ( const size_t t : threads )
  {
    for ( const Impl::Step& step : m.plan[ t ] )
    {
      if ( step.group < 0 )
      {
        step.node->update( origin, from, to );
        continue;
      }
      if ( not waited )
      {
        wait_groups( m, threads );
        waited = true;
      }
      send_group( m, t, static_cast< size_t >( step.group ), origin_steps, from, to );
    }
  }
#else
  (void) tid;
  (void) origin;
  (void) from;
  (void) to;
#endif
}

#ifdef HAVE_NESTCL
/* The input in flight in g's ring after the last step updated (a partial slice, delays above min_delay). */
void
NestclManager::Impl::save_pending( size_t tid, const Group& g )
{
  Impl& m = *this;
  const int64_t next = tid < m.next_step.size() ? m.next_step[ tid ] : -1;
  if ( g.block and next >= 0 and nestcl_block_ring_save( g.block ) == 0 )
  {
    const uint32_t slots = nestcl_block_ring_slots( g.block ), nch = nestcl_block_channels( g.block );
    for ( size_t i = 0; i < g.nodes.size(); ++i )
    {
      for ( int64_t step = next; step < next + slots; ++step )
      {
        for ( uint32_t ch = 0; ch < nch; ++ch )
        {
          const int64_t v = nestcl_block_ring_value( g.block, step, ch, static_cast< uint32_t >( i ) );
          if ( v != 0 )
          {
            m.pending[ g.nodes[ i ]->get_node_id() ].push_back( { ch, step, v } );
          }
        }
      }
    }
  }
}

/* The kernel keys count launches and waits over the whole session (until ResetKernel): a freed set's and block's. */
template< typename M >
static void
count_work( M& m, size_t tid, const nestcl_block_set* set, const nestcl_block* b )
{
  if ( tid < m.n_launches.size() )
  {
    uint64_t l = 0, w = 0;
    set ? nestcl_block_set_enqueued( set, &l, &w ) : nestcl_block_enqueued( b, &l, &w );
    m.n_launches[ tid ] += static_cast< long >( l );
    m.n_waits[ tid ] += static_cast< long >( w );
  }
}

void
NestclManager::Impl::pull_group( size_t tid, size_t g )
{
  Impl& m = *this;
  Resident& r = m.res[ tid ];
  Group& gr = m.groups[ tid ][ g ];
  if ( g >= r.group_ahead.size() or not r.group_ahead[ g ] or not gr.block )
  {
    return;
  }
  check( nestcl_block_download( gr.block ), "reading back " + std::string( gr.name ) );
  void* const* f = nestcl_block_fields( gr.block );
  for ( size_t i = 0; i < gr.nodes.size(); ++i )
  {
    gr.glue->unpack( *gr.nodes[ i ], f, gr.nodes.size(), i );
  }
  import_history( gr );
  r.group_ahead[ g ] = 0;
  ++m.traffic.blocks_read;
}

bool
NestclManager::Impl::push_group( size_t tid, size_t g, std::string& why )
{
  Impl& m = *this;
  Group& gr = m.groups[ tid ][ g ];
  // A node's SetStatus may have changed what placed it in this block: its receptors, a condition.
  for ( Node* node : gr.nodes )
  {
    size_t K = 0;
    std::string off;
    if ( device_glue( *node, K, off ) != gr.glue or K != gr.K )
    {
      why = "the status of " + node->get_name() + " " + std::to_string( node->get_node_id() ) + " changed its block";
      return false;
    }
  }
  void* const* f = nestcl_block_fields( gr.block );
  for ( size_t i = 0; i < gr.nodes.size(); ++i )
  {
    gr.glue->pack( *gr.nodes[ i ], f, gr.nodes.size(), i );
  }
  check( nestcl_block_upload( gr.block ), "sending " + std::string( gr.name ) + " to the device" );
  ++m.traffic.blocks_sent;
  return true;
}

void
NestclManager::Impl::release_thread( size_t tid, bool pull )
{
  Impl& m = *this;
  if ( tid >= m.groups.size() )
  {
    return;
  }
  if ( pull )
  {
    // STDP state first (NEST's connections), then each block's state and history into its nodes.
    for ( size_t q = 0; q < m.plastic[ tid ].size(); ++q )
    {
      if ( q < m.res[ tid ].plastic_ahead.size() and m.res[ tid ].plastic_ahead[ q ] )
      {
        import_plastic( m.groups[ tid ], m.where[ tid ], tid, m.plastic[ tid ][ q ] );
        ++m.traffic.synapses_read;
      }
    }
    for ( size_t g = 0; g < m.groups[ tid ].size(); ++g )
    {
      pull_group( tid, g );
    }
  }
  // The set first: a block's buffers are parts of its set's, which gives the blocks their own staging back.
  // A set of several threads' blocks goes with the first of them that goes (the caller releases them all).
  const bool shared = std::find( m.set_threads.begin(), m.set_threads.end(), tid ) != m.set_threads.end();
  nestcl_block_set*& set = shared ? m.sets[ m.set_threads.front() ] : m.sets[ tid ];
  if ( set )
  {
    count_work( m, tid, set, nullptr );
    nestcl_block_set_destroy( set );
    set = nullptr;
  }
  if ( shared )
  {
    m.set_blocks.clear();
    m.set_threads.clear();
  }
  for ( Group& g : m.groups[ tid ] )
  {
    if ( pull )
    {
      save_pending( tid, g );
    }
    if ( g.block )
    {
      count_work( m, tid, nullptr, g.block );
    }
    nestcl_block_destroy( g.block );
    g.block = nullptr;
  }
  m.groups[ tid ].clear();
  m.plan[ tid ].clear();
  m.where[ tid ].clear();
  m.syn_rows[ tid ].clear();
  m.plastic[ tid ].clear();
  m.loop_ids[ tid ] = LoopIds();
  m.placed[ tid ].clear();
  m.record[ tid ] = 0;
  m.c_loop[ tid ] = 0;
  m.n_syn[ tid ] = m.n_gen[ tid ] = m.n_plastic[ tid ] = 0;
  m.res[ tid ] = Resident();
}

void
NestclManager::Impl::release_all( bool pull )
{
  Impl& m = *this;
  for ( size_t tid = 0; tid < m.groups.size(); ++tid )
  {
    release_thread( tid, pull );
  }
  m.loop_threads.clear();
}
#endif
}
