// The minimal valid model (ok_model.h) with members that have no SoA layout,
// named in the ways libclang 14 and 16+ print differently: an unqualified
// typedef and class, a qualified typedef, a template specialisation.
#ifndef HOST_FIELDS_H
#define HOST_FIELDS_H
#include <cmath>
#include <string>
#include <vector>

#include "archiving_node.h"
#include "event.h"
#include "kernel_manager.h"
#include "ring_buffer.h"
#include "nest_time.h"
#include "random_generators.h"

namespace nest
{
class host_fields : public ArchivingNode
{
public:
  void handle( SpikeEvent& e ) override
  {
    B_.spikes_.add_value( e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ), e.get_weight() );
  }
  void update( Time const& origin, const long from, const long to ) override
  {
    for ( long lag = from; lag < to; ++lag )
    {
      S_.v_ = S_.v_ * V_.decay_ + B_.spikes_.get_value( lag );
      if ( S_.v_ >= P_.theta_ )
      {
        S_.v_ = 0.0;
        set_spiketime( Time::step( origin.get_steps() + lag + 1 ) );
        SpikeEvent se;
        kernel().event_delivery_manager.send( *this, se, lag );
      }
    }
  }
  void pre_run_hook() override
  {
    V_.decay_ = std::exp( -Time::get_resolution().get_ms() / P_.tau_ );
  }

private:
  struct Parameters_
  {
    double tau_ = 10.0;
    double theta_ = 1.0;
  };
  struct State_
  {
    double v_ = 0.0;
  };
  struct Variables_
  {
    double decay_;
    RngPtr rng_;
    nest::RngPtr qualified_rng_;
    Time t_;
    std::vector< std::string > names_;
  };
  struct Buffers_
  {
    RingBuffer spikes_;
  };
  Parameters_ P_;
  State_ S_;
  Variables_ V_;
  Buffers_ B_;
};
}
#endif
