/*
 * nestcl inside NEST (nest_patch): the NestclManager's lifecycle as NEST's
 * KernelManager drives it (nestcl_manager.h): initialize and finalize with the
 * kernel, prepare and cleanup around each Simulate. prepare() names its steps;
 * the steps themselves live with their role (nestcl_manager_impl.h lists the
 * files). Compiled into NEST's nestkernel; with -Dwith-nestcl=<prefix> it links
 * the installed libnestcl and the models that nestcl-translate translated from
 * NEST's own models/ at configure time (HAVE_NESTCL). Without it the keys exist
 * and nestcl_streams can only be 0.
 */
#include "nestcl/nestcl_manager.h"
#include "nestcl/nestcl_manager_impl.h"
#include "nestcl/nestcl_placement.h"

#include <algorithm>

#include "dictionary.h"
#include "exceptions.h"
#include "kernel_manager.h"

namespace nest
{
std::map< std::string, double >&
prepare_parts()
{
  static std::map< std::string, double > parts;
  return parts;
}

NestclManager&
nestcl_manager()
{
  static NestclManager m;
  return m;
}

NestclManager::NestclManager()
  : impl_( new Impl() )
{
}

NestclManager::~NestclManager()
{
#ifdef HAVE_NESTCL
  if ( impl_ and impl_->dev )
  {
    nestcl_device_close( impl_->dev );
  }
#endif
}

void
NestclManager::initialize( const bool adjust_number_of_threads_or_rng_only )
{
  const size_t T = kernel().vp_manager.get_num_threads();
  if ( not adjust_number_of_threads_or_rng_only )
  {
    impl_->streams = 0;
    impl_->fraction_auto = true;
    impl_->device_spec.clear();
    impl_->device_poisson = false;
    impl_->min_work = DEFAULT_MIN_WORK;
    impl_->device_loop = true;
    impl_->sync_interval = DEFAULT_SYNC_INTERVAL;
    impl_->sim_path.clear();
    impl_->sim_path_why.clear();
    impl_->t_prepare = 0.0;
    prepare_parts().clear();
#ifdef HAVE_NESTCL
    impl_->traffic = Impl::Traffic();
    impl_->release_all( false );  // ResetKernel: the nodes go, and what the device held of them
    impl_->built_for.clear();
    impl_->pending.clear();
    impl_->next_step.assign( impl_->next_step.size(), -1 );  // the clock starts again
#endif
  }
  // Fewer threads than streams: every thread is a stream VP.
  impl_->streams = std::min( impl_->streams, static_cast< long >( T ) );
  nestcl_placement::before_create = []( size_t n ) { nestcl_manager().choose_split( n ); };
  if ( not adjust_number_of_threads_or_rng_only )
  {
    impl_->measured_wall = impl_->recommended = impl_->recommended_wall = NAN;
#ifdef HAVE_NESTCL_PERFMODEL
    impl_->profile_state = -1;
#endif
  }
  if ( not impl_->fraction_auto and not fraction_problem( impl_->streams, impl_->fraction ).empty() )
  {
    impl_->fraction_auto = true;  // the new thread count does not admit the share that was set
  }
  place();
  impl_->t_update.assign( T, 0.0 );
  impl_->n_slices.assign( T, 0 );
  impl_->n_launches.assign( T, 0 );
  impl_->n_waits.assign( T, 0 );
  impl_->enq_rc.assign( T, std::vector< int >() );
  impl_->t_stage.assign( T, 0.0 );
  impl_->t_emit.assign( T, 0.0 );
  impl_->t_deliver.assign( T, 0.0 );
  impl_->n_syn.assign( T, 0 );
  impl_->n_gen.assign( T, 0 );
  on_device_.assign( T, std::vector< char >() );
}

/* ResetKernel, or a change of threads (no nodes then): the device's copy of the network is dropped. */
void
NestclManager::finalize( const bool )
{
  measure_split();
#ifdef HAVE_NESTCL
  impl_->release_all( false );
  impl_->built_for.clear();
#endif
  resident_ = false;
  for ( auto& v : on_device_ )
  {
    v.clear();
  }
}

#ifdef HAVE_NESTCL
void
check( int rc, const std::string& what )
{
  if ( rc != 0 )
  {
    throw KernelException( "nestcl: " + what + ": " + nestcl_last_error() );
  }
}

void
NestclManager::Impl::size_threads( size_t T )
{
  next_step.resize( T, -1 );  // kept from the last Simulate (one that updated nothing leaves it)
  if ( groups.size() == T )
  {
    return;
  }
  release_all( false );
  groups.assign( T, std::vector< Group >() );
  plan.assign( T, std::vector< Impl::Step >() );
  scratch.assign( T, std::vector< double >() );
  sorted.assign( T, std::vector< SortedSpike >() );
  record.assign( T, 0 );
  syn_rows.assign( T, std::vector< SynRows >() );
  plastic.assign( T, std::vector< PlasticRows >() );
  prows.assign( T, std::vector< std::vector< uint32_t > >() );
  plags.assign( T, std::vector< std::vector< uint32_t > >() );
  rows.assign( T, std::vector< uint32_t >() );
  lags.assign( T, std::vector< uint32_t >() );
  where.assign( T, std::vector< std::pair< uint32_t, uint32_t > >() );
  sets.assign( T, nullptr );
  c_loop.assign( T, 0 );
  loop_ids.assign( T, LoopIds() );
  placed.assign( T, std::map< std::string, Placed >() );
  res.assign( T, Resident() );
  n_syn.assign( T, 0 );
  n_gen.assign( T, 0 );
  n_plastic.assign( T, 0 );
}
#endif

/*
 * Before each Simulate (Prepare): on the device, each stream thread's neurons
 * packed into blocks and its synapses and generators exported, once; a thread
 * already there gets only what changed since (nestcl_resident.cpp), or is
 * built again where that cannot be done in place. Then the device loop's
 * choice, and the run's start marked for measure_split().
 */
void
NestclManager::prepare()
{
  const size_t T = kernel().vp_manager.get_num_threads();
  on_device_.resize( T );
  if ( impl_->streams == 0 )
  {
    impl_->mark_run_start();
    return;
  }
#ifdef HAVE_NESTCL
  Impl& m = *impl_;
  const double t0 = now_s();
  BlockSetup setup;
  setup.first_stream = T - static_cast< size_t >( m.streams );
  setup.min_delay = kernel().connection_manager.get_min_delay();
  setup.max_delay = kernel().connection_manager.get_max_delay();
  setup.resolution_ms = Time::get_resolution().get_ms();
  Dictionary rng_status;
  kernel().random_manager.get_status( rng_status );
  setup.rng_seed = static_cast< uint32_t >( rng_status.get< long >( "rng_seed" ) );
  m.size_threads( T );
  m.rebuilt.clear();
  const std::string settings = m.settings_of( setup );
  if ( settings != m.built_for )
  {
    if ( not m.built_for.empty() )
    {
      m.rebuilt.push_back( "every thread: the device, the delays, the seed or a key of nestcl changed" );
    }
    Part p( "pull" );
    m.release_all( true );  // another device, ring or seed: every thread again
    m.built_for = settings;
  }
  m.open_device();
  std::vector< char > fresh( T, 0 );
  m.keep_or_rebuild( setup, fresh, on_device_ );
  m.choose_loop( setup, fresh, on_device_ );
  m.finish_threads( setup, fresh, on_device_ );
  m.pending.clear();
  m.network_changed = false;
  resident_ = true;
  m.t_prepare += now_s() - t0;
  m.mark_run_start();
#endif
}

#ifdef HAVE_NESTCL
static bool
among( const std::vector< size_t >& threads, size_t tid )
{
  return std::find( threads.begin(), threads.end(), tid ) != threads.end();
}

/*
 * Each resident stream thread gets what changed in place, or is built again
 * (released, its state kept for the new blocks) where that cannot be, with it
 * every thread of a set it shares; every thread not built is grouped again
 * (fresh).
 */
void
NestclManager::Impl::keep_or_rebuild(
  const BlockSetup& setup, std::vector< char >& fresh, std::vector< std::vector< char > >& on_device )
{
  Impl& m = *this;
  const size_t T = fresh.size();
  std::vector< std::string > why( T );
  for ( size_t tid = setup.first_stream; tid < T; ++tid )
  {
    if ( m.res[ tid ].built )
    {
      why[ tid ] = m.rebuild_reason( tid );
      if ( why[ tid ].empty() )
      {
        Part p( "changes" );
        why[ tid ] = m.push_thread( tid );
      }
    }
  }
  for ( const size_t t : m.set_threads )
  {
    for ( const size_t u : m.set_threads )
    {
      why[ u ] =
        why[ u ].empty() and not why[ t ].empty() ? "its set is shared with thread " + std::to_string( t ) : why[ u ];
    }
  }
  for ( size_t tid = setup.first_stream; tid < T; ++tid )
  {
    if ( not why[ tid ].empty() )
    {
      Part p( "pull" );
      m.release_thread( tid, true );
      m.rebuilt.push_back( "thread " + std::to_string( tid ) + ": " + why[ tid ] );
      m.share_refused.clear();  // the network changed: a shared set may fit again
    }
    if ( not m.res[ tid ].built )
    {
      Part p( "neurons" );
      m.release_thread( tid, false );  // what a Prepare that threw left half built (its nodes hold the state)
      m.prepare_neurons( tid, setup, on_device[ tid ] );
      fresh[ tid ] = 1;
    }
  }
}

/*
 * Whether the device loop may run, and with which threads (Impl::loop_threads,
 * or loop_why), then the fresh threads' blocks: where it may, the threads'
 * synapse rows are their loop ids (numbered before the export), and several
 * threads' blocks go on one queue, for one set; a resident thread that does
 * not have them so is built again first.
 */
void
NestclManager::Impl::choose_loop(
  const BlockSetup& setup, std::vector< char >& fresh, std::vector< std::vector< char > >& on_device )
{
  Impl& m = *this;
  std::vector< size_t > threads;
  m.loop_threads.clear();
  m.loop_why = m.loop_problem_before( setup.first_stream, threads );
  const bool share = m.loop_why.empty() and threads.size() > 1;
  if ( share and not m.share_refused.empty() )
  {
    m.loop_why = m.share_refused;
  }
  bool again = false;
  for ( size_t k = 0; m.loop_why.empty() and k < threads.size(); ++k )
  {
    again = again
      or ( not fresh[ threads[ k ] ]
        and ( m.loop_ids[ threads[ k ] ].of.empty() or ( share and m.set_threads != threads ) ) );
  }
  for ( size_t k = 0; again and k < threads.size(); ++k )
  {
    if ( not fresh[ threads[ k ] ] )
    {
      m.release_thread( threads[ k ], true );
      m.prepare_neurons( threads[ k ], setup, on_device[ threads[ k ] ] );
      fresh[ threads[ k ] ] = 1;
    }
  }
  bool any = false;
  for ( size_t tid = setup.first_stream; tid < fresh.size(); ++tid )
  {
    if ( fresh[ tid ] )
    {
      Part p( "neurons" );
      m.make_blocks( tid, setup,
        share and m.loop_why.empty() and among( threads, tid ) ? 0 : static_cast< int >( tid - setup.first_stream ) );
      any = any or among( threads, tid );
    }
  }
  if ( m.loop_why.empty() and any )
  {
    Part p( "loop_ids" );
    m.loop_why = m.loop_ids_of( threads );
  }
  m.loop_threads = m.loop_why.empty() ? threads : std::vector< size_t >();
}

/*
 * The fresh threads' synapses and generators, then their sets: the device
 * loop's threads' one shared set where it runs several, each its own
 * otherwise; whether the loop may run after all. A shared set runs only in
 * the loop (NEST's own loop updates its threads in parallel): where the loop
 * cannot run, its threads are built again with sets of their own.
 */
void
NestclManager::Impl::finish_threads(
  const BlockSetup& setup, std::vector< char >& fresh, std::vector< std::vector< char > >& on_device )
{
  Impl& m = *this;
  const bool share = m.loop_threads.size() > 1 and fresh[ m.loop_threads.front() ];
  for ( size_t tid = setup.first_stream; tid < fresh.size(); ++tid )
  {
    if ( fresh[ tid ] )
    {
      m.prepare_synapses( tid, on_device[ tid ] );
      Part p( "set" );
      if ( not m.c_loop[ tid ] and not( share and among( m.loop_threads, tid ) ) )
      {
        m.make_set( { tid } );
      }
    }
  }
  if ( share )
  {
    Part p( "set" );
    m.make_set( m.loop_threads );
  }
  for ( size_t tid = setup.first_stream; tid < fresh.size(); ++tid )
  {
    if ( fresh[ tid ] )
    {
      m.mark_built( tid );
    }
  }
  if ( m.loop_why.empty() )
  {
    m.loop_why = m.loop_problem_after( m.loop_threads, on_device );
    m.loop_threads = m.loop_why.empty() ? m.loop_threads : std::vector< size_t >();
  }
  if ( not m.set_threads.empty() and m.loop_threads.empty() )
  {
    m.share_refused = "several stream VPs hold neurons, and " + m.loop_why;
    const std::vector< size_t > again = m.set_threads;
    for ( const size_t t : again )
    {
      m.release_thread( t, true );
    }
    std::vector< char > only( fresh.size(), 0 );
    for ( const size_t t : again )
    {
      m.prepare_neurons( t, setup, on_device[ t ] );
      m.make_blocks( t, setup, static_cast< int >( t - setup.first_stream ) );
      only[ t ] = 1;
    }
    finish_threads( setup, only, on_device );
  }
}
#endif

/*
 * After each Simulate (Cleanup): what it measured. The network stays on the
 * device, which each Run left ahead of NEST (run_device_loop marks it so): a
 * read brings back what it reads (nestcl_resident.cpp).
 */
void
NestclManager::cleanup()
{
  measure_split();
}
}
