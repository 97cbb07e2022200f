/*
 * iaf_tum_2000: defaults, status handling, propagators and the update loop
 * (equations in iaf_tum_2000.h). The membrane's propagators are iaf_psc_exp's,
 * computed once per run in pre_run_hook(); the resources' propagators depend
 * on the interval since the last spike and are computed at each spike.
 */
#include "iaf_tum_2000.h"

#include <cassert>
#include <cmath>

#include "dict_util.h"
#include "exceptions.h"
#include "kernel_manager.h"
#include "nest_impl.h"
#include "numerics.h"
#include "ring_buffer_impl.h"
#include "universal_data_logger_impl.h"

nest::RecordablesMap< nest::iaf_tum_2000 > nest::iaf_tum_2000::recordablesMap_;

namespace nest
{
void
register_iaf_tum_2000( const std::string& name )
{
  register_node_model< iaf_tum_2000 >( name );
}

template <>
void
RecordablesMap< iaf_tum_2000 >::create()
{
  insert_( names::V_m, &iaf_tum_2000::get_V_m_ );
  insert_( names::I_syn_ex, &iaf_tum_2000::get_I_syn_ex_ );
  insert_( names::I_syn_in, &iaf_tum_2000::get_I_syn_in_ );
}

iaf_tum_2000::Parameters_::Parameters_()
  : Tau_( 10.0 )
  , C_( 250.0 )
  , t_ref_( 2.0 )
  , E_L_( -70.0 )
  , I_e_( 0.0 )
  , Theta_( -55.0 - E_L_ )
  , V_reset_( -70.0 - E_L_ )
  , tau_ex_( 2.0 )
  , tau_in_( 2.0 )
  , tau_psc_( 3.0 )
  , tau_rec_( 400.0 )
  , tau_fac_( 0.0 )
  , U_( 0.5 )
{
}

iaf_tum_2000::State_::State_()
  : i_0_( 0.0 )
  , i_1_( 0.0 )
  , i_syn_ex_( 0.0 )
  , i_syn_in_( 0.0 )
  , V_m_( 0.0 )
  , r_ref_( 0 )
  , x_( 1.0 )
  , y_( 0.0 )
  , u_( 0.0 )
{
}

void
iaf_tum_2000::Parameters_::get( Dictionary& d ) const
{
  d[ names::E_L ] = E_L_;
  d[ names::I_e ] = I_e_;
  d[ names::V_th ] = Theta_ + E_L_;
  d[ names::V_reset ] = V_reset_ + E_L_;
  d[ names::C_m ] = C_;
  d[ names::tau_m ] = Tau_;
  d[ names::tau_syn_ex ] = tau_ex_;
  d[ names::tau_syn_in ] = tau_in_;
  d[ names::t_ref ] = t_ref_;
  d[ names::tau_psc ] = tau_psc_;
  d[ names::tau_rec ] = tau_rec_;
  d[ names::tau_fac ] = tau_fac_;
  d[ names::U ] = U_;
}

double
iaf_tum_2000::Parameters_::set( const Dictionary& d, Node* node )
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
  if ( update_value_param( d, names::V_th, Theta_, node ) )
  {
    Theta_ -= E_L_;
  }
  else
  {
    Theta_ -= delta_EL;
  }

  update_value_param( d, names::I_e, I_e_, node );
  update_value_param( d, names::C_m, C_, node );
  update_value_param( d, names::tau_m, Tau_, node );
  update_value_param( d, names::tau_syn_ex, tau_ex_, node );
  update_value_param( d, names::tau_syn_in, tau_in_, node );
  update_value_param( d, names::t_ref, t_ref_, node );
  update_value_param( d, names::tau_psc, tau_psc_, node );
  update_value_param( d, names::tau_rec, tau_rec_, node );
  update_value_param( d, names::tau_fac, tau_fac_, node );
  update_value_param( d, names::U, U_, node );

  if ( V_reset_ >= Theta_ )
  {
    throw BadProperty( "Reset potential must be smaller than threshold." );
  }
  if ( C_ <= 0 )
  {
    throw BadProperty( "Capacitance must be strictly positive." );
  }
  if ( Tau_ <= 0 || tau_ex_ <= 0 || tau_in_ <= 0 )
  {
    throw BadProperty( "Membrane and synapse time constants must be strictly positive." );
  }
  if ( t_ref_ < 0 )
  {
    throw BadProperty( "Refractory time must not be negative." );
  }
  if ( U_ > 1.0 || U_ < 0.0 )
  {
    throw BadProperty( "'U' must be in [0,1]." );
  }
  if ( tau_psc_ <= 0 || tau_rec_ <= 0 || tau_fac_ < 0 || tau_psc_ == tau_rec_ )
  {
    throw BadProperty( "tau_psc and tau_rec must be positive and differ; tau_fac must not be negative." );
  }
  return delta_EL;
}

void
iaf_tum_2000::State_::get( Dictionary& d, const Parameters_& p ) const
{
  d[ names::V_m ] = V_m_ + p.E_L_;
  d[ names::x ] = x_;
  d[ names::y ] = y_;
  d[ names::u ] = u_;
}

void
iaf_tum_2000::State_::set( const Dictionary& d, const Parameters_& p, const double delta_EL, Node* node )
{
  if ( update_value_param( d, names::V_m, V_m_, node ) )
  {
    V_m_ -= p.E_L_;
  }
  else
  {
    V_m_ -= delta_EL;
  }
  update_value_param( d, names::x, x_, node );
  update_value_param( d, names::y, y_, node );
  update_value_param( d, names::u, u_, node );
  if ( x_ + y_ > 1.0 )
  {
    throw BadProperty( "x + y must be <= 1.0." );
  }
}

iaf_tum_2000::Buffers_::Buffers_( iaf_tum_2000& n )
  : logger_( n )
{
}

iaf_tum_2000::Buffers_::Buffers_( const Buffers_&, iaf_tum_2000& n )
  : logger_( n )
{
}

iaf_tum_2000::iaf_tum_2000()
  : ArchivingNode()
  , P_()
  , S_()
  , V_() // zeroed: Variables_ that pre_run_hook leaves alone still pack to defined values
  , B_( *this )
{
  recordablesMap_.create();
}

iaf_tum_2000::iaf_tum_2000( const iaf_tum_2000& n )
  : ArchivingNode( n )
  , P_( n.P_ )
  , S_( n.S_ )
  , V_( n.V_ )
  , B_( n.B_, *this )
{
}

void
iaf_tum_2000::init_buffers_()
{
  B_.input_buffer_.clear();
  B_.logger_.reset();
  ArchivingNode::clear_history();
}

void
iaf_tum_2000::pre_run_hook()
{
  B_.logger_.init();

  const double h = Time::get_resolution().get_ms();

  V_.P11ex_ = std::exp( -h / P_.tau_ex_ );
  V_.P11in_ = std::exp( -h / P_.tau_in_ );

  V_.P22_ = std::exp( -h / P_.Tau_ );

  // Exact current -> V propagator: beta/C exp(-h/tau_syn) expm1(h/beta) with
  // beta = tau_syn tau_m / (tau_m - tau_syn); where that is not a positive
  // normal number (tau_syn close to tau_m) its limit h/C exp(-h/tau_m).
  const double exp_h_tau_m = std::exp( -h * ( 1 / P_.Tau_ ) );

  const double gamma_ex = P_.tau_ex_ * P_.Tau_ / ( P_.Tau_ - P_.tau_ex_ ) / P_.C_;
  V_.P21ex_ = gamma_ex * std::exp( -h * ( 1 / P_.tau_ex_ ) )
    * numerics::expm1( h * ( ( P_.Tau_ - P_.tau_ex_ ) / ( P_.tau_ex_ * P_.Tau_ ) ) );
  if ( !( std::isnormal( V_.P21ex_ ) && V_.P21ex_ > 0 ) )
  {
    V_.P21ex_ = h * ( 1 / P_.C_ ) * exp_h_tau_m;
  }

  const double gamma_in = P_.tau_in_ * P_.Tau_ / ( P_.Tau_ - P_.tau_in_ ) / P_.C_;
  V_.P21in_ = gamma_in * std::exp( -h * ( 1 / P_.tau_in_ ) )
    * numerics::expm1( h * ( ( P_.Tau_ - P_.tau_in_ ) / ( P_.tau_in_ * P_.Tau_ ) ) );
  if ( !( std::isnormal( V_.P21in_ ) && V_.P21in_ > 0 ) )
  {
    V_.P21in_ = h * ( 1 / P_.C_ ) * exp_h_tau_m;
  }

  V_.P20_ = P_.Tau_ / P_.C_ * ( 1.0 - V_.P22_ );

  // Whole steps, rounded through Time as in every grid-based NEST model.
  V_.RefractoryCounts_ = Time( Time::ms( P_.t_ref_ ) ).get_steps();
  assert( V_.RefractoryCounts_ >= 0 );
}

void
iaf_tum_2000::update( const Time& origin, const long from, const long to )
{
  for ( long lag = from; lag < to; ++lag )
  {
    if ( S_.r_ref_ == 0 )
    {
      S_.V_m_ = S_.V_m_ * V_.P22_ + S_.i_syn_ex_ * V_.P21ex_ + S_.i_syn_in_ * V_.P21in_ + ( P_.I_e_ + S_.i_0_ ) * V_.P20_;
    }
    else
    {
      --S_.r_ref_;
    }

    S_.i_syn_ex_ *= V_.P11ex_;
    S_.i_syn_in_ *= V_.P11in_;

    // Current on receptor 1 enters through the excitatory synapse's filter.
    S_.i_syn_ex_ += ( 1. - V_.P11ex_ ) * S_.i_1_;

    const size_t input_buffer_slot = kernel().event_delivery_manager.get_modulo( lag );
    auto& input = B_.input_buffer_.get_values_all_channels( input_buffer_slot );

    // Spikes due in this step act on the state at its end already.
    V_.weighted_spikes_ex_ = input[ Buffers_::SYN_EX ];
    V_.weighted_spikes_in_ = input[ Buffers_::SYN_IN ];

    S_.i_syn_ex_ += V_.weighted_spikes_ex_;
    S_.i_syn_in_ += V_.weighted_spikes_in_;

    if ( S_.V_m_ >= P_.Theta_ )
    {
      S_.r_ref_ = V_.RefractoryCounts_;
      S_.V_m_ = P_.V_reset_;

      // The interval since the last spike (ArchivingNode's, -1 before the first: counted from 0).
      double t_last = get_spiketime_ms();
      if ( t_last < 0.0 )
      {
        t_last = 0.0;
      }
      set_spiketime( Time::step( origin.get_steps() + lag + 1 ) );
      const double h_spike = get_spiketime_ms() - t_last;

      const double Puu = ( P_.tau_fac_ == 0.0 ) ? 0.0 : std::exp( -h_spike / P_.tau_fac_ );
      const double Pyy = std::exp( -h_spike / P_.tau_psc_ );
      const double Pzz = std::expm1( -h_spike / P_.tau_rec_ );
      const double Pxy = ( Pzz * P_.tau_rec_ - ( Pyy - 1.0 ) * P_.tau_psc_ ) / ( P_.tau_psc_ - P_.tau_rec_ );
      const double z = 1.0 - S_.x_ - S_.y_;

      // Propagation from the last spike, in this order.
      S_.u_ *= Puu;
      S_.x_ += Pxy * S_.y_ - Pzz * z;
      S_.y_ *= Pyy;

      S_.u_ += P_.U_ * ( 1.0 - S_.u_ );
      const double delta_y = S_.u_ * S_.x_;
      S_.x_ -= delta_y;
      S_.y_ += delta_y;

      // The jump of the active resources travels with the spike as its offset.
      SpikeEvent se;
      se.set_offset( delta_y );
      kernel().event_delivery_manager.send( *this, se, lag );
    }

    S_.i_0_ = input[ Buffers_::I0 ];
    S_.i_1_ = input[ Buffers_::I1 ];

    B_.input_buffer_.reset_values_all_channels( input_buffer_slot );

    B_.logger_.record_data( origin.get_steps() + lag );
  }
}

void
iaf_tum_2000::handle( SpikeEvent& e )
{
  assert( e.get_delay_steps() > 0 );

  const size_t input_buffer_slot = kernel().event_delivery_manager.get_modulo(
    e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ) );

  double s = e.get_weight() * e.get_multiplicity();

  // Receptor 1: scaled by the sender's jump of active resources (its spike's offset).
  if ( e.get_rport() == 1 )
  {
    s *= e.get_offset();
  }

  B_.input_buffer_.add_value( input_buffer_slot, s > 0 ? Buffers_::SYN_EX : Buffers_::SYN_IN, s );
}

void
iaf_tum_2000::handle( CurrentEvent& e )
{
  assert( e.get_delay_steps() > 0 );

  const double c = e.get_current();
  const double w = e.get_weight();

  const size_t input_buffer_slot = kernel().event_delivery_manager.get_modulo(
    e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ) );

  if ( 0 == e.get_rport() )
  {
    B_.input_buffer_.add_value( input_buffer_slot, Buffers_::I0, w * c );
  }
  if ( 1 == e.get_rport() )
  {
    B_.input_buffer_.add_value( input_buffer_slot, Buffers_::I1, w * c );
  }
}

void
iaf_tum_2000::handle( DataLoggingRequest& e )
{
  B_.logger_.handle( e );
}
}  // namespace nest
