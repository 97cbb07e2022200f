// Diagnostics case: no_update (a node class without update()).
#ifndef NO_UPDATE_H
#define NO_UPDATE_H
#include <cmath>

#include "archiving_node.h"
#include "event.h"
#include "kernel_manager.h"
#include "ring_buffer.h"
#include "nest_time.h"

namespace nest
{
class no_update : public ArchivingNode
{
public:
  void handle( SpikeEvent& e ) override
  {
    B_.spikes_.add_value( e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ), e.get_weight() );
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
