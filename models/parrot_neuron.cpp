/*
 * parrot_neuron (see parrot_neuron.h): the count of port-0 spikes of each
 * step, whatever their weights, is sent on as one spike event of that
 * multiplicity, and the spike history gets one entry per spike. The flush
 * events of NEST's FlushEventMechanism (sent after flush_event_send_interval
 * without a spike; the interval is infinite by default) are kept as NEST
 * writes them.
 */
#include "parrot_neuron.h"

#include "dict_util.h"
#include "exceptions.h"
#include "kernel_manager.h"
#include "nest_impl.h"
#include "ring_buffer_impl.h"

namespace nest
{
void
register_parrot_neuron( const std::string& name )
{
  register_node_model< parrot_neuron >( name );
}

parrot_neuron::parrot_neuron()
  : ArchivingNode()
  , FlushEventMechanism()
{
}

void
parrot_neuron::init_buffers_()
{
  B_.n_spikes_.clear();
  ArchivingNode::clear_history();
}

void
parrot_neuron::update( Time const& origin, const long from, const long to )
{
  for ( long lag = from; lag < to; ++lag )
  {
    const long t = origin.get_steps() + lag;
    const unsigned long n = static_cast< unsigned long >( B_.n_spikes_.get_value( lag ) );
    if ( n > 0 )
    {
      // one event carries all n spikes; the history gets each of them
      SpikeEvent se;
      se.set_multiplicity( n );
      kernel().event_delivery_manager.send( *this, se, lag );
      for ( unsigned long k = 0; k < n; ++k )
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

void
parrot_neuron::get_status( Dictionary& d ) const
{
  ArchivingNode::get_status( d );
  FlushEventMechanism::get_status( d );
}

void
parrot_neuron::set_status( const Dictionary& d )
{
  ArchivingNode::set_status( d );
  FlushEventMechanism::set_status( d, this );
}

void
parrot_neuron::handle( SpikeEvent& e )
{
  // port 1 takes spikes without repeating them
  if ( e.get_rport() == 0 )
  {
    B_.n_spikes_.add_value( e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ),
      static_cast< double >( e.get_multiplicity() ) );
  }
}
}  // namespace nest
