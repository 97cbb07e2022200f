/*
 * The kernel status keys nestcl_* (NestclManager::set_status, get_status):
 * the settings, checked when set and refused with NEST's BadProperty naming
 * the key, and the read-only keys that report the device, the time spent,
 * what went to the device and where each model's neurons ran. PyNEST's kernel
 * attributes for them are added by nest_patch/apply (KERNEL_ATTRIBUTES).
 */
#include "nestcl/nestcl_manager.h"
#include "nestcl/nestcl_manager_impl.h"

#include "dictionary.h"
#include "exceptions.h"
#include "kernel_manager.h"

namespace nest
{
/* The keys' names, from the one table of them (nestcl_keys.def): keys::nestcl_streams, ... */
namespace keys
{
#define NESTCL_KEY( name, type, access, def, doc ) const std::string name = #name;
#include "nestcl/nestcl_keys.def"
#undef NESTCL_KEY
}

/*
 * nestcl_gpu_fraction as set in d, if it is: a number in [0, 1] or "auto"
 * (for now the even split, nestcl_streams / local_num_threads, which is
 * NEST's round robin). Another share places the neurons in weighted blocks
 * (nestcl_placement.h).
 */
static void
read_fraction( const Dictionary& d, bool& fraction_auto, double& fraction )
{
  if ( not d.known( keys::nestcl_gpu_fraction ) )
  {
    return;
  }
  bool is_text = false;
  std::string fraction_text;
  try
  {
    fraction_text = d.get< std::string >( keys::nestcl_gpu_fraction );
    is_text = true;
  }
  catch ( const TypeMismatch& )
  {
  }
  if ( is_text )
  {
    if ( fraction_text != "auto" )
    {
      throw BadProperty(
        keys::nestcl_gpu_fraction + " must be a number in [0, 1] or \"auto\", not \"" + fraction_text + "\"" );
    }
    fraction_auto = true;
  }
  else
  {
    fraction = d.get< double >( keys::nestcl_gpu_fraction );
    if ( not( fraction >= 0.0 and fraction <= 1.0 ) )
    {
      throw BadProperty(
        keys::nestcl_gpu_fraction + " must be a number in [0, 1] or \"auto\", not " + std::to_string( fraction ) );
    }
    fraction_auto = false;
  }
}

void
NestclManager::set_status( const Dictionary& d )
{
  const long T = static_cast< long >( kernel().vp_manager.get_num_threads() );
  const bool frozen = kernel().node_manager.size() > 0 or kernel().simulation_manager.has_been_simulated();
  long streams = impl_->streams;
  if ( d.update_integer_value( keys::nestcl_streams, streams ) and streams != impl_->streams )
  {
    if ( streams < 0 or streams > T )
    {
      throw BadProperty( keys::nestcl_streams + " must lie in [0, local_num_threads] = [0, " + std::to_string( T )
        + "], not " + std::to_string( streams ) );
    }
#ifndef HAVE_NESTCL
    if ( streams > 0 )
    {
      throw BadProperty(
        keys::nestcl_streams + ": this NEST was built without nestcl (configure it with -Dwith-nestcl=<prefix>)" );
    }
#endif
    if ( frozen )
    {
      throw BadProperty( keys::nestcl_streams
        + " cannot change once nodes exist or the network was simulated (call ResetKernel first)" );
    }
  }
  std::string spec = impl_->device_spec;
  if ( d.update_value( keys::nestcl_device, spec ) and spec != impl_->device_spec )
  {
    if ( frozen )
    {
      throw BadProperty( keys::nestcl_device + " cannot change once nodes exist or the network was simulated" );
    }
#ifdef HAVE_NESTCL
    nestcl_device_info info;
    if ( nestcl_select_device( spec.empty() ? nullptr : spec.c_str(), &info ) != 0 )
    {
      throw BadProperty( keys::nestcl_device + ": " + nestcl_last_error() );
    }
#endif
  }
  bool fraction_auto = impl_->fraction_auto;
  double fraction = impl_->fraction;
  read_fraction( d, fraction_auto, fraction );
  if ( not fraction_auto )
  {
    const std::string problem = fraction_problem( streams, fraction );
    if ( not problem.empty() )
    {
      throw BadProperty( keys::nestcl_gpu_fraction + " = " + std::to_string( fraction ) + ": " + problem );
    }
  }
  if ( frozen and ( fraction_auto != impl_->fraction_auto or ( not fraction_auto and fraction != impl_->fraction ) ) )
  {
    throw BadProperty( keys::nestcl_gpu_fraction
      + " cannot change once nodes exist or the network was simulated (call ResetKernel first)" );
  }
  long min_work = impl_->min_work;
  if ( d.update_integer_value( keys::nestcl_device_min_work, min_work ) and min_work < 0 )
  {
    throw BadProperty( keys::nestcl_device_min_work
      + " must be a whole number of neuron-steps >= 0 (0: always the device), not " + std::to_string( min_work ) );
  }
  long sync_interval = impl_->sync_interval;
  if ( d.update_integer_value( keys::nestcl_sync_interval, sync_interval ) and sync_interval < 1 )
  {
    throw BadProperty(
      keys::nestcl_sync_interval + " must be a whole number of slices >= 1, not " + std::to_string( sync_interval ) );
  }
  bool device_loop = impl_->device_loop;
  d.update_value( keys::nestcl_device_loop, device_loop );  // takes effect at the next Simulate (Prepare)
  bool device_poisson = impl_->device_poisson;
  d.update_value( keys::nestcl_device_poisson, device_poisson );  // takes effect at the next Simulate
  impl_->device_poisson = device_poisson;
  impl_->device_loop = device_loop;
  impl_->sync_interval = sync_interval;
  impl_->min_work = min_work;  // takes effect at the next Simulate
  impl_->streams = streams;
#ifdef HAVE_NESTCL_PERFMODEL
  if ( spec != impl_->device_spec )
  {
    impl_->profile_state = -1;
  }
#endif
  impl_->device_spec = spec;
  impl_->fraction_auto = fraction_auto;
  impl_->fraction = fraction;
  if ( not frozen )
  {
    place();
  }
}

/* The translated models, the device's name (looked up before one is opened) and the bytes it holds. */
template< typename M >
static void
put_device( M& m, Dictionary& d )
{
  std::vector< std::string > models;
  long bytes = 0;
  std::string name = m.device_name;
#ifdef HAVE_NESTCL
  models = translated_models();
  if ( m.dev )
  {
    bytes = static_cast< long >( nestcl_device_bytes_total( m.dev ) );
  }
  if ( name.empty() )
  {
    // Looked up once per device spec: selecting a device queries OpenCL (and builds a probe kernel), and
    // scripts read the kernel status often (nest.NumProcesses() does).
    if ( not m.probed or m.probed_spec != m.device_spec )
    {
      nestcl_device_info info;
      m.probed_name = nestcl_select_device( m.device_spec.empty() ? nullptr : m.device_spec.c_str(), &info ) == 0
        ? info.device_name
        : "";
      m.probed_spec = m.device_spec;
      m.probed = true;
    }
    name = m.probed_name;
  }
#endif
  d[ keys::nestcl_translated_models ] = models;
  d[ keys::nestcl_device_name ] = name;
  d[ keys::nestcl_device_bytes ] = bytes;
}

/* The stream VPs' times and what they put on the device, summed over the threads. */
template< typename M >
static void
put_totals( const M& m, Dictionary& d )
{
  double tu = 0, ts = 0, te = 0, td = 0;
  long ns = 0, ng = 0, np = 0;
  for ( size_t k = 0; k < m.t_update.size(); ++k )
  {
    tu += m.t_update[ k ];
    ts += m.t_stage[ k ];
    te += m.t_emit[ k ];
    td += m.t_deliver[ k ];
    ns += m.n_syn[ k ];
    ng += m.n_gen[ k ];
    np += k < m.n_plastic.size() ? m.n_plastic[ k ] : 0;
  }
  d[ keys::nestcl_time_update ] = tu;
  d[ keys::nestcl_time_stage ] = ts;
  d[ keys::nestcl_time_emit ] = te;
  d[ keys::nestcl_time_deliver ] = td;
  d[ keys::nestcl_device_synapses ] = ns;
  d[ keys::nestcl_device_generators ] = ng;
  d[ keys::nestcl_device_plastic_synapses ] = np;
}

/*
 * What the stream VPs asked of the device: kernel launches and waits (clFinish, blocking transfers), and
 * the slices they updated; a stream waits once per slice (twice when its spikes pass the read-back guess).
 */
template< typename M >
static void
put_device_work( const M& m, Dictionary& d )
{
  long launches = 0, waits = 0, slices = 0;
  for ( size_t k = 0; k < m.n_slices.size(); ++k )
  {
    slices += m.n_slices[ k ];
    launches += m.n_launches[ k ];
    waits += m.n_waits[ k ];
  }
#ifdef HAVE_NESTCL
  for ( nestcl_block_set* set : m.sets )
  {
    uint64_t l = 0, w = 0;
    nestcl_block_set_enqueued( set, &l, &w );
    launches += static_cast< long >( l );
    waits += static_cast< long >( w );
  }
  for ( const std::vector< Group >& gs : m.groups )
  {
    for ( const Group& g : gs )
    {
      uint64_t l = 0, w = 0;
      nestcl_block_enqueued( g.block, &l, &w );
      launches += static_cast< long >( l );
      waits += static_cast< long >( w );
    }
  }
#endif
  d[ keys::nestcl_launches ] = launches;
  d[ keys::nestcl_waits ] = waits;
  d[ keys::nestcl_slices ] = slices;
}

/* Per model, where the neurons of the last Simulate's stream VPs ran, and why those on the host did. */
template< typename M >
static void
put_nodes( const M& m, Dictionary& d )
{
  Dictionary nodes;
  std::map< std::string, typename M::Placed > all;  // over the stream threads
  for ( const auto& by_model : m.placed )
  {
    for ( const auto& [ model, p ] : by_model )
    {
      typename M::Placed& a = all[ model ];
      a.device += p.device;
      a.host += p.host;
      a.c_loop += p.c_loop;
      for ( const auto& [ reason, count ] : p.why )
      {
        a.why[ reason ] += count;
      }
    }
  }
  for ( const auto& [ model, placed ] : all )
  {
    Dictionary entry, why;
    entry[ "device" ] = placed.device;
    entry[ "c_loop" ] = placed.c_loop;
    entry[ "host" ] = placed.host;
    for ( const auto& [ reason, count ] : placed.why )
    {
      why[ reason ] = count;
    }
    entry[ "host_reasons" ] = why;
    nodes[ model ] = entry;
  }
  d[ keys::nestcl_nodes ] = nodes;
}

/*
 * What stayed on the device between Simulate calls and what travelled since
 * ResetKernel: threads built, blocks of neurons and thread-wise synapse
 * models sent in place or read back, the device's bytes now, and each thread
 * the last Prepare built again, with why.
 */
template< typename M >
static void
put_resident( const M& m, Dictionary& d )
{
  Dictionary r;
  std::vector< std::string > rebuilt;
  long built = 0, sent = 0, read = 0, syn_sent = 0, syn_read = 0;
#ifdef HAVE_NESTCL
  rebuilt = m.rebuilt;
  built = m.traffic.built;
  sent = m.traffic.blocks_sent;
  read = m.traffic.blocks_read;
  syn_sent = m.traffic.synapses_sent;
  syn_read = m.traffic.synapses_read;
#endif
  r[ "threads_built" ] = built;
  r[ "blocks_sent" ] = sent;
  r[ "blocks_read" ] = read;
  r[ "synapse_models_sent" ] = syn_sent;
  r[ "synapse_models_read" ] = syn_read;
  r[ "rebuilt" ] = rebuilt;
  d[ keys::nestcl_resident ] = r;
}

void
NestclManager::get_status( Dictionary& d )
{
  const size_t T = kernel().vp_manager.get_num_threads();
  d[ keys::nestcl_streams ] = impl_->streams;
  d[ keys::nestcl_gpu_fraction ] = not impl_->fraction_auto ? impl_->fraction
    : impl_->split_alpha >= 0.0                             ? impl_->split_alpha
                                : ( T ? static_cast< double >( impl_->streams ) / static_cast< double >( T ) : 0.0 );
  d[ keys::nestcl_gpu_fraction_source ] = impl_->split_source;
  // -1 where not known: NaN would make two reads of the kernel status unequal (NEST's test_status compares them).
  const auto known = []( double x ) { return std::isnan( x ) ? -1.0 : x; };
  d[ keys::nestcl_predicted_wall ] = known( impl_->predicted_wall );
  d[ keys::nestcl_measured_wall ] = known( impl_->measured_wall );
  d[ keys::nestcl_recommended_gpu_fraction ] = known( impl_->recommended );
  d[ keys::nestcl_recommended_wall ] = known( impl_->recommended_wall );
  d[ keys::nestcl_device ] = impl_->device_spec;
  d[ keys::nestcl_device_poisson ] = impl_->device_poisson;
  d[ keys::nestcl_device_min_work ] = impl_->min_work;
  d[ keys::nestcl_device_loop ] = impl_->device_loop;
  d[ keys::nestcl_sync_interval ] = impl_->sync_interval;
  d[ keys::nestcl_simulate_path ] = impl_->sim_path;
  d[ keys::nestcl_simulate_path_reason ] = impl_->sim_path_why;
  d[ keys::nestcl_time_prepare ] = impl_->t_prepare;
  Dictionary parts;
  for ( const auto& [ name, seconds ] : prepare_parts() )
  {
    parts[ name ] = seconds;
  }
  d[ keys::nestcl_time_prepare_parts ] = parts;
  put_resident( *impl_, d );
  put_device( *impl_, d );
  put_totals( *impl_, d );
  put_device_work( *impl_, d );
  put_nodes( *impl_, d );
}
}
