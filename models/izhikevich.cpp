/*
 * izhikevich: defaults, status handling and the Euler update loop (equations
 * in izhikevich.h). update() uses only + - * /, so every path is bit-exact.
 */
#include "izhikevich.h"

#include <cassert>
#include <limits>

#include "dict_util.h"
#include "exceptions.h"
#include "kernel_manager.h"
#include "nest_impl.h"
#include "numerics.h"
#include "ring_buffer_impl.h"
#include "universal_data_logger_impl.h"

nest::RecordablesMap< nest::izhikevich > nest::izhikevich::recordablesMap_;

namespace nest
{
void
register_izhikevich( const std::string& name )
{
  register_node_model< izhikevich >( name );
}

template <>
void
RecordablesMap< izhikevich >::create()
{
  insert_( names::V_m, &izhikevich::get_V_m_ );
  insert_( names::U_m, &izhikevich::get_U_m_ );
}

izhikevich::Parameters_::Parameters_()
  : a_( 0.02 )
  , b_( 0.2 )
  , c_( -65.0 )
  , d_( 8.0 )
  , I_e_( 0.0 )
  , V_th_( 30.0 )
  , V_min_( -std::numeric_limits< double >::max() )
  , consistent_integration_( true )
{
}

izhikevich::State_::State_()
  : v_( -65.0 )
  , u_( 0.2 * -65.0 )
  , I_( 0.0 )
{
}

void
izhikevich::Parameters_::get( Dictionary& d ) const
{
  d[ names::I_e ] = I_e_;
  d[ names::V_th ] = V_th_;
  d[ names::V_min ] = V_min_;
  d[ names::a ] = a_;
  d[ names::b ] = b_;
  d[ names::c ] = c_;
  d[ names::d ] = d_;
  d[ names::consistent_integration ] = consistent_integration_;
}

void
izhikevich::Parameters_::set( const Dictionary& d, Node* node )
{
  update_value_param( d, names::V_th, V_th_, node );
  update_value_param( d, names::V_min, V_min_, node );
  update_value_param( d, names::I_e, I_e_, node );
  update_value_param( d, names::a, a_, node );
  update_value_param( d, names::b, b_, node );
  update_value_param( d, names::c, c_, node );
  update_value_param( d, names::d, d_, node );
  update_value_param( d, names::consistent_integration, consistent_integration_, node );
}

void
izhikevich::State_::get( Dictionary& d, const Parameters_& ) const
{
  d[ names::U_m ] = u_;
  d[ names::V_m ] = v_;
}

void
izhikevich::State_::set( const Dictionary& d, const Parameters_&, Node* node )
{
  update_value_param( d, names::U_m, u_, node );
  update_value_param( d, names::V_m, v_, node );
}

izhikevich::Buffers_::Buffers_( izhikevich& n )
  : logger_( n )
{
}

izhikevich::Buffers_::Buffers_( const Buffers_&, izhikevich& n )
  : logger_( n )
{
}

izhikevich::izhikevich()
  : ArchivingNode()
  , P_()
  , S_()
  , B_( *this )
{
  recordablesMap_.create();
}

izhikevich::izhikevich( const izhikevich& n )
  : ArchivingNode( n )
  , P_( n.P_ )
  , S_( n.S_ )
  , B_( n.B_, *this )
{
}

void
izhikevich::init_buffers_()
{
  B_.spikes_.clear();
  B_.currents_.clear();
  B_.logger_.reset();
  ArchivingNode::clear_history();
}

void
izhikevich::pre_run_hook()
{
  B_.logger_.init();
}

void
izhikevich::update( Time const& origin, const long from, const long to )
{
  const double h = Time::get_resolution().get_ms();
  double v_old, u_old;

  for ( long lag = from; lag < to; ++lag )
  {
    if ( P_.consistent_integration_ )
    {
      v_old = S_.v_;
      u_old = S_.u_;
      S_.v_ +=
        h * ( 0.04 * v_old * v_old + 5.0 * v_old + 140.0 - u_old + S_.I_ + P_.I_e_ ) + B_.spikes_.get_value( lag );
      S_.u_ += h * P_.a_ * ( P_.b_ * v_old - u_old );
    }
    else
    {
      // Two half steps for v, then u from the new v (Izhikevich 2003).
      double I_syn = B_.spikes_.get_value( lag );
      S_.v_ += h * 0.5 * ( 0.04 * S_.v_ * S_.v_ + 5.0 * S_.v_ + 140.0 - S_.u_ + S_.I_ + P_.I_e_ + I_syn );
      S_.v_ += h * 0.5 * ( 0.04 * S_.v_ * S_.v_ + 5.0 * S_.v_ + 140.0 - S_.u_ + S_.I_ + P_.I_e_ + I_syn );
      S_.u_ += h * P_.a_ * ( P_.b_ * S_.v_ - S_.u_ );
    }

    S_.v_ = ( S_.v_ < P_.V_min_ ? P_.V_min_ : S_.v_ );

    if ( S_.v_ >= P_.V_th_ )
    {
      S_.v_ = P_.c_;
      S_.u_ = S_.u_ + P_.d_;

      set_spiketime( Time::step( origin.get_steps() + lag + 1 ) );

      SpikeEvent se;
      kernel().event_delivery_manager.send( *this, se, lag );
    }

    S_.I_ = B_.currents_.get_value( lag );

    B_.logger_.record_data( origin.get_steps() + lag );
  }
}

void
izhikevich::handle( SpikeEvent& e )
{
  assert( e.get_delay_steps() > 0 );
  B_.spikes_.add_value(
    e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ), e.get_weight() * e.get_multiplicity() );
}

void
izhikevich::handle( CurrentEvent& e )
{
  assert( e.get_delay_steps() > 0 );

  const double c = e.get_current();
  const double w = e.get_weight();
  B_.currents_.add_value( e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ), w * c );
}

void
izhikevich::handle( DataLoggingRequest& e )
{
  B_.logger_.handle( e );
}
}  // namespace nest
