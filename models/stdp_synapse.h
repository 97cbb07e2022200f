/*
 * stdp_synapse: pair-based spike-timing dependent plasticity with a power-law
 * weight dependence (Guetig et al. 2003, J Neurosci 23:3697), written for
 * nestcl in NEST 3.10's conventions. The presynaptic trace Kplus decays with
 * tau_plus and jumps by 1 per presynaptic spike; the postsynaptic trace
 * Kminus (tau_minus) is the target's (ArchivingNode). Every presynaptic spike
 * first facilitates once per postsynaptic spike since the previous
 * presynaptic one (seen through the dendritic delay), then depresses with the
 * target's Kminus, then is sent with the new weight. Weights are normalised
 * by Wmax: facilitation adds lambda (1 - w)^mu_plus Kplus, depression
 * subtracts alpha lambda w^mu_minus Kminus, clipped to [0, Wmax].
 * All parameters belong to each synapse.
 */
#ifndef STDP_SYNAPSE_H
#define STDP_SYNAPSE_H

#include <cmath>
#include <deque>

#include "connection.h"

namespace nest
{

template < typename targetidentifierT >
class stdp_synapse : public Connection< targetidentifierT >
{
public:
  typedef CommonSynapseProperties CommonPropertiesType;
  typedef Connection< targetidentifierT > ConnectionBase;

  static constexpr ConnectionModelProperties properties = ConnectionModelProperties::HAS_DELAY
    | ConnectionModelProperties::IS_PRIMARY | ConnectionModelProperties::SUPPORTS_HPC
    | ConnectionModelProperties::SUPPORTS_LBL;

  stdp_synapse();
  stdp_synapse( const stdp_synapse& ) = default;
  stdp_synapse& operator=( const stdp_synapse& ) = default;

  using ConnectionBase::get_delay;
  using ConnectionBase::get_delay_steps;
  using ConnectionBase::get_rport;
  using ConnectionBase::get_target;

  void get_status( Dictionary& d ) const;
  void set_status( const Dictionary& d, ConnectorModel& cm );

  bool send( Event& e, size_t t, const CommonSynapseProperties& cp );

  class ConnTestDummyNode : public ConnTestDummyNodeBase
  {
  public:
    using ConnTestDummyNodeBase::handles_test_event;
    size_t
    handles_test_event( SpikeEvent&, size_t ) override
    {
      return invalid_port;
    }
  };

  void
  check_connection( Node& s, Node& t, size_t receptor_type, const CommonPropertiesType& )
  {
    ConnTestDummyNode dummy_target;
    ConnectionBase::check_connection_( dummy_target, s, t, receptor_type );
    t.register_stdp_connection( t_lastspike_ - get_delay(), get_delay() );
  }

  void
  set_weight( double w )
  {
    weight_ = w;
  }

private:
  double
  facilitate_( double w, double kplus )
  {
    double norm_w = ( w / Wmax_ ) + ( lambda_ * std::pow( 1.0 - ( w / Wmax_ ), mu_plus_ ) * kplus );
    return norm_w < 1.0 ? norm_w * Wmax_ : Wmax_;
  }

  double
  depress_( double w, double kminus )
  {
    double norm_w = ( w / Wmax_ ) - ( alpha_ * lambda_ * std::pow( w / Wmax_, mu_minus_ ) * kminus );
    return norm_w > 0.0 ? norm_w * Wmax_ : 0.0;
  }

  double weight_;
  double tau_plus_;
  double lambda_;
  double alpha_;
  double mu_plus_;
  double mu_minus_;
  double Wmax_;
  double Kplus_;
  double t_lastspike_;
};

template < typename targetidentifierT >
constexpr ConnectionModelProperties stdp_synapse< targetidentifierT >::properties;

template < typename targetidentifierT >
inline bool
stdp_synapse< targetidentifierT >::send( Event& e, size_t t, const CommonSynapseProperties& )
{
  const double t_spike = e.get_stamp().get_ms();
  Node* target = get_target( t );
  double dendritic_delay = get_delay();

  // the postsynaptic spikes in ( t_lastspike - d, t_spike - d ]
  std::deque< histentry >::iterator start;
  std::deque< histentry >::iterator finish;
  target->get_history( t_lastspike_ - dendritic_delay, t_spike - dendritic_delay, &start, &finish );

  // facilitation: one step per postsynaptic spike since the last presynaptic one
  double minus_dt;
  while ( start != finish )
  {
    minus_dt = t_lastspike_ - ( start->t_ + dendritic_delay );
    ++start;
    assert( minus_dt < -1.0 * kernel().connection_manager.get_stdp_eps() );
    weight_ = facilitate_( weight_, Kplus_ * std::exp( minus_dt / tau_plus_ ) );
  }

  // depression by the new presynaptic spike
  const double K_value = target->get_K_value( t_spike - dendritic_delay );
  weight_ = depress_( weight_, K_value );

  e.set_receiver( *target );
  e.set_weight( weight_ );
  e.set_delay_steps( get_delay_steps() );
  e.set_rport( get_rport() );
  e();

  Kplus_ = Kplus_ * std::exp( ( t_lastspike_ - t_spike ) / tau_plus_ ) + 1.0;
  t_lastspike_ = t_spike;

  return true;
}

template < typename targetidentifierT >
stdp_synapse< targetidentifierT >::stdp_synapse()
  : ConnectionBase()
  , weight_( 1.0 )
  , tau_plus_( 20.0 )
  , lambda_( 0.01 )
  , alpha_( 1.0 )
  , mu_plus_( 1.0 )
  , mu_minus_( 1.0 )
  , Wmax_( 100.0 )
  , Kplus_( 0.0 )
  , t_lastspike_( 0.0 )
{
}

template < typename targetidentifierT >
void
stdp_synapse< targetidentifierT >::get_status( Dictionary& d ) const
{
  ConnectionBase::get_status( d );
  d[ names::weight ] = weight_;
  d[ names::tau_plus ] = tau_plus_;
  d[ names::lambda ] = lambda_;
  d[ names::alpha ] = alpha_;
  d[ names::mu_plus ] = mu_plus_;
  d[ names::mu_minus ] = mu_minus_;
  d[ names::Wmax ] = Wmax_;
  d[ names::Kplus ] = Kplus_;
}

template < typename targetidentifierT >
void
stdp_synapse< targetidentifierT >::set_status( const Dictionary& d, ConnectorModel& cm )
{
  ConnectionBase::set_status( d, cm );
  d.update_value( names::weight, weight_ );
  d.update_value( names::tau_plus, tau_plus_ );
  d.update_value( names::lambda, lambda_ );
  d.update_value( names::alpha, alpha_ );
  d.update_value( names::mu_plus, mu_plus_ );
  d.update_value( names::mu_minus, mu_minus_ );
  d.update_value( names::Wmax, Wmax_ );
  d.update_value( names::Kplus, Kplus_ );

  if ( not( ( ( weight_ >= 0 ) - ( weight_ < 0 ) ) == ( ( Wmax_ >= 0 ) - ( Wmax_ < 0 ) ) ) )
  {
    throw BadProperty( "Weight and Wmax must have same sign." );
  }
  if ( Kplus_ < 0 )
  {
    throw BadProperty( "Kplus must be non-negative." );
  }
}

}  // namespace nest

#endif
