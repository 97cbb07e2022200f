/*
 * iaf_psc_alpha: defaults, status handling, propagators and the update loop
 * (see iaf_psc_alpha.h for the equations). The propagators are computed once
 * per run in pre_run_hook(), so update() uses only + - * / and is bit-exact
 * on every device; P31/P32 follow the exact-integration formulas with the
 * singular-limit fallback described in shim/iaf_propagator.h, written out
 * inline so that the translator sees plain arithmetic.
 */
#include "iaf_psc_alpha.h"

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

nest::RecordablesMap< nest::iaf_psc_alpha > nest::iaf_psc_alpha::recordablesMap_;

namespace nest
{
void
register_iaf_psc_alpha( const std::string& name )
{
  register_node_model< iaf_psc_alpha >( name );
}

template <>
void
RecordablesMap< iaf_psc_alpha >::create()
{
  insert_( names::V_m, &iaf_psc_alpha::get_V_m_ );
  insert_( names::I_syn_ex, &iaf_psc_alpha::get_I_syn_ex_ );
  insert_( names::I_syn_in, &iaf_psc_alpha::get_I_syn_in_ );
}

iaf_psc_alpha::Parameters_::Parameters_()
  : Tau_( 10.0 )
  , C_( 250.0 )
  , TauR_( 2.0 )
  , E_L_( -70.0 )
  , I_e_( 0.0 )
  , V_reset_( -70.0 - E_L_ )
  , Theta_( -55.0 - E_L_ )
  , LowerBound_( -std::numeric_limits< double >::infinity() )
  , tau_ex_( 2.0 )
  , tau_in_( 2.0 )
{
}

iaf_psc_alpha::State_::State_()
  : y0_( 0.0 )
  , dI_ex_( 0.0 )
  , I_ex_( 0.0 )
  , dI_in_( 0.0 )
  , I_in_( 0.0 )
  , y3_( 0.0 )
  , r_( 0 )
{
}

void
iaf_psc_alpha::Parameters_::get( Dictionary& d ) const
{
  d[ names::E_L ] = E_L_;
  d[ names::I_e ] = I_e_;
  d[ names::V_th ] = Theta_ + E_L_;
  d[ names::V_reset ] = V_reset_ + E_L_;
  d[ names::V_min ] = LowerBound_ + E_L_;
  d[ names::C_m ] = C_;
  d[ names::tau_m ] = Tau_;
  d[ names::t_ref ] = TauR_;
  d[ names::tau_syn_ex ] = tau_ex_;
  d[ names::tau_syn_in ] = tau_in_;
}

double
iaf_psc_alpha::Parameters_::set( const Dictionary& d, Node* node )
{
  // Potentials are stored relative to E_L_: a new E_L_ shifts every potential
  // the dictionary does not set explicitly.
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
  if ( update_value_param( d, names::V_min, LowerBound_, node ) )
  {
    LowerBound_ -= E_L_;
  }
  else
  {
    LowerBound_ -= delta_EL;
  }

  update_value_param( d, names::I_e, I_e_, node );
  update_value_param( d, names::C_m, C_, node );
  update_value_param( d, names::tau_m, Tau_, node );
  update_value_param( d, names::tau_syn_ex, tau_ex_, node );
  update_value_param( d, names::tau_syn_in, tau_in_, node );
  update_value_param( d, names::t_ref, TauR_, node );

  if ( C_ <= 0.0 )
  {
    throw BadProperty( "Capacitance must be > 0." );
  }
  if ( Tau_ <= 0.0 )
  {
    throw BadProperty( "Membrane time constant must be > 0." );
  }
  if ( tau_ex_ <= 0.0 || tau_in_ <= 0.0 )
  {
    throw BadProperty( "All synaptic time constants must be > 0." );
  }
  if ( TauR_ < 0.0 )
  {
    throw BadProperty( "The refractory time t_ref can't be negative." );
  }
  if ( V_reset_ >= Theta_ )
  {
    throw BadProperty( "Reset potential must be smaller than threshold." );
  }
  return delta_EL;
}

void
iaf_psc_alpha::State_::get( Dictionary& d, const Parameters_& p ) const
{
  d[ names::V_m ] = y3_ + p.E_L_;
}

void
iaf_psc_alpha::State_::set( const Dictionary& d, const Parameters_& p, double delta_EL, Node* node )
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

iaf_psc_alpha::Buffers_::Buffers_( iaf_psc_alpha& n )
  : logger_( n )
{
}

iaf_psc_alpha::Buffers_::Buffers_( const Buffers_&, iaf_psc_alpha& n )
  : logger_( n )
{
}

iaf_psc_alpha::iaf_psc_alpha()
  : ArchivingNode()
  , P_()
  , S_()
  , V_() // zeroed: Variables_ that pre_run_hook leaves alone still pack to defined values
  , B_( *this )
{
  recordablesMap_.create();
}

iaf_psc_alpha::iaf_psc_alpha( const iaf_psc_alpha& n )
  : ArchivingNode( n )
  , P_( n.P_ )
  , S_( n.S_ )
  , V_( n.V_ )
  , B_( n.B_, *this )
{
}

void
iaf_psc_alpha::init_buffers_()
{
  B_.input_buffer_.clear();
  B_.logger_.reset();
  ArchivingNode::clear_history();
}

void
iaf_psc_alpha::pre_run_hook()
{
  B_.logger_.init();

  const double h = Time::get_resolution().get_ms();

  V_.P11_ex_ = std::exp( -h / P_.tau_ex_ );
  V_.P22_ex_ = V_.P11_ex_;
  V_.P11_in_ = std::exp( -h / P_.tau_in_ );
  V_.P22_in_ = V_.P11_in_;

  V_.P33_ = std::exp( -h / P_.Tau_ );
  V_.expm1_tau_m_ = numerics::expm1( -h / P_.Tau_ );

  V_.P30_ = -P_.Tau_ / P_.C_ * numerics::expm1( -h / P_.Tau_ );
  V_.P21_ex_ = h * V_.P11_ex_;
  V_.P21_in_ = h * V_.P11_in_;

  // Exact propagators from the synaptic current (P32) and its auxiliary (P31)
  // to V. beta = tau_syn tau_m / (tau_m - tau_syn) diverges as tau_syn ->
  // tau_m; then the regular forms lose all precision and their limits are used.
  const double inv_C = 1 / P_.C_;
  const double exp_h_tau_m = std::exp( -h * ( 1 / P_.Tau_ ) );

  const double beta_ex = P_.tau_ex_ * P_.Tau_ / ( P_.Tau_ - P_.tau_ex_ );
  const double gamma_ex = beta_ex / P_.C_;
  const double exp_h_tau_ex = std::exp( -h * ( 1 / P_.tau_ex_ ) );
  const double expm1_h_beta_ex = numerics::expm1( h * ( ( P_.Tau_ - P_.tau_ex_ ) / ( P_.tau_ex_ * P_.Tau_ ) ) );
  V_.P32_ex_ = gamma_ex * exp_h_tau_ex * expm1_h_beta_ex;
  if ( !( std::isnormal( V_.P32_ex_ ) && V_.P32_ex_ > 0 ) )
  {
    V_.P32_ex_ = h * inv_C * exp_h_tau_m;
  }
  if ( h > 1e-7 * P_.Tau_ * P_.Tau_ / std::abs( P_.Tau_ - P_.tau_ex_ ) )
  {
    V_.P31_ex_ = gamma_ex * exp_h_tau_ex * ( beta_ex * expm1_h_beta_ex - h );
  }
  else
  {
    V_.P31_ex_ = 0.5 * h * h * inv_C * exp_h_tau_m;
  }

  const double beta_in = P_.tau_in_ * P_.Tau_ / ( P_.Tau_ - P_.tau_in_ );
  const double gamma_in = beta_in / P_.C_;
  const double exp_h_tau_in = std::exp( -h * ( 1 / P_.tau_in_ ) );
  const double expm1_h_beta_in = numerics::expm1( h * ( ( P_.Tau_ - P_.tau_in_ ) / ( P_.tau_in_ * P_.Tau_ ) ) );
  V_.P32_in_ = gamma_in * exp_h_tau_in * expm1_h_beta_in;
  if ( !( std::isnormal( V_.P32_in_ ) && V_.P32_in_ > 0 ) )
  {
    V_.P32_in_ = h * inv_C * exp_h_tau_m;
  }
  if ( h > 1e-7 * P_.Tau_ * P_.Tau_ / std::abs( P_.Tau_ - P_.tau_in_ ) )
  {
    V_.P31_in_ = gamma_in * exp_h_tau_in * ( beta_in * expm1_h_beta_in - h );
  }
  else
  {
    V_.P31_in_ = 0.5 * h * h * inv_C * exp_h_tau_m;
  }

  V_.EPSCInitialValue_ = 1.0 * numerics::e / P_.tau_ex_;
  V_.IPSCInitialValue_ = 1.0 * numerics::e / P_.tau_in_;

  // The refractory period is a whole number of steps; going through Time
  // rounds it exactly as NEST's other grid-based models do.
  V_.RefractoryCounts_ = Time( Time::ms( P_.TauR_ ) ).get_steps();
  assert( V_.RefractoryCounts_ >= 0 );
}

void
iaf_psc_alpha::update( Time const& origin, const long from, const long to )
{
  for ( long lag = from; lag < to; ++lag )
  {
    if ( S_.r_ == 0 )
    {
      S_.y3_ = V_.P30_ * ( S_.y0_ + P_.I_e_ ) + V_.P31_ex_ * S_.dI_ex_ + V_.P32_ex_ * S_.I_ex_ + V_.P31_in_ * S_.dI_in_
        + V_.P32_in_ * S_.I_in_ + V_.expm1_tau_m_ * S_.y3_ + S_.y3_;

      S_.y3_ = ( S_.y3_ < P_.LowerBound_ ? P_.LowerBound_ : S_.y3_ );
    }
    else
    {
      --S_.r_;
    }

    S_.I_ex_ = V_.P21_ex_ * S_.dI_ex_ + V_.P22_ex_ * S_.I_ex_;
    S_.dI_ex_ *= V_.P11_ex_;

    const size_t input_buffer_slot = kernel().event_delivery_manager.get_modulo( lag );
    auto& input = B_.input_buffer_.get_values_all_channels( input_buffer_slot );

    // Spikes due in this step act on the state at its end already.
    V_.weighted_spikes_ex_ = input[ Buffers_::SYN_EX ];
    S_.dI_ex_ += V_.EPSCInitialValue_ * V_.weighted_spikes_ex_;

    S_.I_in_ = V_.P21_in_ * S_.dI_in_ + V_.P22_in_ * S_.I_in_;
    S_.dI_in_ *= V_.P11_in_;

    V_.weighted_spikes_in_ = input[ Buffers_::SYN_IN ];
    S_.dI_in_ += V_.IPSCInitialValue_ * V_.weighted_spikes_in_;

    if ( S_.y3_ >= P_.Theta_ )
    {
      S_.r_ = V_.RefractoryCounts_;
      S_.y3_ = P_.V_reset_;

      set_spiketime( Time::step( origin.get_steps() + lag + 1 ) );
      SpikeEvent se;
      kernel().event_delivery_manager.send( *this, se, lag );
    }

    // A current arriving in this step drives V from the next step on.
    S_.y0_ = input[ Buffers_::I0 ];

    B_.input_buffer_.reset_values_all_channels( input_buffer_slot );

    B_.logger_.record_data( origin.get_steps() + lag );
  }
}

void
iaf_psc_alpha::handle( SpikeEvent& e )
{
  assert( e.get_delay_steps() > 0 );

  const size_t input_buffer_slot = kernel().event_delivery_manager.get_modulo(
    e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ) );

  const double s = e.get_weight() * e.get_multiplicity();

  // Excitatory and inhibitory input have their own alpha currents.
  B_.input_buffer_.add_value( input_buffer_slot, s > 0 ? Buffers_::SYN_EX : Buffers_::SYN_IN, s );
}

void
iaf_psc_alpha::handle( CurrentEvent& e )
{
  assert( e.get_delay_steps() > 0 );

  const size_t input_buffer_slot = kernel().event_delivery_manager.get_modulo(
    e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ) );

  const double I = e.get_current();
  const double w = e.get_weight();

  B_.input_buffer_.add_value( input_buffer_slot, Buffers_::I0, w * I );
}

void
iaf_psc_alpha::handle( DataLoggingRequest& e )
{
  B_.logger_.handle( e );
}
}  // namespace nest
