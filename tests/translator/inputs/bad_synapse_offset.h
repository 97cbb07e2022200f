// A synapse whose send() reads the spike's precise offset: no device counterpart.
#include "connection.h"

namespace nest
{
template < typename targetidentifierT >
class bad_synapse_offset : public Connection< targetidentifierT >
{
public:
  typedef CommonSynapseProperties CommonPropertiesType;
  typedef Connection< targetidentifierT > ConnectionBase;
  using ConnectionBase::get_delay_steps;
  using ConnectionBase::get_rport;
  using ConnectionBase::get_target;

  class ConnTestDummyNode : public ConnTestDummyNodeBase
  {
  public:
    size_t
    handles_test_event( SpikeEvent&, size_t ) override
    {
      return invalid_port;
    }
  };

  bool
  send( Event& e, size_t t, const CommonSynapseProperties& )
  {
    e.set_weight( weight_ * ( 1.0 - e.get_offset() ) );
    e.set_delay_steps( get_delay_steps() );
    e.set_receiver( *get_target( t ) );
    e.set_rport( get_rport() );
    e();
    return true;
  }

private:
  double weight_;
};
}
