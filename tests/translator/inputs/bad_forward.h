// update() forwarding to a helper with an argument that is not a compile-time constant: which
// path runs is decided at run time, so nothing folds and the model stays on the CPU.
#ifndef BAD_FORWARD_H
#define BAD_FORWARD_H
#include "archiving_node.h"
#include "event.h"
#include "kernel_manager.h"
#include "nest_time.h"
#include "ring_buffer.h"

namespace nest
{
class bad_forward : public ArchivingNode
{
public:
  void
  handle( SpikeEvent& e ) override
  {
    B_.spikes_.add_value( e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ), e.get_weight() );
  }
  void
  update( Time const& origin, const long from, const long to ) override
  {
    update_( origin, from, to, P_.relax_ );
  }

private:
  bool
  update_( Time const&, const long from, const long to, const bool relax )
  {
    for ( long lag = from; lag < to; ++lag )
    {
      S_.v_ += relax ? 0.0 : B_.spikes_.get_value( lag );
    }
    return true;
  }

  struct Parameters_
  {
    bool relax_ = false;
  };
  struct State_
  {
    double v_ = 0.0;
  };
  struct Buffers_
  {
    RingBuffer spikes_;
  };
  Parameters_ P_;
  State_ S_;
  Buffers_ B_;
};
}
#endif
