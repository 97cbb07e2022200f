/*
 * static_synapse: a synapse with a fixed weight and delay, written for nestcl
 * in NEST 3.10's conventions (Connection< targetidentifierT >, send() through
 * the event, CommonSynapseProperties). Its _hpc variant is the same class over
 * TargetIdentifierIndex.
 */
#ifndef STATIC_SYNAPSE_H
#define STATIC_SYNAPSE_H

#include "connection.h"

namespace nest
{

template < typename targetidentifierT >
class static_synapse : public Connection< targetidentifierT >
{
  double weight_;

public:
  typedef CommonSynapseProperties CommonPropertiesType;
  typedef Connection< targetidentifierT > ConnectionBase;

  static constexpr ConnectionModelProperties properties = ConnectionModelProperties::HAS_DELAY
    | ConnectionModelProperties::IS_PRIMARY | ConnectionModelProperties::SUPPORTS_HPC
    | ConnectionModelProperties::SUPPORTS_LBL;

  static_synapse()
    : ConnectionBase()
    , weight_( 1.0 )
  {
  }

  static_synapse( const static_synapse& ) = default;
  static_synapse& operator=( const static_synapse& ) = default;

  using ConnectionBase::get_delay_steps;
  using ConnectionBase::get_rport;
  using ConnectionBase::get_target;

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
  }

  /* The spike goes to the target with the synapse's weight, delay and rport. */
  bool
  send( Event& e, const size_t tid, const CommonSynapseProperties& )
  {
    e.set_weight( weight_ );
    e.set_delay_steps( get_delay_steps() );
    e.set_receiver( *get_target( tid ) );
    e.set_rport( get_rport() );
    e();
    return true;
  }

  void
  get_status( Dictionary& d ) const
  {
    ConnectionBase::get_status( d );
    d[ names::weight ] = weight_;
  }

  void
  set_status( const Dictionary& d, ConnectorModel& cm )
  {
    ConnectionBase::set_status( d, cm );
    d.update_value( names::weight, weight_ );
  }

  void
  set_weight( double w )
  {
    weight_ = w;
  }
};

template < typename targetidentifierT >
constexpr ConnectionModelProperties static_synapse< targetidentifierT >::properties;

}  // namespace nest

#endif
