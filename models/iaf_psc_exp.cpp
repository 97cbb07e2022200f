/*
 * iaf_psc_exp: defaults, status handling, propagators and the update loop
 * (equations in iaf_psc_exp.h). Propagators are computed once per run in
 * pre_run_hook(); the current-to-V propagator P21 is the exact-integration
 * formula with its singular limit for tau_syn -> tau_m, written out inline.
 */
#include "iaf_psc_exp.h"

#include <cassert>
#include <cmath>

#include "dict_util.h"
#include "exceptions.h"
#include "kernel_manager.h"
#include "nest_impl.h"
#include "numerics.h"
#include "ring_buffer_impl.h"
#include "universal_data_logger_impl.h"

nest::RecordablesMap< nest::iaf_psc_exp > nest::iaf_psc_exp::recordablesMap_;

namespace nest
{
void
register_iaf_psc_exp( const std::string& name )
{
  register_node_model< iaf_psc_exp >( name );
}

template <>
void
RecordablesMap< iaf_psc_exp >::create()
{
  insert_( names::V_m, &iaf_psc_exp::get_V_m_ );
  insert_( names::I_syn_ex, &iaf_psc_exp::get_I_syn_ex_ );
  insert_( names::I_syn_in, &iaf_psc_exp::get_I_syn_in_ );
}

iaf_psc_exp::Parameters_::Parameters_()
  : Tau_( 10.0 )
  , C_( 250.0 )
  , t_ref_( 2.0 )
  , E_L_( -70.0 )
  , I_e_( 0.0 )
  , Theta_( -55.0 - E_L_ )
  , V_reset_( -70.0 - E_L_ )
  , tau_ex_( 2.0 )
  , tau_in_( 2.0 )
{
}

iaf_psc_exp::State_::State_()
  : i_0_( 0.0 )
  , i_1_( 0.0 )
  , i_syn_ex_( 0.0 )
  , i_syn_in_( 0.0 )
  , V_m_( 0.0 )
  , r_ref_( 0 )
{
}

void
iaf_psc_exp::Parameters_::get( Dictionary& d ) const
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
}

double
iaf_psc_exp::Parameters_::set( const Dictionary& d, Node* node )
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
  return delta_EL;
}

void
iaf_psc_exp::State_::get( Dictionary& d, const Parameters_& p ) const
{
  d[ names::V_m ] = V_m_ + p.E_L_;
}

void
iaf_psc_exp::State_::set( const Dictionary& d, const Parameters_& p, const double delta_EL, Node* node )
{
  if ( update_value_param( d, names::V_m, V_m_, node ) )
  {
    V_m_ -= p.E_L_;
  }
  else
  {
    V_m_ -= delta_EL;
  }
}

iaf_psc_exp::Buffers_::Buffers_( iaf_psc_exp& n )
  : logger_( n )
{
}

iaf_psc_exp::Buffers_::Buffers_( const Buffers_&, iaf_psc_exp& n )
  : logger_( n )
{
}

iaf_psc_exp::iaf_psc_exp()
  : ArchivingNode()
  , P_()
  , S_()
  , V_() // zeroed: Variables_ that pre_run_hook leaves alone still pack to defined values
  , B_( *this )
{
  recordablesMap_.create();
}

iaf_psc_exp::iaf_psc_exp( const iaf_psc_exp& n )
  : ArchivingNode( n )
  , P_( n.P_ )
  , S_( n.S_ )
  , V_( n.V_ )
  , B_( n.B_, *this )
{
}

void
iaf_psc_exp::init_buffers_()
{
  B_.input_buffer_.clear();
  B_.logger_.reset();
  ArchivingNode::clear_history();
}

void
iaf_psc_exp::pre_run_hook()
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
iaf_psc_exp::update( const Time& origin, const long from, const long to )
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

      set_spiketime( Time::step( origin.get_steps() + lag + 1 ) );

      SpikeEvent se;
      kernel().event_delivery_manager.send( *this, se, lag );
    }

    S_.i_0_ = input[ Buffers_::I0 ];
    S_.i_1_ = input[ Buffers_::I1 ];

    B_.input_buffer_.reset_values_all_channels( input_buffer_slot );

    B_.logger_.record_data( origin.get_steps() + lag );
  }
}

void
iaf_psc_exp::handle( SpikeEvent& e )
{
  assert( e.get_delay_steps() > 0 );

  const size_t input_buffer_slot = kernel().event_delivery_manager.get_modulo(
    e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ) );

  const double s = e.get_weight() * e.get_multiplicity();

  B_.input_buffer_.add_value( input_buffer_slot, s > 0 ? Buffers_::SYN_EX : Buffers_::SYN_IN, s );
}

void
iaf_psc_exp::handle( CurrentEvent& e )
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
iaf_psc_exp::handle( DataLoggingRequest& e )
{
  B_.logger_.handle( e );
}
}  // namespace nest
