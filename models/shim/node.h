/*
 * nestcl's NEST-API shim: nest::Node, the base of every model. It keeps NEST's
 * virtual interface (update, pre_run_hook, handle, get/set_status), so a test
 * can drive a model through a Node& even where the model declares those
 * members private, as NEST's models do.
 */
#ifndef NODE_H
#define NODE_H

#include <cstddef>
#include <deque>
#include <string>

#include "dictionary.h"
#include "event.h"
#include "exceptions.h"
#include "histentry.h"
#include "nest_names.h"
#include "nest_time.h"
#include "nest_types.h"

namespace nest
{
class Node
{
public:
  Node() = default;
  Node( const Node& ) = default;
  virtual ~Node() = default;

  size_t
  get_node_id() const
  {
    return node_id_;
  }
  void
  set_node_id_( size_t id )
  {
    node_id_ = id;
  }
  /* The shim runs everything on thread 0. */
  size_t
  get_thread() const
  {
    return 0;
  }

  virtual std::string
  get_name() const
  {
    return "node";
  }

  /* Brings state and buffers to their initial condition (NEST's Node::init()). */
  void
  init()
  {
    init_state_();
    init_buffers_();
  }

  virtual void pre_run_hook() = 0;
  virtual void update( Time const&, const long, const long ) = 0;

  virtual void
  handle( SpikeEvent& )
  {
    throw UnexpectedEvent();
  }
  virtual void
  handle( CurrentEvent& )
  {
    throw UnexpectedEvent();
  }
  virtual void
  handle( DataLoggingRequest& )
  {
    throw UnexpectedEvent();
  }
  virtual size_t
  handles_test_event( SpikeEvent&, size_t )
  {
    throw UnexpectedEvent();
  }
  virtual size_t
  handles_test_event( CurrentEvent&, size_t )
  {
    throw UnexpectedEvent();
  }
  virtual size_t
  handles_test_event( DataLoggingRequest&, size_t )
  {
    throw UnexpectedEvent();
  }
  /* Connection set-up: a source sends a test event of the kind it emits to
   * the target's handles_test_event() and returns the port the target answers. */
  virtual size_t
  send_test_event( Node&, size_t, synindex, bool )
  {
    throw IllegalConnection( "the source node does not send output" );
  }
  /* Devices fix the per-target content of an event here (poisson_generator). */
  virtual void
  event_hook( DSSpikeEvent& )
  {
  }

  /* STDP: the postsynaptic spike history (ArchivingNode overrides these, as in NEST). */
  virtual void
  register_stdp_connection( double, double )
  {
    throw IllegalConnection( "the target does not support spike-timing dependent plasticity" );
  }
  virtual double
  get_K_value( double )
  {
    throw UnexpectedEvent();
  }
  virtual void
  get_history( double, double, std::deque< histentry >::iterator*, std::deque< histentry >::iterator* )
  {
    throw UnexpectedEvent();
  }

  virtual void
  get_status( Dictionary& ) const
  {
  }
  virtual void
  set_status( const Dictionary& )
  {
  }

protected:
  virtual void
  init_state_()
  {
  }
  virtual void
  init_buffers_()
  {
  }

private:
  size_t node_id_ = 0;
};

/* Delivery: the event goes to its receiver's handler (NEST's Event::operator()). */
inline void
SpikeEvent::operator()()
{
  get_receiver().handle( *this );
}
}  // namespace nest

#endif
