/*
 * nestcl's NEST-API shim: kernel() and the three managers models talk to.
 *   simulation_manager: the slice origin (the time of lag 0 of the current
 *     update call);
 *   connection_manager: min/max delay, which size the ring buffers
 *     (min_delay + max_delay slots, as in NEST);
 *   event_delivery_manager: get_modulo(d) = (slice origin steps + d) mod
 *     (min_delay + max_delay), the ring-buffer slot of an offset d from the
 *     slice origin, and send(), which here records each emitted spike (sender,
 *     spike step, lag) for the harness instead of routing it.
 * A test sets delays and the slice origin through the *_ setters; models only
 * use NEST's own calls.
 */
#ifndef KERNEL_MANAGER_H
#define KERNEL_MANAGER_H

#include <cassert>
#include <cstddef>
#include <vector>

#include "event.h"
#include "nest_time.h"
#include "node.h"

namespace nest
{
class SimulationManager
{
public:
  const Time&
  get_slice_origin() const
  {
    return slice_origin_;
  }
  const Time&
  get_clock() const
  {
    return slice_origin_;
  }
  void
  set_slice_origin_( const Time& t )
  {
    slice_origin_ = t;
  }
  /* Waveform relaxation (gap junctions): NEST's defaults; the shim runs none. */
  size_t
  get_wfr_interpolation_order() const
  {
    return 3;
  }
  double
  get_wfr_tol() const
  {
    return 1e-4;
  }

private:
  Time slice_origin_;
};

class ConnectionManager
{
public:
  long
  get_min_delay() const
  {
    return min_delay_;
  }
  long
  get_max_delay() const
  {
    return max_delay_;
  }
  void
  set_delay_extrema_( long min_delay, long max_delay )
  {
    assert( min_delay >= 1 and max_delay >= min_delay );
    min_delay_ = min_delay;
    max_delay_ = max_delay;
  }
  /* The tolerance of STDP's spike-time comparisons (NEST's kernel key stdp_eps). */
  double
  get_stdp_eps() const
  {
    return stdp_eps_;
  }
  /* Gap junctions and other secondary connections: the shim has none. */
  bool
  secondary_connections_exist() const
  {
    return false;
  }

private:
  long min_delay_ = 1;
  long max_delay_ = 1;
  double stdp_eps_ = 1.0e-6;
};

/* One spike as NEST's send() would register it. */
struct EmittedSpike
{
  size_t node_id;
  long step; /* spike time in steps: slice origin + lag + 1 */
  long lag;
  size_t multiplicity;
  double offset; /* the event's offset (SpikeEvent::set_offset; 0 unless the model sets one) */
};

class EventDeliveryManager
{
public:
  inline long get_modulo( long d ) const;
  /* The slice (of min_delay steps) of the ring of slices that a delivery d steps after the slice origin falls in. */
  inline long get_slice_modulo( long d ) const;

  template < class EventT >
  inline void send( Node& source, EventT& e, const long lag );
  /* A secondary (gap-junction) event: the shim has no secondary connections, so it reaches no one. */
  template < class EventT >
  void
  send_secondary( Node&, EventT& )
  {
  }

  /* Spikes sent since the last clear; the harness drains this. */
  std::vector< EmittedSpike > emitted_spikes_;
};

class KernelManager
{
public:
  SimulationManager simulation_manager;
  ConnectionManager connection_manager;
  EventDeliveryManager event_delivery_manager;
};

inline KernelManager&
kernel()
{
  static KernelManager k;
  return k;
}

inline long
EventDeliveryManager::get_modulo( long d ) const
{
  const long slots = kernel().connection_manager.get_min_delay() + kernel().connection_manager.get_max_delay();
  assert( d >= 0 and d < slots );
  return ( kernel().simulation_manager.get_slice_origin().get_steps() + d ) % slots;
}

inline long
EventDeliveryManager::get_slice_modulo( long d ) const
{
  const long md = kernel().connection_manager.get_min_delay();
  const long slices = ( md + kernel().connection_manager.get_max_delay() + md - 1 ) / md;
  assert( d >= 0 );
  return ( ( kernel().simulation_manager.get_slice_origin().get_steps() + d ) / md ) % slices;
}

template < class EventT >
inline void
EventDeliveryManager::send( Node& source, EventT& e, const long lag )
{
  const long step = kernel().simulation_manager.get_slice_origin().get_steps() + lag + 1;
  e.set_stamp( Time( Time::step( step ) ) );
  e.set_sender( source );
  e.set_sender_node_id( source.get_node_id() );
  emitted_spikes_.push_back( EmittedSpike { source.get_node_id(), step, lag, e.get_multiplicity(), e.get_offset() } );
}
}  // namespace nest

#endif
