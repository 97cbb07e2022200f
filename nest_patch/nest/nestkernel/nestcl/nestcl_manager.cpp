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
    impl_->placed.clear();
#ifdef HAVE_NESTCL
    impl_->pending.clear();
    impl_->next_step.clear();
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

void
NestclManager::finalize( const bool )
{
  cleanup();
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
NestclManager::Impl::reset_threads( size_t T )
{
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
  next_step.resize( T, -1 );  // kept from the last Simulate (one that updated nothing leaves it)
}
#endif

/*
 * Before each Simulate: the last Simulate's counts reset; on the device, each
 * stream thread's neurons packed into blocks, its synapses and generators
 * exported; then the run's start marked for measure_split().
 */
void
NestclManager::prepare()
{
  const size_t T = kernel().vp_manager.get_num_threads();
  on_device_.assign( T, std::vector< char >() );
  impl_->n_syn.assign( T, 0 );
  impl_->n_gen.assign( T, 0 );
  impl_->n_plastic.assign( T, 0 );
  impl_->placed.clear();
#ifdef HAVE_NESTCL
  impl_->syn_rows.assign( T, std::vector< SynRows >() );
  impl_->plastic.assign( T, std::vector< PlasticRows >() );
#endif
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
  m.open_device();
  m.reset_threads( T );
  setup.min_delay = kernel().connection_manager.get_min_delay();
  setup.max_delay = kernel().connection_manager.get_max_delay();
  setup.resolution_ms = Time::get_resolution().get_ms();
  Dictionary rng_status;
  kernel().random_manager.get_status( rng_status );
  setup.rng_seed = static_cast< uint32_t >( rng_status.get< long >( "rng_seed" ) );
  for ( size_t tid = setup.first_stream; tid < T; ++tid )
  {
    m.prepare_neurons( tid, setup, on_device_[ tid ] );
  }
  // Where the device loop may run, the device's synapse rows are its loop ids (nestcl_device_loop.cpp).
  size_t loop_tid = 0;
  m.loop_tid = -1;
  m.loop_why = m.loop_problem_before( setup.first_stream, loop_tid );
  if ( m.loop_why.empty() )
  {
    m.loop_why = m.loop_ids_of( loop_tid );
  }
  for ( size_t tid = setup.first_stream; tid < T; ++tid )
  {
    m.prepare_synapses( tid, on_device_[ tid ] );
  }
  if ( m.loop_why.empty() )
  {
    m.loop_why = m.loop_problem_after( loop_tid, on_device_[ loop_tid ] );
    m.loop_tid = m.loop_why.empty() ? static_cast< long >( loop_tid ) : -1;
  }
  m.pending.clear();
  m.t_prepare += now_s() - t0;
  m.mark_run_start();
#endif
}

/* After each Simulate: what it measured; the device's state back into NEST's connections and nodes. */
void
NestclManager::cleanup()
{
  measure_split();
#ifdef HAVE_NESTCL
  Impl& m = *impl_;
  // STDP state first: the blocks go below.
  for ( size_t tid = 0; tid < m.groups.size() and tid < m.plastic.size(); ++tid )
  {
    import_plastic( m.groups[ tid ], m.plastic[ tid ] );
  }
  m.plastic.clear();
  m.release_blocks();
  m.loop_tid = -1;
  m.syn_rows.clear();
  m.where.clear();
#endif
  for ( auto& v : on_device_ )
  {
    v.clear();
  }
}
}
