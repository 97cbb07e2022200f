// parrot_neuron's idiom (hand-written, not NEST's code): repeats its input spikes with their
// multiplicity, and would send a flush event after a silence of flush_event_send_interval. The
// interval is infinite by default, so no flush event is ever due: on the device the flush branch
// goes and set_last_event_time() with it (the NEST glue refuses a node with a finite interval).
#ifndef FLUSH_PARROT_H
#define FLUSH_PARROT_H
#include "archiving_node.h"
#include "event.h"
#include "flush_event_mechanism.h"
#include "kernel_manager.h"
#include "nest_time.h"
#include "ring_buffer.h"

namespace nest
{
class flush_parrot : public ArchivingNode, public FlushEventMechanism
{
public:
  void
  handle( SpikeEvent& e ) override
  {
    if ( 0 == e.get_rport() )
    {
      B_.n_spikes_.add_value( e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ),
        static_cast< double >( e.get_multiplicity() ) );
    }
  }
  void
  update( Time const& origin, const long from, const long to ) override
  {
    for ( long lag = from; lag < to; ++lag )
    {
      const long t = origin.get_steps() + lag;
      const unsigned long n = static_cast< unsigned long >( B_.n_spikes_.get_value( lag ) );
      if ( n > 0 )
      {
        SpikeEvent se;
        se.set_multiplicity( n );
        kernel().event_delivery_manager.send( *this, se, lag );
        for ( unsigned long i = 0; i < n; i++ )
        {
          set_spiketime( Time::step( t + 1 ) );
        }
        set_last_event_time( t );
      }
      else if ( flush_event_is_due( t ) )
      {
        SpikeEvent se;
        se.set_flush_event_flag( true );
        kernel().event_delivery_manager.send( *this, se, lag );
        set_last_event_time( t );
      }
    }
  }

private:
  struct Buffers_
  {
    RingBuffer n_spikes_;
  };
  Buffers_ B_;
};
}
#endif
