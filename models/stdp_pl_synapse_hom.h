/*
 * stdp_pl_synapse_hom: spike-timing dependent plasticity with power-law
 * potentiation and multiplicative depression (Morrison, Aertsen & Diesmann
 * 2007, Neural Comput 19:1437), the E->E synapse of hpc_benchmark; written
 * for nestcl in NEST 3.10's conventions. Facilitation adds lambda w^mu Kplus
 * per postsynaptic spike since the previous presynaptic one, depression
 * subtracts lambda alpha w Kminus (clipped at 0). tau_plus, lambda, alpha and
 * mu are common to all synapses of the model (STDPPLHomCommonProperties, set
 * with SetDefaults); each synapse keeps its weight, Kplus and the time of its
 * last presynaptic spike.
 */
#ifndef STDP_PL_SYNAPSE_HOM_H
#define STDP_PL_SYNAPSE_HOM_H

#include <cmath>
#include <deque>

#include "connection.h"

namespace nest
{

class STDPPLHomCommonProperties : public CommonSynapseProperties
{
public:
  STDPPLHomCommonProperties();

  void get_status( Dictionary& d ) const;
  void set_status( const Dictionary& d, ConnectorModel& cm );

  double tau_plus_;
  double tau_plus_inv_; //!< 1 / tau_plus
  double lambda_;
  double alpha_;
  double mu_;
};

template < typename targetidentifierT >
class stdp_pl_synapse_hom : public Connection< targetidentifierT >
{
public:
  typedef STDPPLHomCommonProperties CommonPropertiesType;
  typedef Connection< targetidentifierT > ConnectionBase;

  static constexpr ConnectionModelProperties properties = ConnectionModelProperties::HAS_DELAY
    | ConnectionModelProperties::IS_PRIMARY | ConnectionModelProperties::SUPPORTS_HPC
    | ConnectionModelProperties::SUPPORTS_LBL;

  stdp_pl_synapse_hom();
  stdp_pl_synapse_hom( const stdp_pl_synapse_hom& ) = default;
  stdp_pl_synapse_hom& operator=( const stdp_pl_synapse_hom& ) = default;

  using ConnectionBase::get_delay;
  using ConnectionBase::get_delay_steps;
  using ConnectionBase::get_rport;
  using ConnectionBase::get_target;

  void get_status( Dictionary& d ) const;
  void set_status( const Dictionary& d, ConnectorModel& cm );

  bool send( Event& e, size_t t, const STDPPLHomCommonProperties& );

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
  facilitate_( double w, double kplus, const STDPPLHomCommonProperties& cp )
  {
    return w + ( cp.lambda_ * std::pow( w, cp.mu_ ) * kplus );
  }

  double
  depress_( double w, double kminus, const STDPPLHomCommonProperties& cp )
  {
    double new_w = w - ( cp.lambda_ * cp.alpha_ * w * kminus );
    return new_w > 0.0 ? new_w : 0.0;
  }

  double weight_;
  double Kplus_;
  double t_lastspike_;
};

template < typename targetidentifierT >
constexpr ConnectionModelProperties stdp_pl_synapse_hom< targetidentifierT >::properties;

template < typename targetidentifierT >
inline bool
stdp_pl_synapse_hom< targetidentifierT >::send( Event& e, size_t t, const STDPPLHomCommonProperties& cp )
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
    start++;
    assert( minus_dt < -1.0 * kernel().connection_manager.get_stdp_eps() );
    weight_ = facilitate_( weight_, Kplus_ * std::exp( minus_dt * cp.tau_plus_inv_ ), cp );
  }

  // depression by the new presynaptic spike
  weight_ = depress_( weight_, target->get_K_value( t_spike - dendritic_delay ), cp );

  e.set_receiver( *target );
  e.set_weight( weight_ );
  e.set_delay_steps( get_delay_steps() );
  e.set_rport( get_rport() );
  e();

  Kplus_ = Kplus_ * std::exp( ( t_lastspike_ - t_spike ) * cp.tau_plus_inv_ ) + 1.0;
  t_lastspike_ = t_spike;

  return true;
}

template < typename targetidentifierT >
stdp_pl_synapse_hom< targetidentifierT >::stdp_pl_synapse_hom()
  : ConnectionBase()
  , weight_( 1.0 )
  , Kplus_( 0.0 )
  , t_lastspike_( 0.0 )
{
}

template < typename targetidentifierT >
void
stdp_pl_synapse_hom< targetidentifierT >::get_status( Dictionary& d ) const
{
  ConnectionBase::get_status( d );
  d[ names::weight ] = weight_;
  d[ names::Kplus ] = Kplus_;
}

template < typename targetidentifierT >
void
stdp_pl_synapse_hom< targetidentifierT >::set_status( const Dictionary& d, ConnectorModel& cm )
{
  ConnectionBase::set_status( d, cm );
  d.update_value( names::weight, weight_ );
  d.update_value( names::Kplus, Kplus_ );
}

}  // namespace nest

#endif
