/*
 * nestcl's NEST-API shim: the events a neuron model receives and sends. An event
 * carries a time stamp, a delay in steps, a weight, a receptor port and (spikes)
 * a multiplicity; get_rel_delivery_steps() tells a model how many steps after
 * the current slice origin the event is due, as in NEST:
 * stamp_steps + delay_steps - 1 - origin_steps.
 */
#ifndef EVENT_H
#define EVENT_H

#include <cstddef>
#include <vector>

#include "nest_time.h"
#include "nest_types.h"

namespace nest
{
class Node;

class Event
{
public:
  Event() = default;
  virtual ~Event() = default;

  /* Delivers the event to its receiver (defined where Node is complete). */
  virtual void
  operator()()
  {
  }

  double
  get_weight() const
  {
    return w_;
  }
  void
  set_weight( double w )
  {
    w_ = w;
  }
  long
  get_delay_steps() const
  {
    return d_;
  }
  void
  set_delay_steps( long d )
  {
    d_ = d;
  }
  long
  get_rport() const
  {
    return rp_;
  }
  /* NEST 3.10 marks flush events (FlushEventMechanism) on spikes; the shim sends none. */
  void
  set_flush_event_flag( bool )
  {
  }
  void
  set_rport( long rp )
  {
    rp_ = rp;
  }
  long
  get_port() const
  {
    return p_;
  }
  void
  set_port( long p )
  {
    p_ = p;
  }
  const Time&
  get_stamp() const
  {
    return stamp_;
  }
  void
  set_stamp( const Time& t )
  {
    stamp_ = t;
  }
  double
  get_offset() const
  {
    return offset_;
  }
  void
  set_offset( double t )
  {
    offset_ = t;
  }
  long
  get_rel_delivery_steps( const Time& t ) const
  {
    return stamp_.get_steps() + d_ - 1 - t.get_steps();
  }
  size_t
  get_sender_node_id() const
  {
    return sender_node_id_;
  }
  void
  set_sender_node_id( size_t id )
  {
    sender_node_id_ = id;
  }
  Node*
  get_sender() const
  {
    return sender_;
  }
  void
  set_sender( Node& s )
  {
    sender_ = &s;
  }
  Node&
  get_receiver() const
  {
    return *receiver_;
  }
  void
  set_receiver( Node& r )
  {
    receiver_ = &r;
  }

private:
  double w_ = 1.0;
  long d_ = 1;
  long rp_ = 0;
  long p_ = 0;
  double offset_ = 0.0;
  Time stamp_;
  size_t sender_node_id_ = 0;
  Node* sender_ = nullptr;
  Node* receiver_ = nullptr;
};

class SpikeEvent : public Event
{
public:
  void operator()() override;
  size_t
  get_multiplicity() const
  {
    return multiplicity_;
  }
  void
  set_multiplicity( size_t m )
  {
    multiplicity_ = m;
  }

private:
  size_t multiplicity_ = 1;
};

/* Spike event whose per-target content a device fixes in event_hook() (generators). */
class DSSpikeEvent : public SpikeEvent
{
};

class CurrentEvent : public Event
{
public:
  double
  get_current() const
  {
    return c_;
  }
  void
  set_current( double c )
  {
    c_ = c;
  }

private:
  double c_ = 0.0;
};

/*
 * A recording device's request. In NEST it carries the recording interval and
 * returns the logged rows to the multimeter; here the rows go into `rows`
 * (one row per recorded step: the step, then one value per recordable).
 */
class DataLoggingRequest : public Event
{
public:
  DataLoggingRequest() = default;
  explicit DataLoggingRequest( long interval_steps )
    : interval_steps_( interval_steps )
  {
  }
  long
  get_recording_interval_steps() const
  {
    return interval_steps_;
  }
  std::vector< std::vector< double > > rows;

private:
  long interval_steps_ = 1;
};
}  // namespace nest

#endif
