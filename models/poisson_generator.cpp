/*
 * poisson_generator: defaults, status handling, the per-run distribution and
 * the update/event_hook pair (see poisson_generator.h).
 */
#include "poisson_generator.h"

#include "dict_util.h"
#include "exceptions.h"
#include "kernel_manager.h"
#include "nest_impl.h"

namespace nest
{
void
register_poisson_generator( const std::string& name )
{
  register_node_model< poisson_generator >( name );
}

poisson_generator::Parameters_::Parameters_()
  : rate_( 0.0 )
{
}

void
poisson_generator::Parameters_::get( Dictionary& d ) const
{
  d[ names::rate ] = rate_;
}

void
poisson_generator::Parameters_::set( const Dictionary& d, Node* node )
{
  update_value_param( d, names::rate, rate_, node );
  if ( rate_ < 0 )
  {
    throw BadProperty( "The rate cannot be negative." );
  }
}

poisson_generator::poisson_generator()
  : StimulationDevice()
  , P_()
{
}

poisson_generator::poisson_generator( const poisson_generator& n )
  : StimulationDevice( n )
  , P_( n.P_ )
{
}

void
poisson_generator::init_state_()
{
  StimulationDevice::init_state();
}

void
poisson_generator::init_buffers_()
{
  StimulationDevice::init_buffers();
}

void
poisson_generator::pre_run_hook()
{
  StimulationDevice::pre_run_hook();

  // Mean spikes per step; rate is per second, the resolution in ms.
  poisson_distribution::param_type param( Time::get_resolution().get_ms() * P_.rate_ * 1e-3 );
  V_.poisson_dist_.param( param );
}

void
poisson_generator::update( Time const& T, const long from, const long to )
{
  if ( P_.rate_ <= 0 )
  {
    return;
  }

  for ( long lag = from; lag < to; ++lag )
  {
    if ( !StimulationDevice::is_active( T + Time::step( lag ) ) )
    {
      continue;
    }

    // One event per step; its multiplicity is drawn per target in event_hook.
    DSSpikeEvent se;
    kernel().event_delivery_manager.send( *this, se, lag );
  }
}

void
poisson_generator::event_hook( DSSpikeEvent& e )
{
  const long n_spikes = V_.poisson_dist_( get_vp_specific_rng( get_thread() ) );

  // An event of multiplicity 0 would still reach the target's handle().
  if ( n_spikes > 0 )
  {
    e.set_multiplicity( n_spikes );
    e.get_receiver().handle( e );
  }
}
}  // namespace nest
