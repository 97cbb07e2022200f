/*
 * iaf_psc_delta: defaults, status handling, propagators and the update loop
 * (equations in iaf_psc_delta.h).
 */
#include "iaf_psc_delta.h"

#include <cassert>
#include <cmath>
#include <limits>

#include "dict_util.h"
#include "exceptions.h"
#include "kernel_manager.h"
#include "nest_impl.h"
#include "numerics.h"
#include "ring_buffer_impl.h"
#include "universal_data_logger_impl.h"

nest::RecordablesMap< nest::iaf_psc_delta > nest::iaf_psc_delta::recordablesMap_;

namespace nest
{
void
register_iaf_psc_delta( const std::string& name )
{
  register_node_model< iaf_psc_delta >( name );
}

template <>
void
RecordablesMap< iaf_psc_delta >::create()
{
  insert_( names::V_m, &iaf_psc_delta::get_V_m_ );
}

iaf_psc_delta::Parameters_::Parameters_()
  : tau_m_( 10.0 )
  , c_m_( 250.0 )
  , t_ref_( 2.0 )
  , E_L_( -70.0 )
  , I_e_( 0.0 )
  , V_th_( -55.0 - E_L_ )
  , V_min_( -std::numeric_limits< double >::max() )
  , V_reset_( -70.0 - E_L_ )
  , with_refr_input_( false )
{
}

iaf_psc_delta::State_::State_()
  : y0_( 0.0 )
  , y3_( 0.0 )
  , r_( 0 )
  , refr_spikes_buffer_( 0.0 )
{
}

void
iaf_psc_delta::Parameters_::get( Dictionary& d ) const
{
  d[ names::E_L ] = E_L_;
  d[ names::I_e ] = I_e_;
  d[ names::V_th ] = V_th_ + E_L_;
  d[ names::V_reset ] = V_reset_ + E_L_;
  d[ names::V_min ] = V_min_ + E_L_;
  d[ names::C_m ] = c_m_;
  d[ names::tau_m ] = tau_m_;
  d[ names::t_ref ] = t_ref_;
  d[ names::refractory_input ] = with_refr_input_;
}

double
iaf_psc_delta::Parameters_::set( const Dictionary& d, Node* node )
{
  // Potentials are stored relative to E_L_ and follow a change of E_L_.
  const double ELold = E_L_;
  update_value_param( d, names::E_L, E_L_, node );
  const double delta_EL = E_L_ - ELold;

  if ( update_value_param( d, names::V_reset, V_reset_, node ) )
  {
    V_reset_ -= E_L_;
  }
  else
  {
    V_reset_ -= delta_EL;
  }
  if ( update_value_param( d, names::V_th, V_th_, node ) )
  {
    V_th_ -= E_L_;
  }
  else
  {
    V_th_ -= delta_EL;
  }
  if ( update_value_param( d, names::V_min, V_min_, node ) )
  {
    V_min_ -= E_L_;
  }
  else
  {
    V_min_ -= delta_EL;
  }

  update_value_param( d, names::I_e, I_e_, node );
  update_value_param( d, names::C_m, c_m_, node );
  update_value_param( d, names::tau_m, tau_m_, node );
  update_value_param( d, names::t_ref, t_ref_, node );
  update_value_param( d, names::refractory_input, with_refr_input_, node );

  if ( V_reset_ >= V_th_ )
  {
    throw BadProperty( "Reset potential must be smaller than threshold." );
  }
  if ( c_m_ <= 0 )
  {
    throw BadProperty( "Capacitance must be > 0." );
  }
  if ( t_ref_ < 0 )
  {
    throw BadProperty( "Refractory time must not be negative." );
  }
  if ( tau_m_ <= 0 )
  {
    throw BadProperty( "Membrane time constant must be > 0." );
  }
  return delta_EL;
}

void
iaf_psc_delta::State_::get( Dictionary& d, const Parameters_& p ) const
{
  d[ names::V_m ] = y3_ + p.E_L_;
}

void
iaf_psc_delta::State_::set( const Dictionary& d, const Parameters_& p, double delta_EL, Node* node )
{
  if ( update_value_param( d, names::V_m, y3_, node ) )
  {
    y3_ -= p.E_L_;
  }
  else
  {
    y3_ -= delta_EL;
  }
}

iaf_psc_delta::Buffers_::Buffers_( iaf_psc_delta& n )
  : logger_( n )
{
}

iaf_psc_delta::Buffers_::Buffers_( const Buffers_&, iaf_psc_delta& n )
  : logger_( n )
{
}

iaf_psc_delta::iaf_psc_delta()
  : ArchivingNode()
  , P_()
  , S_()
  , V_() // zeroed: Variables_ that pre_run_hook leaves alone still pack to defined values
  , B_( *this )
{
  recordablesMap_.create();
}

iaf_psc_delta::iaf_psc_delta( const iaf_psc_delta& n )
  : ArchivingNode( n )
  , P_( n.P_ )
  , S_( n.S_ )
  , V_( n.V_ )
  , B_( n.B_, *this )
{
}

void
iaf_psc_delta::init_buffers_()
{
  B_.spikes_.clear();
  B_.currents_.clear();
  B_.logger_.reset();
  ArchivingNode::clear_history();
}

void
iaf_psc_delta::pre_run_hook()
{
  B_.logger_.init();

  const double h = Time::get_resolution().get_ms();

  V_.P33_ = std::exp( -h / P_.tau_m_ );
  V_.P30_ = 1 / P_.c_m_ * ( 1 - V_.P33_ ) * P_.tau_m_;

  // Whole steps, rounded through Time as in every grid-based NEST model.
  V_.RefractoryCounts_ = Time( Time::ms( P_.t_ref_ ) ).get_steps();
  assert( V_.RefractoryCounts_ >= 0 );
}

void
iaf_psc_delta::update( Time const& origin, const long from, const long to )
{
  const double h = Time::get_resolution().get_ms();

  for ( long lag = from; lag < to; ++lag )
  {
    if ( S_.r_ == 0 )
    {
      S_.y3_ = V_.P30_ * ( S_.y0_ + P_.I_e_ ) + V_.P33_ * S_.y3_ + B_.spikes_.get_value( lag );

      // Input kept during the refractory period arrives now, at its end.
      if ( P_.with_refr_input_ && S_.refr_spikes_buffer_ != 0.0 )
      {
        S_.y3_ += S_.refr_spikes_buffer_;
        S_.refr_spikes_buffer_ = 0.0;
      }

      S_.y3_ = ( S_.y3_ < P_.V_min_ ? P_.V_min_ : S_.y3_ );
    }
    else
    {
      if ( P_.with_refr_input_ )
      {
        // Decay the input over the r_ steps left until V is released.
        S_.refr_spikes_buffer_ += B_.spikes_.get_value( lag ) * std::exp( -S_.r_ * h / P_.tau_m_ );
      }
      else
      {
        // Discard input while refractory; the slot must still be emptied.
        B_.spikes_.get_value( lag );
      }

      --S_.r_;
    }

    if ( S_.y3_ >= P_.V_th_ )
    {
      S_.r_ = V_.RefractoryCounts_;
      S_.y3_ = P_.V_reset_;

      set_spiketime( Time::step( origin.get_steps() + lag + 1 ) );

      SpikeEvent se;
      kernel().event_delivery_manager.send( *this, se, lag );
    }

    S_.y0_ = B_.currents_.get_value( lag );

    B_.logger_.record_data( origin.get_steps() + lag );
  }
}

void
iaf_psc_delta::handle( SpikeEvent& e )
{
  assert( e.get_delay_steps() > 0 );

  B_.spikes_.add_value(
    e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ), e.get_weight() * e.get_multiplicity() );
}

void
iaf_psc_delta::handle( CurrentEvent& e )
{
  assert( e.get_delay_steps() > 0 );

  const double c = e.get_current();
  const double w = e.get_weight();

  B_.currents_.add_value( e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ), w * c );
}

void
iaf_psc_delta::handle( DataLoggingRequest& e )
{
  B_.logger_.handle( e );
}
}  // namespace nest
