// Diagnostics case: bad_throw (ok_model with one construct the device cannot run).
#ifndef BAD_THROW_H
#define BAD_THROW_H
#include <cmath>

#include "archiving_node.h"
#include "event.h"
#include "kernel_manager.h"
#include "ring_buffer.h"
#include "nest_time.h"

namespace nest
{
class bad_throw : public ArchivingNode
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
      if ( S_.v_ != S_.v_ )
      {
        throw 1;
      }
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
