/*
 * flush_event_mechanism.h (nestcl shim): NEST 3.10's FlushEventMechanism as
 * parrot_neuron uses it. A flush event is due when the neuron has sent nothing
 * for flush_event_send_interval; the interval is infinite by default, so none
 * is ever due (its steps are LONG_MAX).
 */
#ifndef FLUSH_EVENT_MECHANISM_H
#define FLUSH_EVENT_MECHANISM_H

#include <limits>

namespace nest
{
class FlushEventMechanism
{
public:
  virtual ~FlushEventMechanism() = default;
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
