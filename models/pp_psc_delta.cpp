/*
 * pp_psc_delta: defaults, status handling, propagators and the update loop
 * (equations in pp_psc_delta.h).
 */
#include "pp_psc_delta.h"

#include <cassert>
#include <cmath>

#include "dict_util.h"
#include "exceptions.h"
#include "kernel_manager.h"
#include "nest_impl.h"
#include "numerics.h"
#include "ring_buffer_impl.h"
#include "universal_data_logger_impl.h"

nest::RecordablesMap< nest::pp_psc_delta > nest::pp_psc_delta::recordablesMap_;

namespace nest
{
void
register_pp_psc_delta( const std::string& name )
{
  register_node_model< pp_psc_delta >( name );
}

template <>
void
RecordablesMap< pp_psc_delta >::create()
{
  insert_( names::V_m, &pp_psc_delta::get_V_m_ );
  insert_( names::E_sfa, &pp_psc_delta::get_E_sfa_ );
}

pp_psc_delta::Parameters_::Parameters_()
  : tau_m_( 10.0 )
  , c_m_( 250.0 )
  , dead_time_( 1.0 )
  , dead_time_random_( false )
  , dead_time_shape_( 1 )
  , with_reset_( true )
  , tau_sfa_()
  , q_sfa_()
  , c_1_( 0.0 )
  , c_2_( 1.238 )
  , c_3_( 0.25 )
  , I_e_( 0.0 )
{
}

pp_psc_delta::State_::State_()
  : y0_( 0.0 )
  , y3_( 0.0 )
  , q_( 0.0 )
  , q_elems_()
  , r_( 0 )
  , initialized_( false )
{
}

void
pp_psc_delta::Parameters_::get( Dictionary& d ) const
{
  d[ names::I_e ] = I_e_;
  d[ names::C_m ] = c_m_;
  d[ names::tau_m ] = tau_m_;
  d[ names::dead_time ] = dead_time_;
  d[ names::dead_time_random ] = dead_time_random_;
  d[ names::dead_time_shape ] = dead_time_shape_;
  d[ names::with_reset ] = with_reset_;
  d[ names::c_1 ] = c_1_;
  d[ names::c_2 ] = c_2_;
  d[ names::c_3 ] = c_3_;
  d[ names::tau_sfa ] = tau_sfa_;
  d[ names::q_sfa ] = q_sfa_;
}

void
pp_psc_delta::Parameters_::set( const Dictionary& d, Node* node )
{
  update_value_param( d, names::I_e, I_e_, node );
  update_value_param( d, names::C_m, c_m_, node );
  update_value_param( d, names::tau_m, tau_m_, node );
  update_value_param( d, names::dead_time, dead_time_, node );
  update_value_param( d, names::dead_time_random, dead_time_random_, node );
  update_value_param( d, names::dead_time_shape, dead_time_shape_, node );
  update_value_param( d, names::with_reset, with_reset_, node );
  update_value_param( d, names::c_1, c_1_, node );
  update_value_param( d, names::c_2, c_2_, node );
  update_value_param( d, names::c_3, c_3_, node );
  d.update_value( names::tau_sfa, tau_sfa_ );
  d.update_value( names::q_sfa, q_sfa_ );

  if ( tau_sfa_.size() != q_sfa_.size() )
  {
    throw BadProperty( "'tau_sfa' and 'q_sfa' need to have the same dimension." );
  }
  if ( c_m_ <= 0 )
  {
    throw BadProperty( "Capacitance must be strictly positive." );
  }
  if ( dead_time_ < 0 )
  {
    throw BadProperty( "Absolute refractory time must not be negative." );
  }
  if ( dead_time_shape_ < 1 )
  {
    throw BadProperty( "Shape of the dead time gamma distribution must not be smaller than 1." );
  }
  if ( tau_m_ <= 0 )
  {
    throw BadProperty( "All time constants must be strictly positive." );
  }
  for ( size_t i = 0; i < tau_sfa_.size(); i++ )
  {
    if ( tau_sfa_[ i ] <= 0 )
    {
      throw BadProperty( "All time constants must be strictly positive." );
    }
  }
  if ( c_3_ < 0 )
  {
    throw BadProperty( "c_3 must be positive." );
  }
}

void
pp_psc_delta::State_::get( Dictionary& d, const Parameters_& ) const
{
  d[ names::V_m ] = y3_;
  d[ names::E_sfa ] = q_;
}

void
pp_psc_delta::State_::set( const Dictionary& d, const Parameters_&, Node* node )
{
  update_value_param( d, names::V_m, y3_, node );
  update_value_param( d, names::E_sfa, q_, node );
  // the adaptation elements start again from the new parameters
  initialized_ = false;
}

pp_psc_delta::Buffers_::Buffers_( pp_psc_delta& n )
  : logger_( n )
{
}

pp_psc_delta::Buffers_::Buffers_( const Buffers_&, pp_psc_delta& n )
  : logger_( n )
{
}

pp_psc_delta::pp_psc_delta()
  : ArchivingNode()
  , P_()
  , S_()
  , V_() // zeroed: Variables_ that pre_run_hook leaves alone still pack to defined values
  , B_( *this )
{
  recordablesMap_.create();
}

pp_psc_delta::pp_psc_delta( const pp_psc_delta& n )
  : ArchivingNode( n )
  , P_( n.P_ )
  , S_( n.S_ )
  , V_( n.V_ )
  , B_( n.B_, *this )
{
}

void
pp_psc_delta::init_buffers_()
{
  B_.spikes_.clear();
  B_.currents_.clear();
  B_.logger_.reset();
  ArchivingNode::clear_history();
}

void
pp_psc_delta::pre_run_hook()
{
  B_.logger_.init();

  V_.h_ = Time::get_resolution().get_ms();
  V_.rng_ = get_vp_specific_rng( get_thread() );

  V_.P33_ = std::exp( -V_.h_ / P_.tau_m_ );
  V_.P30_ = 1 / P_.c_m_ * ( 1 - V_.P33_ ) * P_.tau_m_;

  if ( P_.dead_time_ != 0 and P_.dead_time_ < V_.h_ )
  {
    P_.dead_time_ = V_.h_;
  }

  // One decay factor per adaptation element; the elements start at 0 once
  // after their parameters changed (NEST appends both on the first run).
  V_.Q33_.resize( P_.tau_sfa_.size() );
  for ( size_t i = 0; i < P_.tau_sfa_.size(); i++ )
  {
    V_.Q33_[ i ] = std::exp( -V_.h_ / P_.tau_sfa_[ i ] );
  }
  if ( not S_.initialized_ )
  {
    S_.q_elems_.resize( P_.tau_sfa_.size() );
    for ( size_t i = 0; i < P_.tau_sfa_.size(); i++ )
    {
      S_.q_elems_[ i ] = 0.0;
    }
    S_.initialized_ = true;
  }

  if ( P_.dead_time_random_ )
  {
    // the dead time's gamma distribution has mean dead_time
    V_.dt_rate_ = P_.dead_time_shape_ / P_.dead_time_;
    gamma_distribution::param_type param( P_.dead_time_shape_ );
    V_.gamma_dist_.param( param );
  }
  else
  {
    // Whole steps, rounded through Time as in every grid-based NEST model.
    V_.DeadTimeCounts_ = Time( Time::ms( P_.dead_time_ ) ).get_steps();
    assert( V_.DeadTimeCounts_ >= 0 );
  }
}

void
pp_psc_delta::update( Time const& origin, const long from, const long to )
{
  for ( long lag = from; lag < to; ++lag )
  {
    S_.y3_ = V_.P30_ * ( S_.y0_ + P_.I_e_ ) + V_.P33_ * S_.y3_ + B_.spikes_.get_value( lag );

    double q_temp_ = 0;
    for ( size_t i = 0; i < S_.q_elems_.size(); i++ )
    {
      S_.q_elems_[ i ] = V_.Q33_[ i ] * S_.q_elems_[ i ];
      q_temp_ += S_.q_elems_[ i ];
    }
    S_.q_ = q_temp_;

    if ( S_.r_ == 0 )
    {
      // the effective potential: V less the adaptation
      double V_eff;
      V_eff = S_.y3_ - S_.q_;

      double rate = ( P_.c_1_ * V_eff + P_.c_2_ * std::exp( P_.c_3_ * V_eff ) );

      if ( rate > 0.0 )
      {
        unsigned long n_spikes = 0;

        if ( P_.dead_time_ > 0.0 )
        {
          // one spike with the probability of at least one in this step
          if ( V_.rng_->drand() <= -numerics::expm1( -rate * V_.h_ * 1e-3 ) )
          {
            n_spikes = 1;
          }
        }
        else
        {
          // a Poisson number of spikes in this step
          poisson_distribution::param_type param( rate * V_.h_ * 1e-3 );
          n_spikes = V_.poisson_dist_( V_.rng_, param );
        }

        if ( n_spikes > 0 )
        {
          if ( P_.dead_time_random_ )
          {
            S_.r_ = Time( Time::ms( V_.gamma_dist_( V_.rng_ ) / V_.dt_rate_ ) ).get_steps();
          }
          else
          {
            S_.r_ = V_.DeadTimeCounts_;
          }

          for ( size_t i = 0; i < S_.q_elems_.size(); i++ )
          {
            S_.q_elems_[ i ] += P_.q_sfa_[ i ] * n_spikes;
          }

          // one event of multiplicity n_spikes
          SpikeEvent se;
          se.set_multiplicity( n_spikes );
          kernel().event_delivery_manager.send( *this, se, lag );

          // the spike history holds each of them (STDP reads it)
          for ( unsigned long i = 0; i < n_spikes; i++ )
          {
            set_spiketime( Time::step( origin.get_steps() + lag + 1 ) );
          }

          if ( P_.with_reset_ )
          {
            S_.y3_ = 0.0;
          }
        }
      }
    }
    else
    {
      --S_.r_;
    }

    S_.y0_ = B_.currents_.get_value( lag );

    B_.logger_.record_data( origin.get_steps() + lag );
  }
}

void
pp_psc_delta::handle( SpikeEvent& e )
{
  assert( e.get_delay_steps() > 0 );

  B_.spikes_.add_value(
    e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ), e.get_weight() * e.get_multiplicity() );
}

void
pp_psc_delta::handle( CurrentEvent& e )
{
  assert( e.get_delay_steps() > 0 );

  const double c = e.get_current();
  const double w = e.get_weight();

  B_.currents_.add_value( e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ), w * c );
}

void
pp_psc_delta::handle( DataLoggingRequest& e )
{
  B_.logger_.handle( e );
}
}  // namespace nest
