/*
 * iaf_psc_exp_multisynapse: defaults, status handling, per-receptor
 * propagators and the update loop (equations in iaf_psc_exp_multisynapse.h).
 */
#include "iaf_psc_exp_multisynapse.h"

#include <cassert>
#include <cmath>

#include "dict_util.h"
#include "exceptions.h"
#include "kernel_manager.h"
#include "nest_impl.h"
#include "numerics.h"
#include "ring_buffer_impl.h"
#include "universal_data_logger_impl.h"

nest::RecordablesMap< nest::iaf_psc_exp_multisynapse > nest::iaf_psc_exp_multisynapse::recordablesMap_;

namespace nest
{
void
register_iaf_psc_exp_multisynapse( const std::string& name )
{
  register_node_model< iaf_psc_exp_multisynapse >( name );
}

template <>
void
RecordablesMap< iaf_psc_exp_multisynapse >::create()
{
  insert_( names::V_m, &iaf_psc_exp_multisynapse::get_V_m_ );
  insert_( names::I_syn, &iaf_psc_exp_multisynapse::get_I_syn_ );
}

iaf_psc_exp_multisynapse::Parameters_::Parameters_()
  : Tau_( 10.0 )
  , C_( 250.0 )
  , refractory_time_( 2.0 )
  , E_L_( -70.0 )
  , I_e_( 0.0 )
  , V_reset_( -70.0 - E_L_ )
  , Theta_( -55.0 - E_L_ )
  , tau_syn_( 1, 2.0 )
{
}

iaf_psc_exp_multisynapse::State_::State_( const Parameters_& p )
  : I_const_( 0.0 )
  , i_syn_( p.n_receptors(), 0.0 )
  , V_m_( 0.0 )
  , refractory_steps_( 0 )
{
}

void
iaf_psc_exp_multisynapse::Parameters_::get( Dictionary& d ) const
{
  d[ names::E_L ] = E_L_;
  d[ names::I_e ] = I_e_;
  d[ names::V_th ] = Theta_ + E_L_;
  d[ names::V_reset ] = V_reset_ + E_L_;
  d[ names::C_m ] = C_;
  d[ names::tau_m ] = Tau_;
  d[ names::t_ref ] = refractory_time_;
  d[ names::n_synapses ] = static_cast< long >( n_receptors() );
  d[ names::tau_syn ] = tau_syn_;
}

double
iaf_psc_exp_multisynapse::Parameters_::set( const Dictionary& d, Node* node )
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
  update_value_param( d, names::t_ref, refractory_time_, node );

  if ( C_ <= 0 )
  {
    throw BadProperty( "Capacitance must be > 0." );
  }
  if ( Tau_ <= 0. )
  {
    throw BadProperty( "Membrane time constant must be strictly positive." );
  }
  if ( d.update_value( names::tau_syn, tau_syn_ ) )
  {
    for ( size_t k = 0; k < tau_syn_.size(); ++k )
    {
      if ( tau_syn_[ k ] <= 0 )
      {
        throw BadProperty( "All synaptic time constants must be strictly positive." );
      }
    }
  }
  if ( refractory_time_ < 0. )
  {
    throw BadProperty( "Refractory time must not be negative." );
  }
  if ( V_reset_ >= Theta_ )
  {
    throw BadProperty( "Reset potential must be smaller than threshold." );
  }
  return delta_EL;
}

void
iaf_psc_exp_multisynapse::State_::get( Dictionary& d, const Parameters_& p ) const
{
  d[ names::V_m ] = V_m_ + p.E_L_;
}

void
iaf_psc_exp_multisynapse::State_::set( const Dictionary& d, const Parameters_& p, double delta_EL, Node* node )
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

iaf_psc_exp_multisynapse::Buffers_::Buffers_( iaf_psc_exp_multisynapse& n )
  : logger_( n )
{
}

iaf_psc_exp_multisynapse::Buffers_::Buffers_( const Buffers_&, iaf_psc_exp_multisynapse& n )
  : logger_( n )
{
}

iaf_psc_exp_multisynapse::iaf_psc_exp_multisynapse()
  : ArchivingNode()
  , P_()
  , S_( P_ )
  , V_() // zeroed: Variables_ that pre_run_hook leaves alone still pack to defined values
  , B_( *this )
{
  recordablesMap_.create();
  resize_receptors_();
}

iaf_psc_exp_multisynapse::iaf_psc_exp_multisynapse( const iaf_psc_exp_multisynapse& n )
  : ArchivingNode( n )
  , P_( n.P_ )
  , S_( n.S_ )
  , V_( n.V_ )
  , B_( n.B_, *this )
{
  resize_receptors_();
}

void
iaf_psc_exp_multisynapse::resize_receptors_()
{
  S_.i_syn_.resize( P_.n_receptors(), 0.0 );
  V_.P11_syn_.resize( P_.n_receptors(), 0.0 );
  V_.P21_syn_.resize( P_.n_receptors(), 0.0 );
  B_.spikes_.resize( P_.n_receptors() );
}

void
iaf_psc_exp_multisynapse::init_buffers_()
{
  for ( RingBuffer& b : B_.spikes_ )
  {
    b.clear();
  }
  B_.currents_.clear();
  B_.logger_.reset();
  ArchivingNode::clear_history();
}

void
iaf_psc_exp_multisynapse::pre_run_hook()
{
  B_.logger_.init();

  const double h = Time::get_resolution().get_ms();

  V_.P22_ = std::exp( -h / P_.Tau_ );
  V_.P20_ = P_.Tau_ / P_.C_ * ( 1.0 - V_.P22_ );

  // Exact current -> V propagator per receptor (see iaf_psc_exp), with the
  // limit h/C exp(-h/tau_m) where tau_syn is too close to tau_m.
  const double exp_h_tau_m = std::exp( -h * ( 1 / P_.Tau_ ) );
  for ( size_t i = 0; i < P_.n_receptors(); i++ )
  {
    V_.P11_syn_[ i ] = std::exp( -h / P_.tau_syn_[ i ] );

    const double gamma = P_.tau_syn_[ i ] * P_.Tau_ / ( P_.Tau_ - P_.tau_syn_[ i ] ) / P_.C_;
    V_.P21_syn_[ i ] = gamma * std::exp( -h * ( 1 / P_.tau_syn_[ i ] ) )
      * numerics::expm1( h * ( ( P_.Tau_ - P_.tau_syn_[ i ] ) / ( P_.tau_syn_[ i ] * P_.Tau_ ) ) );
    if ( !( std::isnormal( V_.P21_syn_[ i ] ) && V_.P21_syn_[ i ] > 0 ) )
    {
      V_.P21_syn_[ i ] = h * ( 1 / P_.C_ ) * exp_h_tau_m;
    }
  }

  // Whole steps, rounded through Time as in every grid-based NEST model.
  V_.RefractoryCounts_ = Time( Time::ms( P_.refractory_time_ ) ).get_steps();
  assert( V_.RefractoryCounts_ >= 0 );
}

void
iaf_psc_exp_multisynapse::update( const Time& origin, const long from, const long to )
{
  for ( long lag = from; lag < to; ++lag )
  {
    if ( S_.refractory_steps_ == 0 )
    {
      S_.V_m_ = S_.V_m_ * V_.P22_ + ( P_.I_e_ + S_.I_const_ ) * V_.P20_;

      for ( size_t i = 0; i < P_.n_receptors(); i++ )
      {
        S_.V_m_ += V_.P21_syn_[ i ] * S_.i_syn_[ i ];
      }
    }
    else
    {
      --S_.refractory_steps_;
    }

    for ( size_t i = 0; i < P_.n_receptors(); i++ )
    {
      S_.i_syn_[ i ] *= V_.P11_syn_[ i ];

      // Spikes due in this step act on the state at its end already.
      S_.i_syn_[ i ] += B_.spikes_[ i ].get_value( lag );
    }

    if ( S_.V_m_ >= P_.Theta_ )
    {
      S_.refractory_steps_ = V_.RefractoryCounts_;
      S_.V_m_ = P_.V_reset_;

      set_spiketime( Time::step( origin.get_steps() + lag + 1 ) );
      SpikeEvent se;
      kernel().event_delivery_manager.send( *this, se, lag );
    }

    S_.I_const_ = B_.currents_.get_value( lag );

    B_.logger_.record_data( origin.get_steps() + lag );
  }
}

void
iaf_psc_exp_multisynapse::handle( SpikeEvent& e )
{
  assert( e.get_delay_steps() > 0 );

  // Receptor ports count from 1; port 0 is not a synapse of this model.
  B_.spikes_[ e.get_rport() - 1 ].add_value(
    e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ), e.get_weight() * e.get_multiplicity() );
}

void
iaf_psc_exp_multisynapse::handle( CurrentEvent& e )
{
  assert( e.get_delay_steps() > 0 );

  const double I = e.get_current();
  const double w = e.get_weight();

  B_.currents_.add_value( e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ), w * I );
}

void
iaf_psc_exp_multisynapse::handle( DataLoggingRequest& e )
{
  B_.logger_.handle( e );
}
}  // namespace nest
