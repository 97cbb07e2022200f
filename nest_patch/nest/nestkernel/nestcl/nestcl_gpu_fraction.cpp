/*
 * The stream VPs' share of the neurons (nestcl_gpu_fraction): a number places
 * them in weighted blocks (nestcl_placement.h); "auto" takes the share from
 * the device's performance profile (perfmodel/README.md) at the first Create
 * of neurons, and after each Simulate the manager measures the run and
 * recommends a share for this network (the kernel keys nestcl_predicted_wall,
 * nestcl_measured_wall, nestcl_recommended_gpu_fraction).
 */
#include "nestcl/nestcl_manager.h"
#include "nestcl/nestcl_manager_impl.h"
#include "nestcl/nestcl_placement.h"

#include <cstring>

#include "dictionary.h"
#include "kernel_manager.h"
#include "logging.h"

namespace nest
{
std::string
NestclManager::fraction_problem( long streams, double fraction ) const
{
  const long T = static_cast< long >( kernel().vp_manager.get_num_threads() );
  const double eps = 1e-12;
  if ( streams == 0 and fraction > eps )
  {
    return "there are no stream VPs (nestcl_streams is 0), so their share can only be 0";
  }
  if ( streams == T and fraction < 1.0 - eps )
  {
    return "every thread is a stream VP (nestcl_streams = local_num_threads), so their share can only be 1";
  }
  const double even = T > 0 ? static_cast< double >( streams ) / static_cast< double >( T ) : 0.0;
  if ( std::abs( fraction - even ) > eps and kernel().mpi_manager.get_num_processes() > 1 )
  {
    return "a share other than the even split (" + std::to_string( even )
      + ") places neurons in weighted blocks, which needs a single MPI process";
  }
  return std::string();
}

void
NestclManager::place()
{
  const size_t T = kernel().vp_manager.get_num_threads();
  const size_t G = static_cast< size_t >( impl_->streams );
  const double even = T > 0 ? static_cast< double >( G ) / static_cast< double >( T ) : 0.0;
  impl_->split_decided = false;
  impl_->split_alpha = -1.0;
  impl_->predicted_wall = NAN;
  impl_->split_source = impl_->fraction_auto ? "even split" : "nestcl_gpu_fraction";
  if ( impl_->fraction_auto or std::abs( impl_->fraction - even ) <= 1e-12 or G == 0 or G == T )
  {
    nestcl_placement::clear();  // NEST's round robin (auto: until the first Create of neurons)
    return;
  }
  std::vector< double > w( T );
  for ( size_t v = 0; v < T; ++v )
  {
    w[ v ] = v >= T - G ? impl_->fraction / static_cast< double >( G )
                        : ( 1.0 - impl_->fraction ) / static_cast< double >( T - G );
  }
  nestcl_placement::start( w );
}

#ifdef HAVE_NESTCL_PERFMODEL
/*
 * The device's hpc_benchmark profile (perfmodel/README.md), found and checked
 * as nestcl run finds it, once per ResetKernel or device change; false with
 * the reason in m.profile_why.
 */
template< typename M >
static bool
profile_of( M& m )
{
  if ( m.profile_state < 0 )
  {
    nestcl_device_info info;
    char buf[ 4096 ] = "";
    if ( nestcl_select_device( m.device_spec.empty() ? nullptr : m.device_spec.c_str(), &info ) != 0 )
    {
      m.profile_state = NESTCL_PM_UNUSABLE;
      m.profile_why = nestcl_last_error();
      return false;
    }
    m.profile_state =
      nestcl_pm_profile_find( "hpc_benchmark", info.device_name, info.driver_version, &m.profile, buf, sizeof buf );
    m.profile_path = buf;
    m.profile_why = m.profile_state == NESTCL_PM_NO_CACHE ? "no cache folder (NESTCL_CACHE_DIR is off)"
      : m.profile_state == NESTCL_PM_MISSING ? "no performance profile of '" + std::string( info.device_name ) + "' ("
        + m.profile_path + "; nestcl run hpc_benchmark --gpu-fraction auto calibrates one)"
      : m.profile_state == NESTCL_PM_UNUSABLE ? std::string( nestcl_last_error() )
                                              : std::string();
  }
  return m.profile_state == NESTCL_PM_FOUND;
}
#endif

void
NestclManager::choose_split( size_t n )
{
  Impl& m = *impl_;
  const size_t T = kernel().vp_manager.get_num_threads();
  const size_t G = static_cast< size_t >( m.streams );
  if ( not m.fraction_auto or m.split_decided or G == 0 or G == T or nestcl_placement::active )
  {
    return;
  }
  m.split_decided = true;
  if ( kernel().mpi_manager.get_num_processes() > 1 )
  {
    m.split_source =
      "even split: a share from the performance model places neurons in weighted blocks, which needs "
      "a single MPI process";
    return;
  }
  if ( kernel().node_manager.size() > 0 )
  {
    m.split_source = "even split: other nodes were created before the first neurons";
    return;
  }
#ifdef HAVE_NESTCL_PERFMODEL
  if ( not profile_of( m ) )
  {
    m.split_source = "even split: " + m.profile_why;
    // No profile is the usual case (INFO); one that is there but unusable deserves a WARNING.
    LOG( m.profile_state == NESTCL_PM_UNUSABLE ? VerbosityLevel::WARNING : VerbosityLevel::INFO, "NestclManager",
      "nestcl_gpu_fraction \"auto\": " + m.split_source );
    return;
  }
  /*
   * The prior: the profile's network (hpc_benchmark: in-degree 11250, delay
   * 1.5 ms, its measured rate, static synapses) with the neurons of this
   * first Create, as `nestcl perfmodel predict --neurons n --synapse static`.
   * After each Simulate, nestcl_recommended_gpu_fraction corrects it with
   * the network and the times measured (measure_split).
   */
  nestcl_pm_config c;
  nestcl_pm_hpc_config( &m.profile, static_cast< double >( n ), 0, 1, &c );
  c.TC = static_cast< double >( T - G );
  c.TG = static_cast< double >( G );
  double wall = NAN;
  const double a = nestcl_pm_best_alpha( m.profile.p, &c, &wall );
  std::vector< double > w( T );
  for ( size_t v = 0; v < T; ++v )
  {
    w[ v ] = v >= T - G ? a / static_cast< double >( G ) : ( 1.0 - a ) / static_cast< double >( T - G );
  }
  nestcl_placement::start( w );
  m.split_alpha = a;
  m.predicted_wall = wall;
  m.split_source = "performance profile " + m.profile_path;
  LOG( VerbosityLevel::INFO, "NestclManager",
    "nestcl_gpu_fraction \"auto\": " + std::to_string( a ) + " from " + m.profile_path );
#else
  (void) n;
  m.split_source = "even split: this nestcl has no performance model (built without GSL)";
#endif
}

/* When the run of a Simulate begins (the end of prepare): the clocks, and the streams' busy seconds so far. */
void
NestclManager::Impl::mark_run_start()
{
  Impl& m = *this;
  m.run_wall0 = now_s();
  m.run_t0_ms = kernel().simulation_manager.get_time().get_ms();
  m.busy0 = 0.0;
  for ( size_t k = 0; k < m.t_update.size(); ++k )
  {
    m.busy0 += m.t_update[ k ] + m.t_deliver[ k ];
  }
  m.neurons = 0;
  for ( size_t tid = 0; m.streams > 0 and tid < kernel().vp_manager.get_num_threads(); ++tid )
  {
    const SparseNodeArray& local = kernel().node_manager.get_local_nodes( tid );
    for ( auto it = local.begin(); it != local.end(); ++it )
    {
      m.neurons += it->get_node()->has_proxies() ? 1 : 0;
    }
  }
}

void
NestclManager::measure_split()
{
  Impl& m = *impl_;
  const double sim_s = ( kernel().simulation_manager.get_time().get_ms() - m.run_t0_ms ) * 1e-3;
  if ( m.streams == 0 or not( sim_s > 0.0 ) or m.neurons == 0 )
  {
    return;
  }
  // NEST's own stopwatch of the run (time_simulate, reset by each Simulate's prepare) and spike counter.
  Dictionary sim_status, ev_status;
  kernel().simulation_manager.get_status( sim_status );
  kernel().event_delivery_manager.get_status( ev_status );
  double run_s = sim_status.known( "time_simulate" ) ? sim_status.get< double >( "time_simulate" ) : 0.0;
  if ( not( run_s > 0.0 ) )
  {
    run_s = now_s() - m.run_wall0;
  }
  const double wall = run_s / sim_s;
  m.measured_wall = wall;
#ifdef HAVE_NESTCL_PERFMODEL
  const size_t T = kernel().vp_manager.get_num_threads();
  const size_t G = static_cast< size_t >( m.streams );
  if ( kernel().mpi_manager.get_num_processes() > 1 or not profile_of( m ) )
  {
    return;
  }
  // This network as it ran: its neurons, in-degree, rate and plastic share (from the stream VPs' synapses).
  double busy = 0.0;
  long syn = 0, plastic = 0;
  for ( size_t k = 0; k < m.t_update.size(); ++k )
  {
    busy += m.t_update[ k ] + m.t_deliver[ k ];
    syn += m.n_syn[ k ];
    plastic += k < m.n_plastic.size() ? m.n_plastic[ k ] : 0;
  }
  nestcl_pm_config c;
  std::memset( &c, 0, sizeof c );
  c.N = static_cast< double >( m.neurons );
  c.K = static_cast< double >( kernel().connection_manager.get_num_connections() ) / c.N;
  c.F = ev_status.get< double >( "local_spike_counter" ) / c.N / sim_s;
  c.M = 1.0;
  c.TC = static_cast< double >( T - G );
  c.TG = static_cast< double >( G );
  c.phi = syn + plastic > 0 ? static_cast< double >( plastic ) / static_cast< double >( syn + plastic ) : 0.0;
  c.S = 1.0 / ( kernel().connection_manager.get_min_delay() * Time::get_resolution().get_ms() * 1e-3 );
  c.P = static_cast< double >( m.profile.cores );
  nestcl_pm_measured x;
  x.alpha = not m.fraction_auto ? m.fraction
    : m.split_alpha >= 0.0      ? m.split_alpha
                                : ( T ? static_cast< double >( G ) / static_cast< double >( T ) : 0.0 );
  x.wall = wall;
  x.cpu_busy = 0.0;  // NEST's per-thread update and delivery stopwatches are detailed timers, off by default
  x.gpu_busy = G ? ( busy - m.busy0 ) / static_cast< double >( G ) / sim_s : 0.0;
  nestcl_pm_balance bal;
  if ( nestcl_pm_balance_fit( m.profile.p, &c, &x, 1, &bal ) == 0 )
  {
    m.recommended = bal.alpha;
    m.recommended_wall = bal.wall;
  }
#endif
}
}
