// ok_model with a method that update() calls with a variable by non-const reference: the helper, a function
// of its own on the device, cannot write the caller's local.
#ifndef BAD_HELPER_H
#define BAD_HELPER_H
#include <cmath>

#include "archiving_node.h"
#include "event.h"
#include "kernel_manager.h"
#include "ring_buffer.h"
#include "nest_time.h"

namespace nest
{
class bad_helper : public ArchivingNode
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
      double in = B_.spikes_.get_value( lag );
      clip_( in );
      S_.v_ = S_.v_ * V_.decay_ + in;
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
  void
  clip_( double& x )
  {
    x = x > P_.theta_ ? P_.theta_ : x;
  }
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
