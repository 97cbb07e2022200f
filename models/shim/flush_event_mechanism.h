/*
 * flush_event_mechanism.h (nestcl shim): NEST 3.10's FlushEventMechanism as
 * parrot_neuron uses it. A flush event is due when the neuron has sent nothing
 * for flush_event_send_interval; the interval is infinite by default, so none
 * is ever due (its steps are LONG_MAX until pre_run_hook() converts the
 * interval, then Time's infinity in steps).
 */
#ifndef FLUSH_EVENT_MECHANISM_H
#define FLUSH_EVENT_MECHANISM_H

#include <limits>

#include "dict_util.h"
#include "dictionary.h"
#include "exceptions.h"
#include "nest_names.h"
#include "nest_time.h"

namespace nest
{
class Node;

class FlushEventMechanism
{
public:
  virtual ~FlushEventMechanism() = default;
  /* NEST's: the interval in steps from the interval in ms (infinite: never). */
  void
  pre_run_hook()
  {
    flush_event_send_interval_steps_ = Time( Time::ms( flush_event_send_interval_ ) ).get_steps();
  }
  void
  get_status( Dictionary& d ) const
  {
    d[ names::flush_event_send_interval ] = flush_event_send_interval_;
  }
  void
  set_status( const Dictionary& d, Node* node )
  {
    double interval = flush_event_send_interval_;
    update_value_param( d, names::flush_event_send_interval, interval, node );
    if ( interval <= 0.0 )
    {
      throw BadProperty( "flush_event_send_interval > 0 required." );
    }
    flush_event_send_interval_ = interval;
  }
  void
  set_last_event_time( const long t )
  {
    last_event_time_ = t;
  }
  bool
  flush_event_is_due( const long t ) const
  {
    return last_event_time_ > 0 and t - last_event_time_ >= flush_event_send_interval_steps_;
  }

protected:
  double flush_event_send_interval_ = std::numeric_limits< double >::infinity();
  long flush_event_send_interval_steps_ = std::numeric_limits< long >::max();
  long last_event_time_ = 0;
};
}

#endif
